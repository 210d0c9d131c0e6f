//! Claude Code's side files: the prompt history (`history.jsonl`), project memory
//! (`projects/<key>/memory/*.md`), the registry of running sessions (`sessions/<pid>.json`) and
//! todo lists (`todos/<session>-agent-<agent>.json`).
//!
//! - A prompt history line is a user message of its session with `prompt_history` set, saying
//!   whether the session's transcript (`projects/*/<session>.jsonl` beside the history file)
//!   holds the same prompt. Lines of versions that did not record the session are placed in
//!   the session of their project whose transcript spans their time, else in one session per
//!   project and UTC day (a UUIDv5 of both).
//! - A memory file is a `memory` meta event of the pseudo-session `memory-<project key>`.
//! - A registry entry is a `session_registry` meta event of its session.
//! - A todo list is a `todo_list` meta event of its session, in its agent's thread.

use std::collections::HashMap;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::model::{Agent, Event, Json, Message, MetaType, Part, Payload, Role, uuid_v5};
use crate::read::side::{self, Document, FileKind, PromptCache, TranscriptPrompts};
use crate::read::{Emitter, InputDiagnostic, Line, LineMapper, Problem, ReadReport, Settings, read_lines};

/// What a Claude Code file holds, from its path and first bytes.
pub fn kind(path: &str, head: &[u8]) -> FileKind {
    let path = Path::new(path);
    let name = crate::read::file_name(path.to_str().unwrap_or_default());
    let first = head.iter().copied().find(|b| !b.is_ascii_whitespace() && *b != 0xef);
    if name.ends_with(".md") {
        return FileKind::Memory;
    }
    if name.ends_with(".json") && side::parent_name(path) == Some("todos") || first == Some(b'[') {
        return FileKind::TodoList;
    }
    let record = side::first_record(head, &["display", "startedAt"]);
    let has = |key: &str| record.as_ref().is_some_and(|r| r.contains_key(key));
    if name.ends_with(".json") && side::parent_name(path) == Some("sessions") || has("pid") && has("startedAt") {
        return FileKind::SessionRegistry;
    }
    if has("display") && !has("type") || record.is_none() && name == "history.jsonl" {
        return FileKind::PromptHistory;
    }
    FileKind::Session
}

/// The session of a memory file or todo list, from its path.
pub fn session_of(path: &str) -> Option<String> {
    match kind(path, b"") {
        FileKind::Memory => Some(memory_session(Path::new(path)).0),
        FileKind::TodoList => {
            let stem = crate::read::file_stem(path);
            Some(stem.split_once("-agent-").map_or(stem, |(session, _)| session).to_owned())
        }
        _ => None,
    }
}

/// The pseudo-session of a memory file, `memory-<project key>`, and the project key.
fn memory_session(path: &Path) -> (String, String) {
    let project = path.parent().and_then(Path::parent).and_then(Path::file_name);
    let project = project.map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    (format!("memory-{project}"), project)
}

