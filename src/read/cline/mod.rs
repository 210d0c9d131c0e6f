//! Reader for Cline CLI sessions (`~/.cline/data/sessions/<id>/<id>.messages.json`), as Cline
//! CLI 3.0 writes them.
//!
//! A session is one JSON document, rewritten whole on every change:
//!
//! ```text
//! {"version": 1, "updated_at", "agent": "lead", "sessionId", "origin": {source, mode, sessionId, version},
//!  "messages": [{id, role, content: [blocks], ts, modelInfo {id, provider}, metrics {…}, metadata}],
//!  "system_prompt"}
//! ```
//!
//! A sub-agent's messages are a document of the same shape in its parent's folder,
//! `agent_<id>.messages.json`. Beside them lie `<id>.json` (the session's manifest: provider, model, working directory, the
//! prompt) and, after a compaction, `<id>.compaction.json` (the history the model sees since);
//! `~/.cline/data/db/sessions.db` indexes the sessions. The messages file is the input: it
//! holds the whole conversation, compacted or not. Each element of `messages` counts as one
//! record, at the line where it starts ([`map`]); the document's own fields are line 1.
//!
//! The task folders of the VS Code extension (`tasks/<id>/api_conversation_history.json` and
//! `ui_messages.json`) are read too, each file an input of the task's session ([`task`]).
//!
//! Content blocks are Anthropic-shaped (`text`, `thinking`, `tool_use`, `tool_result`,
//! `image`) whichever provider served the model. **Usage** is an assistant message's
//! `metrics {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost}`, one message
//! per model request; `inputTokens` is the whole prompt (cache reads and writes included), so
//! fresh input is what is left of it. A message without `metrics` has no usage event.

mod map;
mod task;

use std::io::{self, Read};

use crate::model::{Agent, Event, ToolFamily};
use crate::read::{FileKind, Head, Input, Peek, ReadReport, Reader, files_under, read_document};

/// The Cline reader.
pub struct Cline;

/// The suffix of a session's messages file.
const MESSAGES_SUFFIX: &str = ".messages.json";

impl Reader for Cline {
    fn name(&self) -> &'static str {
        "cline"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Cline)
    }

    fn description(&self) -> &'static str {
        "Cline CLI sessions (~/.cline/data/sessions/<id>/<id>.messages.json, 3.0) and VS Code task folders"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        if task::kind(head.name).is_some() {
            // A task folder's arrays, told by their names.
            return head.first_line.trim_start().starts_with('[');
        }
        if head.first_line.trim() == "{" {
            // Pretty-printed: the header's keys come first, the messages after them.
            let keys = ["\"updated_at\"", "\"sessionId\"", "\"origin\""];
            let header: String = head.text.lines().take(12).collect::<Vec<_>>().join("\n");
            return header.contains("\"version\"") && keys.iter().all(|k| header.contains(k));
        }
        head.records.first().is_some_and(|record| {
            record.get("sessionId").is_some()
                && record.get("origin").is_some_and(serde_json::Value::is_object)
                && record.get("messages").is_some()
        })
    }

    fn home(&self) -> Option<&'static str> {
        Some("$CLINE_SESSION_DATA_DIR, $CLINE_DATA_DIR/sessions, $CLINE_DIR/data/sessions or ~/.cline/data/sessions")
    }

    /// The folder the CLI itself writes to: `$CLINE_SESSION_DATA_DIR`, else
    /// `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR/data/sessions`, else `~/.cline/data/sessions`.
    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        let set = |key: &str| env(key).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
        let root = set("CLINE_SESSION_DATA_DIR")
            .or_else(|| set("CLINE_DATA_DIR").map(|d| d.join("sessions")))
            .or_else(|| set("CLINE_DIR").map(|d| d.join("data/sessions")))
            .or_else(|| set("HOME").map(|h| h.join(".cline/data/sessions")));
        let mut files = root.map(|root| files_under(&root, is_messages_name)).unwrap_or_default();
        // The VS Code extension's task folders, on Linux and macOS.
        if let Some(home) = set("HOME") {
            for code in [".config/Code/User", "Library/Application Support/Code/User"] {
                let tasks = home.join(code).join("globalStorage/saoudrizwan.claude-dev/tasks");
                files.extend(files_under(&tasks, |n| task::kind(n).is_some()));
            }
        }
        files
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name()
            .is_some_and(|n| is_messages_name(&n.to_string_lossy()) || task::kind(&n.to_string_lossy()).is_some())
    }

    /// Messages files in a `sessions/<id>/` folder: the session's own, named for it, and its
    /// sub-agents' (`agent_<id>.messages.json`).
    fn owns(&self, path: &std::path::Path) -> bool {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else { return false };
        if task::kind(&name).is_some() {
            let tasks = path.parent().and_then(std::path::Path::parent).and_then(std::path::Path::file_name);
            return tasks.is_some_and(|t| t == "tasks");
        }
        let Some(id) = name.strip_suffix(MESSAGES_SUFFIX) else { return false };
        let dir = path.parent();
        let sessions = dir.and_then(std::path::Path::parent).and_then(std::path::Path::file_name);
        let in_its_folder =
            dir.and_then(std::path::Path::file_name).is_some_and(|d| d == id || id.starts_with("agent_"));
        in_its_folder && sessions.is_some_and(|s| s == "sessions")
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        let version = record.get("origin").and_then(|o| o.get("version")).and_then(serde_json::Value::as_str);
        Peek {
            session: record.get("sessionId").and_then(serde_json::Value::as_str).map(str::to_owned),
            version: version.map(str::to_owned),
            ..Peek::default()
        }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn file_kind(&self, _path: &str, _head: &[u8]) -> FileKind {
        FileKind::Session
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, mut bytes, .. } = input;
        let mut text = Vec::new();
        bytes.read_to_end(&mut text)?;
        let read = read_document(Agent::Cline, name, &text, out, |text, emitter| match task::kind(name) {
            Some(kind) => task::document(kind, name, text, emitter),
            None => map::document(name, text, emitter),
        })?;
        if let Some(report) = read {
            return Ok(report);
        }
        // Not one valid document: one diagnostic for it, at the first place it fails to parse.
        Ok(map::invalid(name, &String::from_utf8_lossy(&text)))
    }
}

/// Whether a file name is a Cline session's messages file.
fn is_messages_name(name: &str) -> bool {
    name.len() > MESSAGES_SUFFIX.len() && name.ends_with(MESSAGES_SUFFIX)
}

/// The family of a Cline tool, by its name: the CLI's tools (`run_commands`, `read_files`,
/// `editor`, …) and those of the VS Code extension (`execute_command`, `replace_in_file`, …).
pub fn family(name: &str) -> ToolFamily {
    match name {
        "run_commands" | "execute_command" => ToolFamily::Shell,
        "read_files" | "read_file" => ToolFamily::Read,
        "write_to_file" => ToolFamily::Write,
        "editor" | "replace_in_file" | "apply_patch" => ToolFamily::Edit,
        "search_files" | "list_files" | "list_code_definition_names" | "search_codebase" => ToolFamily::Search,
        "fetch_web_content" | "web_fetch" => ToolFamily::WebFetch,
        "web_search" => ToolFamily::WebSearch,
        "spawn_agent" | "new_task" => ToolFamily::Subagent,
        "focus_chain" | "plan_mode_respond" => ToolFamily::Plan,
        "ask_followup_question" | "ask_question" => ToolFamily::AskUser,
        "use_mcp_tool" | "access_mcp_resource" => ToolFamily::Mcp,
        other => ToolFamily::of(other),
    }
}
