//! Reader for agentlog's own unified JSONL (`--from unified`): events pass through unchanged,
//! ids and positions included, so that agentlog can convert its own output to another format.

use std::io;

use crate::model::{Agent, Event};
use crate::read::{
    Emitter, Head, Input, Line, LineMapper, LineParser, Peek, Problem, ReadReport, Reader, is_jsonl_name, read_lines,
    string_at,
};

/// The unified JSONL reader.
pub struct Unified;

impl Reader for Unified {
    fn name(&self) -> &'static str {
        "unified"
    }

    fn agent(&self) -> Option<Agent> {
        None
    }

    fn description(&self) -> &'static str {
        "agentlog's unified JSONL, as written by --to unified"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        head.records
            .first()
            .is_some_and(|r| ["schema_version", "id", "kind", "payload"].iter().all(|k| r.get(k).is_some()))
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| is_jsonl_name(&n.to_string_lossy()))
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        Peek {
            session: string_at(record, "session_id"),
            version: None,
            agent: string_at(record, "agent"),
            ..Peek::default()
        }
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, shared } = input;
        read_lines(Agent::ClaudeCode, name, bytes, shared.settings(), &PassThrough, &mut PassThrough, out)
    }
}

/// Parses each line as an event and hands it on as it is.
#[derive(Clone, Copy)]
struct PassThrough;

impl LineParser for PassThrough {
    type Parsed = Event;

    fn parse(&self, line: Line<'_>) -> Result<Event, Problem> {
        crate::read::parse_object(line.text)
    }
}

impl LineMapper<Event> for PassThrough {
    fn map(&mut self, event: Event, out: &mut Emitter<'_>) -> io::Result<()> {
        out.pass(event)
    }
}
