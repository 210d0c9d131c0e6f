//! Copilot CLI events → agentlog events.
//!
//! **Usage.** Copilot records two things: `outputTokens` on each `assistant.message` (one model
//! response), and at `session.shutdown`, per model, the totals of the process's run
//! (`modelMetrics[model].usage`: input, output, cache reads and writes, reasoning). Each message's
//! output becomes a `usage` event; a shutdown adds, per model, one `usage` event for what the
//! messages did not report: the input (`inputTokens` less the cache reads and writes it
//! includes), the cache reads and writes, the reasoning, and the output beyond what that model's
//! messages since the session started (or resumed) already counted. So the usage events of a
//! run add up to its shutdown totals, nothing is counted twice, and a session without a shutdown
//! (still running, or killed) reports the output its messages have. Premium requests and their
//! cost stay in the shutdown's `system` event.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Payload, Reasoning, Role, ToolCall, ToolOutput, Usage,
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
    /// Output tokens the messages reported since the session started or resumed, by model.
    counted: BTreeMap<String, u64>,
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
        Mapper { session_id, context: Context::default(), tools: HashMap::new(), counted: BTreeMap::new() }
    }

    /// An event of the record: its times, ids, subagent and place.
    fn event(&self, parsed: &Parsed, kind: &str, payload: Payload) -> Event {
        let r = &parsed.1;
        let mut event = Event::new(self.session_id.clone(), payload);
        event.timestamp = text(r, "timestamp").and_then(parse_time);
        event.record_id = text(r, "id").map(str::to_owned);
        event.parent_record_id = text(r, "parentId").map(str::to_owned);
        // An inline subagent's events carry the id of the tool call that started it.
        if let Some(agent) = text(r, "agentId") {
            event.agent_id = Some(agent.to_owned());
            event.parent_call_id = Some(agent.to_owned());
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
        self.counted.clear();
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
            let payload = Payload::ToolCall(ToolCall {
                call_id,
                name,
                tool_kind: None,
                input: input.filter(|i| i.is_object()).map(Json::from_value_of_raw),
                input_text: input.and_then(Value::as_str).map(str::to_owned),
            });
            out.emit(with_response(self.event(parsed, kind, payload)), slot)?;
            slot += 1;
        }
        if let Some(output) = data.get("outputTokens").and_then(Value::as_u64) {
            let model = self.context.model.clone();
            *self.counted.entry(model.clone().unwrap_or_default()).or_default() += output;
            let usage = Usage {
                output_tokens: Some(output),
                total_tokens: Some(output),
                model,
                response_id: response.clone(),
                ..Usage::default()
            };
            let payload = Payload::Meta(Meta { meta_type: MetaType::Usage, data: None, usage: Some(usage) });
            out.emit(with_response(self.event(parsed, kind, payload)), slot)?;
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
                exit_code: None,
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

    /// The shutdown's per-model usage that the messages did not report.
    fn shutdown(
        &mut self,
        parsed: &Parsed,
        kind: &str,
        data: &Map<String, Value>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let mut slot = 1;
        for (model, metrics) in data.get("modelMetrics").and_then(Value::as_object).into_iter().flatten() {
            let count = |key: &str| metrics.get("usage").and_then(|u| u.get(key)).and_then(Value::as_u64).unwrap_or(0);
            let (input, reads, writes) = (count("inputTokens"), count("cacheReadTokens"), count("cacheWriteTokens"));
            let counted = self.counted.get(model).copied().unwrap_or(0);
            let output = count("outputTokens").saturating_sub(counted);
            let fresh = input.saturating_sub(reads).saturating_sub(writes);
            let reasoning = count("reasoningTokens");
            if fresh + reads + writes + output + reasoning == 0 {
                continue;
            }
            let usage = Usage {
                input_tokens: Some(fresh),
                cache_read_tokens: Some(reads),
                cache_write_tokens: Some(writes),
                output_tokens: Some(output),
                reasoning_tokens: Some(reasoning),
                total_tokens: Some(input.max(fresh + reads + writes) + output),
                model: Some(model.clone()),
                ..Usage::default()
            };
            let payload = Payload::Meta(Meta { meta_type: MetaType::Usage, data: None, usage: Some(usage) });
            let mut event = self.event(parsed, kind, payload);
            event.extra = Some(Json::from_value(&serde_json::json!({
                "shutdown_remainder": true, "output_tokens_of_messages": counted,
            })));
            out.emit(event, slot)?;
            slot += 1;
        }
        self.counted.clear();
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
                out.emit(meta(self, MetaType::SessionStart), 0)
            }
            "session.model_change" => {
                if let Some(model) = text(data, "newModel") {
                    self.context.model = Some(model.to_owned());
                }
                out.emit(meta(self, MetaType::TurnContext), 0)
            }
            "session.mode_changed" | "session.permissions_changed" => out.emit(meta(self, MetaType::TurnContext), 0),
            "session.usage_checkpoint" => out.emit(meta(self, MetaType::UsageSnapshot), 0),
            "session.compaction_start" | "session.compaction_complete" => out.emit(meta(self, MetaType::Compaction), 0),
            "session.shutdown" => {
                out.emit(meta(self, MetaType::System), 0)?;
                self.shutdown(&parsed, &kind, data, out)
            }
            "abort" | "session.abort" => out.emit(meta(self, MetaType::Interrupt), 0),
            "assistant.turn_start" => out.emit(meta(self, MetaType::TurnStart), 0),
            "assistant.turn_end" => out.emit(meta(self, MetaType::TurnEnd), 0),
            "subagent.started"
            | "subagent.completed"
            | "subagent.failed"
            | "tool.execution_start"
            | "tool.execution_progress" => {
                if let (Some(id), Some(name)) = (text(data, "toolCallId"), text(data, "toolName")) {
                    self.tools.entry(id.to_owned()).or_insert_with(|| name.to_owned());
                }
                out.emit(meta(self, MetaType::Progress), 0)
            }
            "tool.execution_complete" => out.emit(self.output(&parsed, &kind, data), 0),
            "user.message" | "system.message" => {
                let role = if kind == "user.message" { Role::User } else { Role::System };
                let mut event = self.event(&parsed, &kind, message(role, text(data, "content").unwrap_or_default()));
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
    let parts = if text.is_empty() { Vec::new() } else { vec![crate::model::Part::Text { text: text.to_owned() }] };
    Payload::Message(Message { role, text: text.to_owned(), parts, phase: None, prompt_history: None })
}
