//! Reader for GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>/events.jsonl`, and
//! the older flat `~/.copilot/session-state/<id>.jsonl`).
//!
//! Every line is an event `{type, data, id, timestamp, parentId}`, with a top-level `agentId`
//! (1.0.74 and later) or only `data.parentToolCallId` (1.0.20) on the events of an inline
//! subagent. Messages, reasoning, tool requests and executions become their events (an
//! attachment's `session.binary_asset` an image part of its message, a shell command's exit code
//! its output's); hooks, permissions, model, mode and permission changes, turns, subagent
//! notices, notifications and a compaction's `model.*` records become meta events; types this
//! reader does not know are kept whole as `unknown`. Usage: see the `usage` module.

mod map;
mod output;
mod usage;

use std::io;

use crate::model::{Agent, Event, ToolFamily};
use crate::read::{FileKind, Head, Input, Peek, ReadReport, Reader, files_under, home_dir, is_jsonl_name, string_at};

/// The Copilot CLI reader.
pub struct Copilot;

/// The event types that open or fill a Copilot CLI session file.
const TYPES: [&str; 8] = [
    "session.",
    "user.message",
    "assistant.",
    "tool.execution_",
    "hook.",
    "subagent.",
    "system.message",
    "permission.",
];

impl Reader for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::CopilotCli)
    }

    fn description(&self) -> &'static str {
        "GitHub Copilot CLI sessions (~/.copilot/session-state/<id>/events.jsonl, older <id>.jsonl)"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        head.records.iter().any(|record| {
            let kind = record.get("type").and_then(serde_json::Value::as_str).unwrap_or_default();
            record.get("data").is_some_and(serde_json::Value::is_object)
                && record.get("id").is_some()
                && TYPES.iter().any(|t| kind.starts_with(t))
        })
    }

    fn home(&self) -> Option<&'static str> {
        Some("~/.copilot")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        let Some(root) = home_dir(env, ".copilot/session-state") else { return Vec::new() };
        files_under(&root, is_jsonl_name)
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy()))
    }

    /// Sessions under `session-state/`: `<id>/events.jsonl` and the older `<id>.jsonl`.
    fn owns(&self, path: &std::path::Path) -> bool {
        let parent = path.parent();
        let state = |dir: Option<&std::path::Path>| {
            dir.and_then(std::path::Path::file_name).is_some_and(|n| n == "session-state")
        };
        self.accepts(path)
            && (state(parent)
                || (state(parent.and_then(std::path::Path::parent))
                    && path.file_name().is_some_and(|n| n == "events.jsonl")))
    }

    fn file_kind(&self, _path: &str, _head: &[u8]) -> FileKind {
        FileKind::Session
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        let data = record.get("data").unwrap_or(record);
        if record.get("type").and_then(serde_json::Value::as_str) != Some("session.start") {
            return Peek::default();
        }
        Peek { session: string_at(data, "sessionId"), version: string_at(data, "copilotVersion"), ..Peek::default() }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        let mut mapper = map::Mapper::new(name);
        crate::read::read_lines(
            Agent::CopilotCli,
            name,
            bytes,
            shared.settings(),
            &crate::read::side::ObjectLines { usage: true },
            &mut mapper,
            out,
        )
    }
}

/// The family of a Copilot CLI tool, by its name.
pub fn family(name: &str) -> ToolFamily {
    match name {
        "bash" | "powershell" | "read_bash" | "write_bash" | "stop_bash" | "read_powershell" | "write_powershell"
        | "stop_powershell" => ToolFamily::Shell,
        "view" => ToolFamily::Read,
        "create" => ToolFamily::Write,
        "edit" | "str_replace_editor" | "apply_patch" => ToolFamily::Edit,
        "glob" | "grep" | "rg" => ToolFamily::Search,
        "web_fetch" => ToolFamily::WebFetch,
        "web_search" => ToolFamily::WebSearch,
        "task" | "dispatch" => ToolFamily::Subagent,
        "update_todo" | "report_intent" => ToolFamily::Plan,
        "ask_user" => ToolFamily::AskUser,
        other => ToolFamily::of(other),
    }
}
