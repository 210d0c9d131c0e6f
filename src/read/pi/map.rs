//! pi entries → agentlog events.
//!
//! The entries of a file are gathered first and mapped at its end, once the last entry, and so
//! the conversation, is known (see the module above). Each entry keeps its place and its line;
//! its events carry its `id` and `parentId` as `record_id` and `parent_record_id`.
//!
//! | entry | event |
//! |---|---|
//! | `session` (the header) | `session_start` |
//! | `model_change`, `thinking_level_change` | `turn_context` (the model in force from there on) |
//! | `message` | by role, see [`super::message`] |
//! | `compaction` | `compaction` (`summary`, `firstKeptEntryId`, `tokensBefore`); in pi 1.x also a `usage` (its summarisation requests) |
//! | `branch_summary` | `injected_context`: the summary of the branch left, which the model is sent; in pi 1.x also a `usage` |
//! | `usage` (pi 1.x) | `usage`: a request that is no message (cache warming: `kind`) |
//! | `context_edit` (pi 1.x) | `system`: an earlier entry `targetId` left out of (or replaced in) what the model is sent from here on |
//! | `custom_message` | an injected user message (an extension's, sent to the model) |
//! | `custom` | `system` (an extension's state, never sent to the model) |
//! | `label` | `system` (a bookmark on the entry `targetId`) |
//! | `session_info` | `title` (the name the user gave the session) |
//!
//! pi 0.x writes nothing of the summarisation requests of a compaction or a branch summary: their
//! usage is lost. pi 1.x writes their usage on the entry, summed when a compaction made two
//! requests (the history and the turn it cut), and without a response id.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::message::{self, Piece};
use crate::model::{Context, Event, Json, MetaType, Payload, USAGE_SLOT};
use crate::read::{Emitter, Line, LineMapper, file_name, file_stem, parse_time};

/// A parsed line: where it is, and its record.
pub type Parsed = (Line<'static>, Map<String, Value>);

/// One line of the file.
struct Entry {
    line: u64,
    offset: u64,
    record: Map<String, Value>,
}

impl Entry {
    fn kind(&self) -> &str {
        self.record.get("type").and_then(Value::as_str).unwrap_or_default()
    }

    /// The entry's id in the tree; the header's `id` is the session's, not a node's.
    fn id(&self) -> Option<&str> {
        if self.kind() == "session" {
            return None;
        }
        self.record.get("id").and_then(Value::as_str)
    }

    fn parent(&self) -> Option<&str> {
        self.record.get("parentId").and_then(Value::as_str)
    }

    fn time(&self) -> Option<DateTime<Utc>> {
        self.record.get("timestamp").and_then(Value::as_str).and_then(parse_time)
    }
}

/// Maps the entries of one session file.
pub struct Mapper {
    path: String,
    entries: Vec<Entry>,
}

impl Mapper {
    /// A mapper for the file named `name`.
    pub fn new(name: &str) -> Self {
        Mapper { path: name.to_owned(), entries: Vec::new() }
    }
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, _out: &mut Emitter<'_>) -> std::io::Result<()> {
        let (line, record) = parsed;
        self.entries.push(Entry { line: line.number, offset: line.offset, record });
        Ok(())
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let entries = std::mem::take(&mut self.entries);
        let header = entries.iter().find(|e| e.kind() == "session").map(|e| &e.record);
        let text = |key: &str| header.and_then(|h| h.get(key)).and_then(Value::as_str);
        // The header names the session; without one, the uuid at the end of the file name does
        // (`<time>_<uuid>.jsonl`). A fork's header id may differ from its file name's uuid.
        let session_id = text("id").map_or_else(|| session_of_name(&self.path).to_owned(), str::to_owned);
        let fork = text("parentSession").map(|parent| {
            let since = text("timestamp").and_then(parse_time);
            Fork::new(&self.path, parent, since)
        });
        let mut session = Session {
            session_id,
            cwd: text("cwd").map(str::to_owned),
            parent_session_id: fork.as_ref().map(|f| f.session_id.clone()),
            model: None,
        };
        let on_path = conversation(&entries);
        for (entry, on_path) in entries.iter().zip(on_path) {
            let copied = fork.as_ref().is_some_and(|f| f.copied(entry));
            let mut slot = 0;
            for mut event in session.events(entry) {
                event.rolled_back = !on_path;
                event.copied = copied;
                let usage = matches!(&event.payload, Payload::Meta(m) if m.meta_type == MetaType::Usage);
                let this = if usage { USAGE_SLOT } else { slot };
                slot += u32::from(!usage);
                out.emit(event, this)?;
            }
        }
        Ok(())
    }
}

