//! Kiro CLI's database (`data.sqlite3`): its conversations, one per row.
//!
//! `conversations_v2(key, conversation_id, value, created_at, updated_at)` keeps every
//! conversation, `key` the working directory, `value` the conversation document, times in
//! milliseconds; the older `conversations(key, value)` kept one conversation per directory. A
//! conversation in both (copied by a migration) is listed once, from `conversations_v2`. Each
//! session is one row: one line of the input, all its events keyed by the conversation id
//! ([`crate::read::Emitter::emit_record`]), so they are the same whatever the row's place.

use rusqlite::{Connection, params};
use serde_json::Value;

use super::conversation::{self, At};
use crate::model::{Agent, Event};
use crate::read::store::{Db, Failure, StoreError, Stored};
use crate::read::{InputDiagnostic, Problem, ReadReport, StoredError, StoredInput};

/// Whether a database is Kiro CLI's: named `data.sqlite3`, with a conversations table holding
/// `key` and `value`.
pub fn is_kiro(db: &Db) -> bool {
    let named = std::path::Path::new(db.path()).file_name().is_some_and(|n| n == "data.sqlite3");
    let has = |table: &str| {
        let columns = db.columns(table);
        ["key", "value"].iter().all(|c| columns.iter().any(|have| have == c))
    };
    named && (has("conversations_v2") || has("conversations"))
}

/// The conversations of the database, `conversations_v2` first, each with its fingerprint.
///
/// # Errors
/// When the database cannot be read.
pub fn sessions(db: &Db, reader: &'static str) -> Result<Vec<Stored>, StoreError> {
    let v2 = db.has_table("conversations_v2");
    let v1 = db.has_table("conversations");
    db.snapshot("conversations", |c| {
        let mut listed = Vec::new();
        let mut seen = std::collections::HashSet::new();
        if v2 {
            let mut statement = c.prepare(
                "SELECT conversation_id, coalesce(updated_at, 0), length(value) FROM conversations_v2
                    ORDER BY created_at, rowid",
            )?;
            let rows = statement.query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?, row.get::<_, Option<i64>>(2)?))
            })?;
            for row in rows {
                let (id, updated, size) = row?;
                seen.insert(id.clone());
                listed.push(stored(db, reader, id, format!("v2:{updated}:{}", size.unwrap_or(0)), size));
            }
        }
        if v1 {
            let mut statement = c.prepare("SELECT key, value FROM conversations ORDER BY rowid")?;
            let rows =
                statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?)))?;
            for row in rows {
                let (key, value) = row?;
                let size = value.as_ref().map_or(0, |v| v.len() as i64);
                let id = value.as_deref().and_then(conversation_id).unwrap_or(key);
                if seen.insert(id.clone()) {
                    listed.push(stored(db, reader, id, format!("v1:{size}"), Some(size)));
                }
            }
        }
        Ok(listed)
    })
}

fn stored(db: &Db, reader: &'static str, id: String, fingerprint: String, size: Option<i64>) -> Stored {
    Stored {
        path: db.path().to_owned(),
        name: format!("{}#{id}", db.path()),
        session: id,
        fingerprint,
        version: None,
        size: size.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
        reader,
    }
}

/// The `conversation_id` of a document's text, if it names one.
fn conversation_id(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    value.get("conversation_id").and_then(Value::as_str).filter(|id| !id.is_empty()).map(str::to_owned)
}

/// Reads one conversation into events.
///
/// # Errors
/// When the database cannot be read, or `out` fails.
pub fn read(
    input: StoredInput<'_>,
    out: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> Result<ReadReport, StoredError> {
    crate::read::store::read_session(Agent::Kiro, input, "conversations", out, |c, stored, emitter, report| {
        let Some((table, rowid, key, value)) = row_of(c, &stored.session)? else { return Ok(()) };
        report.lines += 1;
        let document = match serde_json::from_str::<Value>(&value) {
            Ok(Value::Object(document)) => document,
            Ok(_) => {
                diagnose(report, &stored.name, rowid, &value, table, &stored.session, None);
                return Ok(());
            }
            Err(e) => {
                diagnose(report, &stored.name, rowid, &value, table, &stored.session, Some(e));
                return Ok(());
            }
        };
        report.lines_mapped += 1;
        let at = At { line: rowid, offset: 0, record_type: table };
        for (event, slot) in conversation::events(&document, &stored.session, Some(&key), at) {
            emitter.emit_record(event, &stored.session, slot).map_err(Failure::Out)?;
        }
        Ok(())
    })
}

fn diagnose(
    report: &mut ReadReport,
    name: &str,
    rowid: u64,
    value: &str,
    table: &str,
    id: &str,
    error: Option<serde_json::Error>,
) {
    let problem = match error {
        Some(e) => Problem::from_json(&e),
        None => Problem {
            code: "agentlog::input::unexpected_record",
            message: "expected a conversation (a JSON object), but found another JSON value".into(),
            column: 0,
            help: Some("the row was skipped"),
            is_error: false,
        },
    };
    let problem = Problem::in_row(table, id, problem);
    report.lines_diagnosed += 1;
    report.push(|| InputDiagnostic::new(name, rowid, value, problem));
}

/// The row of conversation `id`: its table, rowid, key (the working directory) and value.
fn row_of(c: &Connection, id: &str) -> Result<Option<(&'static str, u64, String, String)>, Failure> {
    if crate::read::store::has_table(c, "conversations_v2") {
        let mut statement =
            c.prepare("SELECT rowid, key, value FROM conversations_v2 WHERE conversation_id = ?1 ORDER BY rowid")?;
        let mut rows = statement.query(params![id])?;
        if let Some(row) = rows.next()? {
            let value: Option<String> = row.get(2)?;
            return Ok(Some((
                "conversations_v2",
                row.get::<_, i64>(0)?.max(0) as u64,
                row.get(1)?,
                value.unwrap_or_default(),
            )));
        }
    }
    if crate::read::store::has_table(c, "conversations") {
        let mut statement = c.prepare("SELECT rowid, key, value FROM conversations ORDER BY rowid")?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let (key, value): (String, Option<String>) = (row.get(1)?, row.get(2)?);
            let value = value.unwrap_or_default();
            if conversation_id(&value).as_deref().unwrap_or(key.as_str()) == id {
                return Ok(Some(("conversations", row.get::<_, i64>(0)?.max(0) as u64, key, value)));
            }
        }
    }
    Ok(None)
}
