//! Reader for Crush sessions (charmbracelet/crush): the SQLite database each project keeps in
//! `<project>/.crush/crush.db`, one session per input (`db.rs` reads the tables, `map.rs` maps
//! the rows).
//!
//! Built from Crush's source at commit `37f36e93` (2026-08-21, five commits after v0.90.0) and
//! checked against no run of Crush: its schema is what `internal/db/migrations/*.sql` give, its
//! parts are what `internal/message/message.go` (`marshalParts`) and `content.go` write, the
//! rest is from `internal/session/session.go`, `internal/agent/agent.go` and `coordinator.go`.
//!
//! **Where.** Crush keeps its data in the project (`options.data_directory`, by default the
//! `.crush` directory nearest above the working directory, else one made there), not in the
//! home directory. What a home holds is the list of projects Crush ran in:
//! `projects.json` in the global data directory (`$CRUSH_GLOBAL_DATA`, else
//! `$XDG_DATA_HOME/crush`, else `~/.local/share/crush`), each entry with its `data_dir`;
//! [`Reader::discover`] returns the `crush.db` of each that exists. A project Crush ran in
//! before it kept that list (before 0.25) is found only when named.
//!
//! **Rows.** `sessions` holds one row per session; `messages` one row per message, with role
//! `user`, `assistant` (one model response each: every step of the agent's loop makes a new
//! one), `tool` (the result of one call) or `system`, and its content in `parts`, a
//! JSON array of `{"type": T, "data": {…}}`: `text`, `reasoning`, `image_url`, `binary` (an
//! attachment, base64), `tool_call` (its `input` JSON in a string), `tool_result`, `finish` (why
//! the message ended) and `shell_command` (a command the user ran with `!`, with its exit code).
//! Each row read counts as a line; a message whose `parts` is not a JSON array is one diagnostic.
//! Times are seconds since the epoch, though the schema's comments say milliseconds.
//!
//! **Usage is not per response.** Crush keeps no token counts on messages: a session's
//! `prompt_tokens` and `completion_tokens` are overwritten by each step (they measure the last
//! request's context, not a total), and its `cost` adds up every step, the title request and
//! the sub-agents' sessions (`updateParentSessionCost`). So this reader makes no `usage`
//! events, and no usage is ever given as zero: the session's own figures are in its
//! `session_start` event's `data`, as the row holds them.
//!
//! **Tools.** A call is a `tool_call` part of an assistant message; its result a `tool_result`
//! part of the `tool` message after it, paired by call id. `is_error` is the tool's own error;
//! a command that failed is not one: `bash` ends its output with `Exit code N` (before the
//! `<cwd>` it appends), which becomes the output's exit code.
//!
//! **Sub-agents.** The `agent` and `agentic_fetch` tools run a session of their own, whose
//! `parent_session_id` names the calling session and whose id is `<assistant message id>$$<tool
//! call id>` (before 0.13, the call id alone): its events carry the parent session, the call's
//! id and `is_sidechain`, and its `session_start` says `session_kind: "tool"` with the parent's
//! message id in `extra`. A session `title-<parent id>` (`CreateTitleSession`, which nothing in
//! Crush's history calls: titles are written to the session itself, their request's cost and
//! tokens added to its row) is read the same way, with `session_kind: "title"` and its prompt
//! marked `injected`.
//!
//! Until June 2025 Crush was opencode-ai/opencode, whose `.opencode/opencode.db` has these
//! tables: such a database is read by this reader too (today's OpenCode keeps `session`,
//! `message` and `part`, read by [`crate::read::opencode`]).

pub(crate) mod db;
pub(crate) mod map;

use std::io;
use std::path::{Path, PathBuf};

use crate::model::{Agent, Event, ToolFamily};
use crate::read::store::{Db, StoreError, Stored};
use crate::read::{
    Emitter, Head, Input, Line, LineMapper, LineParser, Problem, ReadReport, Reader, StoredError, StoredInput,
    read_lines,
};

/// The Crush reader.
pub struct Crush;

impl Reader for Crush {
    fn name(&self) -> &'static str {
        "crush"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Crush)
    }

    fn description(&self) -> &'static str {
        "Crush sessions (<project>/.crush/crush.db; the projects listed in ~/.local/share/crush/projects.json)"
    }

    fn sniff(&self, _head: &Head<'_>) -> bool {
        false
    }

    fn home(&self) -> Option<&'static str> {
        Some("the projects in $CRUSH_GLOBAL_DATA, $XDG_DATA_HOME/crush or ~/.local/share/crush (projects.json)")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        databases(&global_data_dir(env).join("projects.json"))
    }

    fn accepts(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|n| n == "crush.db")
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn stored_sessions(&self, db: &Db) -> Option<Result<Vec<Stored>, StoreError>> {
        db::is_crush(db).then(|| db::sessions(db, self.name()))
    }

    fn read_stored(
        &self,
        input: StoredInput<'_>,
        out: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Result<ReadReport, StoredError> {
        db::read(input, out)
    }

    /// Crush writes no files of lines: each line of a file given with `--from crush` is one
    /// diagnostic.
    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        read_lines(Agent::Crush, name, bytes, shared.settings(), &NotADatabase, &mut NotADatabase, out)
    }
}

