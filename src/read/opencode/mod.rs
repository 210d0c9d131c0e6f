//! Reader for OpenCode sessions: the database of 1.2 and later (`opencode.db`, one session per
//! input, see [`db`]) and the documents `opencode export <session>` writes
//! (`{info, messages: [{info, parts}]}`).
//!
//! OpenCode keeps its data in `${XDG_DATA_HOME:-~/.local/share}/opencode/`; channel builds
//! other than latest and beta write `opencode-<channel>.db` there. Kilo CLI, a fork, keeps the
//! same tables in `kilo.db` and is read by [`crate::read::kilo`] with this reader's code.

pub(crate) mod db;
mod legacy;
pub(crate) mod map;
mod v2;

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::model::{Agent, Event, ToolFamily};
use crate::read::store::{Db, StoreError, Stored};
use crate::read::{
    Emitter, Head, Input, Peek, ReadReport, Reader, StoredError, StoredInput, document_opens_with, read_document,
    string_at,
};
use map::{At, Mapper, SessionInfo};

/// The OpenCode reader.
pub struct OpenCode;

impl Reader for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::OpenCode)
    }

    fn description(&self) -> &'static str {
        "OpenCode sessions (~/.local/share/opencode/opencode.db, 1.2 and later; `opencode export` documents)"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        // An export: a pretty-printed document whose first key is `info`, a session's; or the
        // info file of a session of 1.1 and earlier, whose first key is its `ses_…` id.
        (document_opens_with(head, "info") || document_opens_with(head, "id")) && head.text.contains("\"ses_")
    }

    fn home(&self) -> Option<&'static str> {
        Some("$XDG_DATA_HOME/opencode or ~/.local/share/opencode")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        let dir = data_dir(env, "opencode");
        let mut found = databases(&dir, "opencode");
        // The JSON files of 1.1 and earlier, which later versions leave where they are.
        for root in [dir.join("storage/session"), dir.join("project")] {
            let files = crate::read::files_under(&root, |n| n.ends_with(".json"));
            found.extend(files.into_iter().filter(|p| legacy::layout(p).is_some()));
        }
        found
    }

    fn accepts(&self, path: &Path) -> bool {
        is_database_name(path, "opencode") || legacy::layout(path).is_some()
    }

    /// The session files of 1.1 and earlier (`storage/session/<project>/<session>.json`).
    fn owns(&self, path: &Path) -> bool {
        legacy::layout(path).is_some()
    }

    fn peek(&self, record: &Value) -> Peek {
        let info = record.get("info");
        Peek {
            session: info.and_then(|i| string_at(i, "id")),
            version: info.and_then(|i| string_at(i, "version")),
            ..Peek::default()
        }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn stored_sessions(&self, db: &Db) -> Option<Result<Vec<Stored>, StoreError>> {
        (db::writer_of(db)? == Agent::OpenCode).then(|| db::sessions(db, self.name()))
    }

    fn read_stored(
        &self,
        input: StoredInput<'_>,
        out: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Result<ReadReport, StoredError> {
        db::read(Agent::OpenCode, input, out)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Some(layout) = legacy::layout(Path::new(input.name)) else {
            return read_export(Agent::OpenCode, input, out);
        };
        let Input { name, mut bytes, .. } = input;
        let mut text = Vec::new();
        bytes.read_to_end(&mut text)?;
        legacy::read(name, &text, &layout, out)
    }
}

/// Reads an `opencode export` document: the whole of it, or, when it is not one valid document,
/// one diagnostic for it.
pub(crate) fn read_export(
    agent: Agent,
    input: Input<'_>,
    out: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadReport> {
    let Input { name, mut bytes, .. } = input;
    let mut text = Vec::new();
    bytes.read_to_end(&mut text)?;
    let read = read_document(agent, name, &text, out, |text, emitter| {
        let Ok(Value::Object(document)) = serde_json::from_str::<Value>(text) else { return Ok(false) };
        export(document, text, emitter)?;
        Ok(true)
    })?;
    if let Some(report) = read {
        return Ok(report);
    }
    // Not a valid document: one diagnostic, at the first place it fails to parse.
    let text = String::from_utf8_lossy(&text);
    let problem = match serde_json::from_str::<Value>(&text) {
        Err(e) => crate::read::Problem::from_json(&e),
        Ok(_) => crate::read::Problem::not_an_object("a document without `info` and `messages`"),
    };
    let line = text.lines().next().unwrap_or_default();
    let mut report = ReadReport { lines: crate::read::lines::counted_lines(&text), ..ReadReport::default() };
    report.lines_diagnosed = report.lines;
    report.push(|| crate::read::InputDiagnostic::new(name, 1, line, problem));
    Ok(report)
}

/// Maps an export document; each record sits at the line where its id is written.
fn export(mut document: Map<String, Value>, text: &str, out: &mut Emitter<'_>) -> io::Result<()> {
    let mut lines = Lines { text, at: 0, line: 1 };
    let mut line_of = |id: &str| lines.of(id);
    let info = match document.remove("info") {
        Some(Value::Object(info)) => info,
        _ => Map::new(),
    };
    let session = session_info(&info);
    let mut mapper = Mapper::new(&session);
    let at = At { line: line_of(&session.id), id: session.id.clone(), table: "session" };
    mapper.session(&session, &at, out)?;
    let messages = match document.remove("messages") {
        Some(Value::Array(messages)) => messages,
        _ => Vec::new(),
    };
    for (n, message) in messages.into_iter().enumerate() {
        // What is not a message is kept whole, as every record agentlog does not know.
        let Value::Object(mut message) = message else {
            unknown(&mapper, &format!("{}#messages[{n}]", session.id), "message", message, out)?;
            continue;
        };
        let info = match message.remove("info") {
            Some(Value::Object(info)) => info,
            _ => Map::new(),
        };
        let id = info.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let at = At { line: line_of(&id), id, table: "message" };
        let mut parts = Vec::new();
        for (k, part) in message.remove("parts").map_or_else(Vec::new, into_list).into_iter().enumerate() {
            match part {
                Value::Object(p) => {
                    let id = p.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                    parts.push((p, At { line: line_of(&id), id, table: "part" }));
                }
                other => unknown(&mapper, &format!("{}#parts[{k}]", at.id), "part", other, out)?,
            }
        }
        // Fields of a message besides its info and parts.
        if !message.is_empty() {
            unknown(&mapper, &format!("{}#rest", at.id), "message", Value::Object(message), out)?;
        }
        mapper.message(&info, &at, &parts, out)?;
    }
    Ok(())
}

/// A list's items; any other value as the only item.
fn into_list(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        other => vec![other],
    }
}

/// Keeps a value of an export that is not the record it should be, whole, as an `unknown` event
/// keyed by where it was (`key`).
fn unknown(mapper: &Mapper, key: &str, table: &'static str, value: Value, out: &mut Emitter<'_>) -> io::Result<()> {
    let at = At { line: 0, id: key.to_owned(), table };
    let data = serde_json::json!({ table: value });
    out.emit_record(mapper.meta(&at, "unknown", None, crate::model::MetaType::Unknown, &data), key, 0)
}

/// Finds the lines where an export's records are written. The records come in document order,
/// so each search starts where the last one ended, and the document is scanned about once.
struct Lines<'t> {
    text: &'t str,
    /// Where the last record was found, and its line.
    at: usize,
    line: u64,
}

