//! A Cline CLI messages document → agentlog events.
//!
//! **Records.** The document's fields but `messages` are its header, line 1: a `session_start`.
//! Each element of `messages` is a record at the line where it starts (the raw element's
//! place in the text, so a document written on one line has every record on line 1). Event ids
//! are keyed by the element's index in `messages` and the block's index in it, not by line.
//!
//! **Sub-agents.** A `spawn_agent` call runs a sub-agent whose messages are a document of their
//! own beside the parent's, `<parent id>/agent_<id>.messages.json`, with `agent: "subagent"` and
//! `origin {parentThreadId, subagent}`: its events name the parent session and the sub-agent.
//! The file does not name the call that spawned it; the call's output is the sub-agent's result.
//!
//! **User messages.** The typed prompt is wrapped as `<user_input mode="act">…</user_input>`;
//! the event holds the text inside (the mode goes to `extra.user_input_mode`). Text the agent
//! adds on its own (`[SYSTEM] …` reminders) carries `metadata` and no wrapper: it is flagged
//! `injected`. A compaction summary (`metadata.kind` `compaction_summary`) is a `compaction`
//! meta event. `tool_result` blocks are tool outputs: `run_commands` answers with one
//! `{query, result, error?, success}` item per command; a failed command's exit code is in its
//! result's first line (`[Command exited with code 2]`).
//!
//! **Assistant messages** hold `thinking`, `redacted_thinking`, `text` and `tool_use` blocks,
//! and, for each model request, `modelInfo {id, provider}` and `metrics` (the usage event).
//! Blocks, roles and message kinds not listed here are kept as `unknown`.

use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, USAGE_SLOT,
    Usage,
};
use crate::read::{Emitter, InputDiagnostic, Problem, ReadReport, file_stem};

/// The elements of `messages`, raw, to find where each lies in the text.
#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
}

/// Where a record lies: its line and the byte offset of that line's start.
#[derive(Debug, Clone, Copy)]
pub(super) struct At {
    pub(super) line: u64,
    pub(super) offset: u64,
}

impl At {
    /// The place of `part`, a slice of `text`.
    pub(super) fn of(text: &str, part: &str) -> At {
        let at = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len());
        let offset = text[..at].rfind('\n').map_or(0, |n| n + 1);
        At { line: text[..at].matches('\n').count() as u64 + 1, offset: offset as u64 }
    }
}

/// Maps a whole messages document; `false` when `text` is not one JSON object.
///
/// # Errors
/// When `out` fails.
pub(super) fn document(name: &str, text: &str, out: &mut Emitter<'_>) -> io::Result<bool> {
    let Ok(Value::Object(mut header)) = serde_json::from_str::<Value>(text) else { return Ok(false) };
    let Ok(raw) = serde_json::from_str::<Raw<'_>>(text) else { return Ok(false) };
    header.remove("messages");
    let session_id = string(&header, "sessionId").map_or_else(|| session_of_name(name), str::to_owned);
    let version = header.get("origin").and_then(|o| o.get("version")).and_then(Value::as_str);
    let origin = header.get("origin");
    let text_in = |key: &str| origin.and_then(|o| o.get(key)).and_then(Value::as_str).map(str::to_owned);
    let mut mapper = Mapper {
        session_id,
        parent: text_in("parentThreadId"),
        agent_id: text_in("subagent"),
        context: Context { agent_version: version.map(str::to_owned), ..Context::default() },
        names: Map::new(),
    };
    // The header has the time of the last change only (`updated_at`): the session starts with
    // its first message.
    let elements = raw.messages.unwrap_or_default();
    let first = elements.first().and_then(|m| serde_json::from_str::<Value>(m.get()).ok());
    let time =
        first.and_then(|m| m.get("ts").and_then(Value::as_i64)).and_then(chrono::DateTime::from_timestamp_millis);
    let mut start = mapper.meta(At { line: 1, offset: 0 }, "session", MetaType::SessionStart, Value::Object(header));
    start.timestamp = time;
    out.emit_record(start, "session", 0)?;
    for (index, element) in elements.into_iter().enumerate() {
        let at = At::of(text, element.get());
        let value: Value = serde_json::from_str(element.get()).unwrap_or(Value::Null);
        mapper.message(value, at, &format!("messages[{index}]"), out)?;
    }
    Ok(true)
}

/// The session id a file's name gives: `<id>` of `<id>.messages.json`.
fn session_of_name(name: &str) -> String {
    file_stem(name).to_owned()
}

