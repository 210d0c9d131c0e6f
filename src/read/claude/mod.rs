//! Reader for Claude Code session files (`~/.claude/projects/<key>/*.jsonl` and subagent
//! files).
//!
//! Handles Claude Code 1.0 to 2.1: every record type it writes, the
//! three subagent layouts (1.0 inline sidechains, 2.0 `agent-*.jsonl` beside the sessions, 2.1
//! `<session>/subagents/`), resumed sessions that copy earlier records, and usage repeated on
//! every line of a streamed response.
//!
//! Every line is one record with a top-level `type`. User records are classified by content:
//! typed prompts, tool results, interrupts, commands, bash mode, injected context and compact
//! summaries each map to their own events. Assistant records yield one event per content block
//! and, once per response, a `usage` event. Records, subtypes and blocks this reader does not
//! know are kept whole as `meta` events of type `unknown`.

mod blocks;
mod classify;
mod map;
mod parse;
mod paths;
mod progress;
mod raw;
mod side;
mod skim;
mod usage;

use std::io::{self, BufRead};

use crate::model::{Agent, Event};
use crate::read::{FileKind, Head, Input, Peek, ReadReport, Reader, is_jsonl_name, read_lines, string_at};

/// The Claude Code reader.
pub struct Claude;

impl Reader for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::ClaudeCode)
    }

    fn description(&self) -> &'static str {
        "Claude Code session files (~/.claude/projects/**/*.jsonl), versions 1.0 to 2.1"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        // Every Claude Code record has a string `type` and at least one of these keys; Codex
        // records never carry them.
        const KEYS: [&str; 6] = ["sessionId", "uuid", "parentUuid", "leafUuid", "messageId", "snapshot"];
        // The records are parsed only when the text names a key, quoted (a file of another
        // agent's is told without): a key unless written with escapes, which no agent does.
        static NAMED: std::sync::LazyLock<crate::read::literals::Literals> = std::sync::LazyLock::new(|| {
            let quoted = KEYS.map(|k| format!("\"{k}\""));
            crate::read::literals::Literals::new(&quoted.each_ref().map(String::as_str))
        });
        // Qwen Code's records have the same envelope around Gemini content.
        let records = NAMED.is_match(head.text.as_bytes())
            && head.records.iter().any(|record| {
                record.get("type").is_some_and(serde_json::Value::is_string)
                    && KEYS.iter().any(|k| record.get(k).is_some())
            });
        records && !crate::read::qwen::sniffs(head) || side::sniff(head.name, head.records, head.text)
    }

    fn home(&self) -> Option<&'static str> {
        Some("$CLAUDE_CONFIG_DIR or ~/.claude and ~/.config/claude")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        paths::discover(env)
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy())) || side::accepts(path)
    }

    fn file_kind(&self, path: &str, head: &[u8]) -> FileKind {
        side::kind(path, head)
    }

    fn owns(&self, path: &std::path::Path) -> bool {
        // Qwen Code's project folders are named alike; its transcripts lie in `chats/`.
        self.accepts(path) && paths::in_projects(path) && !crate::read::qwen::owns_path(path)
    }

    /// The files of one project directory: resumed sessions copy each other's records, and a
    /// session's `subagents/` files belong to its project.
    fn group(&self, path: &std::path::Path) -> Option<String> {
        Some(paths::project_of(path).display().to_string())
    }

    fn session_of(&self, path: &str) -> Option<String> {
        side::session_of(path)
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        Peek {
            session: string_at(record, "sessionId"),
            version: string_at(record, "version"),
            agent: None,
            ..Peek::default()
        }
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, mut bytes, shared } = input;
        let settings = shared.settings().clone();
        let kind = side::kind(name, bytes.fill_buf()?);
        if kind != FileKind::Session {
            return side::read(kind, name, bytes, &settings, out);
        }
        let in_memory = shared.in_memory().clone();
        let run = shared.slot::<map::RunState>(self.name());
        let mut mapper = map::Mapper::new(name, run, in_memory);
        read_lines(
            Agent::ClaudeCode,
            name,
            bytes,
            &settings,
            &parse::Parser::new(name, settings.usage_only()),
            &mut mapper,
            out,
        )
    }
}
