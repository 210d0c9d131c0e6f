//! Reader for Qwen Code sessions (`~/.qwen/projects/<project>/chats/<session>.jsonl` and the
//! subagent transcripts in `projects/<project>/subagents/<session>/agent-<agent id>.jsonl`).
//!
//! Qwen Code began as a fork of Gemini CLI; its session files now have a Claude-Code-like
//! envelope (one complete record per line with `uuid`, `parentUuid`, `sessionId`, `timestamp`,
//! `type`, `cwd`, `version`; the project folder named after the working directory, its
//! characters other than ASCII letters and digits made `-`) around Gemini's content: a
//! record's `message` is a Gemini `Content`, `{role, parts}`, whose parts (`text`,
//! `thought: true`, `functionCall`, `functionResponse`, `inlineData`) are mapped by the
//! Gemini reader's part functions, and usage is counted with Gemini's names. The file is
//! appended to, never rewritten: a resumed session (`--continue`, `--resume`) goes on in the
//! same file. See [`map`] for what maps to what and how usage is counted.

mod map;

use std::io;

use crate::model::{Agent, Event, ToolFamily};
use crate::read::side::ObjectLines;
use crate::read::{Head, Input, Peek, ReadReport, Reader, files_under, home_dir, is_jsonl_name, read_lines, string_at};

/// The Qwen Code reader.
pub struct Qwen;

impl Reader for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::QwenCode)
    }

    fn description(&self) -> &'static str {
        "Qwen Code sessions (~/.qwen/projects/<project>/chats/*.jsonl and subagents/), version 0.24"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        sniffs(head)
    }

    fn home(&self) -> Option<&'static str> {
        Some("$QWEN_RUNTIME_DIR, $QWEN_HOME or ~/.qwen")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        let dir = |name: &str| env(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
        let Some(root) = dir("QWEN_RUNTIME_DIR").or_else(|| dir("QWEN_HOME")).or_else(|| home_dir(env, ".qwen")) else {
            return Vec::new();
        };
        let mut files = files_under(&root.join("projects"), is_jsonl_name);
        files.retain(|path| in_layout(path));
        files
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy())) && in_layout(path)
    }

    fn owns(&self, path: &std::path::Path) -> bool {
        self.accepts(path) && owns_path(path)
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        Peek { session: string_at(record, "sessionId"), version: string_at(record, "version"), ..Peek::default() }
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        let mut mapper = map::Mapper::new(name);
        read_lines(Agent::QwenCode, name, bytes, shared.settings(), &ObjectLines { usage: true }, &mut mapper, out)
    }
}

/// Whether the first records of a file are Qwen Code's: the envelope of Claude Code's records
/// (`uuid`, `sessionId`, a string `type`) around Gemini content (`message.parts`, a `model`
/// role) or a `systemPayload`. Claude Code's reader asks this too, since the envelope alone
/// would be its own.
pub(crate) fn sniffs(head: &Head<'_>) -> bool {
    // The records are parsed only when the text may hold Gemini content: the keys quoted, or
    // `"model"` as a value (after a colon), as no agent writes them with escapes.
    static KEYS: std::sync::LazyLock<crate::read::literals::Literals> =
        std::sync::LazyLock::new(|| crate::read::literals::Literals::new(&["\"parts\"", "\"systemPayload\""]));
    let text = head.text.as_bytes();
    let model = memchr::memmem::find_iter(text, b"\"model\"").any(|at| text[..at].trim_ascii_end().ends_with(b":"));
    (model || KEYS.is_match(text))
        && head.records.iter().any(|record| {
            let envelope = record.get("uuid").is_some()
                && record.get("sessionId").is_some()
                && record.get("type").is_some_and(serde_json::Value::is_string);
            let message = record.get("message");
            let gemini_content = message.and_then(|m| m.get("parts")).is_some_and(serde_json::Value::is_array)
                || message.and_then(|m| m.get("role")).and_then(serde_json::Value::as_str) == Some("model");
            envelope && (gemini_content || record.get("systemPayload").is_some_and(serde_json::Value::is_object))
        })
}

/// Whether a file lies where Qwen Code keeps transcripts: in a `chats` folder (a session) or
/// its `archive` (an archived one), or in `subagents/<session>/` (a subagent's).
fn in_layout(path: &std::path::Path) -> bool {
    let parent = path.parent();
    let grandparent = parent.and_then(std::path::Path::parent);
    let name = |dir: Option<&std::path::Path>| dir.and_then(std::path::Path::file_name).map(|n| n.to_owned());
    name(parent).is_some_and(|n| n == "chats")
        || name(parent).is_some_and(|n| n == "archive") && name(grandparent).is_some_and(|n| n == "chats")
        || name(grandparent).is_some_and(|n| n == "subagents")
}

/// Whether a file lies in Qwen Code's own layout under `projects/<project>/`: a `chats` folder
/// or a subagent folder there. Claude Code's reader asks this too, since its project folders
/// are named alike.
pub(crate) fn owns_path(path: &std::path::Path) -> bool {
    let project =
        path.ancestors().skip(1).find(|dir| dir.file_name().is_some_and(|n| n == "chats" || n == "subagents"));
    let projects = project.and_then(std::path::Path::parent).and_then(std::path::Path::parent);
    in_layout(path) && projects.and_then(std::path::Path::file_name).is_some_and(|n| n == "projects")
}

/// The family of a Qwen Code tool, by its name; the names it kept from Gemini CLI are
/// Gemini's.
pub fn family(name: &str) -> ToolFamily {
    match name {
        "notebook_edit" => ToolFamily::Edit,
        "web_search" => ToolFamily::WebSearch,
        "todo_write" | "exit_plan_mode" => ToolFamily::Plan,
        // `task` before the tool was renamed.
        "agent" | "task" => ToolFamily::Subagent,
        "ask_user_question" => ToolFamily::AskUser,
        other => crate::read::gemini_parts::family(other),
    }
}