/// One diagnostic for a file that is not one valid JSON document; every line counts as
/// diagnosed.
pub(super) fn invalid(name: &str, text: &str) -> ReadReport {
    let problem = match serde_json::from_str::<Value>(text) {
        Err(e) => Problem::from_json(&e),
        Ok(_) => Problem::not_an_object("a document that is not a JSON object"),
    };
    let lines = crate::read::lines::counted_lines(text);
    let mut report = ReadReport { lines, lines_diagnosed: lines, ..ReadReport::default() };
    if lines > 0 {
        let first = text.lines().next().unwrap_or_default();
        report.push(|| InputDiagnostic::new(name, 1, first, problem));
    }
    report
}

struct Mapper {
    session_id: String,
    /// The session that spawned this one, for a sub-agent's (`origin.parentThreadId`).
    parent: Option<String>,
    /// The sub-agent's id (`origin.subagent`).
    agent_id: Option<String>,
    context: Context,
    /// Tool names by call id, for the outputs.
    names: Map<String, Value>,
}

impl Mapper {
    fn event(&self, at: At, record_type: &str, payload: Payload) -> Event {
        let mut event = Event::new(self.session_id.clone(), payload);
        if let Some(parent) = &self.parent {
            event.parent_session_id = Some(parent.clone());
            event.agent_id.clone_from(&self.agent_id);
            event.is_sidechain = true;
        }
        event.context = self.context.clone();
        event.source.line = at.line;
        event.source.byte_offset = at.offset;
        event.source.record_type = Some(record_type.to_owned());
        event
    }

    fn meta(&self, at: At, record_type: &str, meta_type: MetaType, data: Value) -> Event {
        let data = Some(Json::from_value_of_raw(&data));
        self.event(at, record_type, Payload::Meta(Meta { meta_type, data, usage: None }))
    }

    /// The events of one element of `messages`.
    fn message(&mut self, value: Value, at: At, key: &str, out: &mut Emitter<'_>) -> io::Result<()> {
        let Value::Object(message) = value else {
            return out.emit_record(self.meta(at, "message", MetaType::Unknown, value), key, 0);
        };
        let role = string(&message, "role").unwrap_or_default().to_owned();
        if let Some(model) = message.get("modelInfo").and_then(|m| m.get("id")).and_then(Value::as_str) {
            self.context.model = Some(model.to_owned());
        }
        let time = message.get("ts").and_then(Value::as_i64).and_then(chrono::DateTime::from_timestamp_millis);
        let record_id = string(&message, "id").map(str::to_owned);
        let stamp = |mut event: Event| {
            event.timestamp = time;
            event.record_id.clone_from(&record_id);
            event
        };
        let kind = message.get("metadata").and_then(|m| m.get("kind")).and_then(Value::as_str);
        if role == "user" && kind == Some("compaction_summary") {
            let event = self.meta(at, "user/compaction_summary", MetaType::Compaction, Value::Object(message));
            return out.emit_record(stamp(event), key, 0);
        }
        let events = match role.as_str() {
            "user" => self.user(&message, at),
            "assistant" => self.assistant(&message, at),
            _ => Vec::new(),
        };
        if events.is_empty() {
            // Another role, or a message without content: kept whole.
            let meta_type = if role == "assistant" || role == "user" { MetaType::System } else { MetaType::Unknown };
            let kind = if role.is_empty() { "message".to_owned() } else { role };
            return out.emit_record(stamp(self.meta(at, &kind, meta_type, Value::Object(message))), key, 0);
        }
        for (slot, event) in events {
            out.emit_record(stamp(event), key, slot)?;
        }
        Ok(())
    }

