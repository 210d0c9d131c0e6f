//! OpenCode's database (`opencode.db`, 1.2 and later; Kilo CLI's `kilo.db` has the same tables):
//! tables `session`, `message` and `part`, each message and part a JSON object in `data`.
//!
//! A session is read inside one read transaction: its row, its messages in order of creation
//! (then id), and each message's parts in id order, which is the order they were made in. The
//! `event` table holds every intermediate state of the same rows (a tool part pending, running,
//! completed) and is not read; nor are the tables of state that is not the conversation
//! (`permission`, `session_share`, `kilo_board`). The session's `todo` rows, its current plan,
//! become one `todo_list` event.

use rusqlite::{Connection, Row, params};
use serde_json::{Map, Value};

use super::map::{At, Mapper, SessionInfo};
use crate::model::{Agent, Event, Json, Meta, MetaType, Payload};
use crate::read::store::{Db, Failure, StoreError, Stored, has_table, json_column};
use crate::read::{Emitter, InputDiagnostic, Problem, ReadReport, StoredError, StoredInput};

/// Tables and columns a database of 1.2 to 1.x needs to be read as OpenCode's.
const NEEDED: [(&str, &[&str]); 3] = [
    ("session", &["id", "parent_id", "directory", "title", "version", "time_created", "time_updated"]),
    ("message", &["id", "session_id", "time_created", "time_updated", "data"]),
    ("part", &["id", "message_id", "session_id", "time_updated", "data"]),
];

/// The same for the tables of 2.0 ([`super::v2`]).
const NEEDED_V2: [(&str, &[&str]); 2] = [
    ("session_v2", &["id", "parent_id", "directory", "title", "version", "time_created", "time_updated"]),
    ("session_message", &["id", "session_id", "type", "seq", "time_updated", "data"]),
];

/// Columns of `session` that hold JSON text.
const JSON_COLUMNS: [&str; 6] = ["permission", "model", "summary_diffs", "metadata", "revert", "summary"];

/// Which generations of OpenCode's tables a database holds: 1.2 to 1.x, and 2.0.
fn generations(db: &Db) -> (bool, bool) {
    let v1 = db.has_table("session") && db.has_table("message") && db.has_table("part");
    let v2 = db.has_table("session_v2") && db.has_table("session_message");
    (v1, v2)
}

/// Which agent wrote a database of OpenCode's tables: Kilo CLI's has its own file name
/// (`kilo.db`, `kilo-<channel>.db`) and its board tables; `None` when the tables are not
/// OpenCode's.
pub fn writer_of(db: &Db) -> Option<Agent> {
    if generations(db) == (false, false) {
        return None;
    }
    let name = crate::read::file_name(db.path());
    if name.starts_with("kilo") || db.has_table("kilo_board") { Some(Agent::Kilo) } else { Some(Agent::OpenCode) }
}

