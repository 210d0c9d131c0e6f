//! Crush rows → agentlog events: a session's row, then each message row with its parts in order.
//!
//! Every row gives at least one event, keyed by the row's own id ([`Emitter::emit_record`]):
//! the session's events by the session id, a message's by the message id, the events of its
//! `n`th part by slots `2n` and `2n + 1`. Text and attachments next to each other (`text`,
//! `image_url`, `binary`: a prompt and its images) are one message, at its first part's slot.
//! `source.line` is the row's rowid and
//! `source.record_type` says what gave the event: `session/info`, `session/title`,
//! `session/todos`, `part/<type>` for a part, `message/<role>` for a message row itself (a
//! compaction's summary, a row without parts).
//!
//! A part is `{"type": T, "data": {…}}`, as `internal/message/message.go` (`marshalParts`)
//! writes it; Go writes every field of `data`, so the zero values of fields a part does not use
//! (`""`, `null`, `false`) are left out of `extra`. Of a message row's other columns, `model` is
//! the events' `context.model` (from then on, as the model in force), `provider` is in the
//! `extra` of an assistant message's events, `created_at` their time where the part has none;
//! `updated_at` and `finished_at` (the time of its `finish` part) are not carried.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput,
};
use crate::read::Emitter;

/// The slot of an event a message row gives besides its parts (a compaction, an empty row).
const ROW_SLOT: u32 = u32::MAX - 1;

/// Titles Crush gives a session before, or instead of, one the model writes: the placeholder
/// of a new session (`agent.DefaultSessionName`, also kept when title generation fails; the
/// UI's "New Session"), the fixed titles of the sessions of the `agent` and `agentic_fetch`
/// tools, and of a title-generation session.
const PLACEHOLDER_TITLES: [&str; 5] =
    ["Untitled Session", "New Session", "New Agent Session", "Fetch Analysis", "Generate a title"];

/// Tools whose output ends with the line `Exit code N` when the command failed (`bash`:
/// `formatOutput` in `internal/agent/tools/bash.go`, before the `<cwd>` it appends;
/// `job_output`: the last line of the output).
const EXIT_CODE_TOOLS: [&str; 2] = ["bash", "job_output"];

/// Prefix of the call ids given to the commands the user ran with `!` (`shell_command` parts),
/// which Crush stores without an id; the rest is `<message id>/<part index>`.
pub const USER_SHELL: &str = "user-shell:";

/// Where a row was read: its rowid, its own id and its table.
#[derive(Debug, Clone)]
pub struct At {
    /// The row's rowid.
    pub line: u64,
    /// The row's own id, which keys its events.
    pub id: String,
    /// What was read, as `source.record_type` names it: `session`, `message` (a message row),
    /// `part` (an element of a message's `parts`).
    pub table: &'static str,
}

/// How a session came to be, from its id and `parent_session_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lineage {
    /// A session the user started.
    Root,
    /// The session of a sub-agent (`agent`, `agentic_fetch`): its id is
    /// `<assistant message id>$$<tool call id>` (`CreateAgentToolSessionID`), or, before 0.13,
    /// the tool call id itself.
    Tool {
        /// The assistant message of the parent session that called the tool, when the id says.
        message: Option<String>,
        /// The call's id.
        call: String,
    },
    /// A title-generation session, `title-<parent id>` (`CreateTitleSession`).
    Title,
}

impl Lineage {
    /// The lineage of session `id`, whose row names `parent`.
    pub fn of(id: &str, parent: Option<&str>) -> Lineage {
        let Some(parent) = parent else { return Lineage::Root };
        if id.strip_prefix("title-") == Some(parent) {
            return Lineage::Title;
        }
        match id.split_once("$$") {
            Some((message, call)) if !call.contains("$$") => {
                Lineage::Tool { message: Some(message.to_owned()), call: call.to_owned() }
            }
            _ => Lineage::Tool { message: None, call: id.to_owned() },
        }
    }
}

/// A session's row, in the fields the events need, and whole.
#[derive(Debug)]
pub struct SessionRow {
    /// The session's id.
    pub id: String,
    /// `parent_session_id`.
    pub parent: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `created_at`.
    pub created: Option<i64>,
    /// Every column, JSON columns parsed.
    pub data: Map<String, Value>,
}