    /// A user message's blocks: text (typed or injected), images, tool results.
    fn user(&mut self, message: &Map<String, Value>, at: At) -> Vec<(u32, Event)> {
        let added_by_agent = message.get("metadata").is_some();
        let mut events = Vec::new();
        for (i, block) in blocks(message).into_iter().enumerate() {
            let slot = i as u32;
            let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
            let record_type = format!("user/{}", if kind.is_empty() { "block" } else { kind });
            let event = match kind {
                "text" => {
                    let body = block.get("text").and_then(Value::as_str).unwrap_or_default();
                    let (text, mode) = unwrap_user_input(body);
                    let parts = vec![Part::Text { text: text.to_owned() }];
                    let mut event =
                        self.event(at, &record_type, Payload::Message(Message::from_parts(Role::User, parts)));
                    event.injected = mode.is_none() && added_by_agent;
                    let mut extra = Map::new();
                    if let Some(mode) = mode {
                        extra.insert("user_input_mode".into(), Value::String(mode.to_owned()));
                    }
                    if let Some(metadata) = message.get("metadata") {
                        extra.insert("metadata".into(), metadata.clone());
                    }
                    event.extra = (!extra.is_empty()).then(|| Json::from_value_of_raw(&Value::Object(extra)));
                    event
                }
                "image" => {
                    let part = image(&block);
                    self.event(at, &record_type, Payload::Message(Message::from_parts(Role::User, vec![part])))
                }
                "tool_result" => self.tool_result(&block, at, &record_type),
                _ => self.meta(at, &record_type, MetaType::Unknown, block.clone()),
            };
            events.push((slot, event));
        }
        events
    }

    /// An assistant message's blocks, and its usage.
    fn assistant(&mut self, message: &Map<String, Value>, at: At) -> Vec<(u32, Event)> {
        let mut events = Vec::new();
        for (i, block) in blocks(message).into_iter().enumerate() {
            let slot = i as u32;
            let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
            let record_type = format!("assistant/{}", if kind.is_empty() { "block" } else { kind });
            let event = match kind {
                "text" => {
                    let body = block.get("text").and_then(Value::as_str).unwrap_or_default();
                    let parts = vec![Part::Text { text: body.to_owned() }];
                    self.event(at, &record_type, Payload::Message(Message::from_parts(Role::Assistant, parts)))
                }
                "thinking" | "redacted_thinking" => {
                    let redacted = kind == "redacted_thinking";
                    let payload = Payload::Reasoning(Reasoning {
                        text: block.get("thinking").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        raw_text: None,
                        encrypted: redacted,
                        omitted: false,
                        signature: block.get("signature").and_then(Value::as_str).map(str::to_owned),
                    });
                    self.event(at, &record_type, payload)
                }
                "tool_use" => {
                    let call_id = block.get("id").and_then(Value::as_str).map(str::to_owned);
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
                    if let Some(id) = &call_id {
                        self.names.insert(id.clone(), Value::String(name.clone()));
                    }
                    let input = block.get("input");
                    self.event(
                        at,
                        &record_type,
                        Payload::ToolCall(ToolCall {
                            call_id,
                            name,
                            tool_kind: None,
                            input: input.filter(|i| !i.is_string()).map(Json::from_value_of_raw),
                            input_text: input.and_then(Value::as_str).map(str::to_owned),
                        }),
                    )
                }
                "image" => {
                    let part = image(&block);
                    self.event(at, &record_type, Payload::Message(Message::from_parts(Role::Assistant, vec![part])))
                }
                _ => self.meta(at, &record_type, MetaType::Unknown, block.clone()),
            };
            events.push((slot, event));
        }
        if let Some(Value::Object(metrics)) = message.get("metrics") {
            let mut data = Map::new();
            data.insert("metrics".into(), Value::Object(metrics.clone()));
            if let Some(info) = message.get("modelInfo") {
                data.insert("modelInfo".into(), info.clone());
            }
            let usage = usage(metrics, self.context.model.clone());
            let meta =
                Meta { meta_type: MetaType::Usage, data: Some(Json::from_value_of_raw(&data)), usage: Some(usage) };
            events.push((USAGE_SLOT, self.event(at, "assistant/metrics", Payload::Meta(meta))));
        }
        events
    }

    /// A `tool_result` block: the output of the call it names.
    fn tool_result(&self, block: &Value, at: At, record_type: &str) -> Event {
        let call_id = block.get("tool_use_id").and_then(Value::as_str).map(str::to_owned);
        let name = block
            .get("name")
            .and_then(Value::as_str)
            .or_else(|| call_id.as_deref().and_then(|id| self.names.get(id)).and_then(Value::as_str))
            .map(str::to_owned);
        let content = block.get("content");
        let (text, parts, failed, exit_code) = result_content(content);
        let is_error = match block.get("is_error").and_then(Value::as_bool) {
            Some(true) => Some(true),
            flag => failed.or(flag),
        };
        let payload = Payload::ToolOutput(ToolOutput {
            call_id,
            name,
            tool_kind: None,
            text,
            parts,
            is_error,
            exit_code,
            failed: None,
            duration_ms: None,
            result: content.filter(|c| !c.is_string()).map(Json::from_value_of_raw),
        });
        self.event(at, record_type, payload)
    }
}

