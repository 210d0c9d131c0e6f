//! Gemini CLI records → agentlog events.
//!
//! The records of a file are gathered first and mapped at its end, because a later record may
//! replace a message, rewrite them all, or rewind them (see the module above). Entries keep the
//! order in which their message first appeared; a message's events come from its last version
//! and sit at that version's line, and the lines of the versions it replaced are listed in its
//! first event's `extra.merged_lines`. A `user` record that sends tool results back makes no
//! event when the calls' outputs come from a `gemini` message: its lines are listed on those
//! outputs instead (see [`super::parts`]). A session is held in memory until its file ends.
//!
//! **Usage.** A `gemini` message's `tokens {input, output, cached, thoughts, tool, total}` comes
//! from the API's usage metadata, where `input` (the prompt) includes `cached`, `thoughts` are
//! output tokens spent on thinking beside `output`, and `tool` (the prompt of tool-use results)
//! is input beside `input`: `total = input + output + thoughts + tool`. In agentlog's
//! non-overlapping counts: fresh input `input - cached + tool`, cache reads `cached`, output
//! `output + thoughts` with `thoughts` as its reasoning part, total `total`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::Digest;

use crate::model::{Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, Usage};
use crate::read::gemini_parts::{self as parts, add_merged_lines, content_text};
use crate::read::{Emitter, Line, LineMapper, file_stem, parse_time};