/// A message's row, without its parts.
#[derive(Debug)]
pub struct MessageRow {
    /// The row's rowid, id and table.
    pub at: At,
    /// `role`: `user`, `assistant`, `tool` or `system`.
    pub role: String,
    /// `model`, empty for messages Crush did not get from a model.
    pub model: Option<String>,
    /// `provider`.
    pub provider: Option<String>,
    /// `created_at`.
    pub created: Option<i64>,
    /// `is_summary_message`: the summary a compaction wrote.
    pub is_summary: bool,
    /// Every column but `parts`.
    pub data: Map<String, Value>,
}

/// Maps the rows of one session.
pub struct Mapper {
    session_id: String,
    lineage: Lineage,
    parent: Option<String>,
    context: Context,
    /// The names of the tools called so far, by call id, for their results.
    calls: HashMap<String, String>,
}

impl Mapper {
    /// A mapper for the session `row` describes.
    pub fn new(row: &SessionRow) -> Self {
        Mapper {
            session_id: row.id.clone(),
            lineage: Lineage::of(&row.id, row.parent.as_deref()),
            parent: row.parent.clone(),
            context: Context::default(),
            calls: HashMap::new(),
        }
    }

    /// An event of the row at `at`, of kind `kind`.
    fn event(&self, at: &At, kind: &str, time: Option<i64>, payload: Payload) -> Event {
        let mut event = Event::new(self.session_id.clone(), payload);
        event.timestamp = time.and_then(time_of);
        event.record_id = Some(at.id.clone());
        if let Some(parent) = &self.parent {
            event.parent_session_id = Some(parent.clone());
            event.agent_id = Some(self.session_id.clone());
            event.is_sidechain = true;
            if let Lineage::Tool { call, .. } = &self.lineage {
                event.parent_call_id = Some(call.clone());
            }
        }
        event.context = self.context.clone();
        event.source.line = at.line;
        event.source.record_type = Some(format!("{}/{kind}", at.table));
        event
    }

    fn meta(&self, at: &At, kind: &str, time: Option<i64>, meta_type: MetaType, data: &Value) -> Event {
        let data = Some(Json::from_value_of_raw(data));
        self.event(at, kind, time, Payload::Meta(Meta { meta_type, data, usage: None }))
    }

