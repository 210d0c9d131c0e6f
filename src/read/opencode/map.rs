//! OpenCode records → agentlog events, whichever form they are read from: rows of the database,
//! an `opencode export` document, or the JSON files of versions before 1.2.
//!
//! A session is its info, then its messages in order, each with its parts. Every record (the
//! session, a message, a part) gives at least one event, keyed by the record's own id
//! ([`Emitter::emit_record`]), so that a session read from the database and from an export of
//! it has the same event ids.
//!
//! **Messages.** A user message's text is in its `text` parts, not in the message; the message
//! itself gives a `turn_start`. An assistant message is one model response in the versions
//! recorded (one `step-start`/`step-finish` pair each); its events carry the message id as
//! their `response_id`.
//!
//! **Usage** is the agent's `tokens {input, output, reasoning, cache {read, write}, total}`, where
//! `input` excludes cache reads. Whether `output` includes `reasoning` changed between versions
//! (1.2.16 included it, 1.18.33 does not); a record's `total` tells which, and without one (or
//! without reasoning to tell by) the version that wrote the session decides (see `Style`). In
//! agentlog's counts, output includes reasoning. It is counted at each `step-finish` part (one per model response);
//! the assistant message's own `tokens`, their sum, is then a `usage_snapshot`. A message
//! without a `step-finish` that has tokens is counted at the message. The agent's own `cost`
//! stays in the event's `data` (Kilo CLI adds a subagent's cost to the message that called it,
//! never to the `step-finish`).
//!
//! **Tools.** A `tool` part is the call and, once it ran, its output: `state.output` (or
//! `state.error` for a tool that failed), the command's exit code in `state.metadata.exit`.
//! A subagent runs in a session of its own, whose `parentID` names the parent session.

use serde_json::{Map, Value};

use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, USAGE_SLOT,
    Usage,
};
use crate::read::Emitter;

/// Where a record was read: its line (a row's rowid, a document's line), its own id and kind.
#[derive(Debug, Clone)]
pub struct At {
    /// The line, or a row's rowid.
    pub line: u64,
    /// The record's own id (`ses_…`, `msg_…`, `prt_…`), which keys its events.
    pub id: String,
    /// The table or kind of record (`session`, `message`, `part`).
    pub table: &'static str,
}

/// A session's info, in the fields the events need, and whole as recorded.
#[derive(Debug, Default)]
pub struct SessionInfo {
    /// The session's id.
    pub id: String,
    /// The session that spawned it, for a subagent's.
    pub parent: Option<String>,
    /// The tool call of the parent session that spawned it, when known.
    pub parent_call: Option<String>,
    /// The working directory.
    pub directory: Option<String>,
    /// The title, as the agent set it.
    pub title: Option<String>,
    /// The agent's version that created it.
    pub version: Option<String>,
    /// When it was created, Unix milliseconds.
    pub created: Option<i64>,
    /// The whole record.
    pub data: Value,
}

/// Maps the records of one session.
pub struct Mapper {
    session_id: String,
    parent: Option<String>,
    parent_call: Option<String>,
    context: Context,
    style: Style,
}

/// What the agent's token counts include, which changed with its versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Later versions (1.18.33 recorded): `input` without cache reads, `output` without
    /// `reasoning`.
    Apart,
    /// 1.0 and 1.1: `output` includes `reasoning`.
    OutputWithReasoning,
    /// 0.x: `output` includes `reasoning`, and `input` the cache reads.
    AllIncluded,
}

impl Style {
    /// The style of the version that wrote a session (`1.1.65`); the current one when unknown.
    fn of(version: Option<&str>) -> Style {
        let mut numbers = version.unwrap_or_default().split('.').map(|n| n.parse::<u64>().ok());
        match (numbers.next().flatten(), numbers.next().flatten()) {
            (Some(0), _) => Style::AllIncluded,
            (Some(1), Some(minor)) if minor < 2 => Style::OutputWithReasoning,
            _ => Style::Apart,
        }
    }
}

impl Mapper {
    /// A mapper for the session `info` describes.
    pub fn new(info: &SessionInfo) -> Self {
        let context =
            Context { cwd: info.directory.clone(), agent_version: info.version.clone(), ..Context::default() };
        Mapper {
            session_id: info.id.clone(),
            parent: info.parent.clone(),
            parent_call: info.parent_call.clone(),
            context,
            style: Style::of(info.version.as_deref()),
        }
    }

