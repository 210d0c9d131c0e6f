//! A Kiro CLI conversation document (`{conversation_id, history: [{user, assistant}], …}`) →
//! agentlog events.
//!
//! The document is what Kiro CLI (and Amazon Q Developer CLI before it) keeps per conversation:
//! the `value` of a row of `conversations` / `conversations_v2` in `data.sqlite3`, or a line of
//! its own in a file (`/save` and exports write it so). Its shape is the serde form of
//! `ConversationState` in aws/amazon-q-developer-cli (`crates/chat-cli/src/cli/chat/message.rs`
//! at 01e5e3dc): each history entry pairs a `user` message (`content` an enum: `Prompt{prompt}`,
//! `ToolUseResults{tool_use_results}` or `CancelledToolUses{prompt, tool_use_results}`, each
//! result `{tool_use_id, content: [{Text}|{Json}], status: Success|Error}`; `timestamp` RFC 3339
//! with offset, `additional_context`, `env_context`) with the `assistant` reply
//! (`Response{message_id, content}` or `ToolUse{message_id, content, tool_uses: [{id, name,
//! orig_name, args, orig_args}]}`, either with `thinking`), and may carry `request_metadata`.
//!
//! The whole document is one record, so every event of a conversation comes from one line (or
//! row): they are told apart by their place in it, the slot. Kiro keeps no token counts: there
//! are no usage events.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput,
};
use crate::read::parse_time;

/// Where a conversation was read: its line (or row) and byte offset, and its record type.
#[derive(Clone, Copy)]
pub struct At<'a> {
    /// Line (or row) number.
    pub line: u64,
    /// Byte offset of the line.
    pub offset: u64,
    /// What the source calls the record (`conversation`, `conversations_v2`).
    pub record_type: &'a str,
}

/// The events of one conversation document, in order, each with its slot; `session_id` is used
/// when the document has no `conversation_id` (or an empty one), `cwd` when it names none.
pub fn events(document: &Map<String, Value>, session_id: &str, cwd: Option<&str>, at: At<'_>) -> Vec<(Event, u32)> {
    let id = document.get("conversation_id").and_then(Value::as_str).filter(|id| !id.is_empty());
    let mut map = Conversation {
        session_id: id.unwrap_or(session_id).to_owned(),
        at,
        context: Context { cwd: cwd.map(str::to_owned), model: model_of(document), ..Context::default() },
        tools: HashMap::new(),
        out: Vec::new(),
    };
    let mut start = document.clone();
    let history = start.remove("history");
    start.insert("history_entries".into(), Value::from(history.as_ref().and_then(Value::as_array).map_or(0, Vec::len)));
    let start_event = map.meta(MetaType::SessionStart, Value::Object(start), None);
    map.push(start_event);
    match history {
        Some(Value::Array(entries)) => {
            for entry in &entries {
                map.entry(entry);
            }
        }
        Some(other) => {
            let unknown = map.meta(MetaType::Unknown, serde_json::json!({ "history": other }), None);
            map.push(unknown);
        }
        None => {}
    }
    map.out.into_iter().enumerate().map(|(slot, event)| (event, slot as u32)).collect()
}

/// The model a document names: `model_info.model_id` (Kiro CLI) or `model` (older).
fn model_of(document: &Map<String, Value>) -> Option<String> {
    let info = document.get("model_info").and_then(|m| m.get("model_id"));
    info.or_else(|| document.get("model")).and_then(Value::as_str).map(str::to_owned)
}

struct Conversation<'a> {
    session_id: String,
    at: At<'a>,
    context: Context,
    /// Tool names by call id, to name outputs.
    tools: HashMap<String, String>,
    out: Vec<Event>,
}

