//! Reader for OpenHands conversations, as the OpenHands CLI and the software agent SDK keep
//! them (CLI 1.16.0 with SDK 1.21.0 recorded, `corpus/recorded/openhands/`):
//!
//! ```text
//! ~/.openhands/conversations/<conversation id, hex>/
//!     base_state.json                       the agent's settings, state and usage counters
//!     events/event-00000-<event id>.json    one event a file, numbered in order
//!     events/event-00001-<event id>.json
//! ```
//!
//! `OPENHANDS_CONVERSATIONS_DIR` moves the conversations, `OPENHANDS_PERSISTENCE_DIR` the whole
//! `~/.openhands`. A conversation is one session, read from its `base_state.json`: the events
//! are read from the `events` folder beside it, in the order of their numbers. Each file counts
//! as a line: `base_state.json` is line 1 and the event files follow, so an event file that is
//! not a JSON object is one diagnostic that names it. An event file named on its own is read
//! alone, as a session of one event. A resumed conversation appends to the same folder: it
//! stays one session.
//!
//! **Usage** is not in the events: `base_state.json` keeps, per LLM of the conversation
//! (`stats.usage_to_metrics.<usage id>`, `agent` for the agent's own), one `token_usages` entry
//! per model response with the response's id, and the totals. Each entry becomes one `usage`
//! event, placed after the first event of its response (they name it in `llm_response_id`);
//! entries no event names (a condenser's summaries) come at the end. The totals are an
//! `agent_totals` event, never counted. See [`map`] for the counts.

mod map;

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::model::{Agent, Event, ToolFamily};
use crate::read::{Emitter, Head, Input, Peek, ReadReport, Reader, home_dir};

/// The name of a conversation's state file, the reader's input.
const BASE_STATE: &str = "base_state.json";

/// The OpenHands reader.
pub struct OpenHands;

impl Reader for OpenHands {
    fn name(&self) -> &'static str {
        "openhands"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::OpenHands)
    }

    fn description(&self) -> &'static str {
        "OpenHands CLI conversations (~/.openhands/conversations/<id>/base_state.json and events/)"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        let name = crate::read::file_name(head.name);
        if name == BASE_STATE {
            // The conversation's state: its id, then the agent's settings.
            let line = head.first_line.trim_start();
            return line.starts_with("{\"id\":\"") && line.contains("\"agent\":{");
        }
        // An event file: `{id, timestamp, source, …, kind}`, one line (a system prompt's may be
        // too long to be given as a record: then by its text).
        let line = head.first_line.trim_start();
        is_event_name(name)
            && (head.records.first().is_some_and(|r| {
                r.get("kind").is_some_and(Value::is_string) && r.get("source").is_some() && r.get("id").is_some()
            }) || (line.starts_with("{\"id\":\"") && line.contains("\"source\":\"")))
    }

    fn home(&self) -> Option<&'static str> {
        Some("$OPENHANDS_CONVERSATIONS_DIR, $OPENHANDS_PERSISTENCE_DIR/conversations or ~/.openhands/conversations")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        let Some(root) = conversations_dir(env) else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(&root) else { return Vec::new() };
        let mut found: Vec<PathBuf> =
            entries.filter_map(Result::ok).map(|e| e.path().join(BASE_STATE)).filter(|p| p.is_file()).collect();
        found.sort();
        found
    }

    fn accepts(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|n| n == BASE_STATE)
    }

    /// A conversation's `base_state.json`, and its event files.
    fn owns(&self, path: &Path) -> bool {
        self.accepts(path) || event_layout(path).is_some()
    }

    fn peek(&self, record: &Value) -> Peek {
        Peek { session: record.get("id").and_then(Value::as_str).map(session_id), ..Peek::default() }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, mut bytes, .. } = input;
        let mut text = Vec::new();
        bytes.read_to_end(&mut text)?;
        let path = Path::new(name);
        let lines = non_empty_lines(&text);
        let spans = lines.len() as u64;
        if spans > 1 && serde_json::from_slice::<Map<String, Value>>(&text).is_err() {
            // Not one JSON document, as the CLI writes each of its files: each line is read as a
            // record of its own (an event; anything else is kept as unknown or diagnosed).
            let conversation = event_layout(path).unwrap_or_default();
            let records: Vec<(PathBuf, Vec<u8>)> =
                lines.into_iter().map(|l| (path.to_path_buf(), l.to_vec())).collect();
            return read_files(name, &conversation, None, records.into_iter(), out);
        }
        if let Some(conversation) = event_layout(path) {
            // An event file on its own.
            let mut report = read_files(name, &conversation, None, std::iter::once((path.to_path_buf(), text)), out)?;
            span_document(&mut report, spans);
            return Ok(report);
        }
        let conversation = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
        let files = path.parent().map(|dir| event_files(&dir.join("events"))).unwrap_or_default();
        // Each file read when its turn comes; one that cannot be read is a diagnostic, as one
        // that is not JSON.
        let events = files.into_iter().map(|file| {
            let text = std::fs::read(&file).unwrap_or_default();
            (file, text)
        });
        let mut report =
            read_files(name, &conversation.unwrap_or_default(), (spans > 0).then_some(&text[..]), events, out)?;
        span_document(&mut report, spans);
        Ok(report)
    }
}

