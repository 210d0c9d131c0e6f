//! Reader for Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Lines come in the `{timestamp, type, payload}` envelope (Codex 0.32 and later) or bare
//! (0.1 to 0.31: a first line `{id, timestamp, …}`, then response items and `record_type`
//! state markers); the era is told line by line. Session metadata becomes a `session_start`
//! meta event, messages become message events, and records this reader does not map are kept
//! whole as `meta` events of type `unknown`.

mod items;
mod map;
mod output;
mod parse;
mod paths;
mod raw;
mod side;
mod skim;
mod text;
mod tokens;

use std::io::{self, BufRead, Read};

use crate::model::{Agent, Event};
use crate::read::{
    FileKind, Head, Input, Peek, ReadReport, Reader, document_opens_with, is_jsonl_name, is_pretty_document,
    read_document, read_lines, string_at,
};

/// The Codex CLI reader.
pub struct Codex;

impl Reader for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Codex)
    }

    fn description(&self) -> &'static str {
        "Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl), all format eras"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        // A pretty-printed `{session, items}` document (the TypeScript CLI) opens with a lone
        // brace, and `session` is its first key.
        if head.first_line.trim() == "{" {
            return document_opens_with(head, "session");
        }
        head.records.iter().any(|record| {
            let has = |k: &str| record.get(k).is_some();
            let typed = record.get("type").is_some_and(serde_json::Value::is_string);
            (typed && has("payload"))
                || has("record_type")
                || (has("id") && has("timestamp") && !typed && !has("schema_version"))
                || (has("session") && has("items"))
        }) || side::sniff(head.records)
    }

    fn unfinished(&self, event: &crate::model::Event) -> super::Unfinished {
        if event.source.record_type.as_deref() == Some("token_usage_record") {
            // A record sent on its own: the `token_count` counting its response may come later.
            super::Unfinished::UntilSettled
        } else if matches!(event.payload, crate::model::Payload::Message(_)) {
            super::Unfinished::UntilNextLine
        } else {
            super::Unfinished::No
        }
    }

    fn home(&self) -> Option<&'static str> {
        Some("$CODEX_HOME or ~/.codex")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        paths::discover(env)
    }

    /// Rollouts: `rollout-*.jsonl` (zstd-compressed when cold) and the TypeScript era's
    /// `rollout-*.json`; other JSON Lines files too, since archives rename them.
    fn accepts(&self, path: &std::path::Path) -> bool {
        let file_name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        is_jsonl_name(&file_name) || (file_name.starts_with("rollout-") && file_name.ends_with(".json"))
    }

    fn file_kind(&self, path: &str, head: &[u8]) -> FileKind {
        side::kind(path, head)
    }

    /// Rollouts under `sessions/YYYY/MM/DD/` and `archived_sessions/`, named `rollout-…`.
    fn owns(&self, path: &std::path::Path) -> bool {
        let in_sessions = path
            .ancestors()
            .skip(1)
            .any(|dir| dir.file_name().is_some_and(|n| n == "sessions" || n == "archived_sessions"));
        in_sessions
            && path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
            && self.accepts(path)
    }

    /// The session of a `session_meta` record, of the bare `{"id", "timestamp", …}` header
    /// that opens an E1 or E2 file, or of a whole TypeScript-era document's `session`.
    fn peek(&self, record: &serde_json::Value) -> Peek {
        if let Some(session) = record.get("session").filter(|s| s.is_object()) {
            return Peek { session: string_at(session, "id"), ..Peek::default() };
        }
        let payload = record.get("payload").unwrap_or(record);
        let meta = match record.get("type") {
            Some(t) => t == "session_meta",
            None => record.get("timestamp").is_some(),
        };
        let session = meta.then(|| string_at(payload, "id")).flatten();
        Peek { session, version: string_at(payload, "cli_version"), agent: None, ..Peek::default() }
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, mut bytes, shared } = input;
        let settings = shared.settings();
        let kind = side::kind(name, bytes.fill_buf()?);
        if kind != FileKind::Session {
            return side::read(kind, name, bytes, settings, out);
        }
        let mut mapper = map::Mapper::new(name);
        if !is_pretty_document(bytes.fill_buf()?) {
            return read_lines(Agent::Codex, name, bytes, settings, &parse::Parser, &mut mapper, out);
        }
        // A TypeScript-era rollout: one pretty-printed document, read at once.
        let mut text = Vec::new();
        bytes.read_to_end(&mut text)?;
        let read = read_document(Agent::Codex, name, &text, out, |text, emitter| {
            Ok(mapper.document(text, emitter)?.is_some())
        })?;
        if let Some(report) = read {
            return Ok(report);
        }
        // Not a valid document after all: every line gets its own verdict.
        let mut mapper = map::Mapper::new(name);
        read_lines(Agent::Codex, name, Box::new(io::Cursor::new(text)), settings, &parse::Parser, &mut mapper, out)
    }
}
