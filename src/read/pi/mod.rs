//! Reader for pi sessions (`@mariozechner/pi-coding-agent`), kept in
//! `${PI_CODING_AGENT_DIR:-~/.pi/agent}/sessions/--<cwd>--/<time>_<uuid>.jsonl`, or in
//! `$PI_CODING_AGENT_SESSION_DIR`.
//!
//! A session file opens with a `session` header (`version` 3 since pi's extension rework, 2
//! before it, none in the first files) naming the session `id` and `cwd`; every later line is an
//! entry with an `id` and the `parentId` of the entry before it, so that a file holds a tree:
//! going back to an earlier point (`/tree`) makes the next entry a second child of that point.
//! The conversation is the path from the last entry to the root; entries off it are kept, flagged
//! `rolled_back`. Version 1 files have no ids: their entries are one line of conversation. The
//! tree is known once the file has been read, so a file is mapped at its end ([`map`]).
//!
//! A fork (`/fork`, RPC `fork`) is a new file whose header names the file it came from in
//! `parentSession`, and which starts with a copy of the path it was forked at: the same entries,
//! ids and response ids. Its events name the parent session; the copied entries are flagged
//! `copied`, so that their usage is counted once, in the parent.
//!
//! Checked against pi 0.73.1 (recorded in `corpus/recorded/pi/`) and a third-party session
//! of an earlier 2026 version.

mod map;
mod message;

use std::io;

use crate::model::{Agent, Event, ToolFamily};
use crate::read::side::ObjectLines;
use crate::read::{Head, Input, Peek, ReadReport, Reader, files_under, home_dir, is_jsonl_name, read_lines, string_at};

/// The pi reader.
pub struct Pi;

impl Reader for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Pi)
    }

    fn description(&self) -> &'static str {
        "pi sessions (~/.pi/agent/sessions/--<cwd>--/*.jsonl), session versions 1 to 3"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        head.records.first().is_some_and(is_header)
    }

    fn home(&self) -> Option<&'static str> {
        Some("$PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
        let root = set("PI_CODING_AGENT_SESSION_DIR")
            .or_else(|| set("PI_CODING_AGENT_DIR").map(|dir| dir.join("sessions")))
            .or_else(|| home_dir(env, ".pi/agent/sessions"));
        root.map_or_else(Vec::new, |root| files_under(&root, is_jsonl_name))
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy()))
    }

    /// Files in a `--<cwd>--` folder of a `sessions` folder.
    fn owns(&self, path: &std::path::Path) -> bool {
        let folder = path.parent();
        let project = folder.and_then(std::path::Path::file_name).map(|n| n.to_string_lossy().into_owned());
        let sessions = folder.and_then(std::path::Path::parent).and_then(std::path::Path::file_name);
        self.accepts(path)
            && project.is_some_and(|p| p.len() >= 4 && p.starts_with("--") && p.ends_with("--"))
            && sessions.is_some_and(|s| s == "sessions")
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        let session = is_header(record).then(|| string_at(record, "id")).flatten();
        Peek { session, ..Peek::default() }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        let mut mapper = map::Mapper::new(name);
        read_lines(Agent::Pi, name, bytes, shared.settings(), &ObjectLines { usage: true }, &mut mapper, out)
    }
}

/// Whether a record is a pi session header: `{"type":"session","id":…,"timestamp":…,"cwd":…}`
/// with a numeric `version`, if any.
fn is_header(record: &serde_json::Value) -> bool {
    record.get("type").and_then(serde_json::Value::as_str) == Some("session")
        && record.get("id").is_some_and(serde_json::Value::is_string)
        && record.get("cwd").is_some_and(serde_json::Value::is_string)
        && record.get("timestamp").is_some()
        && record.get("version").is_none_or(serde_json::Value::is_u64)
}

/// The family of a pi tool, by its name (pi's built-in tools are lower case).
pub fn family(name: &str) -> ToolFamily {
    match name {
        "bash" => ToolFamily::Shell,
        "read" => ToolFamily::Read,
        "write" => ToolFamily::Write,
        "edit" => ToolFamily::Edit,
        "grep" | "find" | "ls" => ToolFamily::Search,
        other => ToolFamily::of(other),
    }
}
