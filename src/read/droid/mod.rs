//! Reader for Factory Droid sessions (`~/.factory/sessions/<cwd with / as ->/<id>.jsonl`).
//!
//! A session file opens with `session_start` (`id`, `title`, `owner`, format `version` 2, `cwd`;
//! a fork adds `parent` and `forkedAtMessageId`), then one `message` record per message, each
//! with `id`, `parentId`, `timestamp` and an Anthropic-shaped `message` (`role`, `content` blocks
//! `text`, `thinking`, `tool_use`, `tool_result`, and `visibility`: `llm_only` for the context
//! Droid adds, `user_only` for notices the model never sees), and `agent_turn_outcome` at the
//! end of each turn. Checked against Droid 0.225.2 and a third-party file of March 2026.
//!
//! **Usage.** Droid 0.225.2 writes no usage into the JSONL file: the session's counts are the
//! `tokenUsage` totals of `<id>.settings.json` beside it, read when the file has been read and
//! given as one `usage` event for the whole session (its own responses only: a fork's settings
//! do not hold what it copied). A message that carries an Anthropic `usage` of its own (as
//! other writers of the format describe) is counted where it stands, and the settings file then
//! adds only what its totals hold beyond those counts, so nothing is counted twice.

mod map;

use std::io;

use crate::model::{Agent, Event, ToolFamily};
use crate::read::side::ObjectLines;
use crate::read::{Head, Input, Peek, ReadReport, Reader, files_under, home_dir, is_jsonl_name, read_lines, string_at};

/// The Factory Droid reader.
pub struct Droid;

impl Reader for Droid {
    fn name(&self) -> &'static str {
        "droid"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::FactoryDroid)
    }

    fn description(&self) -> &'static str {
        "Factory Droid sessions (~/.factory/sessions/<project>/<id>.jsonl, with <id>.settings.json)"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        head.records.first().is_some_and(|record| {
            record.get("type").and_then(serde_json::Value::as_str) == Some("session_start")
                && record.get("id").is_some_and(serde_json::Value::is_string)
                && record.get("version").is_some_and(serde_json::Value::is_number)
        })
    }

    fn home(&self) -> Option<&'static str> {
        Some("~/.factory/sessions")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        home_dir(env, ".factory/sessions").map(|root| files_under(&root, is_jsonl_name)).unwrap_or_default()
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy()))
    }

    /// Sessions under `.factory/sessions/`.
    fn owns(&self, path: &std::path::Path) -> bool {
        let sessions = path.ancestors().skip(1).find(|dir| dir.file_name().is_some_and(|n| n == "sessions"));
        let factory = sessions.and_then(std::path::Path::parent).and_then(std::path::Path::file_name);
        self.accepts(path) && factory.is_some_and(|n| n == ".factory")
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        let session = (record.get("type").and_then(serde_json::Value::as_str) == Some("session_start"))
            .then(|| string_at(record, "id"))
            .flatten();
        Peek { session, ..Peek::default() }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        let mut mapper = map::Mapper::new(name);
        read_lines(Agent::FactoryDroid, name, bytes, shared.settings(), &ObjectLines { usage: true }, &mut mapper, out)
    }
}

/// The family of a Factory Droid tool, by its name.
pub fn family(name: &str) -> ToolFamily {
    match name {
        "Execute" => ToolFamily::Shell,
        "Create" => ToolFamily::Write,
        "ApplyPatch" => ToolFamily::Edit,
        "FetchUrl" => ToolFamily::WebFetch,
        other => ToolFamily::of(other),
    }
}