    /// An event of the record at `at`, of kind `kind`.
    pub(crate) fn event(&self, at: &At, kind: &str, time: Option<i64>, payload: Payload) -> Event {
        let mut event = Event::new(self.session_id.clone(), payload);
        event.timestamp = time.and_then(chrono::DateTime::from_timestamp_millis);
        event.record_id = Some(at.id.clone());
        if let Some(parent) = &self.parent {
            event.parent_session_id = Some(parent.clone());
            event.agent_id = Some(self.session_id.clone());
            event.parent_call_id.clone_from(&self.parent_call);
            event.is_sidechain = true;
        }
        event.context = self.context.clone();
        event.source.line = at.line;
        event.source.record_type = Some(format!("{}/{kind}", at.table));
        event
    }

    pub(super) fn meta(&self, at: &At, kind: &str, time: Option<i64>, meta_type: MetaType, data: &Value) -> Event {
        let data = Some(Json::from_value_of_raw(data));
        self.event(at, kind, time, Payload::Meta(Meta { meta_type, data, usage: None }))
    }

    /// Sets the model in force for the events that follow.
    pub(super) fn set_model(&mut self, model: &str) {
        self.context.model = Some(model.to_owned());
    }

    /// The session's record: a `session_start`, and its title when the agent made one.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn session(&mut self, info: &SessionInfo, at: &At, out: &mut Emitter<'_>) -> std::io::Result<()> {
        out.emit_record(self.meta(at, "info", info.created, MetaType::SessionStart, &info.data), &at.id, 0)?;
        // Until the title request answers, a session is "New session - <time>" (a subagent's
        // "Child session - <time>"): a placeholder, not a title.
        let made = info
            .title
            .as_deref()
            .filter(|t| !t.is_empty() && !t.starts_with("New session - ") && !t.starts_with("Child session - "));
        if let Some(title) = made {
            let data = serde_json::json!({ "title": title, "source": "ai" });
            out.emit_record(self.meta(at, "title", info.created, MetaType::Title, &data), &at.id, 1)?;
        }
        Ok(())
    }

    /// A message and its parts, in order.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn message(
        &mut self,
        info: &Map<String, Value>,
        at: &At,
        parts: &[(Map<String, Value>, At)],
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let role = text(info, "role").unwrap_or_default();
        let time = info.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64);
        let model = text(info, "modelID").or_else(|| info.get("model").and_then(|m| text_in(m, "modelID")));
        if let Some(model) = model {
            self.context.model = Some(model.to_owned());
        }
        if let Some(cwd) = info.get("path").and_then(|p| text_in(p, "cwd")) {
            self.context.cwd = Some(cwd.to_owned());
        }
        let data = Value::Object(info.clone());
        let response = (role == "assistant").then(|| at.id.clone());
        if info.is_empty() {
            // A message whose row could not be read (its diagnostic stands for it), or is gone.
        } else if role == "assistant" {
            let counted_in_steps =
                parts.iter().any(|(p, _)| text(p, "type") == Some("step-finish") && tokens(p).is_some());
            let event = match tokens(info) {
                Some(usage) if !counted_in_steps && !usage.is_zero() => {
                    self.usage_event(at, "assistant", time, &data, usage, response.clone())
                }
                Some(_) => self.meta(at, "assistant", time, MetaType::UsageSnapshot, &data),
                None => self.meta(at, "assistant", time, MetaType::System, &data),
            };
            out.emit_record(with_response(event, &response), &at.id, USAGE_SLOT)?;
        } else {
            let kind = if role.is_empty() { "message" } else { role };
            let meta_type = if role == "user" { MetaType::TurnStart } else { MetaType::Unknown };
            out.emit_record(self.meta(at, kind, time, meta_type, &data), &at.id, USAGE_SLOT)?;
        }
        let speaker = if role == "user" { Role::User } else { Role::Assistant };
        for (part, at) in parts {
            self.part(part, at, speaker, time, &response, out)?;
        }
        Ok(())
    }

    pub(super) fn usage_event(
        &self,
        at: &At,
        kind: &str,
        time: Option<i64>,
        data: &Value,
        counts: Counts,
        response: Option<String>,
    ) -> Event {
        let usage = counts.usage(self.context.model.clone(), self.style);
        let data = Some(Json::from_value_of_raw(data));
        let mut event =
            self.event(at, kind, time, Payload::Meta(Meta { meta_type: MetaType::Usage, data, usage: Some(usage) }));
        event.response_id = response;
        event
    }

    fn part(
        &self,
        part: &Map<String, Value>,
        at: &At,
        speaker: Role,
        message_time: Option<i64>,
        response: &Option<String>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let kind = text(part, "type").unwrap_or("part");
        let time = part
            .get("time")
            .and_then(|t| t.get("start").or_else(|| t.get("created")))
            .and_then(Value::as_i64)
            .or_else(|| {
                part.get("state").and_then(|s| s.get("time")).and_then(|t| t.get("start")).and_then(Value::as_i64)
            })
            .or(message_time);
        let whole = Value::Object(part.clone());
        let emit =
            |event: Event, slot, out: &mut Emitter<'_>| out.emit_record(with_response(event, response), &at.id, slot);
        match kind {
            "text" => {
                let body = text(part, "text").unwrap_or_default();
                let mut event =
                    self.event(at, kind, time, Payload::Message(Message::from_parts(speaker, text_parts(body))));
                event.injected = part.get("synthetic").and_then(Value::as_bool).unwrap_or(false);
                event.extra = extra(part, &["type", "text", "time", "synthetic", "id", "sessionID", "messageID"]);
                emit(event, 0, out)
            }
            "reasoning" => {
                let signature = part
                    .get("metadata")
                    .and_then(|m| m.get("anthropic"))
                    .and_then(|a| text_in(a, "signature"))
                    .map(str::to_owned);
                let payload = Payload::Reasoning(Reasoning {
                    text: text(part, "text").unwrap_or_default().to_owned(),
                    raw_text: None,
                    encrypted: false,
                    omitted: false,
                    signature,
                });
                let mut event = self.event(at, kind, time, payload);
                event.extra = extra(part, &["type", "text", "time", "id", "sessionID", "messageID"]);
                emit(event, 0, out)
            }
            "tool" => self.tool(part, at, time, response, out),
            "file" => {
                let media_type = text(part, "mime").map(str::to_owned);
                let url = text(part, "url").map(str::to_owned);
                let item = match media_type.as_deref() {
                    Some(m) if m.starts_with("image/") => Part::Image { media_type, data: None, url },
                    _ => Part::Document { media_type, data: None, url },
                };
                let mut event = self.event(at, kind, time, Payload::Message(Message::from_parts(speaker, vec![item])));
                event.extra = extra(part, &["type", "mime", "url", "id", "sessionID", "messageID"]);
                emit(event, 0, out)
            }
            "step-finish" => match tokens(part) {
                Some(counts) => {
                    let event = self.usage_event(at, kind, time, &whole, counts, response.clone());
                    emit(event, USAGE_SLOT, out)
                }
                None => emit(self.meta(at, kind, time, MetaType::Progress, &whole), 0, out),
            },
            "step-start" | "snapshot" | "patch" if part.contains_key("snapshot") || kind == "patch" => {
                emit(self.meta(at, kind, time, MetaType::FileSnapshot, &whole), 0, out)
            }
            "step-start" => emit(self.meta(at, kind, time, MetaType::Progress, &whole), 0, out),
            "compaction" => emit(self.meta(at, kind, time, MetaType::Compaction, &whole), 0, out),
            "retry" | "agent" | "subtask" => emit(self.meta(at, kind, time, MetaType::System, &whole), 0, out),
            _ => emit(self.meta(at, kind, time, MetaType::Unknown, &whole), 0, out),
        }
    }

    /// A `tool` part: its call, and its output once the tool ran (`completed` or `error`).
    fn tool(
        &self,
        part: &Map<String, Value>,
        at: &At,
        time: Option<i64>,
        response: &Option<String>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let name = text(part, "tool").unwrap_or("unknown").to_owned();
        let call_id = text(part, "callID").map(str::to_owned);
        let state = part.get("state").and_then(Value::as_object);
        let mut event = self.event(at, "tool", time, call(&name, &call_id, state));
        event.extra = extra(part, &["type", "tool", "callID", "state", "id", "sessionID", "messageID"]);
        out.emit_record(with_response(event, response), &at.id, 0)?;
        let status = state.and_then(|s| text(s, "status")).unwrap_or_default();
        if status != "completed" && status != "error" {
            return Ok(());
        }
        let state = state.expect("a status comes from a state");
        let text = text(state, "output").or_else(|| text(state, "error")).unwrap_or_default().to_owned();
        let ran = state.get("time");
        let (start, end) = (
            ran.and_then(|t| t.get("start")).and_then(Value::as_i64),
            ran.and_then(|t| t.get("end")).and_then(Value::as_i64),
        );
        let output = output(call_id, name, text, state, start.zip(end));
        let event = self.event(at, "tool", end.or(time), output);
        out.emit_record(with_response(event, response), &at.id, 1)
    }
}