    /// The session's row: a `session_start` holding every column (the agent's own `cost`,
    /// `prompt_tokens` and `completion_tokens` among them), its title when it is not a
    /// placeholder, and its todo list when it has one.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn session(&mut self, row: &SessionRow, at: &At, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let mut start = self.meta(at, "info", row.created, MetaType::SessionStart, &Value::Object(row.data.clone()));
        start.extra = match &self.lineage {
            Lineage::Root => None,
            Lineage::Tool { message, .. } => Some(Json::from_value(&serde_json::json!({
                "session_kind": "tool",
                "parent_message_id": message,
            }))),
            Lineage::Title => Some(Json::from_value(&serde_json::json!({ "session_kind": "title" }))),
        };
        out.emit_record(start, &at.id, 0)?;
        let title = row.title.as_deref().filter(|t| !t.trim().is_empty() && !PLACEHOLDER_TITLES.contains(t));
        if let Some(title) = title {
            let data = serde_json::json!({ "title": title, "source": "ai" });
            out.emit_record(self.meta(at, "title", row.created, MetaType::Title, &data), &at.id, 1)?;
        }
        if let Some(todos) = row.data.get("todos").filter(|t| t.as_array().is_some_and(|t| !t.is_empty())) {
            let data = serde_json::json!({ "todos": todos });
            let updated = row.data.get("updated_at").and_then(Value::as_i64);
            out.emit_record(self.meta(at, "todos", updated, MetaType::TodoList, &data), &at.id, 2)?;
        }
        Ok(())
    }

    /// A message row and its parts, in order.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn message(&mut self, row: &MessageRow, parts: &[Value], out: &mut Emitter<'_>) -> std::io::Result<()> {
        if row.role == "assistant"
            && let Some(model) = row.model.as_deref().filter(|m| !m.is_empty())
        {
            self.context.model = Some(model.to_owned());
        }
        let at = &row.at;
        let before = out.count();
        if row.is_summary {
            let data = Value::Object(row.data.clone());
            self.emit(row, self.meta(at, &row.role, row.created, MetaType::Compaction, &data), ROW_SLOT, out)?;
        }
        // Text and attachments next to each other are one message (a prompt and its images).
        let mut content: Vec<(usize, &str, &Map<String, Value>)> = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            if let Some((kind, data)) = content_part(part) {
                content.push((i, kind, data));
                continue;
            }
            self.content(row, &std::mem::take(&mut content), out)?;
            self.part(row, i, part, slot_of(i), out)?;
        }
        self.content(row, &content, out)?;
        if out.count() == before {
            // No parts (a response that never streamed anything): the row stands as itself.
            let data = Value::Object(row.data.clone());
            self.emit(row, self.meta(at, &row.role, row.created, MetaType::System, &data), ROW_SLOT, out)?;
        }
        Ok(())
    }

    /// A run of `text`, `image_url` and `binary` parts as one message, at the first one's slot;
    /// what no field of the message carries is in `extra.parts`, one object per part.
    fn content(
        &self,
        row: &MessageRow,
        content: &[(usize, &str, &Map<String, Value>)],
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let Some(&(first, kind, _)) = content.first() else { return Ok(()) };
        let role = match row.role.as_str() {
            "user" => Role::User,
            "system" => Role::System,
            _ => Role::Assistant,
        };
        let mut parts = Vec::new();
        let mut rest = Vec::new();
        for (_, kind, data) in content {
            let (part, carried): (Option<Part>, &[&str]) = match *kind {
                "text" => {
                    let body = text(data, "text").unwrap_or_default();
                    ((!body.is_empty()).then(|| Part::Text { text: body.to_owned() }), &["text"])
                }
                "image_url" => {
                    let url = text(data, "url").map(str::to_owned);
                    (Some(Part::Image { media_type: None, data: None, url }), &["url"])
                }
                _ => {
                    // `BinaryContent` has no JSON tags: its fields keep their Go names.
                    let media_type = text(data, "MIMEType").filter(|m| !m.is_empty()).map(str::to_owned);
                    let bytes = text(data, "Data").filter(|d| !d.is_empty()).map(str::to_owned);
                    let part = match media_type.as_deref() {
                        Some(m) if m.starts_with("image/") => Part::Image { media_type, data: bytes, url: None },
                        _ => Part::Document { media_type, data: bytes, url: None },
                    };
                    (Some(part), &["MIMEType", "Data"])
                }
            };
            parts.extend(part);
            rest.push(extra(data, carried).map_or(Value::Object(Map::new()), |e| e.to_value()));
        }
        let at = &At { table: "part", ..row.at.clone() };
        let mut event = self.event(at, kind, row.created, Payload::Message(Message::from_parts(role, parts)));
        // The prompt of a title-generation session is Crush's, not the user's.
        event.injected = self.lineage == Lineage::Title && role == Role::User;
        if rest.iter().any(|r| r.as_object().is_some_and(|r| !r.is_empty())) {
            event.extra = Some(Json::from_value_of_raw(&serde_json::json!({ "parts": rest })));
        }
        self.emit(row, event, slot_of(first), out)
    }

    fn part(
        &mut self,
        row: &MessageRow,
        index: usize,
        part: &Value,
        slot: u32,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        // A part's events are at its message's row, as `part/<type>`.
        let at = &At { table: "part", ..row.at.clone() };
        let (kind, data) = match (part.get("type").and_then(Value::as_str), part.get("data").and_then(Value::as_object))
        {
            (Some(kind), Some(data)) => (kind, data),
            (kind, _) => {
                let kind = kind.unwrap_or("part");
                return self.emit(row, self.meta(at, kind, row.created, MetaType::Unknown, part), slot, out);
            }
        };
        match kind {
            "reasoning" => {
                let signature = text(data, "signature")
                    .or_else(|| text(data, "thought_signature"))
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned);
                let thinking = text(data, "thinking").unwrap_or_default().to_owned();
                let payload = Payload::Reasoning(Reasoning {
                    omitted: thinking.is_empty(),
                    text: thinking,
                    raw_text: None,
                    encrypted: false,
                    signature,
                });
                let started = data.get("started_at").and_then(Value::as_i64).filter(|t| *t > 0);
                let mut event = self.event(at, "reasoning", started.or(row.created), payload);
                event.extra = extra(data, &["thinking", "signature"]);
                self.emit(row, event, slot, out)
            }
            "tool_call" => {
                let call_id = text(data, "id").filter(|i| !i.is_empty()).map(str::to_owned);
                let name = text(data, "name").filter(|n| !n.is_empty()).unwrap_or("unknown").to_owned();
                if let Some(id) = &call_id {
                    self.calls.insert(id.clone(), name.clone());
                }
                let (input, input_text) = tool_input(text(data, "input").unwrap_or_default());
                let call = Payload::ToolCall(ToolCall { call_id, name, tool_kind: None, input, input_text });
                let mut event = self.event(at, "tool_call", row.created, call);
                event.extra = extra(data, &["id", "name", "input"]);
                self.emit(row, event, slot, out)
            }
            "tool_result" => {
                let event = self.tool_result(row, at, data);
                self.emit(row, event, slot, out)
            }
            "finish" => {
                let reason = text(data, "reason").unwrap_or_default();
                let meta_type = match reason {
                    "canceled" => MetaType::Interrupt,
                    "error" | "content_filter" => MetaType::System,
                    "end_turn" if row.role == "assistant" && !row.is_summary => MetaType::TurnEnd,
                    // `tool_use`, `max_tokens`, `unknown`, and the `stop` Crush adds to every
                    // message it did not get from a model (`Service.Create`), with time 0.
                    _ => MetaType::Progress,
                };
                let time = data.get("time").and_then(Value::as_i64).filter(|t| *t > 0).or(row.created);
                let event = self.meta(at, "finish", time, meta_type, &Value::Object(data.clone()));
                self.emit(row, event, slot, out)
            }
            "shell_command" => {
                // A command the user ran with `!`: a call and its output, as Claude Code's bash
                // mode is read.
                let call_id = Some(format!("{USER_SHELL}{}/{index}", at.id));
                let command = text(data, "command").unwrap_or_default();
                let input = Json::from_value(&serde_json::json!({ "command": command }));
                let call = Payload::ToolCall(ToolCall {
                    call_id: call_id.clone(),
                    name: "user_shell".into(),
                    tool_kind: None,
                    input: Some(input),
                    input_text: None,
                });
                self.emit(row, self.event(at, "shell_command", row.created, call), slot, out)?;
                let output = Payload::ToolOutput(ToolOutput {
                    call_id,
                    name: Some("user_shell".into()),
                    tool_kind: None,
                    text: text(data, "output").unwrap_or_default().to_owned(),
                    parts: Vec::new(),
                    is_error: None,
                    exit_code: data.get("exit_code").and_then(Value::as_i64),
                    failed: None,
                    duration_ms: None,
                    result: None,
                });
                self.emit(row, self.event(at, "shell_command", row.created, output), slot + 1, out)
            }
            _ => self.emit(row, self.meta(at, kind, row.created, MetaType::Unknown, part), slot, out),
        }
    }

    /// A `tool_result` part (of a `tool` message): the output of the call it names.
    fn tool_result(&self, row: &MessageRow, at: &At, data: &Map<String, Value>) -> Event {
        let call_id = text(data, "tool_call_id").filter(|i| !i.is_empty()).map(str::to_owned);
        let name = text(data, "name")
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .or_else(|| call_id.as_ref().and_then(|id| self.calls.get(id).cloned()));
        let content = text(data, "content").unwrap_or_default().to_owned();
        // `metadata` is the tool's own result, JSON in a string (`bash`: start and end times in
        // milliseconds, output, working directory).
        let metadata = text(data, "metadata")
            .filter(|m| !m.is_empty())
            .map(|m| serde_json::from_str::<Value>(m).unwrap_or_else(|_| Value::String(m.to_owned())));
        let millis = |key: &str| metadata.as_ref().and_then(|m| m.get(key)).and_then(Value::as_i64).filter(|t| *t > 0);
        let (start, end) = (millis("start_time"), millis("end_time"));
        // Media a tool returned (`view` of an image) is base64 in `data`.
        let mut parts = Vec::new();
        if let Some(bytes) = text(data, "data").filter(|d| !d.is_empty()) {
            if !content.is_empty() {
                parts.push(Part::Text { text: content.clone() });
            }
            let media_type = text(data, "mime_type").filter(|m| !m.is_empty()).map(str::to_owned);
            let bytes = Some(bytes.to_owned());
            parts.push(match media_type.as_deref() {
                Some(m) if m.starts_with("image/") => Part::Image { media_type, data: bytes, url: None },
                _ => Part::Document { media_type, data: bytes, url: None },
            });
        }
        let exit_code = name.as_deref().filter(|n| EXIT_CODE_TOOLS.contains(n)).and_then(|_| exit_code(&content));
        let output = Payload::ToolOutput(ToolOutput {
            call_id,
            name,
            tool_kind: None,
            text: content,
            parts,
            is_error: Some(data.get("is_error").and_then(Value::as_bool).unwrap_or(false)),
            exit_code,
            failed: None,
            duration_ms: start.zip(end).and_then(|(s, e)| u64::try_from(e - s).ok()),
            result: metadata.as_ref().map(Json::from_value_of_raw),
        });
        // Event times are kept to the millisecond: the tool's end, else the message's creation.
        let mut event = self.event(at, "tool_result", None, output);
        event.timestamp =
            end.and_then(chrono::DateTime::from_timestamp_millis).or_else(|| row.created.and_then(time_of));
        event
    }

    /// Emits an event of `row`, with the assistant message's id as its response id and the
    /// provider, which no other field carries, in `extra`.
    fn emit(&self, row: &MessageRow, mut event: Event, slot: u32, out: &mut Emitter<'_>) -> std::io::Result<()> {
        if row.role == "assistant" {
            event.response_id = Some(row.at.id.clone());
            if let Some(provider) = row.provider.as_deref().filter(|p| !p.is_empty()) {
                let mut extra = event.extra.as_ref().map(Json::to_value).and_then(|v| match v {
                    Value::Object(map) => Some(map),
                    _ => None,
                });
                extra.get_or_insert_default().insert("provider".into(), provider.into());
                event.extra = extra.map(|e| Json::from_value_of_raw(&Value::Object(e)));
            }
        }
        out.emit_record(event, &row.at.id, slot)
    }
}

