//! Where Claude Code keeps a subagent's relatives: its sidecar and its parent session file.
//!
//! Layouts: 2.0 writes `agent-<id>.jsonl` beside the
//! session files; 2.1 writes `<session>/subagents/agent-<id>.jsonl` (also under
//! `subagents/workflows/<run>/`) with an `agent-<id>.meta.json` sidecar. 1.0 keeps subagents
//! inline in the session file.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::raw::{Block, Content, ResultFacts, Sidecar};
use crate::read::Object;

/// Claude Code's config roots: each entry of `$CLAUDE_CONFIG_DIR` (a comma-separated list), else
/// `~/.claude` and `$XDG_CONFIG_HOME/claude` (default `~/.config/claude`); duplicates removed.
pub fn roots(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = match env("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(list) => {
            list.to_string_lossy().split(',').map(str::trim).filter(|s| !s.is_empty()).map(PathBuf::from).collect()
        }
        None => {
            let xdg = env("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(|x| PathBuf::from(x).join("claude"));
            crate::read::home_dir(env, ".claude")
                .into_iter()
                .chain(xdg.or_else(|| crate::read::home_dir(env, ".config/claude")))
                .collect()
        }
    };
    let mut seen = std::collections::HashSet::new();
    roots.retain(|r| seen.insert(r.canonicalize().unwrap_or_else(|_| r.clone())));
    roots
}

/// Every session file under the roots' `projects/`, subagent folders included, then the side
/// files of each root.
pub fn discover(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    roots(env)
        .iter()
        .flat_map(|root| {
            // One walk of `projects/` finds the transcripts and the memory files beside them.
            let (transcripts, others): (Vec<PathBuf>, Vec<PathBuf>) =
                crate::read::files_under(&root.join("projects"), |_| true)
                    .into_iter()
                    .partition(|p| p.extension().is_some_and(|e| e == "jsonl"));
            let memory = others.into_iter().filter(|p| super::side::accepts(p)).collect();
            transcripts.into_iter().chain(super::side::discover(root, memory))
        })
        .collect()
}

/// The agent id in a subagent file's name (`agent-a881341.jsonl` → `a881341`).
pub fn subagent_id(name: &str) -> Option<&str> {
    let file = crate::read::file_name(name);
    file.strip_prefix("agent-")?.strip_suffix(".jsonl")
}

/// The call id the sidecar of a 2.1 subagent file names as its spawning tool call.
pub fn sidecar_call(path: &Path) -> Option<String> {
    let sidecar = path.with_extension("meta.json");
    let text = std::fs::read_to_string(sidecar).ok()?;
    serde_json::from_str::<Sidecar>(&text).ok()?.tool_use_id
}

/// The session file a subagent file belongs to: `<session>.jsonl` beside the `<session>/`
/// folder that holds `subagents/` (2.1), or `<session_id>.jsonl` beside the agent file (2.0).
pub fn parent_session_file(path: &Path, session_id: &str) -> Option<PathBuf> {
    let nested = session_dir_of(path).map(|session_dir| session_dir.with_extension("jsonl"));
    let beside = path.parent().map(|dir| dir.join(format!("{session_id}.jsonl")));
    nested.into_iter().chain(beside).find(|p| p.is_file())
}

/// The call ids of the tool calls whose results name a subagent (`toolUseResult.agentId` of a
/// Task or Agent result) in the session file at `path`, by agent id; the first result naming
/// an agent counts (`None` when that record has no message).
pub fn spawning_calls(path: &Path) -> HashMap<String, Option<String>> {
    let mut calls = HashMap::new();
    let Ok(mut file) = File::open(path) else { return calls };
    // Read in large pieces, and only the lines naming an agent looked at: few lines do.
    let mut buf = Vec::with_capacity(1 << 20);
    loop {
        let before = buf.len();
        let read = std::io::Read::by_ref(&mut file).take(1 << 20).read_to_end(&mut buf).unwrap_or(0);
        // Whole lines only, but for the last one of the file.
        let whole =
            if read == 0 { buf.len() } else { memchr::memrchr(b'\n', &buf[before..]).map_or(0, |i| before + i + 1) };
        note_spawning_calls(&buf[..whole], &mut calls);
        buf.drain(..whole);
        if read == 0 {
            return calls;
        }
    }
}

