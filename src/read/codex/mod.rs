//! Reader for Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Lines come in the `{timestamp, type, payload}` envelope (Codex 0.32 and later) or bare
//! (0.1 to 0.31: a first line `{id, timestamp, …}`, then response items and `record_type`
//! state markers); the era is told line by line. Session metadata becomes a `session_start`
//! meta event, messages become message events, and records this reader does not map are kept
//! whole as `meta` events of type `unknown`.

mod map;
mod raw;

use std::io;

use crate::model::{Agent, Event};
use crate::read::{Input, ReadReport, Reader, read_lines};

/// The Codex CLI reader.
pub struct Codex;

impl Reader for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn description(&self) -> &'static str {
        "Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl), all format eras"
    }

    fn sniff(&self, head: &[serde_json::Value], first_line: &str) -> bool {
        // A pretty-printed `{session, items}` document (the TypeScript CLI) opens with a lone brace.
        if first_line.trim() == "{" {
            return true;
        }
        head.iter().any(|record| {
            let has = |k: &str| record.get(k).is_some();
            let typed = record.get("type").is_some_and(serde_json::Value::is_string);
            (typed && has("payload"))
                || has("record_type")
                || (has("id") && has("timestamp") && !typed)
                || (has("session") && has("items"))
        })
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let mut mapper = map::Mapper::new(input.name);
        read_lines(Agent::Codex, input.name, input.bytes, &mut mapper, out)
    }
}