impl Conversation<'_> {
    fn event(&self, payload: Payload, time: Option<chrono::DateTime<chrono::Utc>>) -> Event {
        let mut event = Event::new(self.session_id.clone(), payload);
        event.timestamp = time;
        event.context = self.context.clone();
        event.source.line = self.at.line;
        event.source.byte_offset = self.at.offset;
        event.source.record_type = Some(self.at.record_type.to_owned());
        event
    }

    fn meta(&self, meta_type: MetaType, data: Value, time: Option<chrono::DateTime<chrono::Utc>>) -> Event {
        let meta = Meta { meta_type, data: Some(Json::from_value_of_raw(&data)), usage: None };
        self.event(Payload::Meta(meta), time)
    }

    fn push(&mut self, event: Event) {
        self.out.push(event);
    }

    fn entry(&mut self, entry: &Value) {
        let Some(entry) = entry.as_object() else {
            let unknown = self.meta(MetaType::Unknown, serde_json::json!({ "entry": entry }), None);
            return self.push(unknown);
        };
        let user = entry.get("user").filter(|u| !u.is_null());
        let time = user.and_then(|u| u.get("timestamp")).and_then(Value::as_str).and_then(parse_time);
        let before = self.out.len();
        if let Some(user) = user {
            self.user(user, time);
        }
        let metadata = entry.get("request_metadata").filter(|m| !m.is_null());
        if let Some(assistant) = entry.get("assistant").filter(|a| !a.is_null()) {
            let response_id = metadata.and_then(|m| m.get("message_id")).and_then(Value::as_str);
            self.assistant(assistant, time, response_id);
        }
        if let Some(metadata) = metadata {
            let request = self.meta(MetaType::Request, metadata.clone(), time);
            self.push(request);
        }
        let known = ["user", "assistant", "request_metadata"];
        let rest: Map<String, Value> =
            entry.iter().filter(|(k, _)| !known.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
        if self.out.len() == before || !rest.is_empty() {
            // An entry with nothing to map (both halves null) or with fields of its own.
            let unknown = self.meta(MetaType::Unknown, Value::Object(entry.clone()), time);
            self.push(unknown);
        }
    }

    fn user(&mut self, user: &Value, time: Option<chrono::DateTime<chrono::Utc>>) {
        let content = user.get("content").filter(|c| !c.is_null());
        let Some((variant, body)) = content.and_then(Value::as_object).and_then(|c| c.iter().next()) else {
            if let Some(content) = content {
                let unknown = self.meta(MetaType::Unknown, serde_json::json!({ "user": { "content": content } }), time);
                self.push(unknown);
            }
            return;
        };
        let context = user.get("additional_context").and_then(Value::as_str).filter(|c| !c.trim().is_empty());
        if let Some(context) = context {
            let message = Message::from_parts(Role::User, vec![Part::Text { text: context.to_owned() }]);
            let mut event = self.event(Payload::Message(message), time);
            event.injected = true;
            self.push(event);
        }
        match variant.as_str() {
            "Prompt" | "CancelledToolUses" => {
                if let Some(prompt) = body.get("prompt").and_then(Value::as_str) {
                    let mut parts = vec![Part::Text { text: prompt.to_owned() }];
                    parts.extend(user.get("images").and_then(Value::as_array).into_iter().flatten().map(image));
                    let event = self.event(Payload::Message(Message::from_parts(Role::User, parts)), time);
                    self.push(event);
                }
                self.results(body, time);
            }
            "ToolUseResults" => self.results(body, time),
            _ => {
                let unknown = self.meta(MetaType::Unknown, serde_json::json!({ "user": { "content": content } }), time);
                self.push(unknown);
            }
        }
    }

    fn results(&mut self, body: &Value, time: Option<chrono::DateTime<chrono::Utc>>) {
        for result in body.get("tool_use_results").and_then(Value::as_array).into_iter().flatten() {
            let call_id = result.get("tool_use_id").and_then(Value::as_str).map(str::to_owned);
            let name = call_id.as_ref().and_then(|id| self.tools.get(id)).cloned();
            let blocks = result.get("content").and_then(Value::as_array);
            let texts: Vec<String> = blocks
                .into_iter()
                .flatten()
                .filter_map(|b| match (b.get("Text"), b.get("Json")) {
                    (Some(Value::String(t)), _) => Some(t.clone()),
                    (_, Some(json)) => Some(json.to_string()),
                    _ => None,
                })
                .collect();
            let status = result.get("status").and_then(Value::as_str);
            let output = ToolOutput {
                call_id,
                name,
                tool_kind: None,
                text: texts.join("\n"),
                parts: Vec::new(),
                is_error: status.map(|s| s.eq_ignore_ascii_case("error")),
                exit_code: None,
                failed: None,
                duration_ms: None,
                result: result.get("content").map(Json::from_value_of_raw),
            };
            let event = self.event(Payload::ToolOutput(output), time);
            self.push(event);
        }
    }

    fn assistant(&mut self, assistant: &Value, time: Option<chrono::DateTime<chrono::Utc>>, response: Option<&str>) {
        let Some((variant, body)) = assistant.as_object().and_then(|a| a.iter().next()) else {
            let unknown = self.meta(MetaType::Unknown, serde_json::json!({ "assistant": assistant }), time);
            return self.push(unknown);
        };
        if !matches!(variant.as_str(), "Response" | "ToolUse") {
            let unknown = self.meta(MetaType::Unknown, serde_json::json!({ "assistant": assistant }), time);
            return self.push(unknown);
        }
        let message_id = body.get("message_id").and_then(Value::as_str).filter(|id| !id.is_empty()).or(response);
        let mut events = Vec::new();
        if let Some(thinking) = body.get("thinking").filter(|t| !t.is_null()) {
            let text = thinking.get("text").or_else(|| thinking.get("reasoning_text")).and_then(Value::as_str);
            let signature = thinking.get("signature").and_then(Value::as_str).map(str::to_owned);
            let reasoning = Reasoning {
                text: text.unwrap_or_default().to_owned(),
                raw_text: None,
                encrypted: text.is_none(),
                omitted: false,
                signature,
            };
            events.push(self.event(Payload::Reasoning(reasoning), time));
        }
        if let Some(text) = body.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            let message = Message::from_parts(Role::Assistant, vec![Part::Text { text: text.to_owned() }]);
            events.push(self.event(Payload::Message(message), time));
        }
        for call in body.get("tool_uses").and_then(Value::as_array).into_iter().flatten() {
            let call_id = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty()).map(str::to_owned);
            let name = call.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
            if let Some(id) = &call_id {
                self.tools.insert(id.clone(), name.clone());
            }
            let args = call.get("args");
            let mut event = self.event(
                Payload::ToolCall(ToolCall {
                    call_id,
                    name,
                    tool_kind: None,
                    input: args.filter(|a| a.is_object()).map(Json::from_value_of_raw),
                    input_text: args.and_then(Value::as_str).map(str::to_owned),
                }),
                time,
            );
            let orig = call
                .get("orig_name")
                .and_then(Value::as_str)
                .filter(|o| Some(*o) != call.get("name").and_then(Value::as_str));
            if let Some(orig) = orig {
                event.extra = Some(Json::from_value_of_raw(&serde_json::json!({ "orig_name": orig })));
            }
            events.push(event);
        }
        if events.is_empty() {
            events.push(self.meta(MetaType::Unknown, serde_json::json!({ "assistant": assistant }), time));
        }
        for mut event in events {
            event.response_id = message_id.map(str::to_owned);
            self.push(event);
        }
    }
}

/// An image of a user message (`{format, source: {Bytes: [...]}}`): its type, the bytes left out.
fn image(image: &Value) -> Part {
    let format = image.get("format").and_then(Value::as_str).map(|f| format!("image/{f}"));
    Part::Image { media_type: format, data: None, url: None }
}
