//! Kiro CLI lines → agentlog events: conversation documents, one per line, and the records of
//! the session journal Kiro CLI 2.20 and later write to `~/.kiro/sessions/cli/<id>.jsonl`.
//!
//! A journal record is `{"version", "kind", "data"}`: `Prompt` (the user's turn: `data.content`
//! blocks `{"kind": "text", "data": "…"}`, `data.meta.timestamp` in seconds),
//! `AssistantMessage` (`text` blocks and `{"kind": "toolUse", "data": {toolUseId, name,
//! input}}`) and `ToolResults` (`data.results`, an object of results by call id, each with its
//! `output`). That shape is taken from the fixtures of a third-party reader
//! (getagentseal/codeburn `tests/providers/kiro.test.ts`) and vakovalskii/codbash#230, not from
//! Kiro's source or a file it wrote: other kinds and fields are kept as `unknown`.
//!
//! Beside the journal, `<id>.json` holds the session's `cwd`, `title`, `parent_session_id`,
//! the model (`session_state.rts_model_state.model_info.model_id`) and, per user turn,
//! `metering_usage`: the **credits** Kiro charged, `[{value, unit: "credit"}]`. Credits are not
//! tokens: they are given, with the turns they came from, in one `agent_totals` event at the
//! end of the journal, never as usage.

use serde_json::{Map, Value};

use super::conversation::{self, At};
use crate::model::{Context, Event, Json, Message, Meta, MetaType, Part, Payload, Role, ToolCall, ToolOutput};
use crate::read::{Emitter, Line, LineMapper, file_stem};