/// A tool call: the tool's `name`, its `call_id`, and the `input` of its `state`.
pub(super) fn call(name: &str, call_id: &Option<String>, state: Option<&Map<String, Value>>) -> Payload {
    let input = state.and_then(|s| s.get("input"));
    Payload::ToolCall(ToolCall::from_input(call_id.clone(), name.to_owned(), input))
}

/// A tool's output from its `state` once it ran (`completed`, or `error`, a failure of the
/// tool itself); the command's exit code is `state.metadata.exit`. `ran` is when it started and
/// ended, Unix milliseconds.
pub(super) fn output(
    call_id: Option<String>,
    name: String,
    text: String,
    state: &Map<String, Value>,
    ran: Option<(i64, i64)>,
) -> Payload {
    Payload::ToolOutput(ToolOutput {
        call_id,
        name: Some(name),
        tool_kind: None,
        text,
        parts: Vec::new(),
        is_error: Some(state.get("status").and_then(Value::as_str) == Some("error")),
        exit_code: state.get("metadata").and_then(|m| m.get("exit")).and_then(Value::as_i64),
        failed: None,
        duration_ms: ran.and_then(|(s, e)| u64::try_from(e - s).ok()),
        result: Some(Json::from_value_of_raw(&Value::Object(state.clone()))),
    })
}

