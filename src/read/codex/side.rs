//! Codex CLI's side files: the prompt history (`history.jsonl`, `{session_id, ts, text}`) and
//! thread names (`session_index.jsonl`, `{id, thread_name, updated_at}`, the last entry of a
//! thread wins).
//!
//! - A prompt history line is a user message of its thread with `prompt_history` set, saying
//!   whether the thread's rollout (under `sessions/` or `archived_sessions/` beside the history
//!   file) holds the same prompt.
//! - A thread name is a `title` meta event of its thread, `{"title", "source": "custom"}`.

use std::collections::HashMap;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use chrono::DateTime;
use serde_json::{Map, Value};

use crate::model::{Agent, Event, Json, Message, MetaType, Part, Payload, Role};
use crate::read::side::{self, FileKind, PromptCache, TranscriptPrompts};
use crate::read::{Emitter, Line, LineMapper, ReadReport, Settings, read_lines};

/// What a Codex file holds, from its first record, else its name.
pub fn kind(path: &str, head: &[u8]) -> FileKind {
    match side::first_record(head, &["thread_name", "ts"]) {
        Some(record) => of_record(&record).unwrap_or(FileKind::Session),
        None => match crate::read::file_name(path) {
            "history.jsonl" => FileKind::PromptHistory,
            "session_index.jsonl" => FileKind::ThreadNames,
            _ => FileKind::Session,
        },
    }
}

/// The side file kind a record belongs to, if any.
fn of_record(record: &Map<String, Value>) -> Option<FileKind> {
    let has = |key: &str| record.contains_key(key);
    if has("session_id") && has("ts") && has("text") {
        Some(FileKind::PromptHistory)
    } else if has("id") && has("thread_name") {
        Some(FileKind::ThreadNames)
    } else {
        None
    }
}

/// Whether the start of a file is a Codex side file.
pub fn sniff(records: &crate::read::Records<'_>) -> bool {
    records.first().and_then(Value::as_object).and_then(of_record).is_some()
}

/// The side files in a Codex home.
pub fn discover(home: &Path) -> Vec<PathBuf> {
    ["history.jsonl", "session_index.jsonl"].into_iter().map(|n| home.join(n)).filter(|p| p.is_file()).collect()
}

/// Reads a side file of `kind`.
///
/// # Errors
/// Only I/O errors, as [`crate::read::Reader::read`].
pub fn read(
    kind: FileKind,
    name: &str,
    bytes: Box<dyn BufRead + '_>,
    settings: &Settings,
    out: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadReport> {
    let home = Path::new(name).parent().map(Path::to_path_buf).unwrap_or_default();
    let mut mapper = Mapper { kind, rollouts: Rollouts { home, by_thread: None }, prompts: PromptCache::default() };
    read_lines(Agent::Codex, name, bytes, settings, &side::ObjectLines { usage: false }, &mut mapper, out)
}

struct Mapper {
    kind: FileKind,
    rollouts: Rollouts,
    prompts: PromptCache,
}

/// Takes the string at `key` out of a record.
fn take_string(record: &mut Map<String, Value>, key: &str) -> Option<String> {
    match record.remove(key) {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            record.insert(key.to_owned(), other);
            None
        }
        None => None,
    }
}

impl LineMapper<(Line<'static>, Map<String, Value>)> for Mapper {
    fn map(
        &mut self,
        (line, mut record): (Line<'static>, Map<String, Value>),
        out: &mut Emitter<'_>,
    ) -> io::Result<()> {
        let mut event = if self.kind == FileKind::ThreadNames {
            let session = take_string(&mut record, "id").unwrap_or_default();
            let title = take_string(&mut record, "thread_name").unwrap_or_default();
            let mut event = side::meta(
                session,
                MetaType::Title,
                Json::from_value(&serde_json::json!({ "title": title, "source": "custom" })),
            );
            event.timestamp = take_string(&mut record, "updated_at").as_deref().and_then(crate::read::parse_time);
            event.source.record_type = Some("session_index".into());
            event
        } else {
            let session = take_string(&mut record, "session_id").unwrap_or_default();
            let text = take_string(&mut record, "text").unwrap_or_default();
            let timestamp = record.remove("ts").and_then(|ts| DateTime::from_timestamp(ts.as_i64()?, 0));
            let rollouts = &mut self.rollouts;
            let found = self.prompts.get(&session, || rollouts.prompts(&session)).map(|p| p.holds(&text));
            let mut message = Message::from_parts(Role::User, vec![Part::Text { text }]);
            message.prompt_history = Some(side::history_flag(found));
            let mut event = Event::new(session, Payload::Message(message));
            event.timestamp = timestamp;
            event.source.record_type = Some("prompt_history".into());
            event
        };
        event.source.line = line.number;
        event.source.byte_offset = line.offset;
        event.extra = (!record.is_empty()).then(|| Json::from_value(&record));
        out.emit(event, 0)
    }
}

/// The rollouts of the Codex home that holds a prompt history.
struct Rollouts {
    home: PathBuf,
    /// Rollout files by thread id (the UUID ending their name), listed on first use.
    by_thread: Option<HashMap<String, Vec<PathBuf>>>,
}

impl Rollouts {
    /// The typed prompts of a thread's rollouts; `None` when it has none.
    fn prompts(&mut self, thread: &str) -> Option<TranscriptPrompts> {
        let home = &self.home;
        let index = self.by_thread.get_or_insert_with(|| {
            let mut index: HashMap<String, Vec<PathBuf>> = HashMap::new();
            for dir in ["sessions", "archived_sessions"] {
                for path in crate::read::files_under(&home.join(dir), super::paths::is_rollout) {
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    let stem = name.split('.').next().unwrap_or_default();
                    if let Some(id) = stem.len().checked_sub(36).and_then(|at| stem.get(at..)) {
                        index.entry(id.to_owned()).or_default().push(path);
                    }
                }
            }
            index
        });
        Some(TranscriptPrompts::of_files(index.get(thread)?, "\"user", typed_prompt))
    }
}

/// The text of a rollout line that holds a prompt: a `user_message` event, or a user message
/// item (bare or in the envelope).
fn typed_prompt(line: &str) -> Option<String> {
    let record: Value = serde_json::from_str(line).ok()?;
    let payload = record.get("payload").unwrap_or(&record);
    match payload.get("type")?.as_str()? {
        "user_message" => payload.get("message")?.as_str().map(str::to_owned),
        "message" if payload.get("role")?.as_str()? == "user" => Some(
            payload
                .get("content")?
                .as_array()?
                .iter()
                .filter_map(|part| part.get("text")?.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}
