//! Crush's database (`crush.db`): tables `sessions` and `messages`, each message's content a JSON
//! array in its `parts` column.
//!
//! A session is read inside one read transaction: its row, then its messages in order of
//! creation, then rowid (Crush orders them by `created_at` alone, `ListMessagesBySession`, and
//! writes whole seconds, so rows of one second keep the order they were inserted in). The other
//! tables hold no conversation and are not read: `files` (the versions of the files the agent
//! wrote, for its undo), `read_files` (when each file was last read) and goose's
//! `goose_db_version`.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row, params};
use serde_json::{Map, Value};

use super::map::{At, Mapper, MessageRow, SessionRow};
use crate::model::{Agent, Event};
use crate::read::store::{Db, Failure, StoreError, Stored, json_column};
use crate::read::{Emitter, InputDiagnostic, Problem, ReadReport, StoredError, StoredInput};

/// Tables and columns a database needs to be read as Crush's.
const NEEDED: [(&str, &[&str]); 2] = [
    ("sessions", &["id", "parent_session_id", "title", "updated_at", "created_at"]),
    ("messages", &["id", "session_id", "role", "parts", "created_at", "updated_at"]),
];

/// Columns of `sessions` that hold JSON text.
const JSON_COLUMNS: [&str; 1] = ["todos"];

/// Whether a database has Crush's tables: `sessions`, and `messages` with a `parts` column
/// (OpenCode's tables are `session`, `message` and `part`).
pub fn is_crush(db: &Db) -> bool {
    db.has_table("sessions") && db.columns("messages").iter().any(|c| c == "parts")
}

/// The sessions of the database, oldest first, each with its fingerprint.
///
/// # Errors
/// When the tables lack a column the reader needs, or the database cannot be read.
pub fn sessions(db: &Db, reader: &'static str) -> Result<Vec<Stored>, StoreError> {
    for (table, columns) in NEEDED {
        db.require(table, columns)?;
    }
    // A session changes when its row does (its `updated_at`, in whole seconds, and what a step,
    // a title or the todo list rewrites), or a message is added, removed or updated.
    const LIST: &str = "
        SELECT s.id,
            coalesce(s.updated_at, 0) || '/' || coalesce(s.cost, 0) || '/' || coalesce(length(s.title), 0)
                || '/' || coalesce(octet_length(s.todos), 0),
            (SELECT count(*) || '/' || coalesce(max(m.updated_at), 0) || '/' || coalesce(sum(octet_length(m.parts)), 0)
                FROM messages m WHERE m.session_id = s.id)
        FROM sessions s ORDER BY s.created_at, s.id";
    db.snapshot("sessions", |c| {
        let mut statement = c.prepare(LIST)?;
        let rows = statement.query_map([], |row| {
            let id: String = row.get(0)?;
            let (own, messages): (String, String) = (row.get(1)?, row.get(2)?);
            let size = messages.rsplit('/').next().and_then(|b| b.parse::<u64>().ok()).unwrap_or(0);
            Ok(Stored {
                path: db.path().to_owned(),
                name: format!("{}#{id}", db.path()),
                session: id,
                fingerprint: format!("{own}:{messages}"),
                version: None,
                size,
                reader,
            })
        })?;
        rows.collect()
    })
}

/// Reads one session into events.
///
/// # Errors
/// When the database cannot be read, or `out` fails.
pub fn read(
    input: StoredInput<'_>,
    out: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> Result<ReadReport, StoredError> {
    crate::read::store::read_session(Agent::Crush, input, "messages", out, |c, stored, emitter, report| {
        read_session(c, &stored.session, &stored.name, emitter, report)
    })
}

fn read_session(
    c: &Connection,
    session: &str,
    name: &str,
    out: &mut Emitter<'_>,
    report: &mut ReadReport,
) -> Result<(), Failure> {
    let Some((info, at)) = session_row(c, session)? else {
        // Deleted since it was listed: nothing left to read.
        return Ok(());
    };
    let mut mapper = Mapper::new(&info);
    report.lines += 1;
    report.lines_mapped += 1;
    mapper.session(&info, &at, out)?;

    let mut statement = c.prepare("SELECT rowid, * FROM messages WHERE session_id = ?1 ORDER BY created_at, rowid")?;
    let columns: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut rows = statement.query(params![session])?;
    while let Some(row) = rows.next()? {
        let mut data = columns_of(row, &columns, &[])?;
        let parts = match data.remove("parts") {
            Some(Value::String(parts)) => parts,
            _ => String::new(),
        };
        let message = message_row(row.get(0)?, data);
        report.lines += 1;
        match parts_of(&parts) {
            Ok(parts) => {
                report.lines_mapped += 1;
                mapper.message(&message, &parts, out)?;
            }
            Err(problem) => {
                let problem = Problem::in_row("messages", &message.at.id, problem);
                report.lines_diagnosed += 1;
                report.push(|| InputDiagnostic::new(name, message.at.line, &parts, problem));
            }
        }
    }
    Ok(())
}

/// A message's `parts`: a JSON array; the problem that makes the row unusable when it is not.
fn parts_of(text: &str) -> Result<Vec<Value>, Problem> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(parts)) => Ok(parts),
        Ok(other) => Err(Problem {
            code: "agentlog::input::unexpected_record",
            message: format!("expected a JSON array of parts, but found {}", describe(&other)),
            column: 0,
            help: Some("the row was skipped; the rest of the session was converted"),
            is_error: false,
        }),
        Err(e) => Err(Problem::from_json(&e)),
    }
}