/// The directory name Claude Code gives a project: its path with every character other than
/// an ASCII letter or digit made `-`.
fn project_key(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// Whether a file of this path is a Claude Code side file read from a directory.
pub fn accepts(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    match side::parent_name(path) {
        Some("memory") => name.ends_with(".md"),
        Some("sessions") => name.ends_with(".json") && name[..name.len() - 5].bytes().all(|b| b.is_ascii_digit()),
        Some("todos") => name.ends_with(".json") && name.contains("-agent-"),
        _ => false,
    }
}

/// Whether the start of a file, named `name`, is a Claude Code side file.
pub fn sniff(name: &str, records: &crate::read::Records<'_>, text: &str) -> bool {
    let path = Path::new(name);
    let first = records.first();
    let has = |key: &str| first.is_some_and(|r| r.get(key).is_some());
    match kind(name, text.as_bytes()) {
        FileKind::Memory => accepts(path) || front_matter(text).is_some_and(|f| f.contains("name:")),
        FileKind::TodoList => accepts(path),
        FileKind::SessionRegistry => has("pid") && has("sessionId"),
        FileKind::PromptHistory => has("display") && has("timestamp"),
        _ => false,
    }
}

/// The side files under a Claude Code root, in name order: the prompt history, the `memory`
/// files found under `projects/`, then the registry entries and todo lists.
pub fn discover(root: &Path, memory: Vec<PathBuf>) -> Vec<PathBuf> {
    let history = root.join("history.jsonl");
    let others = ["sessions", "todos"]
        .into_iter()
        .flat_map(|dir| crate::read::files_under(&root.join(dir), |_| true).into_iter().filter(|p| accepts(p)));
    history.is_file().then_some(history).into_iter().chain(memory).chain(others).collect()
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
    if kind == FileKind::PromptHistory {
        let mut mapper = History::new(name);
        return read_lines(
            Agent::ClaudeCode,
            name,
            bytes,
            settings,
            &side::ObjectLines { usage: false },
            &mut mapper,
            out,
        );
    }
    let document = match Document::read(bytes)? {
        Ok(document) => document,
        Err(raw) => {
            let valid = std::str::from_utf8(&raw).map_or_else(|e| e.valid_up_to(), |_| 0);
            return Ok(side::unreadable(name, &raw, Problem::invalid_utf8(valid)));
        }
    };
    let mut emitter = Emitter::new(Agent::ClaudeCode, name, out);
    crate::model::take_repairs();
    let mut diagnostics = Vec::new();
    let (event, record_type) = match kind {
        FileKind::Memory => (memory(name, &document.text, &mut diagnostics), "memory"),
        FileKind::SessionRegistry | FileKind::TodoList => match Json::parse(document.text.trim()) {
            Ok(json) if kind == FileKind::TodoList => (todo_list(name, json), "todos"),
            Ok(json) => match registry(json) {
                Some(event) => (event, "session_registry"),
                None => return Ok(side::unreadable(name, document.text.as_bytes(), not_a_registry_entry())),
            },
            Err(e) => return Ok(side::unreadable(name, document.text.as_bytes(), Problem::from_json(&e))),
        },
        _ => unreachable!("transcripts are read by the line loop"),
    };
    side::emit_document(&mut emitter, event, record_type)?;
    Ok(document.report(name, emitter.count(), diagnostics))
}

fn not_a_registry_entry() -> Problem {
    Problem {
        code: "agentlog::input::unexpected_record",
        message: "expected a session registry entry with a string `sessionId`".into(),
        column: 0,
        help: Some("the file was skipped"),
        is_error: false,
    }
}

/// The YAML between a leading `---` line and the next `---` line.
fn front_matter(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---")?.strip_prefix('\n').or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---").map(|i| i + 1).or_else(|| rest.starts_with("---").then_some(0))?;
    Some(&rest[..end])
}

/// A memory file's event: front matter fields and body; a front matter that is not a YAML
/// mapping is reported and kept as text in `front_matter_text`.
fn memory(name: &str, text: &str, diagnostics: &mut Vec<InputDiagnostic>) -> Event {
    let (session, project) = memory_session(Path::new(name));
    let mut data = Map::new();
    let mut body = text;
    if let Some(yaml) = front_matter(text) {
        let after = 4 + yaml.len() + 3;
        body = text.get(after..).map_or("", |b| b.trim_start_matches(['\r', '\n']));
        match serde_yaml_ng::from_str::<Value>(yaml) {
            Ok(Value::Object(fields)) => {
                for key in ["name", "description", "type"] {
                    data.insert(key.into(), fields.get(key).cloned().unwrap_or(Value::Null));
                }
                data.insert("front_matter".into(), Value::Object(fields));
            }
            other => {
                let (line, column, message) = match other {
                    Err(e) => {
                        let at = e.location();
                        (at.as_ref().map_or(2, |l| l.line() as u64 + 1), at.map_or(0, |l| l.column()), e.to_string())
                    }
                    Ok(_) => (2, 0, "the front matter is not a mapping of keys to values".to_owned()),
                };
                let line_text = text.lines().nth(line as usize - 1).unwrap_or_default();
                let problem = Problem {
                    code: "agentlog::input::invalid_front_matter",
                    message: format!("invalid YAML front matter: {message}"),
                    column: column.saturating_sub(1),
                    help: Some("the memory file was kept; its front matter is in `front_matter_text`"),
                    is_error: false,
                };
                diagnostics.push(InputDiagnostic::new(name, line, line_text, problem).kept());
                data.insert("front_matter_text".into(), Value::String(yaml.to_owned()));
            }
        }
    }
    for key in ["name", "description", "type"] {
        data.entry(key).or_insert(Value::Null);
    }
    data.insert("body".into(), Value::String(body.to_owned()));
    data.insert("path".into(), Value::String(name.to_owned()));
    data.insert("project".into(), Value::String(project));
    side::meta(session, MetaType::Memory, Json::from_value(&data))
}

