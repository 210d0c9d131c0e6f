//! Reader for Claude Code session files (`~/.claude/projects/<key>/*.jsonl` and subagent
//! files).
//!
//! Every line is one record with a top-level `type`. User and assistant records become
//! messages, reasoning, tool calls and tool outputs; an assistant response spread over several
//! lines yields one event per content block. Records of other types are kept whole as `meta`
//! events of type `unknown`.

mod map;
mod raw;

use std::io;

use crate::model::{Agent, Event};
use crate::read::{Input, ReadReport, Reader, read_lines};

/// The Claude Code reader.
pub struct Claude;

impl Reader for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn agent(&self) -> Agent {
        Agent::ClaudeCode
    }

    fn description(&self) -> &'static str {
        "Claude Code session files (~/.claude/projects/**/*.jsonl), versions 1.0 to 2.1"
    }

    fn sniff(&self, head: &[serde_json::Value], _first_line: &str) -> bool {
        // Every Claude Code record has a string `type` and at least one of these keys; Codex
        // records never carry them.
        const KEYS: [&str; 6] = ["sessionId", "uuid", "parentUuid", "leafUuid", "messageId", "snapshot"];
        head.iter().any(|record| {
            record.get("type").is_some_and(serde_json::Value::is_string) && KEYS.iter().any(|k| record.get(k).is_some())
        })
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let mut mapper = map::Mapper::new(input.name);
        read_lines(Agent::ClaudeCode, input, &mut mapper, out)
    }
}