/// Names a JSON value's type for messages ("an object", "a string", …).
fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A message row's columns, `parts` taken out, as the mapper needs them.
fn message_row(rowid: i64, data: Map<String, Value>) -> MessageRow {
    let text = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_owned);
    MessageRow {
        at: At { line: u64::try_from(rowid).unwrap_or(0), id: text("id").unwrap_or_default(), table: "message" },
        role: text("role").unwrap_or_default(),
        model: text("model"),
        provider: text("provider"),
        created: data.get("created_at").and_then(Value::as_i64),
        is_summary: data.get("is_summary_message").and_then(Value::as_i64).is_some_and(|n| n != 0),
        data,
    }
}

/// The session's row, with every column kept.
fn session_row(c: &Connection, session: &str) -> rusqlite::Result<Option<(SessionRow, At)>> {
    let mut statement = c.prepare("SELECT rowid, * FROM sessions WHERE id = ?1")?;
    let columns: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut rows = statement.query(params![session])?;
    let Some(row) = rows.next()? else { return Ok(None) };
    let data = columns_of(row, &columns, &JSON_COLUMNS)?;
    let rowid: i64 = row.get(0)?;
    let text = |key: &str| data.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let info = SessionRow {
        id: session.to_owned(),
        parent: text("parent_session_id"),
        title: text("title"),
        created: data.get("created_at").and_then(Value::as_i64),
        data: Map::new(),
    };
    let info = SessionRow { data, ..info };
    let at = At { line: u64::try_from(rowid).unwrap_or(0), id: session.to_owned(), table: "session" };
    Ok(Some((info, at)))
}

/// A row's columns after the first (its rowid) as JSON values; the columns named in `json`
/// parsed when they hold JSON.
fn columns_of(row: &Row<'_>, columns: &[String], json: &[&str]) -> rusqlite::Result<Map<String, Value>> {
    let mut data = Map::new();
    for (i, column) in columns.iter().enumerate().skip(1) {
        let value = match row.get_ref(i)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(n) => Value::from(n),
            ValueRef::Real(x) => Value::from(x),
            ValueRef::Text(t) => {
                let t = String::from_utf8_lossy(t).into_owned();
                if json.contains(&column.as_str()) { json_column(Some(t)) } else { Value::String(t) }
            }
            ValueRef::Blob(b) => Value::from(format!("<{} bytes>", b.len())),
        };
        data.insert(column.clone(), value);
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database with Crush's two tables, as its first migration makes them.
    fn database(dir: &std::path::Path) -> (String, Connection) {
        let path = dir.join("crush.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
                message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
                completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
                updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
             CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
                parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL, finished_at INTEGER);
             INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('b', 'B', 20, 20), ('a', 'A', 10, 10);",
        )
        .unwrap();
        (path.to_str().unwrap().to_owned(), c)
    }

    #[test]
    fn sessions_are_listed_oldest_first_and_a_new_message_changes_only_its_sessions_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let (path, writer) = database(dir.path());
        let db = Db::open(&path).unwrap();
        assert!(is_crush(&db));
        let before = sessions(&db, "crush").unwrap();
        let ids: Vec<&str> = before.iter().map(|s| s.session.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(before[0].name, format!("{path}#a"));
        writer
            .execute(
                "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
                    VALUES ('m1', 'b', 'user', '[{\"type\":\"text\",\"data\":{\"text\":\"hi\"}}]', 20, 20)",
                [],
            )
            .unwrap();
        let after = sessions(&db, "crush").unwrap();
        assert_eq!(after[0].fingerprint, before[0].fingerprint);
        assert_ne!(after[1].fingerprint, before[1].fingerprint);
        assert!(after[1].size > before[1].size);
    }

    #[test]
    fn opencode_tables_are_not_crush_s() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opencode.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE session (id); CREATE TABLE message (id, data); CREATE TABLE part (id, data);")
            .unwrap();
        assert!(!is_crush(&Db::open(path.to_str().unwrap()).unwrap()));
    }
}