/// A registry entry's event; `None` without a session id.
fn registry(json: Json) -> Option<Event> {
    let value: Value = serde_json::from_str(json.get()).ok()?;
    let session = value.get("sessionId")?.as_str()?.to_owned();
    let mut event = side::meta(session, MetaType::SessionRegistry, json);
    event.timestamp = value.get("startedAt").and_then(epoch_ms);
    event.context.cwd = value.get("cwd").and_then(Value::as_str).map(str::to_owned);
    Some(event)
}

/// A todo list's event, in the thread its file name names.
fn todo_list(name: &str, json: Json) -> Event {
    let stem = crate::read::file_stem(name);
    let (session, agent) = stem.split_once("-agent-").unwrap_or((stem, stem));
    let data = Json::from_value(&serde_json::json!({ "todos": json }));
    let mut event = side::meta(session.to_owned(), MetaType::TodoList, data);
    if agent != session {
        event.agent_id = Some(agent.to_owned());
        event.is_sidechain = true;
        event.parent_session_id = Some(session.to_owned());
    }
    event
}

/// A time in milliseconds since 1970.
fn epoch_ms(value: &Value) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(value.as_i64().or_else(|| value.as_f64().map(|f| f as i64))?)
}

/// Maps prompt history lines to user messages, looking the prompts up in the transcripts.
struct History {
    transcripts: Transcripts,
    prompts: PromptCache,
}

impl History {
    fn new(name: &str) -> Self {
        let root = Path::new(name).parent().map(Path::to_path_buf).unwrap_or_default();
        History {
            transcripts: Transcripts { root, by_session: None, spans: HashMap::new() },
            prompts: PromptCache::default(),
        }
    }
}

