//! OpenCode 2.0's tables: `session_v2`, and `session_message`, whose rows are whole messages
//! (no parts table): the row's `type` column says what it is (`user`, `assistant`, `shell`,
//! `synthetic`, `system`, `skill`, `idle`, `compaction`, `agent-switched`, `model-switched`,
//! `location-switched`) and `data` holds the rest, with `id` and `type` taken out.
//!
//! This is read from OpenCode's source (`packages/schema/src/session-message.ts` and
//! `packages/core/src/session/sql.ts`, anomalyco/opencode from migration
//! `20260804233008_loose_psylocke`, 2026-08) and checked on a database built to that schema:
//! OpenCode 2.0 is not on the npm registry this project's harness reaches.
//!
//! An assistant row holds its `content` items (`text`, `reasoning`, `tool` with its state and
//! output) and the response's `tokens` and `cost`, in the terms of 1.x (`input` without cache
//! reads, `output` without reasoning). The bash tool is `shell` in 2.0, `bash` in rows imported
//! from 1.x; either way the exit code is `state.metadata.exit`. A `shell` row is a command the
//! user ran. A `compaction` row's `tokens` are a model response too, and counted.

use serde_json::{Map, Value};

use super::map::{At, Mapper, tokens};
use crate::model::{Json, Message, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, USAGE_SLOT};
use crate::read::Emitter;