impl Lines<'_> {
    /// The line of the record whose id is `id`: where `"id": "<id>"` is written, else the id
    /// itself; the last line found when neither is.
    fn of(&mut self, id: &str) -> u64 {
        if id.is_empty() {
            return self.line;
        }
        let rest = &self.text[self.at..];
        let found = rest.find(&format!("\"id\": \"{id}\"")).or_else(|| rest.find(&format!("\"{id}\"")));
        if let Some(i) = found {
            self.line += rest[..i].matches('\n').count() as u64;
            self.at += i;
        }
        self.line
    }
}

/// A session's info in the camel-case form of exports and of the JSON files of 1.1 and before.
pub(crate) fn session_info(info: &Map<String, Value>) -> SessionInfo {
    let text = |key: &str| info.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    SessionInfo {
        id: text("id").unwrap_or_default(),
        parent: text("parentID"),
        parent_call: None,
        directory: text("directory"),
        title: text("title"),
        version: text("version"),
        created: info.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64),
        data: Value::Object(info.clone()),
    }
}

/// The agent's data directory: `$XDG_DATA_HOME/<app>`, else `~/.local/share/<app>`.
pub(crate) fn data_dir(env: &dyn Fn(&str) -> Option<std::ffi::OsString>, app: &str) -> PathBuf {
    match env("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join(app),
        None => crate::read::home_dir(env, ".local/share").unwrap_or_default().join(app),
    }
}

/// The databases `<app>.db` and `<app>-<channel>.db` directly in `dir`, in name order.
pub(crate) fn databases(dir: &Path, app: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file() && is_database_name(p, app)).collect();
    found.sort();
    found
}

/// Whether a file is named as `app`'s database: `<app>.db` or `<app>-<channel>.db`.
pub(crate) fn is_database_name(path: &Path, app: &str) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    name.strip_suffix(".db")
        .and_then(|stem| stem.strip_prefix(app))
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
}

/// The family of an OpenCode (or Kilo CLI) tool, by its name.
pub fn family(name: &str) -> ToolFamily {
    match name {
        "bash" | "background_process" => ToolFamily::Shell,
        "read" => ToolFamily::Read,
        "write" => ToolFamily::Write,
        "edit" | "multiedit" | "patch" | "apply_patch" => ToolFamily::Edit,
        "glob" | "grep" | "list" | "ls" | "codesearch" | "lsp" => ToolFamily::Search,
        "webfetch" => ToolFamily::WebFetch,
        "websearch" => ToolFamily::WebSearch,
        "todowrite" | "todoread" => ToolFamily::Plan,
        "task" => ToolFamily::Subagent,
        "question" => ToolFamily::AskUser,
        other => ToolFamily::of(other),
    }
}
