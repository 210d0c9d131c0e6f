//! Reader for Cursor agent transcripts (`~/.cursor/projects/<project>/agent-transcripts/`).
//!
//! The CLI (`agent`) writes `<id>.jsonl` there, the IDE's agent `<id>/<id>.jsonl`. Each line is
//! `{"role": "user"|"assistant", "message": {"content": [...]}}` with `text` and `tool_use`
//! (`name`, `input`) blocks, and nothing else: no ids, no times, no model and no usage, and no
//! tool results (source: entireio/cli@126f2ac1 cmd/entire/cli/agent/cursor/AGENT.md, and a
//! third-party file of March 2026).
//!
//! So: events are identified by their place (file, line, block), which is stable as long as the
//! file is only appended to; the session id is the file's stem; a user message's time is the
//! `<timestamp>` Cursor writes at its start, when it does, and other events have none; tool calls
//! have no call id and no output to pair with; and there are no usage events at all (Cursor
//! keeps token counts only on its servers). Older `.txt` transcripts are not read.

mod map;

use std::io;

use crate::model::{Agent, Event, ToolFamily};
use crate::read::side::ObjectLines;
use crate::read::{Head, Input, ReadReport, Reader, files_under, home_dir, is_jsonl_name, read_lines};

/// The Cursor agent-transcript reader.
pub struct Cursor;

impl Reader for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Cursor)
    }

    fn description(&self) -> &'static str {
        "Cursor agent transcripts (~/.cursor/projects/<project>/agent-transcripts/<id>.jsonl)"
    }

    /// A transcript line has `role` and `message.content` and none of the keys other agents'
    /// records carry at the top (`type`, `uuid`, `sessionId`, `id`, `timestamp`).
    fn sniff(&self, head: &Head<'_>) -> bool {
        head.records.first().is_some_and(is_transcript_line)
    }

    fn home(&self) -> Option<&'static str> {
        Some("~/.cursor/projects/*/agent-transcripts")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        let Some(root) = home_dir(env, ".cursor/projects") else { return Vec::new() };
        let mut files = files_under(&root, is_jsonl_name);
        files.retain(|path| path.components().any(|c| c.as_os_str() == "agent-transcripts"));
        files
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy()))
    }

    /// Transcripts under `.cursor/projects/<project>/agent-transcripts/`.
    fn owns(&self, path: &std::path::Path) -> bool {
        let transcripts =
            path.ancestors().skip(1).find(|dir| dir.file_name().is_some_and(|n| n == "agent-transcripts"));
        let projects = transcripts
            .and_then(std::path::Path::parent)
            .and_then(std::path::Path::parent)
            .and_then(std::path::Path::file_name);
        self.accepts(path) && projects.is_some_and(|n| n == "projects")
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        let mut mapper = map::Mapper::new(name);
        read_lines(Agent::Cursor, name, bytes, shared.settings(), &ObjectLines { usage: false }, &mut mapper, out)
    }
}

/// Whether a record has the shape of a transcript line.
fn is_transcript_line(record: &serde_json::Value) -> bool {
    let role = record.get("role").and_then(serde_json::Value::as_str);
    let content = record.get("message").and_then(|m| m.get("content"));
    matches!(role, Some("user" | "assistant"))
        && content.is_some_and(|c| c.is_array() || c.is_string())
        && ["type", "uuid", "sessionId", "id", "timestamp", "parentUuid"].iter().all(|k| record.get(k).is_none())
}

/// The family of a Cursor tool, by its name.
pub fn family(name: &str) -> ToolFamily {
    match name {
        "Shell" => ToolFamily::Shell,
        "StrReplace" | "EditNotebook" => ToolFamily::Edit,
        "Delete" => ToolFamily::Write,
        "SemanticSearch" => ToolFamily::Search,
        "TodoWrite" | "CreatePlan" => ToolFamily::Plan,
        other => ToolFamily::of(other),
    }
}
