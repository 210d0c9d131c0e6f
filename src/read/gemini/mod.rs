//! Reader for Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/`): the one-document JSON of
//! versions before 0.39 (`session-<time>-<id>.json`) and the append-only JSON Lines after it.
//!
//! A JSON Lines session opens with its metadata; then each message record is keyed by `id`, and
//! a later record with the same id replaces the earlier one; `{"$set": {…}}` patches the
//! metadata (and `{"$set": {"messages": […]}}` rewrites every message); `{"$rewindTo": id}` drops
//! that message and those after it. The session is what the records add up to at the end of the
//! file, so a file is mapped when it has been read whole ([`map`]); messages a rewind dropped are
//! kept and flagged `rolled_back`. Subagent sessions live in `chats/<parent session id>/`. The
//! working directory is not in the file: it is looked up in `~/.gemini/projects.json` by the
//! project's folder name, or by its SHA-256 hash for the folders of older versions.

mod map;

use std::io::{self, BufRead, Read};

use crate::model::{Agent, Event, ToolFamily};
use crate::read::side::ObjectLines;
use crate::read::{
    FileKind, Head, Input, LineMapper, Peek, ReadReport, Reader, document_opens_with, files_under, home_dir,
    is_jsonl_name, is_pretty_document, read_document, read_lines, string_at,
};

/// The Gemini CLI reader.
pub struct Gemini;

impl Reader for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::GeminiCli)
    }

    fn description(&self) -> &'static str {
        "Gemini CLI sessions (~/.gemini/tmp/<project>/chats/session-*.json and *.jsonl)"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        // A pretty-printed document opens with a lone brace and `"sessionId"` next.
        if head.first_line.trim() == "{" {
            return document_opens_with(head, "sessionId");
        }
        head.records.first().is_some_and(|record| {
            record.get("sessionId").is_some() && record.get("projectHash").is_some() && record.get("type").is_none()
        })
    }

    fn home(&self) -> Option<&'static str> {
        Some("$GEMINI_CLI_HOME/.gemini or ~/.gemini")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        let root = match env("GEMINI_CLI_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Some(std::path::PathBuf::from(home).join(".gemini/tmp")),
            None => home_dir(env, ".gemini/tmp"),
        };
        let Some(root) = root else { return Vec::new() };
        let mut files = files_under(&root, is_session_name);
        // Only what lies in a `chats` folder (or a subagent folder inside it) is a session.
        files.retain(|path| path.components().any(|c| c.as_os_str() == "chats"));
        files
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_session_name(&n.to_string_lossy()))
    }

    /// Sessions under `tmp/<project>/chats/`.
    fn owns(&self, path: &std::path::Path) -> bool {
        let chats = path.ancestors().skip(1).find(|dir| dir.file_name().is_some_and(|n| n == "chats"));
        let tmp = chats
            .and_then(std::path::Path::parent)
            .and_then(std::path::Path::parent)
            .and_then(std::path::Path::file_name);
        self.accepts(path) && tmp.is_some_and(|n| n == "tmp")
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        Peek { session: string_at(record, "sessionId"), ..Peek::default() }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, mut bytes, shared } = input;
        if !is_pretty_document(bytes.fill_buf()?) {
            let mut mapper = map::Mapper::new(name);
            let parser = ObjectLines { usage: true };
            return read_lines(Agent::GeminiCli, name, bytes, shared.settings(), &parser, &mut mapper, out);
        }
        // A document of the versions before 0.39, rewritten whole on every change: read at once.
        let mut text = Vec::new();
        bytes.read_to_end(&mut text)?;
        let read = read_document(Agent::GeminiCli, name, &text, out, |text, emitter| {
            let Ok(document) = serde_json::from_str(text) else { return Ok(false) };
            let mut mapper = map::Mapper::new(name);
            mapper.document(document, text);
            LineMapper::<map::Parsed>::finish(&mut mapper, emitter)?;
            Ok(true)
        })?;
        if let Some(report) = read {
            return Ok(report);
        }
        // Not a valid document: every line gets its own verdict.
        let mut mapper = map::Mapper::new(name);
        let bytes = Box::new(io::Cursor::new(text));
        read_lines(Agent::GeminiCli, name, bytes, shared.settings(), &ObjectLines { usage: true }, &mut mapper, out)
    }

    fn file_kind(&self, _path: &str, _head: &[u8]) -> FileKind {
        FileKind::Session
    }
}

/// Whether a file name is a Gemini CLI session's: `session-*.json`, or JSON Lines.
fn is_session_name(name: &str) -> bool {
    (name.starts_with("session-") && name.ends_with(".json")) || is_jsonl_name(name)
}

/// The family of a Gemini CLI tool, by its name.
pub fn family(name: &str) -> ToolFamily {
    crate::read::gemini_parts::family(name)
}