/// Which entries are the conversation: the last entry with an id, and its ancestors. Entries
/// without an id (the header, the entries of version 1 files) are all on it.
fn conversation(entries: &[Entry]) -> Vec<bool> {
    let mut on = entries.iter().map(|e| e.id().is_none()).collect::<Vec<_>>();
    let index: HashMap<&str, usize> = entries.iter().enumerate().filter_map(|(i, e)| Some((e.id()?, i))).collect();
    let mut at = entries.iter().rposition(|e| e.id().is_some());
    // An entry met twice (a cycle of parents) ends the walk.
    while let Some(i) = at.filter(|&i| !on[i]) {
        on[i] = true;
        at = entries[i].parent().and_then(|p| index.get(p).copied());
    }
    on
}

/// What a session file says of itself, and the model in force.
struct Session {
    session_id: String,
    cwd: Option<String>,
    parent_session_id: Option<String>,
    model: Option<String>,
}

impl Session {
    /// The events of one entry, in order; at least one.
    fn events(&mut self, entry: &Entry) -> Vec<Event> {
        let record = &entry.record;
        let kind = entry.kind();
        if kind == "model_change"
            && let Some(model) = record.get("modelId").and_then(Value::as_str)
        {
            self.model = Some(model.to_owned());
        }
        let whole = |meta_type| vec![Piece::meta(meta_type, record)];
        let (record_type, pieces) = match kind {
            "session" => ("session".to_owned(), whole(MetaType::SessionStart)),
            "model_change" | "thinking_level_change" => (kind.to_owned(), whole(MetaType::TurnContext)),
            "compaction" | "branch_summary" => {
                let meta_type = if kind == "compaction" { MetaType::Compaction } else { MetaType::InjectedContext };
                let mut pieces = whole(meta_type);
                // pi 1.x: the usage of the summarisation requests
                if let Some(counts) = record.get("usage").and_then(Value::as_object) {
                    pieces.push(message::usage_piece(counts, self.model.clone(), None, None));
                }
                (kind.to_owned(), pieces)
            }
            "usage" => match record.get("usage").and_then(Value::as_object) {
                Some(counts) => {
                    let model = record.get("model").and_then(Value::as_str).map(str::to_owned);
                    let model = model.or_else(|| self.model.clone());
                    (kind.to_owned(), vec![message::usage_piece(counts, model, None, record.get("kind"))])
                }
                None => (kind.to_owned(), whole(MetaType::Unknown)),
            },
            "custom" | "label" | "context_edit" => (kind.to_owned(), whole(MetaType::System)),
            "custom_message" => (kind.to_owned(), vec![message::injected(record)]),
            "session_info" => {
                let mut data = Map::new();
                data.insert("title".into(), record.get("name").cloned().unwrap_or(Value::Null));
                data.insert("source".into(), "session_info".into());
                (kind.to_owned(), vec![Piece::meta(MetaType::Title, &data)])
            }
            "message" => match record.get("message").and_then(Value::as_object) {
                Some(m) => {
                    let role = m.get("role").and_then(Value::as_str).unwrap_or("unknown");
                    (format!("message/{role}"), message::pieces(m, entry.id()))
                }
                None => (kind.to_owned(), whole(MetaType::Unknown)),
            },
            _ => (if kind.is_empty() { "unknown" } else { kind }.to_owned(), whole(MetaType::Unknown)),
        };
        let assistant = record.get("message").and_then(Value::as_object).filter(|_| record_type == "message/assistant");
        let response_id = assistant.and_then(message::response_id);
        let model = assistant.and_then(|m| m.get("model")).and_then(Value::as_str).map(str::to_owned);
        pieces
            .into_iter()
            .map(|piece| {
                let mut event = Event::new(self.session_id.clone(), piece.payload);
                event.timestamp = entry.time();
                event.record_id = entry.id().map(str::to_owned);
                event.parent_record_id = entry.parent().map(str::to_owned);
                event.response_id.clone_from(&response_id);
                event.parent_session_id.clone_from(&self.parent_session_id);
                event.injected = piece.injected;
                event.extra = piece.extra.as_ref().map(Json::from_value_of_raw);
                event.context = Context {
                    model: model.clone().or_else(|| self.model.clone()),
                    cwd: self.cwd.clone(),
                    ..Context::default()
                };
                event.source.line = entry.line;
                event.source.byte_offset = entry.offset;
                event.source.record_type = Some(record_type.clone());
                event
            })
            .collect()
    }
}

/// The session a file's name gives: `<time>_<uuid>.jsonl` → `<uuid>`.
fn session_of_name(path: &str) -> &str {
    let stem = file_stem(path);
    stem.rsplit_once('_').map_or(stem, |(_, id)| id)
}

/// What a fork's header says of the session it was forked from.
struct Fork {
    /// The parent session: its header's id, or the uuid of its file name when it is gone.
    session_id: String,
    /// The entry ids of the parent file, when it could be read.
    parent_ids: Option<HashSet<String>>,
    /// When the fork was made (its header's `timestamp`).
    since: Option<DateTime<Utc>>,
}

