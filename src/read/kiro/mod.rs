//! Reader for Kiro CLI conversations: the SQLite store `data.sqlite3` of versions before 2.20
//! (`~/.local/share/kiro-cli/`, on macOS `~/Library/Application Support/kiro-cli/`), files that
//! hold conversation documents one per line (exports, and what tools copy out of the store),
//! and the session journals of 2.20 and later (`~/.kiro/sessions/cli/<id>.jsonl` beside
//! `<id>.json`).
//!
//! No run of Kiro CLI checked this reader: Kiro CLI is on neither npm nor PyPI (the PyPI
//! `kiro-cli` is an unrelated scaffolding tool) and needs an AWS Builder ID login. The document
//! shape is from Amazon Q Developer CLI's source, which Kiro CLI continues (see
//! [`conversation`]), and a third-party file of April 2026; the journal's from third-party
//! readers (see [`journal`]).
//!
//! **No tokens.** Kiro charges credits and keeps no token counts: there are no `usage` events.
//! The credits a journal's sidecar records are kept as data of an `agent_totals` event.

mod conversation;
mod db;
mod journal;

use std::io;
use std::path::PathBuf;

use crate::model::{Agent, Event, ToolFamily};
use crate::read::side::ObjectLines;
use crate::read::store::{Db, StoreError, Stored};
use crate::read::{
    Head, Input, ReadReport, Reader, StoredError, StoredInput, files_under, home_dir, is_jsonl_name, read_lines,
};

/// The Kiro CLI reader.
pub struct Kiro;

impl Reader for Kiro {
    fn name(&self) -> &'static str {
        "kiro"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Kiro)
    }

    fn description(&self) -> &'static str {
        "Kiro CLI conversations (~/.local/share/kiro-cli/data.sqlite3, ~/.kiro/sessions/cli/<id>.jsonl)"
    }

    /// A conversation document (`conversation_id` and `history`) or a journal record
    /// (`version`, `kind` and `data`).
    fn sniff(&self, head: &Head<'_>) -> bool {
        head.records.first().is_some_and(|record| {
            let document =
                record.get("conversation_id").is_some() && record.get("history").is_some_and(|h| h.is_array());
            let journal = record.get("version").is_some()
                && record.get("data").is_some_and(serde_json::Value::is_object)
                && record.get("kind").and_then(serde_json::Value::as_str).is_some_and(|k| JOURNAL_KINDS.contains(&k));
            document || journal
        })
    }

    fn home(&self) -> Option<&'static str> {
        Some("~/.local/share/kiro-cli/data.sqlite3 and ~/.kiro/sessions/cli")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for store in [".local/share/kiro-cli/data.sqlite3", "Library/Application Support/kiro-cli/data.sqlite3"] {
            found.extend(home_dir(env, store).filter(|p| p.is_file()));
        }
        found.extend(
            home_dir(env, ".kiro/sessions/cli").map(|root| files_under(&root, is_jsonl_name)).unwrap_or_default(),
        );
        found
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| n == "data.sqlite3" || is_jsonl_name(&n.to_string_lossy()))
    }

    /// Journals under `.kiro/sessions/`.
    fn owns(&self, path: &std::path::Path) -> bool {
        let sessions = path.ancestors().skip(1).find(|dir| dir.file_name().is_some_and(|n| n == "sessions"));
        let kiro = sessions.and_then(std::path::Path::parent).and_then(std::path::Path::file_name);
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy())) && kiro.is_some_and(|n| n == ".kiro")
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn stored_sessions(&self, db: &Db) -> Option<Result<Vec<Stored>, StoreError>> {
        db::is_kiro(db).then(|| db::sessions(db, self.name()))
    }

    fn read_stored(
        &self,
        input: StoredInput<'_>,
        out: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Result<ReadReport, StoredError> {
        db::read(input, out)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        let mut mapper = journal::Mapper::new(name);
        read_lines(Agent::Kiro, name, bytes, shared.settings(), &ObjectLines { usage: false }, &mut mapper, out)
    }
}

/// The kinds of record a session journal holds.
const JOURNAL_KINDS: [&str; 3] = ["Prompt", "AssistantMessage", "ToolResults"];

/// The family of a Kiro CLI tool, by its name (`fs_read`, `execute_bash` before 2.20; `read`,
/// `shell` in the journals).
pub fn family(name: &str) -> ToolFamily {
    match name {
        "execute_bash" | "execute_cmd" | "shell" => ToolFamily::Shell,
        "fs_read" | "read" => ToolFamily::Read,
        "fs_write" | "write" => ToolFamily::Write,
        "grep" | "glob" => ToolFamily::Search,
        "web_fetch" => ToolFamily::WebFetch,
        "web_search" => ToolFamily::WebSearch,
        "use_subagent" | "subagent" | "delegate" => ToolFamily::Subagent,
        "todo_list" => ToolFamily::Plan,
        other => ToolFamily::of(other),
    }
}