/// A message's content as blocks: a string is one text block.
fn blocks(message: &Map<String, Value>) -> Vec<Value> {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(Value::String(text)) if !text.is_empty() => vec![serde_json::json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

/// The text inside `<user_input mode="…">…</user_input>`, with its mode; the text itself and
/// no mode when it is not wrapped.
fn unwrap_user_input(text: &str) -> (&str, Option<&str>) {
    let unwrapped = text.trim().strip_prefix("<user_input").and_then(|rest| {
        let (attributes, rest) = rest.split_once('>')?;
        let inner = rest.strip_suffix("</user_input>")?;
        let mode = attributes.trim().strip_prefix("mode=\"").and_then(|m| m.split_once('"')).map_or("", |(m, _)| m);
        Some((inner, Some(mode)))
    });
    unwrapped.unwrap_or((text, None))
}

/// An `image` block (`source {type: base64, media_type, data}` or `{type: url, url}`).
pub(super) fn image(block: &Value) -> Part {
    let source = block.get("source");
    let field = |key: &str| source.and_then(|s| s.get(key)).and_then(Value::as_str).map(str::to_owned);
    Part::Image { media_type: field("media_type"), data: field("data"), url: field("url") }
}

/// A tool result's text and parts, whether it failed, and a command's exit code: from a
/// string, text and image blocks, or `run_commands`' items `{query, result, error, success}`.
fn result_content(content: Option<&Value>) -> (String, Vec<Part>, Option<bool>, Option<i64>) {
    let items = match content {
        None | Some(Value::Null) => return (String::new(), Vec::new(), None, None),
        Some(Value::String(text)) => return (text.clone(), Vec::new(), None, None),
        Some(Value::Array(items)) => items.as_slice(),
        Some(other) => std::slice::from_ref(other),
    };
    let mut texts = Vec::new();
    let mut parts = Vec::new();
    let mut failed = None;
    let mut codes = Vec::new();
    let several = items.len() > 1;
    for item in items {
        match item.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = item.get("text").and_then(Value::as_str).unwrap_or_default();
                texts.push(text.to_owned());
                parts.push(Part::Text { text: text.to_owned() });
            }
            Some("image") => parts.push(image(item)),
            _ => {
                let result = item.get("result").and_then(Value::as_str);
                let success = item.get("success").and_then(Value::as_bool);
                if let Some(success) = success {
                    failed = Some(failed.unwrap_or(false) || !success);
                }
                let body = match result {
                    Some(result) => {
                        codes.push(exit_code(result));
                        result.to_owned()
                    }
                    None => item.to_string(),
                };
                match item.get("query").and_then(Value::as_str) {
                    Some(query) if several => texts.push(format!("$ {query}\n{body}")),
                    _ => texts.push(body),
                }
            }
        }
    }
    // Parts only when the output holds more than text.
    if parts.iter().all(|p| p.text().is_some()) {
        parts.clear();
    }
    let exit = match codes.as_slice() {
        [one] => *one,
        _ => None,
    };
    (texts.join("\n"), parts, failed, exit)
}

/// The exit code a failed command's result names on its first line.
fn exit_code(result: &str) -> Option<i64> {
    let first = result.lines().next()?;
    first.strip_prefix("[Command exited with code ")?.strip_suffix(']')?.trim().parse().ok()
}

/// Usage of one model request from its `metrics`. `inputTokens` holds the whole prompt: cache
/// reads and writes are taken out of it, where it holds them (else it is kept as it is).
fn usage(metrics: &Map<String, Value>, model: Option<String>) -> Usage {
    let count = |key: &str| metrics.get(key).and_then(Value::as_u64);
    let (prompt, read, write, output) =
        (count("inputTokens"), count("cacheReadTokens"), count("cacheWriteTokens"), count("outputTokens"));
    let cached = read.unwrap_or(0).saturating_add(write.unwrap_or(0));
    let input = prompt.map(|p| p.checked_sub(cached).unwrap_or(p));
    let total = [input, read, write, output].into_iter().flatten().reduce(u64::saturating_add);
    Usage {
        input_tokens: input,
        cache_read_tokens: read,
        cache_write_tokens: write,
        output_tokens: output,
        total_tokens: total,
        model,
        ..Usage::default()
    }
}

fn string<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

#[cfg(test)]
#[path = "map_tests.rs"]
mod tests;