/// A parsed line: where it is, and its record.
pub type Parsed = (Line<'static>, Map<String, Value>);

/// The slot of the credits event, after any event of the journal's last line.
const CREDITS_SLOT: u32 = 1 << 20;

/// Maps the lines of one file.
pub struct Mapper {
    session_id: String,
    context: Context,
    parent: Option<String>,
    /// The sidecar `<id>.json`, when there is one.
    sidecar: Option<Value>,
    tools: std::collections::HashMap<String, String>,
    last: (u64, u64),
}

impl Mapper {
    /// A mapper for the file named `name`, with what its sidecar `<stem>.json` says.
    pub fn new(name: &str) -> Self {
        let path = std::path::Path::new(name);
        let sidecar: Option<Value> = std::fs::read(path.with_file_name(format!("{}.json", file_stem(name))))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .filter(Value::is_object);
        let text = |key: &str| sidecar.as_ref().and_then(|s| s.get(key)).and_then(Value::as_str).map(str::to_owned);
        let model = sidecar
            .as_ref()
            .and_then(|s| s.pointer("/session_state/rts_model_state/model_info/model_id"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Mapper {
            session_id: text("session_id").unwrap_or_else(|| file_stem(name).to_owned()),
            context: Context { cwd: text("cwd"), model, ..Context::default() },
            parent: text("parent_session_id").filter(|p| !p.is_empty()),
            sidecar,
            tools: std::collections::HashMap::new(),
            last: (0, 0),
        }
    }

    fn event(&self, parsed: &Parsed, kind: &str, payload: Payload) -> Event {
        let mut event = Event::new(self.session_id.clone(), payload);
        event.context = self.context.clone();
        event.parent_session_id.clone_from(&self.parent);
        event.source.line = parsed.0.number;
        event.source.byte_offset = parsed.0.offset;
        event.source.record_type = Some(kind.to_owned());
        let data = parsed.1.get("data");
        event.timestamp = data
            .and_then(|d| d.pointer("/meta/timestamp"))
            .and_then(Value::as_i64)
            .and_then(|s| chrono::DateTime::from_timestamp(s, 0));
        event.record_id = data.and_then(|d| d.get("message_id")).and_then(Value::as_str).map(str::to_owned);
        event
    }

    fn unknown(&self, parsed: &Parsed, kind: &str, data: Value) -> Event {
        let meta = Meta { meta_type: MetaType::Unknown, data: Some(Json::from_value_of_raw(&data)), usage: None };
        self.event(parsed, kind, Payload::Meta(meta))
    }

    /// The events of a journal record.
    fn journal(&mut self, parsed: &Parsed, kind: &str) -> Vec<Event> {
        let data = parsed.1.get("data");
        let blocks: Vec<&Value> =
            data.and_then(|d| d.get("content")).and_then(Value::as_array).into_iter().flatten().collect();
        let texts = || -> Vec<Part> {
            blocks
                .iter()
                .filter(|b| b.get("kind").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("data").and_then(Value::as_str))
                .map(|t| Part::Text { text: t.to_owned() })
                .collect()
        };
        let mut events = Vec::new();
        match kind {
            "Prompt" => {
                let parts = texts();
                if !parts.is_empty() {
                    events.push(self.event(parsed, kind, Payload::Message(Message::from_parts(Role::User, parts))));
                }
            }
            "AssistantMessage" => {
                for block in &blocks {
                    let payload = match block.get("kind").and_then(Value::as_str) {
                        Some("text") => {
                            let text = block.get("data").and_then(Value::as_str).unwrap_or_default();
                            Payload::Message(Message::from_parts(
                                Role::Assistant,
                                vec![Part::Text { text: text.to_owned() }],
                            ))
                        }
                        Some("toolUse") => {
                            let use_ = block.get("data");
                            let field = |key: &str| use_.and_then(|u| u.get(key));
                            let call_id = field("toolUseId").and_then(Value::as_str).map(str::to_owned);
                            let name = field("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
                            if let Some(id) = &call_id {
                                self.tools.insert(id.clone(), name.clone());
                            }
                            let input = field("input");
                            Payload::ToolCall(ToolCall::from_input(call_id, name, input))
                        }
                        _ => {
                            events.push(self.unknown(parsed, kind, serde_json::json!({ "block": block })));
                            continue;
                        }
                    };
                    events.push(self.event(parsed, kind, payload));
                }
            }
            "ToolResults" => {
                let results = data.and_then(|d| d.get("results")).and_then(Value::as_object);
                for (id, result) in results.into_iter().flatten() {
                    let output = result.get("output").unwrap_or(result);
                    let text = output.as_str().map_or_else(|| output.to_string(), str::to_owned);
                    let status = result.get("status").and_then(Value::as_str);
                    let payload = Payload::ToolOutput(ToolOutput {
                        call_id: Some(id.clone()),
                        name: self.tools.get(id).cloned(),
                        tool_kind: None,
                        text,
                        parts: Vec::new(),
                        is_error: status.map(|s| s.eq_ignore_ascii_case("error")),
                        exit_code: None,
                        failed: None,
                        duration_ms: None,
                        result: Some(Json::from_value_of_raw(result)),
                    });
                    events.push(self.event(parsed, kind, payload));
                }
            }
            _ => {}
        }
        if events.is_empty() {
            events.push(self.unknown(parsed, kind, Value::Object(parsed.1.clone())));
        }
        events
    }

    /// The credits of the sidecar's user turns, as one `agent_totals` event.
    fn credits(&self) -> Option<Event> {
        let turns = self.sidecar.as_ref()?.pointer("/session_state/conversation_metadata/user_turn_metadatas")?;
        let credits: f64 = turns
            .as_array()?
            .iter()
            .filter_map(|t| t.get("metering_usage").and_then(Value::as_array))
            .flatten()
            .filter(|m| m.get("unit").and_then(Value::as_str) == Some("credit"))
            .filter_map(|m| m.get("value").and_then(Value::as_f64))
            .sum();
        let data = serde_json::json!({ "credits": credits, "user_turn_metadatas": turns });
        let meta = Meta { meta_type: MetaType::AgentTotals, data: Some(Json::from_value_of_raw(&data)), usage: None };
        let mut event = Event::new(self.session_id.clone(), Payload::Meta(meta));
        event.context = self.context.clone();
        event.parent_session_id.clone_from(&self.parent);
        event.source.line = self.last.0;
        event.source.byte_offset = self.last.1;
        event.source.record_type = Some("session.json".to_owned());
        Some(event)
    }
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        self.last = (parsed.0.number, parsed.0.offset);
        let record = &parsed.1;
        let events = if record.contains_key("history") {
            let at = At { line: parsed.0.number, offset: parsed.0.offset, record_type: "conversation" };
            let cwd = self.context.cwd.clone();
            conversation::events(record, &self.session_id, cwd.as_deref(), at)
        } else {
            let kind = record.get("kind").and_then(Value::as_str).unwrap_or("record").to_owned();
            let events = if record.contains_key("data") {
                self.journal(&parsed, &kind)
            } else {
                vec![self.unknown(&parsed, &kind, Value::Object(record.clone()))]
            };
            events.into_iter().enumerate().map(|(slot, e)| (e, slot as u32)).collect()
        };
        for (event, slot) in events {
            out.emit(event, slot)?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        match self.credits() {
            Some(event) if self.last.0 > 0 => out.emit(event, CREDITS_SLOT),
            _ => Ok(()),
        }
    }
}