/// The non-empty lines of a file.
fn non_empty_lines(text: &[u8]) -> Vec<&[u8]> {
    text.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)).collect()
}

/// Counts the input's first record, one JSON document that parsed, as the lines it spans: the
/// CLI writes each file on one line, but an editor may spread it over several.
fn span_document(report: &mut ReadReport, lines: u64) {
    let more = lines.saturating_sub(1);
    report.lines += more;
    report.lines_mapped += more;
}

/// Reads a conversation: its state (`state`, line 1, when read from `base_state.json`) and
/// its event files, each a line.
fn read_files(
    name: &str,
    conversation: &str,
    state: Option<&[u8]>,
    events: impl Iterator<Item = (PathBuf, Vec<u8>)>,
    out: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadReport> {
    let mut emitter = Emitter::new(Agent::OpenHands, name, out);
    let mut report = ReadReport::default();
    let mut line = 0;
    let state = match state {
        Some(text) => {
            line += 1;
            report.lines += 1;
            let state = crate::read::file_object(name, line, None, text, &mut report);
            report.lines_mapped += u64::from(state.is_some());
            state
        }
        None => None,
    };
    let session = state
        .as_ref()
        .and_then(|s| s.get("id"))
        .and_then(Value::as_str)
        .map_or_else(|| conversation.to_owned(), session_id);
    let mut mapper = map::Mapper::new(session, state);
    for (file, text) in events {
        line += 1;
        report.lines += 1;
        let own = (file.to_string_lossy() != name).then_some(file.as_path());
        let Some(record) = crate::read::file_object(name, line, own, &text, &mut report) else { continue };
        report.lines_mapped += 1;
        mapper.event(&record, line, &mut emitter)?;
    }
    mapper.finish(&mut emitter)?;
    report.events = emitter.count();
    Ok(report)
}

/// A conversation id as the CLI shows it and names its folder: the UUID's hex digits.
fn session_id(id: &str) -> String {
    id.replace('-', "")
}

/// Where the conversations are: `$OPENHANDS_CONVERSATIONS_DIR`, else
/// `$OPENHANDS_PERSISTENCE_DIR/conversations`, else `~/.openhands/conversations`.
fn conversations_dir(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(dir) = env("OPENHANDS_CONVERSATIONS_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = env("OPENHANDS_PERSISTENCE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("conversations"));
    }
    home_dir(env, ".openhands/conversations")
}

/// Whether a file is named as an event file: `event-<number, 5 digits or more>-<id>.json`.
fn is_event_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("event-").and_then(|r| r.strip_suffix(".json")) else { return false };
    let Some((number, id)) = rest.split_once('-') else { return false };
    number.len() >= 5 && number.bytes().all(|b| b.is_ascii_digit()) && !id.is_empty()
}

/// The conversation (its folder's name) of an event file at `path`
/// (`<conversation>/events/event-….json`), if it is one.
fn event_layout(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let events = path.parent()?;
    if !is_event_name(name) || events.file_name()? != "events" {
        return None;
    }
    Some(events.parent()?.file_name()?.to_string_lossy().into_owned())
}

/// The event files of a conversation's `events` folder, in the order of their numbers.
fn event_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<(u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            if !is_event_name(name) || !p.is_file() {
                return None;
            }
            let number = name["event-".len()..].split('-').next()?.parse().ok()?;
            Some((number, p))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p).collect()
}

/// The family of an OpenHands tool, by its name.
pub fn family(name: &str) -> ToolFamily {
    match name {
        "terminal" | "execute_bash" | "bash" => ToolFamily::Shell,
        "file_editor" | "str_replace_editor" | "planning_file_editor" | "apply_patch" | "edit" | "write_file" => {
            ToolFamily::Edit
        }
        "read_file" => ToolFamily::Read,
        "glob" | "grep" | "list_directory" => ToolFamily::Search,
        "task_tracker" => ToolFamily::Plan,
        "delegate" | "task" => ToolFamily::Subagent,
        "fetch" => ToolFamily::WebFetch,
        other if other.starts_with("browser_") => ToolFamily::WebFetch,
        other => ToolFamily::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_files_are_told_by_name_and_folder() {
        assert!(is_event_name("event-00012-0f1e2d3c-aaaa-4bbb-8ccc-123456789abc.json"));
        assert!(is_event_name("event-123456-x.json"), "the number has 5 digits or more");
        assert!(!is_event_name("event-0012-x.json") && !is_event_name("event-00012-.json"));
        assert!(!is_event_name("event-00012-x.jsonl") && !is_event_name("base_state.json"));
        let path = Path::new("/h/.openhands/conversations/abc/events/event-00001-x.json");
        assert_eq!(event_layout(path).as_deref(), Some("abc"));
        assert_eq!(event_layout(Path::new("/h/abc/other/event-00001-x.json")), None);
        assert_eq!(session_id("67315e36-69b9-4cc9-bb2f-a006afdb4288"), "67315e3669b94cc9bb2fa006afdb4288");
    }

    #[test]
    fn event_files_come_in_the_order_of_their_numbers() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["event-00010-b.json", "event-00002-z.json", "event-100000-a.json", ".eventlog.lock", "notes.json"]
        {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        let names: Vec<String> =
            event_files(dir.path()).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["event-00002-z.json", "event-00010-b.json", "event-100000-a.json"]);
    }
}