/// A time column or field as a time: Crush writes seconds (`strftime('%s', 'now')`,
/// `time.Now().Unix()`) though its schema says milliseconds; a value too large for seconds is
/// read as milliseconds.
pub fn time_of(value: i64) -> Option<chrono::DateTime<chrono::Utc>> {
    match value {
        ..=0 => None,
        100_000_000_000.. => chrono::DateTime::from_timestamp_millis(value),
        _ => chrono::DateTime::from_timestamp(value, 0),
    }
}

/// A tool call's `input`, JSON in a string: the object it holds, else the text as it is.
fn tool_input(input: &str) -> (Option<Json>, Option<String>) {
    if input.trim().is_empty() {
        return (None, None);
    }
    match serde_json::from_str::<Value>(input) {
        Ok(value @ Value::Object(_)) => (Some(Json::from_value_of_raw(&value)), None),
        _ => (None, Some(input.to_owned())),
    }
}

/// The exit code a failed command's output ends with: `Exit code N` as its last line, before
/// the `<cwd>…</cwd>` that `bash` appends.
pub fn exit_code(output: &str) -> Option<i64> {
    let mut text = output.trim_end();
    if text.ends_with("</cwd>")
        && let Some(i) = text.rfind("<cwd>")
    {
        text = text[..i].trim_end();
    }
    let last = text.rsplit('\n').next()?;
    last.strip_prefix("Exit code ")?.trim_end_matches('\r').parse().ok()
}

/// The slot of the first event of the `index`th part.
fn slot_of(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX / 2 - 1).saturating_mul(2)
}

/// The type and data of a part that is content of a message: `text`, `image_url`, `binary`.
fn content_part(part: &Value) -> Option<(&str, &Map<String, Value>)> {
    let kind = part.get("type").and_then(Value::as_str).filter(|k| ["text", "image_url", "binary"].contains(k))?;
    Some((kind, part.get("data")?.as_object()?))
}

fn text<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

/// The fields of a part's `data` that no event field carries, as an object, without the zero
/// values Go writes for fields the part does not use; `None` when none is left.
fn extra(data: &Map<String, Value>, carried: &[&str]) -> Option<Json> {
    let rest: Map<String, Value> = data
        .iter()
        .filter(|(k, v)| !carried.contains(&k.as_str()) && !is_zero(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!rest.is_empty()).then(|| Json::from_value_of_raw(&Value::Object(rest)))
}

fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