impl Mapper {
    /// One `session_message` row of type `kind`.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn row_v2(
        &mut self,
        kind: &str,
        data: &Map<String, Value>,
        at: &At,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let time = data.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64);
        let whole = Value::Object(data.clone());
        let meta = |mapper: &Mapper, meta_type| mapper.meta(at, kind, time, meta_type, &whole);
        match kind {
            "user" | "synthetic" | "system" => {
                let text = data.get("text").and_then(Value::as_str).unwrap_or_default();
                let mut parts = super::map::text_parts(text);
                for file in data.get("files").and_then(Value::as_array).into_iter().flatten() {
                    parts.push(file_part(file));
                }
                let role = if kind == "system" { Role::System } else { Role::User };
                let mut event = self.event(at, kind, time, Payload::Message(Message::from_parts(role, parts)));
                event.injected = kind != "user";
                event.extra = super::map::extra(data, &["text", "files", "time"]);
                out.emit_record(event, &at.id, 0)
            }
            "assistant" => self.assistant_v2(data, at, time, out),
            "shell" => self.shell_v2(data, at, time, out),
            "compaction" => {
                let event = match tokens(data).filter(|c| !c.is_zero()) {
                    Some(counts) => self.usage_event(at, kind, time, &whole, counts, Some(at.id.clone())),
                    None => meta(self, MetaType::Compaction),
                };
                out.emit_record(event, &at.id, USAGE_SLOT)
            }
            "idle" => out.emit_record(meta(self, MetaType::TurnEnd), &at.id, 0),
            "agent-switched" | "model-switched" | "location-switched" => {
                if kind == "model-switched"
                    && let Some(model) = data.get("model").and_then(|m| m.get("id").or(Some(m))).and_then(Value::as_str)
                {
                    self.set_model(model);
                }
                out.emit_record(meta(self, MetaType::TurnContext), &at.id, 0)
            }
            "skill" => out.emit_record(meta(self, MetaType::Attachment), &at.id, 0),
            _ => out.emit_record(meta(self, MetaType::Unknown), &at.id, 0),
        }
    }

    fn assistant_v2(
        &mut self,
        data: &Map<String, Value>,
        at: &At,
        time: Option<i64>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        if let Some(model) = data.get("model").and_then(|m| m.get("id")).and_then(Value::as_str) {
            self.set_model(model);
        }
        let response = Some(at.id.clone());
        let with_response = |mut event: crate::model::Event| {
            event.response_id.clone_from(&response);
            event
        };
        let mut slot = 0;
        let content = match data.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(other) => vec![other],
            None => Vec::new(),
        };
        for value in content {
            let Some(item) = value.as_object() else {
                // Not a content item: kept whole.
                let data = serde_json::json!({ "content": value });
                let event = self.meta(at, "assistant/content", time, MetaType::Unknown, &data);
                out.emit_record(with_response(event), &at.id, slot)?;
                slot += 1;
                continue;
            };
            let kind = item.get("type").and_then(Value::as_str).unwrap_or("content");
            let item_time = item.get("time").and_then(|t| t.get("created")).and_then(Value::as_i64).or(time);
            let events = match kind {
                "text" => {
                    let text = item.get("text").and_then(Value::as_str).unwrap_or_default();
                    let payload = Payload::Message(Message::from_parts(Role::Assistant, super::map::text_parts(text)));
                    vec![self.event(at, "assistant/text", item_time, payload)]
                }
                "reasoning" => {
                    let payload = Payload::Reasoning(Reasoning {
                        text: item.get("text").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        raw_text: None,
                        encrypted: false,
                        omitted: false,
                        signature: None,
                    });
                    vec![self.event(at, "assistant/reasoning", item_time, payload)]
                }
                "tool" => self.tool_v2(item, at, item_time),
                _ => {
                    let whole = Value::Object(item.clone());
                    vec![self.meta(at, "assistant/content", item_time, MetaType::Unknown, &whole)]
                }
            };
            for event in events {
                out.emit_record(with_response(event), &at.id, slot)?;
                slot += 1;
            }
        }
        let mut rest = data.clone();
        rest.remove("content");
        let rest = Value::Object(rest);
        let event = match tokens(data) {
            Some(counts) if !counts.is_zero() => {
                self.usage_event(at, "assistant", time, &rest, counts, response.clone())
            }
            _ => self.meta(at, "assistant", time, MetaType::System, &rest),
        };
        out.emit_record(with_response(event), &at.id, USAGE_SLOT)
    }

    /// A `tool` content item: its call, and its output once it ran.
    fn tool_v2(&self, item: &Map<String, Value>, at: &At, time: Option<i64>) -> Vec<crate::model::Event> {
        let name = item.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
        let call_id = item.get("id").and_then(Value::as_str).map(str::to_owned);
        let state = item.get("state").and_then(Value::as_object);
        let mut events = vec![self.event(at, "assistant/tool", time, super::map::call(&name, &call_id, state))];
        let status = state.and_then(|s| s.get("status")).and_then(Value::as_str).unwrap_or_default();
        let Some(state) = state.filter(|_| status == "completed" || status == "error") else { return events };
        let mut text = content_text(state.get("content"));
        if text.is_empty() {
            let error = state.get("error");
            let message = error.and_then(|e| e.get("message").or(Some(e))).and_then(Value::as_str);
            text = message.or_else(|| state.get("result").and_then(Value::as_str)).unwrap_or_default().to_owned();
        }
        let ran = item.get("time");
        let at_time = |key| ran.and_then(|t| t.get(key)).and_then(Value::as_i64);
        let (start, end) = (at_time("ran").or(at_time("created")), at_time("completed"));
        let output = super::map::output(call_id, name, text, state, start.zip(end));
        events.push(self.event(at, "assistant/tool", end.or(time), output));
        events
    }

    /// A `shell` row: a command the user ran, as a call and its output.
    fn shell_v2(
        &self,
        data: &Map<String, Value>,
        at: &At,
        time: Option<i64>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let call_id = data.get("shellID").or_else(|| data.get("callID")).and_then(Value::as_str).map(str::to_owned);
        let command = data.get("command").cloned().unwrap_or(Value::Null);
        let call = Payload::ToolCall(ToolCall {
            call_id: call_id.clone(),
            name: "shell".into(),
            tool_kind: None,
            input: Some(Json::from_value(&serde_json::json!({ "command": command }))),
            input_text: None,
        });
        out.emit_record(self.event(at, "shell", time, call), &at.id, 0)?;
        let output = data.get("output");
        let text = match output {
            Some(Value::String(text)) => text.clone(),
            Some(output) => output.get("output").and_then(Value::as_str).unwrap_or_default().to_owned(),
            None => return Ok(()),
        };
        let payload = Payload::ToolOutput(ToolOutput {
            call_id,
            name: Some("shell".into()),
            tool_kind: None,
            text,
            parts: Vec::new(),
            is_error: None,
            exit_code: data.get("exit").and_then(Value::as_i64),
            failed: None,
            duration_ms: None,
            result: Some(Json::from_value_of_raw(&Value::Object(data.clone()))),
        });
        let completed = data.get("time").and_then(|t| t.get("completed")).and_then(Value::as_i64);
        let mut event = self.event(at, "shell", completed.or(time), payload);
        event.extra = Some(Json::from_value(&serde_json::json!({ "run_by": "user" })));
        out.emit_record(event, &at.id, 1)
    }
}

/// The text of a tool state's `content` items, joined; files are named.
fn content_text(content: Option<&Value>) -> String {
    let items = content.and_then(Value::as_array).into_iter().flatten();
    let texts: Vec<String> = items
        .filter_map(|item| match item.get("type").and_then(Value::as_str) {
            Some("text") => item.get("text").and_then(Value::as_str).map(str::to_owned),
            Some("file") => item.get("uri").and_then(Value::as_str).map(|uri| format!("[file {uri}]")),
            _ => None,
        })
        .collect();
    texts.concat()
}

/// A user row's attached file as a content part.
fn file_part(file: &Value) -> Part {
    let media_type = file.get("mime").and_then(Value::as_str).map(str::to_owned);
    let url = file.get("uri").or_else(|| file.get("url")).and_then(Value::as_str).map(str::to_owned);
    match media_type.as_deref() {
        Some(m) if m.starts_with("image/") => Part::Image { media_type, data: None, url },
        _ => Part::Document { media_type, data: None, url },
    }
}