impl LineMapper<(Line<'static>, Map<String, Value>)> for History {
    fn map(
        &mut self,
        (line, mut record): (Line<'static>, Map<String, Value>),
        out: &mut Emitter<'_>,
    ) -> io::Result<()> {
        let display = match record.remove("display") {
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let timestamp = record.remove("timestamp").as_ref().and_then(epoch_ms);
        let project = match record.remove("project") {
            Some(Value::String(p)) => Some(p),
            _ => None,
        };
        let named = match record.remove("sessionId") {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        // The id of a line that names no session is made with its day session, whichever
        // transcript it is placed in, so that it does not depend on the files beside it.
        let day = day_session(project.as_deref().unwrap_or_default(), timestamp);
        let key = named.clone().unwrap_or_else(|| day.clone());
        let session = named.or_else(|| self.transcripts.session_at(project.as_deref()?, timestamp?)).unwrap_or(day);
        let transcripts = &mut self.transcripts;
        let found = self.prompts.get(&session, || transcripts.prompts(&session)).map(|p| p.holds(&display));
        let mut message = Message::from_parts(Role::User, vec![Part::Text { text: display }]);
        message.prompt_history = Some(side::history_flag(found));
        let mut event = Event::new(session, Payload::Message(message));
        event.timestamp = timestamp;
        event.context.cwd = project;
        event.source.line = line.number;
        event.source.byte_offset = line.offset;
        event.source.record_type = Some("prompt_history".into());
        // Pasted contents and fields of later versions.
        record.retain(|key, value| !(key == "pastedContents" && value.as_object().is_some_and(Map::is_empty)));
        event.extra = (!record.is_empty()).then(|| Json::from_value(&record));
        out.emit_keyed(event, 0, &key)
    }
}

/// The session of history lines that name none, where no transcript spans their time: one per
/// project and UTC day.
fn day_session(project: &str, at: Option<DateTime<Utc>>) -> String {
    let day = at.map(|t| t.format("%Y-%m-%d").to_string()).unwrap_or_default();
    uuid_v5(&uuid::Uuid::NAMESPACE_URL, format!("agentlog:claude-code:prompt-history:{project}:{day}").as_bytes())
        .to_string()
}

/// A transcript's session and its first and last times.
type Span = (String, DateTime<Utc>, DateTime<Utc>);

/// The transcripts under the Claude Code root that holds a prompt history.
struct Transcripts {
    root: PathBuf,
    /// Transcript files by session id, listed on first use.
    by_session: Option<HashMap<String, Vec<PathBuf>>>,
    /// By project directory: each transcript's session and first and last times.
    spans: HashMap<String, Vec<Span>>,
}

impl Transcripts {
    /// The typed prompts of a session's transcripts; `None` when it has none.
    fn prompts(&mut self, session: &str) -> Option<TranscriptPrompts> {
        let root = self.root.join("projects");
        let index = self.by_session.get_or_insert_with(|| {
            let mut index: HashMap<String, Vec<PathBuf>> = HashMap::new();
            for dir in std::fs::read_dir(&root).into_iter().flatten().flatten() {
                for file in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
                    let path = file.path();
                    if let Some(stem) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl"))
                    {
                        index.entry(stem.to_owned()).or_default().push(path);
                    }
                }
            }
            index
        });
        Some(TranscriptPrompts::of_files(index.get(session)?, "\"user\"", typed_prompt))
    }

    /// The session of `project` whose transcript spans `at`.
    fn session_at(&mut self, project: &str, at: DateTime<Utc>) -> Option<String> {
        let key = project_key(project);
        let dir = self.root.join("projects").join(&key);
        let spans = self.spans.entry(key).or_insert_with(|| {
            let mut spans = Vec::new();
            for file in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = file.path();
                let Some(stem) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl"))
                else {
                    continue;
                };
                let (mut first, mut last) = (None::<DateTime<Utc>>, None::<DateTime<Utc>>);
                side::lines_with(&path, "\"timestamp\"", |line| {
                    let time = serde_json::from_str::<Value>(line)
                        .ok()
                        .and_then(|r| r.get("timestamp").and_then(Value::as_str).and_then(crate::read::parse_time));
                    if let Some(t) = time {
                        first = Some(first.map_or(t, |f| f.min(t)));
                        last = Some(last.map_or(t, |l| l.max(t)));
                    }
                });
                if let (Some(first), Some(last)) = (first, last) {
                    spans.push((stem.to_owned(), first, last));
                }
            }
            spans.sort();
            spans
        });
        // A prompt is recorded when typed, just before the transcript's record of it.
        let slack = chrono::Duration::minutes(1);
        spans.iter().find(|(_, first, last)| *first - slack <= at && at <= *last).map(|(s, _, _)| s.clone())
    }
}

/// The text of a transcript line that holds a prompt the user typed: a user record whose
/// content is a string or has text blocks, and for a slash command its name and arguments.
fn typed_prompt(line: &str) -> Option<String> {
    let record: Value = serde_json::from_str(line).ok()?;
    if record.get("type")?.as_str()? != "user" || record.get("toolUseResult").is_some() {
        return None;
    }
    let content = record.get("message")?.get("content")?;
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text")?.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&format!("</{name}>"))? + start;
        Some(text[start..end].trim().to_owned())
    };
    match tag("command-name") {
        Some(command) => Some(format!("{command} {}", tag("command-args").unwrap_or_default()).trim().to_owned()),
        None => Some(text),
    }
}