/// A parsed line: where it is, and its record.
pub type Parsed = (Line<'static>, Map<String, Value>);

/// Where a record was read.
#[derive(Clone, Copy)]
struct At {
    line: u64,
    offset: u64,
}

/// What a file's records add up to, in the order things first appeared.
enum Entry {
    /// A message: its last version, and the lines of the versions it replaced.
    Message { record: Map<String, Value>, at: At, merged: Vec<u64>, rolled_back: bool },
    /// A record that is not a message (metadata, a patch, a rewind).
    Meta { meta_type: MetaType, data: Value, at: At, record_type: &'static str, time: Option<String> },
}

/// Maps the records of one session file.
pub struct Mapper {
    path: String,
    session_id: String,
    parent_session_id: Option<String>,
    project_hash: Option<String>,
    entries: Vec<Entry>,
    /// Entries of the messages in force, by message id.
    live: HashMap<String, usize>,
}

impl Mapper {
    /// A mapper for the file named `name`; a file in a folder of `chats` other than `chats`
    /// itself is a subagent's, and the folder names its parent session.
    pub fn new(name: &str) -> Self {
        let dir = Path::new(name).parent().and_then(Path::file_name).map(|d| d.to_string_lossy().into_owned());
        let parent_session_id =
            dir.filter(|d| d != "chats" && Path::new(name).ancestors().any(|a| a.ends_with("chats")));
        Mapper {
            path: name.to_owned(),
            session_id: file_stem(name).to_owned(),
            parent_session_id,
            project_hash: None,
            entries: Vec::new(),
            live: HashMap::new(),
        }
    }

    /// Takes a whole document of the versions before 0.39; `text` locates each message's line.
    pub fn document(&mut self, mut document: Map<String, Value>, text: &str) {
        let messages = document.remove("messages");
        self.metadata(&document, At { line: 1, offset: 0 });
        let Some(messages) = messages else { return };
        // Each message sits at the line where its id is written.
        let line_of = |record: &Value| {
            let id = record.get("id").and_then(Value::as_str)?;
            let i = text.find(&format!("\"{id}\""))?;
            let offset = text[..i].rfind('\n').map_or(0, |n| n as u64 + 1);
            Some(At { line: text[..i].matches('\n').count() as u64 + 1, offset })
        };
        match messages {
            Value::Array(messages) => {
                for message in messages {
                    let at = line_of(&message).unwrap_or(At { line: 1, offset: 0 });
                    self.messages(Value::Array(vec![message]), at);
                }
            }
            other => self.messages(other, At { line: 1, offset: 0 }),
        }
    }

    fn metadata(&mut self, record: &Map<String, Value>, at: At) {
        if let Some(id) = record.get("sessionId").and_then(Value::as_str) {
            self.session_id = id.to_owned();
        }
        if let Some(hash) = record.get("projectHash").and_then(Value::as_str) {
            self.project_hash = Some(hash.to_owned());
        }
        let time = record.get("startTime").and_then(Value::as_str).map(str::to_owned);
        let mut data = record.clone();
        data.remove("messages");
        self.entries.push(Entry::Meta {
            meta_type: MetaType::SessionStart,
            data: Value::Object(data),
            at,
            record_type: "metadata",
            time,
        });
    }

    /// A message record: a new message, or the new version of one in force.
    fn message(&mut self, record: Map<String, Value>, at: At) {
        // A message without an id cannot be replaced: it stands alone.
        let Some(id) = text_id(&record).map(str::to_owned) else {
            self.entries.push(Entry::Message { record, at, merged: Vec::new(), rolled_back: false });
            return;
        };
        if let Some(&i) = self.live.get(&id)
            && let Entry::Message { record: old, at: old_at, merged, .. } = &mut self.entries[i]
        {
            merged.push(old_at.line);
            *old = record;
            *old_at = at;
            return;
        }
        self.live.insert(id, self.entries.len());
        self.entries.push(Entry::Message { record, at, merged: Vec::new(), rolled_back: false });
    }

    /// The messages of a document, of its metadata line or of a checkpoint, all at `at`;
    /// whatever is not a message there is kept whole as `unknown`.
    fn messages(&mut self, messages: Value, at: At) {
        let unknown =
            |data| Entry::Meta { meta_type: MetaType::Unknown, data, at, record_type: "messages", time: None };
        let Value::Array(messages) = messages else {
            self.entries.push(unknown(serde_json::json!({ "messages": messages })));
            return;
        };
        for message in messages {
            match message {
                Value::Object(record) => self.message(record, at),
                other => self.entries.push(unknown(serde_json::json!({ "message": other }))),
            }
        }
    }

    /// Drops the messages in force from entry `from` on: they are kept, flagged rolled back.
    fn roll_back(&mut self, from: usize) {
        let dropped: Vec<String> = self.live.iter().filter(|(_, i)| **i >= from).map(|(id, _)| id.clone()).collect();
        for id in dropped {
            if let Some(i) = self.live.remove(&id)
                && let Entry::Message { rolled_back, .. } = &mut self.entries[i]
            {
                *rolled_back = true;
            }
        }
    }

    /// The session's working directory, from `projects.json` of the Gemini home the file is in.
    fn cwd(&self) -> Option<String> {
        let path = Path::new(&self.path);
        let tmp = path.ancestors().find(|a| a.file_name().is_some_and(|n| n == "tmp"))?;
        let project = path.strip_prefix(tmp).ok()?.components().next()?.as_os_str().to_string_lossy().into_owned();
        let registry: PathBuf = tmp.parent()?.join("projects.json");
        let registry: Value = serde_json::from_slice(&std::fs::read(registry).ok()?).ok()?;
        let hashes = [Some(project.as_str()), self.project_hash.as_deref()];
        registry.get("projects")?.as_object()?.iter().find_map(|(root, short)| {
            let hash: String = sha2::Sha256::digest(root.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
            let matches = short.as_str() == Some(project.as_str()) || hashes.contains(&Some(hash.as_str()));
            matches.then(|| root.clone())
        })
    }
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, _out: &mut Emitter<'_>) -> std::io::Result<()> {
        let (Line { number: line, offset, .. }, mut record) = parsed;
        let at = At { line, offset };
        if let Some(id) = record.get("$rewindTo").and_then(Value::as_str).map(str::to_owned) {
            let from = self.live.get(&id).copied().unwrap_or(0);
            self.roll_back(from);
            let data = Value::Object(record);
            self.entries.push(Entry::Meta {
                meta_type: MetaType::Rollback,
                data,
                at,
                record_type: "$rewindTo",
                time: None,
            });
        } else if record.get("$set").is_some_and(Value::is_object) {
            let Some(Value::Object(mut set)) = record.remove("$set") else { unreachable!("an object, checked above") };
            let checkpoint = match set.remove("messages") {
                Some(Value::Array(messages)) => {
                    set.insert("messages".into(), Value::from(messages.len()));
                    Some(messages)
                }
                _ => None,
            };
            if let Some(summary) = set.remove("summary").as_ref().and_then(Value::as_str) {
                let data = serde_json::json!({ "title": summary, "source": "summary" });
                self.entries.push(Entry::Meta {
                    meta_type: MetaType::Title,
                    data,
                    at,
                    record_type: "$set",
                    time: None,
                });
            }
            if !set.is_empty() {
                let time = set.get("lastUpdated").and_then(Value::as_str).map(str::to_owned);
                let data = Value::Object(set);
                self.entries.push(Entry::Meta { meta_type: MetaType::System, data, at, record_type: "$set", time });
            }
            if let Some(messages) = checkpoint {
                // A checkpoint: these messages, in this order, are the conversation now.
                let kept: std::collections::HashSet<&str> =
                    messages.iter().filter_map(|m| m.get("id")?.as_str()).collect();
                let dropped: Vec<usize> =
                    self.live.iter().filter(|(id, _)| !kept.contains(id.as_str())).map(|(_, i)| *i).collect();
                for i in dropped {
                    if let Entry::Message { record, .. } = &self.entries[i] {
                        let id = text_id(record).unwrap_or_default().to_owned();
                        self.live.remove(&id);
                    }
                    if let Entry::Message { rolled_back, .. } = &mut self.entries[i] {
                        *rolled_back = true;
                    }
                }
                self.messages(Value::Array(messages), at);
            }
        } else if record.get("type").is_some() && record.get("id").is_some() {
            self.message(record, at);
        } else if record.get("sessionId").is_some() {
            let messages = record.remove("messages");
            self.metadata(&record, at);
            if let Some(messages) = messages {
                self.messages(messages, at);
            }
        } else {
            let data = Value::Object(record);
            self.entries.push(Entry::Meta {
                meta_type: MetaType::Unknown,
                data,
                at,
                record_type: "unknown",
                time: None,
            });
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let context = Context { cwd: self.cwd(), ..Context::default() };
        let mut slots: HashMap<u64, u32> = HashMap::new();
        let entries = std::mem::take(&mut self.entries);
        let results = SentResults::of(&entries);
        let mut session = Session { mapper: self, context, slots: &mut slots, results: &results };
        for (index, entry) in entries.into_iter().enumerate() {
            match entry {
                Entry::Meta { meta_type, data, at, record_type, time } => {
                    let mut event = session.event(at, record_type, meta(meta_type, &data));
                    event.timestamp = time.as_deref().and_then(parse_time);
                    session.emit(out, event)?;
                }
                Entry::Message { record, at, merged, rolled_back } => {
                    let mut events = session.message(&record, at, index);
                    if let Some(first) = events.first_mut() {
                        let kind = record.get("type").and_then(Value::as_str).unwrap_or("unknown");
                        add_merged_lines(first, &merged, kind);
                    }
                    for mut event in events {
                        event.rolled_back = rolled_back;
                        session.emit(out, event)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Where the tool results that `user` records sent back go (see [`parts`]).
#[derive(Default)]
struct SentResults {
    /// The lines of the records that sent back the result of a call, by the entry whose
    /// `toolCalls` hold its output and the call's id.
    lines: HashMap<(usize, String), Vec<u64>>,
    /// The call ids each entry of such a record answers whose output another entry holds.
    merged: HashMap<usize, HashSet<String>>,
}

impl SentResults {
    /// Pairs each result sent back with the output of its call: that of the last `gemini`
    /// message before the record whose `toolCalls` hold it, else of the first one after it.
    fn of(entries: &[Entry]) -> Self {
        let mut outputs: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let Entry::Message { record, .. } = entry else { continue };
            if record.get("type").and_then(Value::as_str) != Some("gemini") {
                continue;
            }
            for call in record.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                if let Some(id) = call.get("id").and_then(Value::as_str)
                    && parts::has_output(call)
                {
                    outputs.entry(id).or_default().push(i);
                }
            }
        }
        let mut results = SentResults::default();
        for (j, entry) in entries.iter().enumerate() {
            let Entry::Message { record, at, merged, .. } = entry else { continue };
            for response in parts::tool_results(record).into_iter().flatten() {
                let Some(id) = parts::response_id(response) else { continue };
                let Some(holders) = outputs.get(id) else { continue };
                let Some(&holder) = holders.iter().rev().find(|&&i| i < j).or(holders.first()) else { continue };
                let lines = results.lines.entry((holder, id.to_owned())).or_default();
                lines.extend(merged.iter().copied().chain([at.line]));
                lines.sort_unstable();
                lines.dedup();
                results.merged.entry(j).or_default().insert(id.to_owned());
            }
        }
        results
    }
}

/// Mapping the entries of one session at the end of its file.
struct Session<'a> {
    mapper: &'a Mapper,
    context: Context,
    /// The next slot of each line, since one line (a document, a checkpoint) may hold many
    /// messages.
    slots: &'a mut HashMap<u64, u32>,
    results: &'a SentResults,
}

impl Session<'_> {
    fn event(&self, at: At, record_type: &str, payload: Payload) -> Event {
        let mut event = Event::new(self.mapper.session_id.clone(), payload);
        event.parent_session_id.clone_from(&self.mapper.parent_session_id);
        event.context = self.context.clone();
        event.source.line = at.line;
        event.source.byte_offset = at.offset;
        event.source.record_type = Some(record_type.to_owned());
        event
    }

    fn emit(&mut self, out: &mut Emitter<'_>, event: Event) -> std::io::Result<()> {
        let slot = self.slots.entry(event.source.line).or_default();
        let this = *slot;
        *slot += 1;
        out.emit(event, this)
    }

    /// The events of one message (entry `index`), in order.
    fn message(&self, record: &Map<String, Value>, at: At, index: usize) -> Vec<Event> {
        let kind = record.get("type").and_then(Value::as_str).unwrap_or("unknown");
        let time = record.get("timestamp").and_then(Value::as_str).and_then(parse_time);
        let model = record.get("model").and_then(Value::as_str).map(str::to_owned);
        let new = |payload: Payload| {
            let mut event = self.event(at, kind, payload);
            event.timestamp = time;
            event.record_id = text_id(record).map(str::to_owned);
            event.context.model.clone_from(&model);
            event
        };
        let mut events = Vec::new();
        match kind {
            "user" => match parts::tool_results(record) {
                // Tool results sent back: merged into their calls' outputs, or outputs alone.
                Some(responses) => {
                    let merged = self.results.merged.get(&index);
                    for response in responses {
                        if !parts::response_id(response).is_some_and(|id| merged.is_some_and(|m| m.contains(id))) {
                            events.push(parts::sent_result(response, &new));
                        }
                    }
                }
                None => {
                    let (payload, injected, extra) = parts::user_message(record);
                    let mut event = new(payload);
                    event.injected = injected;
                    event.extra = extra;
                    events.push(event);
                }
            },
            "gemini" => {
                for thought in record.get("thoughts").and_then(Value::as_array).into_iter().flatten() {
                    let part = |key| thought.get(key).and_then(Value::as_str).unwrap_or_default();
                    let text = [part("subject"), part("description")]
                        .into_iter()
                        .filter(|t| !t.is_empty())
                        .collect::<Vec<_>>();
                    let reasoning = Reasoning {
                        text: text.join("\n\n"),
                        raw_text: None,
                        encrypted: false,
                        omitted: false,
                        signature: None,
                    };
                    let mut event = new(Payload::Reasoning(reasoning));
                    event.timestamp = thought.get("timestamp").and_then(Value::as_str).and_then(parse_time).or(time);
                    events.push(event);
                }
                let text = content_text(record.get("content"));
                if !text.trim().is_empty() {
                    events.push(new(message(Role::Assistant, &text)));
                }
                for call in record.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                    let merged = self.results.lines.get(&(index, id)).map_or(&[][..], Vec::as_slice);
                    events.extend(parts::tool(call, &new, merged));
                }
                if let Some(tokens) = record.get("tokens").filter(|t| t.is_object()) {
                    let usage = usage(tokens, model.clone());
                    events.push(new(Payload::Meta(Meta {
                        meta_type: MetaType::Usage,
                        data: None,
                        usage: Some(usage),
                    })));
                }
            }
            "info" | "warning" | "error" => events.push(new(meta(MetaType::System, &Value::Object(record.clone())))),
            _ => events.push(new(meta(MetaType::Unknown, &Value::Object(record.clone())))),
        }
        events
    }
}

/// Agentlog's counts of a message's `tokens` (see the module above).
fn usage(tokens: &Value, model: Option<String>) -> Usage {
    let count = |key: &str| tokens.get(key).and_then(Value::as_u64);
    let tokens = parts::Tokens {
        input: count("input"),
        cached: count("cached"),
        output: count("output"),
        thoughts: count("thoughts"),
        tool: count("tool"),
        total: count("total"),
    };
    parts::usage(tokens, false, model)
}

fn text_id(record: &Map<String, Value>) -> Option<&str> {
    record.get("id").and_then(Value::as_str)
}

fn meta(meta_type: MetaType, data: &Value) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(Json::from_value_of_raw(data)), usage: None })
}

fn message(role: Role, text: &str) -> Payload {
    let parts = if text.is_empty() { Vec::new() } else { vec![Part::Text { text: text.to_owned() }] };
    Payload::Message(Message { role, text: text.to_owned(), parts, phase: None, prompt_history: None })
}