/// The sessions of the database, oldest first, each with its fingerprint. A session that 2.0
/// imported into its own tables is read from them; the sessions only the 1.x tables hold (made
/// by 1.x after the import, which 2.0 no longer sees) are read from those.
///
/// # Errors
/// When the tables lack a column the reader needs, or the database cannot be read.
pub fn sessions(db: &Db, reader: &'static str) -> Result<Vec<Stored>, StoreError> {
    let (v1, v2) = generations(db);
    let needed = NEEDED.iter().filter(|_| v1).chain(NEEDED_V2.iter().filter(|_| v2));
    for (table, columns) in needed {
        db.require(table, columns)?;
    }
    // A session changes when its row does, or a row of it is added, removed or updated.
    let counts = |table: &str| {
        format!(
            "(SELECT count(*) || '/' || coalesce(max(time_updated), 0) || '/' || coalesce(sum(octet_length(data)), 0)
                FROM {table} r WHERE r.session_id = s.id)"
        )
    };
    let mut queries = Vec::new();
    if v2 {
        queries.push(format!(
            "SELECT s.id, s.version, s.time_updated, 'v2:' || {}, s.time_created FROM session_v2 s",
            counts("session_message")
        ));
    }
    if v1 {
        let imported = if v2 { " WHERE s.id NOT IN (SELECT id FROM session_v2)" } else { "" };
        queries.push(format!(
            "SELECT s.id, s.version, s.time_updated, {} || ':' || {}, s.time_created FROM session s{imported}",
            counts("message"),
            counts("part")
        ));
    }
    let list = format!("{} ORDER BY 5, 1", queries.join(" UNION ALL "));
    db.snapshot(if v2 { "session_v2" } else { "session" }, |c| {
        let mut statement = c.prepare_cached(&list)?;
        let rows = statement.query_map([], |row| {
            let id: String = row.get(0)?;
            let version: Option<String> = row.get(1)?;
            let updated: i64 = row.get(2)?;
            let counts: String = row.get(3)?;
            // The bytes are the last of each `count/time/bytes`.
            let size = counts.split(':').filter_map(|c| c.rsplit('/').next()?.parse::<u64>().ok()).sum();
            Ok(Stored {
                path: db.path().to_owned(),
                name: format!("{}#{id}", db.path()),
                session: id,
                fingerprint: format!("{updated}:{counts}"),
                version,
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
    agent: Agent,
    input: StoredInput<'_>,
    out: &mut dyn FnMut(Event) -> std::io::Result<()>,
) -> Result<ReadReport, StoredError> {
    crate::read::store::read_session(agent, input, "part", out, |c, stored, emitter, report| {
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
    // A session 2.0 imported is read from its tables, the others from 1.x's.
    let in_v2 = match has_table(c, "session_v2") {
        true => session_row(c, "session_v2", session)?,
        false => None,
    };
    let v2 = in_v2.is_some();
    let found = match in_v2 {
        Some(found) => Some(found),
        None => session_row(c, "session", session)?,
    };
    let Some((info, at)) = found else {
        // Deleted since it was listed: nothing left to read.
        return Ok(());
    };
    let mut mapper = Mapper::new(&info);
    report.lines += 1;
    report.lines_mapped += 1;
    mapper.session(&info, &at, out)?;
    if v2 {
        return read_rows_v2(c, session, name, &mut mapper, out, report);
    }

    let mut messages =
        c.prepare_cached("SELECT rowid, id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")?;
    let mut messages = messages.query(params![session])?;
    // Parts in the order of their messages; parts whose message is gone come last.
    let mut parts = c.prepare_cached(
        "SELECT p.rowid, p.id, p.message_id, p.data FROM part p
            LEFT JOIN message m ON m.id = p.message_id AND m.session_id = p.session_id
            WHERE p.session_id = ?1
            ORDER BY m.id IS NULL, m.time_created, p.message_id, p.id",
    )?;
    let mut parts = parts.query(params![session])?;
    let mut next_part = row_of(parts.next()?, 2)?;
    while let Some(row) = messages.next()? {
        let (rowid, id, data): (i64, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let at = At { line: rowid as u64, id: id.clone(), table: "message" };
        let mut own = Vec::new();
        while let Some(part) = next_part.take_if(|p| p.owner == id) {
            own.push(part);
            next_part = row_of(parts.next()?, 2)?;
        }
        let info = object(name, &at, &data, report);
        report.lines += 1;
        report.lines_mapped += u64::from(info.is_some());
        let parts = objects(name, own, report);
        mapper.message(&info.unwrap_or_default(), &at, &parts, out)?;
    }
    // Parts of a message that is not in the table (removed while they stayed): kept, under a
    // message of their own.
    while let Some(first) = next_part.take() {
        let owner = first.owner.clone();
        let mut own = vec![first];
        next_part = row_of(parts.next()?, 2)?;
        while let Some(part) = next_part.take_if(|p| p.owner == owner) {
            own.push(part);
            next_part = row_of(parts.next()?, 2)?;
        }
        let at = At { line: 0, id: owner, table: "message" };
        let parts = objects(name, own, report);
        mapper.message(&Map::new(), &at, &parts, out)?;
    }
    todo_list(c, session, &mut mapper, out, report)?;
    Ok(())
}

/// A row of `part`, not yet parsed.
struct RawPart {
    rowid: i64,
    id: String,
    owner: String,
    data: String,
}

fn row_of(row: Option<&Row<'_>>, owner: usize) -> rusqlite::Result<Option<RawPart>> {
    let Some(row) = row else { return Ok(None) };
    Ok(Some(RawPart { rowid: row.get(0)?, id: row.get(1)?, owner: row.get(owner)?, data: row.get(3)? }))
}

/// The parts that parse as objects, counted; each that does not is a diagnostic.
fn objects(name: &str, raw: Vec<RawPart>, report: &mut ReadReport) -> Vec<(Map<String, Value>, At)> {
    let mut parsed = Vec::with_capacity(raw.len());
    for part in raw {
        let at = At { line: part.rowid as u64, id: part.id, table: "part" };
        report.lines += 1;
        if let Some(object) = object(name, &at, &part.data, report) {
            report.lines_mapped += 1;
            parsed.push((object, at));
        }
    }
    parsed
}

/// A row's `data` as an object; a diagnostic naming the row when it is not one.
fn object(name: &str, at: &At, data: &str, report: &mut ReadReport) -> Option<Map<String, Value>> {
    match crate::read::parse_object::<Map<String, Value>>(data) {
        Ok(object) => Some(object),
        Err(problem) => {
            let problem = Problem::in_row(at.table, &at.id, problem);
            report.lines_diagnosed += 1;
            report.push(|| InputDiagnostic::new(name, at.line, data, problem));
            None
        }
    }
}

/// The session's row as its info, with every column kept.
fn session_row(c: &Connection, table: &'static str, session: &str) -> rusqlite::Result<Option<(SessionInfo, At)>> {
    let mut statement = c.prepare_cached(&format!("SELECT rowid, * FROM {table} WHERE id = ?1"))?;
    let columns: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut rows = statement.query(params![session])?;
    let Some(row) = rows.next()? else { return Ok(None) };
    let mut data = Map::new();
    for (i, column) in columns.iter().enumerate().skip(1) {
        let value = match row.get_ref(i)? {
            rusqlite::types::ValueRef::Null => Value::Null,
            rusqlite::types::ValueRef::Integer(n) => Value::from(n),
            rusqlite::types::ValueRef::Real(x) => Value::from(x),
            rusqlite::types::ValueRef::Text(t) => {
                let t = String::from_utf8_lossy(t).into_owned();
                if JSON_COLUMNS.contains(&column.as_str()) { json_column(Some(t)) } else { Value::String(t) }
            }
            rusqlite::types::ValueRef::Blob(b) => Value::from(format!("<{} bytes>", b.len())),
        };
        data.insert(column.clone(), value);
    }
    let rowid: i64 = row.get(0)?;
    let text = |key: &str| data.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let parent = text("parent_id");
    let parent_call = match &parent {
        Some(parent) if table == "session" => spawning_call(c, parent, session)?,
        Some(parent) => spawning_call_v2(c, parent, session)?,
        None => None,
    };
    let info = SessionInfo {
        id: session.to_owned(),
        parent,
        parent_call,
        directory: text("directory"),
        title: text("title"),
        version: text("version"),
        created: data.get("time_created").and_then(Value::as_i64),
        data: Value::Null,
    };
    let info = SessionInfo { data: Value::Object(data), ..info };
    Ok(Some((info, At { line: rowid as u64, id: session.to_owned(), table })))
}

/// The call id of the `task` tool part of `parent` whose subagent ran in `child`.
fn spawning_call(c: &Connection, parent: &str, child: &str) -> rusqlite::Result<Option<String>> {
    let mut statement = c.prepare_cached(
        "SELECT json_extract(data, '$.callID') FROM part
            WHERE session_id = ?1 AND json_valid(data) AND json_extract(data, '$.state.metadata.sessionId') = ?2
            ORDER BY id LIMIT 1",
    )?;
    let mut rows = statement.query(params![parent, child])?;
    Ok(match rows.next()? {
        Some(row) => row.get(0)?,
        None => None,
    })
}

/// The `tool` content item of an assistant row of `parent` whose subagent ran in `child`
/// (2.0 names the session in the tool's metadata as 1.x does).
fn spawning_call_v2(c: &Connection, parent: &str, child: &str) -> rusqlite::Result<Option<String>> {
    let mut statement = c.prepare_cached(
        "SELECT json_extract(item.value, '$.id') FROM session_message m, json_each(m.data, '$.content') item
            WHERE m.session_id = ?1 AND m.type = 'assistant' AND json_valid(m.data)
                AND json_extract(item.value, '$.state.metadata.sessionId') = ?2
            ORDER BY m.seq LIMIT 1",
    )?;
    let mut rows = statement.query(params![parent, child])?;
    Ok(match rows.next()? {
        Some(row) => row.get(0)?,
        None => None,
    })
}

/// The rows of a session of 2.0, in their order (`seq`).
fn read_rows_v2(
    c: &Connection,
    session: &str,
    name: &str,
    mapper: &mut Mapper,
    out: &mut Emitter<'_>,
    report: &mut ReadReport,
) -> Result<(), Failure> {
    let mut rows =
        c.prepare_cached("SELECT rowid, id, type, data FROM session_message WHERE session_id = ?1 ORDER BY seq, id")?;
    let mut rows = rows.query(params![session])?;
    while let Some(row) = rows.next()? {
        let (rowid, id, kind, data): (i64, String, String, String) =
            (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
        let at = At { line: rowid as u64, id, table: "session_message" };
        report.lines += 1;
        if let Some(object) = object(name, &at, &data, report) {
            report.lines_mapped += 1;
            mapper.row_v2(&kind, &object, &at, out)?;
        }
    }
    Ok(())
}

/// The session's `todo` rows (its plan as it stands) as one `todo_list` event.
fn todo_list(
    c: &Connection,
    session: &str,
    mapper: &mut Mapper,
    out: &mut Emitter<'_>,
    report: &mut ReadReport,
) -> Result<(), Failure> {
    if !has_table(c, "todo") {
        return Ok(());
    }
    let mut statement = c.prepare_cached(
        "SELECT content, status, priority, time_updated FROM todo WHERE session_id = ?1 ORDER BY position",
    )?;
    let mut rows = statement.query(params![session])?;
    let (mut todos, mut updated) = (Vec::new(), None);
    while let Some(row) = rows.next()? {
        let (content, status, priority): (String, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        todos.push(serde_json::json!({ "content": content, "status": status, "priority": priority }));
        updated = updated.max(row.get::<_, Option<i64>>(3)?);
        report.lines += 1;
        report.lines_mapped += 1;
    }
    if todos.is_empty() {
        return Ok(());
    }
    let at = At { line: 0, id: format!("todo:{session}"), table: "todo" };
    let data = Some(Json::from_value(&serde_json::json!({ "todos": todos })));
    let event =
        mapper.event(&at, "todo", updated, Payload::Meta(Meta { meta_type: MetaType::TodoList, data, usage: None }));
    out.emit_record(event, &at.id, 0)?;
    Ok(())
}