/// Every line of a file read as Crush's: Crush keeps its sessions only in its database.
#[derive(Clone)]
struct NotADatabase;

impl LineParser for NotADatabase {
    type Parsed = ();

    fn parse(&self, _line: Line<'_>) -> Result<(), Problem> {
        Err(Problem {
            code: "agentlog::input::unexpected_record",
            message: "expected a Crush database (crush.db), but found a line of text".into(),
            column: 0,
            help: Some("Crush keeps its sessions in SQLite, in <project>/.crush/crush.db: name that file"),
            is_error: false,
        })
    }
}

impl LineMapper<()> for NotADatabase {
    fn map(&mut self, _parsed: (), _out: &mut Emitter<'_>) -> io::Result<()> {
        Ok(())
    }
}

/// Crush's global data directory: `$CRUSH_GLOBAL_DATA`, else `$XDG_DATA_HOME/crush`, else
/// `~/.local/share/crush` (`GlobalConfigData` in `internal/config/load.go`).
fn global_data_dir(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set("CRUSH_GLOBAL_DATA") {
        return dir;
    }
    match set("XDG_DATA_HOME") {
        Some(dir) => dir.join("crush"),
        None => crate::read::home_dir(env, ".local/share/crush").unwrap_or_default(),
    }
}

/// The `crush.db` of each project that `projects.json` lists (`internal/projects/projects.go`:
/// `{"projects": [{"path", "data_dir", "last_accessed"}]}`) and that exists, in name order.
fn databases(projects: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(projects) else { return Vec::new() };
    let Ok(list) = serde_json::from_str::<serde_json::Value>(&text) else { return Vec::new() };
    let mut found: Vec<PathBuf> = list
        .get("projects")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("data_dir").and_then(serde_json::Value::as_str))
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join("crush.db"))
        .filter(|db| db.is_file())
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The family of a Crush tool, by its name (`internal/agent/tools/`, `agent_tool.go`).
pub fn family(name: &str) -> ToolFamily {
    match name {
        "bash" | "job_output" | "job_kill" | "user_shell" => ToolFamily::Shell,
        "view" => ToolFamily::Read,
        "write" => ToolFamily::Write,
        "edit" | "multiedit" | "lsp_rename" | "lsp_replace_symbol" => ToolFamily::Edit,
        "glob" | "grep" | "ls" | "sourcegraph" | "diagnostics" | "lsp_diagnostics" | "lsp_references"
        | "lsp_definition" | "lsp_symbols" | "lsp_call_hierarchy" => ToolFamily::Search,
        "fetch" | "web_fetch" | "download" | "agentic_fetch" => ToolFamily::WebFetch,
        "web_search" => ToolFamily::WebSearch,
        "agent" => ToolFamily::Subagent,
        "todos" => ToolFamily::Plan,
        "question" => ToolFamily::AskUser,
        "list_mcp_resources" | "read_mcp_resource" => ToolFamily::Mcp,
        // MCP tools are `mcp_<server>_<tool>` (`mcp-tools.go`).
        _ if name.strip_prefix("mcp_").is_some_and(|rest| rest.contains('_')) => ToolFamily::Mcp,
        other => ToolFamily::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discover_returns_the_databases_of_the_projects_crush_lists() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join(".local/share/crush");
        let (shop, gone) = (home.path().join("shop/.crush"), home.path().join("gone/.crush"));
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&shop).unwrap();
        std::fs::write(shop.join("crush.db"), b"").unwrap();
        let list = serde_json::json!({ "projects": [
            { "path": home.path().join("shop"), "data_dir": shop, "last_accessed": "2026-01-01T00:00:00Z" },
            { "path": home.path().join("gone"), "data_dir": gone, "last_accessed": "2025-01-01T00:00:00Z" },
        ]});
        std::fs::write(data.join("projects.json"), list.to_string()).unwrap();
        let env = |name: &str| (name == "HOME").then(|| home.path().as_os_str().to_owned());
        assert_eq!(Crush.discover(&env), [shop.join("crush.db")]);
        // `CRUSH_GLOBAL_DATA` names the directory itself.
        let env = |name: &str| (name == "CRUSH_GLOBAL_DATA").then(|| data.as_os_str().to_owned());
        assert_eq!(Crush.discover(&env), [shop.join("crush.db")]);
        let env = |name: &str| (name == "XDG_DATA_HOME").then(|| home.path().join("elsewhere").into_os_string());
        assert!(Crush.discover(&env).is_empty());
    }

    #[test]
    fn crush_tools_have_their_families() {
        assert_eq!(family("bash"), ToolFamily::Shell);
        assert_eq!(family("view"), ToolFamily::Read);
        assert_eq!(family("multiedit"), ToolFamily::Edit);
        assert_eq!(family("agent"), ToolFamily::Subagent);
        assert_eq!(family("todos"), ToolFamily::Plan);
        assert_eq!(family("mcp_github_create_issue"), ToolFamily::Mcp);
        assert_eq!(family("crush_info"), ToolFamily::Other);
    }

    #[test]
    fn only_crush_db_is_read_from_a_directory() {
        assert!(Crush.accepts(Path::new("/p/.crush/crush.db")));
        assert!(!Crush.accepts(Path::new("/p/.crush/crush.db-wal")));
        assert!(!Crush.accepts(Path::new("/p/.crush/crush.json")));
    }
}