impl Fork {
    /// The fork of the file `path` from the file `parent` (as the header names it: an absolute
    /// path, looked for beside the fork too).
    fn new(path: &str, parent: &str, since: Option<DateTime<Utc>>) -> Self {
        let beside = Path::new(path).parent().map(|dir| dir.join(file_name(parent)));
        let read = [Some(PathBuf::from(parent)), beside].into_iter().flatten().find_map(|p| read_ids(&p));
        let (session_id, parent_ids) = match read {
            Some((Some(id), ids)) => (id, Some(ids)),
            Some((None, ids)) => (session_of_name(parent).to_owned(), Some(ids)),
            None => (session_of_name(parent).to_owned(), None),
        };
        Fork { session_id, parent_ids, since }
    }

    /// Whether an entry of the fork is a copy of one of its parent: its id is one of the
    /// parent's; without the parent file, it was written before the fork was made.
    fn copied(&self, entry: &Entry) -> bool {
        let Some(id) = entry.id() else { return false };
        match &self.parent_ids {
            Some(ids) => ids.contains(id),
            None => entry.time().zip(self.since).is_some_and(|(at, since)| at < since),
        }
    }
}

/// The header id and the entry ids of the session file at `path`; `None` when it cannot be read.
fn read_ids(path: &Path) -> Option<(Option<String>, HashSet<String>)> {
    let file = std::fs::File::open(path).ok()?;
    let mut header = None;
    let mut ids = HashSet::new();
    for line in std::io::BufReader::new(file).lines() {
        let Ok(record) = serde_json::from_str::<Map<String, Value>>(&line.ok()?) else { continue };
        let id = record.get("id").and_then(Value::as_str).map(str::to_owned);
        if record.get("type").and_then(Value::as_str) == Some("session") {
            header = header.or(id);
        } else if let Some(id) = id {
            ids.insert(id);
        }
    }
    Some((header, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(line: u64, json: Value) -> Entry {
        Entry { line, offset: 0, record: json.as_object().cloned().unwrap() }
    }

    #[test]
    fn the_conversation_is_the_ancestry_of_the_last_entry() {
        let entries = [
            entry(1, serde_json::json!({"type": "session", "id": "s", "cwd": "/", "timestamp": "t"})),
            entry(2, serde_json::json!({"type": "message", "id": "a", "parentId": null})),
            entry(3, serde_json::json!({"type": "message", "id": "b", "parentId": "a"})),
            entry(4, serde_json::json!({"type": "message", "id": "c", "parentId": "b"})),
            entry(5, serde_json::json!({"type": "branch_summary", "id": "d", "parentId": "b"})),
            entry(6, serde_json::json!({"type": "message", "id": "e", "parentId": "d"})),
        ];
        assert_eq!(conversation(&entries), [true, true, true, false, true, true]);
    }

    #[test]
    fn entries_without_ids_are_one_line_of_conversation() {
        let entries = [
            entry(1, serde_json::json!({"type": "session", "id": "s", "cwd": "/", "timestamp": "t"})),
            entry(2, serde_json::json!({"type": "message"})),
            entry(3, serde_json::json!({"type": "message"})),
        ];
        assert_eq!(conversation(&entries), [true, true, true]);
    }

    #[test]
    fn a_cycle_of_parents_ends_the_walk() {
        let entries = [
            entry(1, serde_json::json!({"type": "message", "id": "a", "parentId": "b"})),
            entry(2, serde_json::json!({"type": "message", "id": "b", "parentId": "a"})),
        ];
        assert_eq!(conversation(&entries), [true, true]);
    }

    #[test]
    fn without_the_parent_file_the_copies_are_the_entries_older_than_the_fork() {
        let since = parse_time("2026-11-27T15:24:19.449Z");
        let fork = Fork::new("/nowhere/b.jsonl", "/nowhere/2026-11-27T15-24-18-975Z_parent-uuid.jsonl", since);
        assert_eq!(fork.session_id, "parent-uuid");
        let old = entry(2, serde_json::json!({"type": "message", "id": "a", "timestamp": "2026-11-27T15:24:19.037Z"}));
        let new = entry(3, serde_json::json!({"type": "message", "id": "b", "timestamp": "2026-11-27T15:24:19.459Z"}));
        assert!(fork.copied(&old));
        assert!(!fork.copied(&new));
    }

    #[test]
    fn the_session_of_a_file_name_is_its_uuid() {
        let name = "dir/2026-11-27T15-24-18-975Z_01a21d9b-7c9e-754e-84e7-9c4ad31f8b24.jsonl";
        assert_eq!(session_of_name(name), "01a21d9b-7c9e-754e-84e7-9c4ad31f8b24");
    }
}