fn with_response(mut event: Event, response: &Option<String>) -> Event {
    event.response_id.clone_from(response);
    event
}

/// Token counts in OpenCode's terms.
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    input: u64,
    output: u64,
    reasoning: u64,
    cache_read: u64,
    cache_write: u64,
    /// The record's own `total`, where it has one (1.1 and later).
    total: Option<u64>,
}

impl Counts {
    pub(super) fn is_zero(self) -> bool {
        self.input + self.output + self.reasoning + self.cache_read + self.cache_write == 0
    }

    /// In agentlog's counts: fresh input apart from cache reads, output with reasoning.
    fn usage(self, model: Option<String>, style: Style) -> Usage {
        // A record's `total` tells whether its `output` holds its `reasoning`: the version that
        // changed it is not known (1.2.16 still counts reasoning in `output`, 1.18.33 apart).
        let stored = self.input + self.output + self.cache_read + self.cache_write;
        let with_reasoning = match self.total {
            Some(total) if self.reasoning > 0 && total == stored => true,
            Some(total) if self.reasoning > 0 && total == stored + self.reasoning => false,
            _ => style != Style::Apart,
        };
        let output = if with_reasoning { self.output } else { self.output + self.reasoning };
        let input = match style {
            Style::AllIncluded => self.input.saturating_sub(self.cache_read),
            Style::Apart | Style::OutputWithReasoning => self.input,
        };
        Usage {
            input_tokens: Some(input),
            cache_read_tokens: Some(self.cache_read),
            cache_write_tokens: Some(self.cache_write),
            output_tokens: Some(output),
            reasoning_tokens: Some(self.reasoning),
            total_tokens: Some(input + self.cache_read + self.cache_write + output),
            model,
            ..Usage::default()
        }
    }
}

/// The `tokens` of a message or `step-finish` part, when it has them.
pub(super) fn tokens(record: &Map<String, Value>) -> Option<Counts> {
    let tokens = record.get("tokens")?.as_object()?;
    let count = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let cache = tokens.get("cache");
    Some(Counts {
        input: count(tokens.get("input")),
        output: count(tokens.get("output")),
        reasoning: count(tokens.get("reasoning")),
        cache_read: count(cache.and_then(|c| c.get("read"))),
        cache_write: count(cache.and_then(|c| c.get("write"))),
        total: tokens.get("total").and_then(Value::as_u64),
    })
}

fn text<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

fn text_in<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

pub(super) fn text_parts(body: &str) -> Vec<Part> {
    if body.is_empty() { Vec::new() } else { vec![Part::Text { text: body.to_owned() }] }
}

/// The fields of a record that no event field carries, as an object; `None` when there are none.
pub(super) fn extra(record: &Map<String, Value>, carried: &[&str]) -> Option<Json> {
    let rest: Map<String, Value> =
        record.iter().filter(|(k, _)| !carried.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    (!rest.is_empty()).then(|| Json::from_value_of_raw(&Value::Object(rest)))
}
