//! Copilot CLI events → agentlog events.
//!
//! **Usage.** Per response: a `session.usage_record` (1.0.102 and later), else the
//! `outputTokens` of an `assistant.message`, else a compaction's model call; at
//! `session.shutdown`, per model, whatever its totals hold beyond what was counted. Each
//! response is counted once (see [`super::usage`]). Premium requests and their cost stay in the
//! shutdown's `system` event.
//!
//! **Subagents.** An inline subagent's records carry a top-level `agentId` (1.0.74 and later; in
//! 1.0.74 the id of the tool call that started it, in 1.0.102 an id of its own that
//! `subagent.started` pairs with the call's id), or only `data.parentToolCallId` (1.0.20).
//! Either way the events get `is_sidechain`, an `agent_id` and, as `parent_call_id`, the id of
//! the tool call that started the subagent.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::output::{Assets, exit_code};
use super::usage::{Counts, Ledger};
use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, Usage,
};
use crate::read::{Emitter, Line, LineMapper, file_name, file_stem, parse_time};

/// A parsed line: where it is, and its record.
pub type Parsed = (Line<'static>, Map<String, Value>);

/// Maps the records of one session file, in order.
pub struct Mapper {
    session_id: String,
    context: Context,
    /// Tool names by call id, to name outputs.
    tools: HashMap<String, String>,
    /// The id of the tool call that started each subagent, by the subagent's `agentId`.
    spawned: HashMap<String, String>,
    /// The usage counted so far.
    ledger: Ledger,
    /// Attached files, for the messages that name them.
    assets: Assets,
}

impl Mapper {
    /// A mapper for the file named `name`: the session is the directory of an `events.jsonl`,
    /// else the file's stem, until `session.start` names it.
    pub fn new(name: &str) -> Self {
        let session_id = if file_name(name) == "events.jsonl" {
            let dir = &name[..name.len() - "events.jsonl".len()];
            file_name(dir.trim_end_matches(['/', '\\'])).to_owned()
        } else {
            file_stem(name).to_owned()
        };
        Mapper {
            session_id,
            context: Context::default(),
            tools: HashMap::new(),
            spawned: HashMap::new(),
            ledger: Ledger::default(),
            assets: Assets::default(),
        }
    }

    /// An event of the record: its times, ids, subagent and place.
    fn event(&self, parsed: &Parsed, kind: &str, payload: Payload) -> Event {
        let r = &parsed.1;
        let mut event = Event::new(self.session_id.clone(), payload);
        event.timestamp = text(r, "timestamp").and_then(parse_time);
        event.record_id = text(r, "id").map(str::to_owned);
        event.parent_record_id = text(r, "parentId").map(str::to_owned);
        // An inline subagent's events: linked to the tool call that started it.
        let spawning_call = r.get("data").and_then(Value::as_object).and_then(|d| text(d, "parentToolCallId"));
        if let Some(agent) = text(r, "agentId") {
            let call = spawning_call.or_else(|| self.spawned.get(agent).map(String::as_str)).unwrap_or(agent);
            event.agent_id = Some(agent.to_owned());
            event.parent_call_id = Some(call.to_owned());
            event.is_sidechain = true;
        } else if let Some(call) = spawning_call {
            event.agent_id = Some(call.to_owned());
            event.parent_call_id = Some(call.to_owned());
            event.is_sidechain = true;
        }
        event.context = self.context.clone();
        event.source.line = parsed.0.number;
        event.source.byte_offset = parsed.0.offset;
        event.source.record_type = Some(kind.to_owned());
        event
    }

    fn meta(&self, parsed: &Parsed, kind: &str, meta_type: MetaType, data: Option<&Value>) -> Event {
        let data = data.map(Json::from_value_of_raw);
        self.event(parsed, kind, Payload::Meta(Meta { meta_type, data, usage: None }))
    }

    /// `session.start` and `session.resume`: the session's id and context.
    fn start(&mut self, data: &Map<String, Value>) {
        if let Some(id) = text(data, "sessionId") {
            self.session_id = id.to_owned();
        }
        let context = data.get("context").and_then(Value::as_object);
        if let Some(cwd) = context.and_then(|c| text(c, "cwd")) {
            self.context.cwd = Some(cwd.to_owned());
        }
        if let Some(branch) = context.and_then(|c| text(c, "branch")) {
            self.context.git_branch = Some(branch.to_owned());
        }
        if let Some(version) = text(data, "copilotVersion") {
            self.context.agent_version = Some(version.to_owned());
        }
        if let Some(model) = text(data, "selectedModel") {
            self.context.model = Some(model.to_owned());
        }
    }

    fn assistant(
        &mut self,
        parsed: &Parsed,
        kind: &str,
        data: &Map<String, Value>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        if let Some(model) = text(data, "model") {
            self.context.model = Some(model.to_owned());
        }
        let response = text(data, "apiCallId").or_else(|| text(data, "messageId")).map(str::to_owned);
        let with_response = |mut event: Event| {
            event.response_id.clone_from(&response);
            event
        };
        let mut slot = 0;
        let reasoning = text(data, "reasoningText").filter(|t| !t.is_empty());
        let opaque = text(data, "reasoningOpaque").filter(|t| !t.is_empty());
        if reasoning.is_some() || opaque.is_some() {
            let payload = Payload::Reasoning(Reasoning {
                text: reasoning.unwrap_or_default().to_owned(),
                raw_text: None,
                encrypted: reasoning.is_none(),
                omitted: false,
                signature: None,
            });
            out.emit(with_response(self.event(parsed, kind, payload)), slot)?;
            slot += 1;
        }
        if let Some(content) = text(data, "content").filter(|t| !t.trim().is_empty()) {
            out.emit(with_response(self.event(parsed, kind, message(Role::Assistant, content))), slot)?;
            slot += 1;
        }
        for request in data.get("toolRequests").and_then(Value::as_array).into_iter().flatten() {
            let call_id = request.get("toolCallId").and_then(Value::as_str).map(str::to_owned);
            let name = request.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
            if let Some(id) = &call_id {
                self.tools.insert(id.clone(), name.clone());
            }
            let input = request.get("arguments");
            let payload = Payload::ToolCall(ToolCall::from_input(call_id, name, input));
            out.emit(with_response(self.event(parsed, kind, payload)), slot)?;
            slot += 1;
        }
        // The output of a response no `session.usage_record` counted.
        if let Some(output) = data.get("outputTokens").and_then(Value::as_u64)
            && self.ledger.count(self.context.model.as_deref(), text(data, "apiCallId"), Counts::output(output))
        {
            let model = self.context.model.clone();
            let usage = Usage {
                output_tokens: Some(output),
                total_tokens: Some(output),
                model,
                response_id: response.clone(),
                ..Usage::default()
            };
            let payload = Payload::Meta(Meta { meta_type: MetaType::Usage, data: None, usage: Some(usage) });
            out.emit(with_response(self.event(parsed, kind, payload)), slot)?;
        } else if slot == 0 {
            // A message with nothing of the above (no text, no calls, no count) is an empty
            // answer, so that its line still has an event.
            out.emit(with_response(self.event(parsed, kind, message(Role::Assistant, ""))), slot)?;
        }
        Ok(())
    }

    fn output(&self, parsed: &Parsed, kind: &str, data: &Map<String, Value>) -> Event {
        let call_id = text(data, "toolCallId").map(str::to_owned);
        let name = call_id
            .as_ref()
            .and_then(|id| self.tools.get(id))
            .cloned()
            .or_else(|| text(data, "toolName").map(str::to_owned));
        let result = data.get("result").or_else(|| data.get("error"));
        let content = |key| result.and_then(|r| r.get(key)).and_then(Value::as_str);
        let text = content("content").or_else(|| content("message")).unwrap_or_default().to_owned();
        let exit_code = exit_code(data, name.as_deref().map(super::family), &text);
        let mut event = self.event(
            parsed,
            kind,
            Payload::ToolOutput(ToolOutput {
                call_id,
                name,
                tool_kind: None,
                text,
                parts: Vec::new(),
                is_error: data.get("success").and_then(Value::as_bool).map(|ok| !ok),
                exit_code,
                failed: None,
                duration_ms: None,
                result: result.map(Json::from_value_of_raw),
            }),
        );
        if let Some(telemetry) = data.get("toolTelemetry") {
            event.extra = Some(Json::from_value_of_raw(&serde_json::json!({ "tool_telemetry": telemetry })));
        }
        event
    }

    /// A `session.usage_record`: one response's usage, counted unless its `apiCallId` was (then,
    /// as without a `usage` object, a `usage_snapshot`).
    fn usage_record(
        &mut self,
        parsed: &Parsed,
        kind: &str,
        data: &Map<String, Value>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let record = data.get("usage").unwrap_or(&Value::Null);
        let (model, id) =
            (record.get("model").and_then(Value::as_str), record.get("apiCallId").and_then(Value::as_str));
        let counts = Counts::of_copilot(record);
        let raw = Some(Json::from_value_of_raw(data));
        let meta = if record.is_object() && self.ledger.count(model, id, counts) {
            Meta {
                meta_type: MetaType::Usage,
                data: raw,
                usage: Some(counts.usage(model.map(str::to_owned), id.map(str::to_owned))),
            }
        } else {
            Meta { meta_type: MetaType::UsageSnapshot, data: raw, usage: None }
        };
        let mut event = self.event(parsed, kind, Payload::Meta(meta));
        event.response_id = id.map(str::to_owned);
        out.emit(event, 0)
    }

    /// A `model.*` record of a compaction's model call: `progress`, and for
    /// `model.model_call_success` a `request` event and the call's `usage` (its `responseUsage`
    /// in Chat Completions terms), unless its id was counted.
    fn model_call(
        &mut self,
        parsed: &Parsed,
        kind: &str,
        data: &Map<String, Value>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let call = data.get("modelCall");
        let id = call.and_then(|c| c.get("api_id")).and_then(Value::as_str);
        if let Some(id) = id {
            self.ledger.compaction_call(id);
        }
        let success = kind == "model.model_call_success";
        let meta_type = if success { MetaType::Request } else { MetaType::Progress };
        let mut event = self.meta(parsed, kind, meta_type, Some(&Value::Object(data.clone())));
        event.response_id = id.map(str::to_owned);
        out.emit(event, 0)?;
        let counts = data.get("responseUsage").and_then(Counts::of_chat_completions);
        let (Some(id), Some(counts), true) = (id, counts, success) else { return Ok(()) };
        let model = call.and_then(|c| c.get("model")).and_then(Value::as_str).or(self.context.model.as_deref());
        let model = model.map(str::to_owned);
        if !self.ledger.count_compaction(model.as_deref(), id, counts) {
            return Ok(());
        }
        let usage = counts.usage(model, Some(id.to_owned()));
        out.emit(self.usage_event(parsed, kind, usage), 1)
    }

    /// A `usage` event of one response, named by the usage's response id.
    fn usage_event(&self, parsed: &Parsed, kind: &str, usage: Usage) -> Event {
        let id = usage.response_id.clone();
        let payload = Payload::Meta(Meta { meta_type: MetaType::Usage, data: None, usage: Some(usage) });
        let mut event = self.event(parsed, kind, payload);
        event.response_id = id;
        event
    }

    /// `session.compaction_complete`: the `compactionTokensUsed` its model calls did not count.
    fn compaction_complete(
        &mut self,
        parsed: &Parsed,
        kind: &str,
        data: &Map<String, Value>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let used = data.get("compactionTokensUsed");
        let (rest, id) = self.ledger.compaction_complete(used);
        if rest.is_zero() {
            return Ok(());
        }
        let model = used.and_then(|u| u.get("model")).and_then(Value::as_str).or(self.context.model.as_deref());
        let usage = rest.usage(model.map(str::to_owned), id);
        let mut event = self.usage_event(parsed, kind, usage);
        event.extra = Some(Json::from_value(&serde_json::json!({ "compaction_remainder": true })));
        out.emit(event, 1)
    }

    /// The shutdown's per-model usage beyond what was counted.
    fn shutdown(
        &mut self,
        parsed: &Parsed,
        kind: &str,
        data: &Map<String, Value>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let mut slot = 1;
        for remainder in self.ledger.shutdown(data) {
            if remainder.counts.is_zero() {
                continue;
            }
            let usage = remainder.counts.usage(Some(remainder.model), None);
            let payload = Payload::Meta(Meta { meta_type: MetaType::Usage, data: None, usage: Some(usage) });
            let mut event = self.event(parsed, kind, payload);
            event.extra = Some(Json::from_value(&serde_json::json!({
                "shutdown_remainder": true, "output_tokens_of_messages": remainder.output_counted,
            })));
            out.emit(event, slot)?;
            slot += 1;
        }
        Ok(())
    }
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let kind = text(&parsed.1, "type").unwrap_or_default().to_owned();
        // A record whose `data` is not an object is not one this reader knows: kept whole.
        let raw = match parsed.1.get("data") {
            None => Value::Object(Map::new()),
            Some(data @ Value::Object(_)) => data.clone(),
            Some(_) => {
                let whole = Value::Object(parsed.1.clone());
                return out.emit(self.meta(&parsed, &kind, MetaType::Unknown, Some(&whole)), 0);
            }
        };
        let Value::Object(data) = &raw else { unreachable!("an object, matched above") };
        let meta = |mapper: &Self, meta_type| mapper.meta(&parsed, &kind, meta_type, Some(&raw));
        match kind.as_str() {
            "session.start" | "session.resume" => {
                self.start(data);
                if kind == "session.start" {
                    self.ledger.start();
                } else {
                    self.ledger.resume();
                }
                out.emit(meta(self, MetaType::SessionStart), 0)
            }
            "session.usage_record" => self.usage_record(&parsed, &kind, data, out),
            // An attached file's bytes, for the message that names it (kept here too).
            "session.binary_asset" => {
                self.assets.keep(data);
                out.emit(meta(self, MetaType::Attachment), 0)
            }
            "session.model_change" => {
                if let Some(model) = text(data, "newModel") {
                    self.context.model = Some(model.to_owned());
                }
                out.emit(meta(self, MetaType::TurnContext), 0)
            }
            "session.mode_changed" | "session.permissions_changed" => out.emit(meta(self, MetaType::TurnContext), 0),
            "session.usage_checkpoint" => out.emit(meta(self, MetaType::UsageSnapshot), 0),
            "session.compaction_start" => {
                self.ledger.compaction_start();
                out.emit(meta(self, MetaType::Compaction), 0)
            }
            "session.compaction_complete" => {
                out.emit(meta(self, MetaType::Compaction), 0)?;
                self.compaction_complete(&parsed, &kind, data, out)
            }
            // The records of a `/compact` summarisation's model call.
            _ if kind.starts_with("model.") => self.model_call(&parsed, &kind, data, out),
            "session.shutdown" => {
                out.emit(meta(self, MetaType::System), 0)?;
                self.shutdown(&parsed, &kind, data, out)
            }
            "abort" | "session.abort" => out.emit(meta(self, MetaType::Interrupt), 0),
            "assistant.turn_start" => out.emit(meta(self, MetaType::TurnStart), 0),
            "assistant.turn_end" => out.emit(meta(self, MetaType::TurnEnd), 0),
            "subagent.configured" => out.emit(meta(self, MetaType::TurnContext), 0),
            "system.notification" => out.emit(meta(self, MetaType::TaskNotification), 0),
            "subagent.started"
            | "subagent.completed"
            | "subagent.failed"
            | "tool.execution_start"
            | "tool.execution_progress" => {
                if let (Some(id), Some(name)) = (text(data, "toolCallId"), text(data, "toolName")) {
                    self.tools.entry(id.to_owned()).or_insert_with(|| name.to_owned());
                }
                if let (Some(agent), Some(call)) = (text(&parsed.1, "agentId"), text(data, "toolCallId"))
                    && kind.starts_with("subagent.")
                {
                    self.spawned.entry(agent.to_owned()).or_insert_with(|| call.to_owned());
                }
                out.emit(meta(self, MetaType::Progress), 0)
            }
            "tool.execution_complete" => {
                // A session that names no model (1.0.20 and older before `session.model_change`)
                // learns it from the main thread's tool results.
                let subagent = parsed.1.contains_key("agentId") || data.contains_key("parentToolCallId");
                if self.context.model.is_none()
                    && !subagent
                    && let Some(model) = text(data, "model")
                {
                    self.context.model = Some(model.to_owned());
                }
                out.emit(self.output(&parsed, &kind, data), 0)
            }
            "user.message" | "system.message" => {
                let role = if kind == "user.message" { Role::User } else { Role::System };
                let mut payload = message(role, text(data, "content").unwrap_or_default());
                if let Payload::Message(m) = &mut payload {
                    m.parts.extend(self.assets.parts(data.get("attachments")));
                }
                let mut event = self.event(&parsed, &kind, payload);
                event.injected = role == Role::System;
                let mut rest = data.clone();
                rest.remove("content");
                if !rest.is_empty() {
                    event.extra = Some(Json::from_value_of_raw(&rest));
                }
                out.emit(event, 0)
            }
            "assistant.message" => self.assistant(&parsed, &kind, data, out),
            "session.info" | "session.warning" | "session.error" => out.emit(meta(self, MetaType::System), 0),
            _ if kind.starts_with("hook.") || kind.starts_with("permission.") => {
                out.emit(meta(self, MetaType::System), 0)
            }
            _ => {
                let whole = Value::Object(parsed.1.clone());
                out.emit(self.meta(&parsed, &kind, MetaType::Unknown, Some(&whole)), 0)
            }
        }
    }
}

fn text<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

fn message(role: Role, text: &str) -> Payload {
    let parts = if text.is_empty() { Vec::new() } else { vec![Part::Text { text: text.to_owned() }] };
    Payload::Message(Message { role, text: text.to_owned(), parts, phase: None, prompt_history: None })
}