/// [`spawning_calls`] of a session file in memory.
pub fn spawning_calls_in(bytes: &[u8]) -> HashMap<String, Option<String>> {
    let mut calls = HashMap::new();
    note_spawning_calls(bytes, &mut calls);
    calls
}

/// Notes the spawning calls of whole lines.
fn note_spawning_calls(lines: &[u8], calls: &mut HashMap<String, Option<String>>) {
    static AGENT: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("\"agentId\""));
    let mut done = 0;
    for at in AGENT.find_iter(lines) {
        if at < done {
            continue;
        }
        let start = memchr::memrchr(b'\n', &lines[..at]).map_or(0, |i| i + 1);
        done = memchr::memchr(b'\n', &lines[at..]).map_or(lines.len(), |i| at + i + 1);
        spawning_call(&lines[start..done], calls);
    }
}

/// Notes the agent a Task or Agent result names (`toolUseResult.agentId`) and the call it
/// answers, unless that agent was named before.
fn spawning_call(line: &[u8], calls: &mut HashMap<String, Option<String>>) {
    let Ok(text) = std::str::from_utf8(line) else { return };
    let Ok(record) = Object::parse(text.trim_end()) else { return };
    let Some(agent) = record
        .raw("toolUseResult")
        .and_then(|r| serde_json::from_str::<ResultFacts<'_>>(r.get()).ok())
        .and_then(|facts| facts.agent_id.map(std::borrow::Cow::into_owned))
    else {
        return;
    };
    if calls.contains_key(&agent) {
        return;
    }
    match record.raw("message").and_then(|m| Object::from_raw(m).ok()) {
        None => {
            calls.insert(agent, None);
        }
        Some(message) => {
            if let Some(id) = result_call(&message) {
                calls.insert(agent, Some(id));
            }
        }
    }
}

/// The `tool_use_id` of the first tool result block of a message.
fn result_call(message: &Object<'_>) -> Option<String> {
    let Ok(Some(Content::Blocks(blocks))) = Content::of(message) else { return None };
    blocks.into_iter().find_map(|block| {
        let object = block.ok()?;
        let block = object.get::<Block<'_>>().ok()?;
        (block.block_type == "tool_result").then_some(block.tool_use_id?.into_owned())
    })
}

/// The project directory of a session file: its own directory, or, for a file under a
/// session's `subagents/` directory, the session's.
pub fn project_of(path: &Path) -> &Path {
    let project = match session_dir_of(path) {
        Some(session_dir) => session_dir.parent(),
        None => path.parent(),
    };
    project.unwrap_or(Path::new(""))
}

/// Whether a file lies under a project folder of Claude Code's `projects/`: a folder named for
/// the working directory, its slashes turned to dashes (`projects/-home-dev-shop/…`).
pub fn in_projects(path: &Path) -> bool {
    let mut ancestors = path.ancestors().skip(1);
    ancestors.any(|dir| {
        dir.file_name().is_some_and(|key| key.to_string_lossy().starts_with('-'))
            && dir.parent().and_then(Path::file_name).is_some_and(|p| p == "projects")
    })
}

/// The session a file under a session's folder belongs to (`<session>/subagents/…`), by the
/// folder's name.
pub fn session_of_folder(path: &Path) -> Option<String> {
    session_dir_of(path).and_then(Path::file_name).map(|name| name.to_string_lossy().into_owned())
}

/// The `<session>/` folder of a 2.1 subagent file: the one holding its `subagents/` ancestor.
fn session_dir_of(path: &Path) -> Option<&Path> {
    path.ancestors().find(|a| a.file_name().is_some_and(|n| n == "subagents")).and_then(Path::parent)
}
