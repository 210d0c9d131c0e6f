//! OpenHands events → agentlog events.
//!
//! Every event file holds one event `{id, timestamp, source, kind, …}`; `kind` names its class:
//!
//! | `kind` | events |
//! |---|---|
//! | `MessageEvent` | a message of `llm_message.role` (its `reasoning_content` and thinking blocks first); `extended_content`, what the agent's context added to a prompt, an injected user message |
//! | `ActionEvent` | the model's `thought` (an assistant message) and reasoning, then the tool call `tool_call {id, name, arguments}` |
//! | `ObservationEvent` | the tool's output: `observation.content`, `is_error`, `exit_code` (the terminal's) |
//! | `AgentErrorEvent`, `UserRejectObservation` | a failed output of the call they answer |
//! | `SystemPromptEvent` | a `request_shape`: the system prompt and the tools offered |
//! | `Condensation`, `CondensationSummaryEvent` | a `compaction` |
//! | `PauseEvent` | an `interrupt` |
//! | `CondensationRequest`, `HookExecutionEvent`, `LLMCompletionLogEvent`, `TokenEvent`, `ConversationStateUpdateEvent` | a `system` meta event |
//!
//! Times are the SDK's `datetime.now().isoformat()`: local time without a zone, read as UTC.
//!
//! **Usage.** A `token_usages` entry `{model, prompt_tokens, completion_tokens, cache_read_tokens,
//! cache_write_tokens, reasoning_tokens, context_window, per_turn_token, response_id}` is what
//! litellm reported for one response. `prompt_tokens` holds the cache reads and writes (the
//! OpenAI convention, which litellm keeps for every provider), `completion_tokens` the reasoning;
//! so input is `prompt_tokens` less both cache counts. The agent's own cost is in `costs`, one
//! entry per response that cost something, without the response's id: it goes into a usage
//! event's `data.cost` when there are as many costs as responses, and is otherwise only in the
//! totals.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, USAGE_SLOT,
    Usage,
};
use crate::read::Emitter;

/// One model response's usage as `base_state.json` counts it.
struct Response {
    /// The record's place: the LLM's usage id and its index in `token_usages`.
    key: String,
    response_id: Option<String>,
    usage: Usage,
    data: Value,
    emitted: bool,
}

/// Maps the events of one conversation.
pub(super) struct Mapper {
    session: String,
    context: Context,
    /// The conversation's state, held until its `session_start` is emitted (with the first
    /// event's time).
    state: Option<Map<String, Value>>,
    started: bool,
    responses: Vec<Response>,
    by_response: HashMap<String, Vec<usize>>,
    /// Tool names by call id, for the outputs.
    tools: HashMap<String, String>,
    last_time: Option<chrono::DateTime<chrono::Utc>>,
}

impl Mapper {
    /// A mapper for the conversation `session`, whose state file holds `state`.
    pub(super) fn new(session: String, state: Option<Map<String, Value>>) -> Self {
        let mut context = Context::default();
        if let Some(state) = &state {
            let agent = state.get("agent");
            context.model = agent.and_then(|a| a.get("llm")).and_then(|l| text(l, "model")).map(str::to_owned);
            context.cwd = state.get("workspace").and_then(|w| text(w, "working_dir")).map(str::to_owned);
        }
        let responses = state.as_ref().map(responses).unwrap_or_default();
        let mut by_response: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, r) in responses.iter().enumerate() {
            if let Some(id) = &r.response_id {
                by_response.entry(id.clone()).or_default().push(i);
            }
        }
        Mapper {
            session,
            context,
            state,
            started: false,
            responses,
            by_response,
            tools: HashMap::new(),
            last_time: None,
        }
    }

    fn new_event(&self, record: &Map<String, Value>, line: u64, payload: Payload) -> Event {
        let mut event = Event::new(self.session.clone(), payload);
        event.timestamp = record.get("timestamp").and_then(Value::as_str).and_then(parse_time);
        event.record_id = text_of(record, "id").map(str::to_owned);
        event.context = self.context.clone();
        event.source.line = line;
        event.source.record_type = text_of(record, "kind").map(str::to_owned);
        event
    }

    fn meta(&self, record: &Map<String, Value>, line: u64, meta_type: MetaType) -> Event {
        let data = Some(Json::from_value_of_raw(record));
        self.new_event(record, line, Payload::Meta(Meta { meta_type, data, usage: None }))
    }

    /// The `session_start` of the conversation's state, before its first event.
    fn start(&mut self, time: Option<chrono::DateTime<chrono::Utc>>, out: &mut Emitter<'_>) -> std::io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let Some(state) = &self.state else { return Ok(()) };
        // The per-response lists become usage events and the totals an agent_totals event.
        let mut data = state.clone();
        data.remove("stats");
        let record: Map<String, Value> = [("kind".to_owned(), Value::from("base_state"))].into_iter().collect();
        let mut event = self.new_event(
            &record,
            1,
            Payload::Meta(Meta {
                meta_type: MetaType::SessionStart,
                data: Some(Json::from_value_of_raw(&data)),
                usage: None,
            }),
        );
        event.timestamp = time;
        event.record_id = text_of(state, "id").map(str::to_owned);
        out.emit_record(event, "base_state", 0)
    }

    /// Emits the events of one event file, at `line`.
    pub(super) fn event(
        &mut self,
        record: &Map<String, Value>,
        line: u64,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let time = record.get("timestamp").and_then(Value::as_str).and_then(parse_time);
        self.start(time, out)?;
        if time.is_some() {
            self.last_time = time;
        }
        let id = text_of(record, "id").unwrap_or_default().to_owned();
        let key = if id.is_empty() { format!("line {line}") } else { id };
        let response = text_of(record, "llm_response_id").map(str::to_owned);
        let events = self.map(record, line);
        for (slot, mut event) in (0u32..).zip(events) {
            event.response_id.clone_from(&response);
            out.emit_record(event, &key, slot)?;
        }
        if let Some(response) = response {
            self.usage_of(&response, time, out)?;
        }
        Ok(())
    }

    /// The events of one record, in order.
    fn map(&mut self, record: &Map<String, Value>, line: u64) -> Vec<Event> {
        let kind = text_of(record, "kind").unwrap_or_default();
        match kind {
            "MessageEvent" => self.message(record, line),
            "ActionEvent" => self.action(record, line),
            "ObservationEvent" => vec![self.observation(record, line)],
            "AgentErrorEvent" => {
                let error = text_of(record, "error").unwrap_or_default();
                vec![self.failure(record, line, error)]
            }
            "UserRejectObservation" => {
                let reason = text_of(record, "rejection_reason").unwrap_or("User rejected the action");
                vec![self.failure(record, line, &format!("Action rejected: {reason}"))]
            }
            "SystemPromptEvent" => vec![self.system_prompt(record, line)],
            "Condensation" | "CondensationSummaryEvent" => vec![self.meta(record, line, MetaType::Compaction)],
            "PauseEvent" => vec![self.meta(record, line, MetaType::Interrupt)],
            "CondensationRequest"
            | "HookExecutionEvent"
            | "LLMCompletionLogEvent"
            | "TokenEvent"
            | "ConversationStateUpdateEvent" => vec![self.meta(record, line, MetaType::System)],
            _ => vec![self.meta(record, line, MetaType::Unknown)],
        }
    }

    fn message(&mut self, record: &Map<String, Value>, line: u64) -> Vec<Event> {
        let empty = Map::new();
        let message = record.get("llm_message").and_then(Value::as_object).unwrap_or(&empty);
        let role = match text_of(message, "role") {
            Some("user") => Role::User,
            Some("system") => Role::System,
            Some("assistant") => Role::Assistant,
            _ if text_of(record, "source") == Some("user") => Role::User,
            _ => Role::Assistant,
        };
        let mut events = self.reasoning(message, record, line);
        let mut event =
            self.new_event(record, line, Payload::Message(Message::from_parts(role, parts(message.get("content")))));
        event.extra =
            extra(record, &["id", "timestamp", "source", "kind", "llm_message", "llm_response_id", "extended_content"])
                .or_else(|| {
                    extra(
                        message,
                        &["role", "content", "reasoning_content", "thinking_blocks", "responses_reasoning_item"],
                    )
                });
        events.push(event);
        let added = parts(record.get("extended_content"));
        if !added.is_empty() {
            // What the agent's context added to the message sent (skills, reminders).
            let mut event = self.new_event(record, line, Payload::Message(Message::from_parts(role, added)));
            event.injected = true;
            events.push(event);
        }
        events
    }

    /// The reasoning of a response: `reasoning_content`, Anthropic thinking blocks, an OpenAI
    /// Responses reasoning item.
    fn reasoning(&self, holder: &Map<String, Value>, record: &Map<String, Value>, line: u64) -> Vec<Event> {
        let mut out = Vec::new();
        let reasoning = |text: String, encrypted: bool, signature: Option<String>| {
            Payload::Reasoning(Reasoning { text, raw_text: None, encrypted, omitted: false, signature })
        };
        if let Some(text) = text_of(holder, "reasoning_content").filter(|t| !t.is_empty()) {
            out.push(self.new_event(record, line, reasoning(text.to_owned(), false, None)));
        }
        for block in holder.get("thinking_blocks").and_then(Value::as_array).into_iter().flatten() {
            let signature = text(block, "signature").map(str::to_owned);
            let payload = match text(block, "type") {
                Some("redacted_thinking") => reasoning(String::new(), true, text(block, "data").map(str::to_owned)),
                _ => reasoning(text(block, "thinking").unwrap_or_default().to_owned(), false, signature),
            };
            out.push(self.new_event(record, line, payload));
        }
        if let Some(item) = holder.get("responses_reasoning_item").and_then(Value::as_object) {
            let summary: Vec<&str> =
                item.get("summary").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            let content: Vec<&str> =
                item.get("content").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            let encrypted = text_of(item, "encrypted_content").is_some_and(|t| !t.is_empty());
            let raw = (!content.is_empty()).then(|| content.join("\n"));
            if !summary.is_empty() || raw.is_some() || encrypted {
                out.push(self.new_event(
                    record,
                    line,
                    Payload::Reasoning(Reasoning {
                        text: summary.join("\n"),
                        raw_text: raw,
                        encrypted: encrypted && summary.is_empty(),
                        omitted: false,
                        signature: None,
                    }),
                ));
            }
        }
        out
    }

    fn action(&mut self, record: &Map<String, Value>, line: u64) -> Vec<Event> {
        let mut events = self.reasoning(record, record, line);
        let thought = parts(record.get("thought"));
        if !thought.is_empty() {
            events.push(self.new_event(record, line, Payload::Message(Message::from_parts(Role::Assistant, thought))));
        }
        let empty = Map::new();
        let call = record.get("tool_call").and_then(Value::as_object).unwrap_or(&empty);
        let call_id = text_of(record, "tool_call_id").or_else(|| text_of(call, "id")).map(str::to_owned);
        let name = text_of(record, "tool_name").or_else(|| text_of(call, "name")).unwrap_or_default().to_owned();
        if let Some(id) = &call_id {
            self.tools.insert(id.clone(), name.clone());
        }
        // The arguments as the model sent them; `action` is the SDK's parsed form of them.
        let (input, input_text) = match call.get("arguments") {
            Some(Value::String(args)) => match Json::parse(args) {
                Ok(json) => (Some(json), None),
                Err(_) => (None, Some(args.clone())),
            },
            Some(other) => (Some(Json::from_value_of_raw(other)), None),
            None => (record.get("action").map(Json::from_value_of_raw), None),
        };
        let mut event = self.new_event(
            record,
            line,
            Payload::ToolCall(ToolCall { call_id, name, tool_kind: None, input, input_text }),
        );
        event.extra = extra(
            record,
            &[
                "id",
                "timestamp",
                "source",
                "kind",
                "thought",
                "reasoning_content",
                "thinking_blocks",
                "responses_reasoning_item",
                "tool_name",
                "tool_call_id",
                "llm_response_id",
            ],
        );
        events.push(event);
        events
    }

    fn observation(&self, record: &Map<String, Value>, line: u64) -> Event {
        let empty = Map::new();
        let observation = record.get("observation").and_then(Value::as_object).unwrap_or(&empty);
        let all = parts(observation.get("content"));
        let text = all.iter().filter_map(Part::text).collect::<Vec<_>>().join("\n");
        let parts = if all.iter().all(|p| p.text().is_some()) { Vec::new() } else { all };
        let exit_code = observation
            .get("exit_code")
            .and_then(Value::as_i64)
            .or_else(|| observation.get("metadata").and_then(|m| m.get("exit_code")).and_then(Value::as_i64))
            // -1: the command has not finished (it timed out, or waits for input)
            .filter(|code| *code >= 0);
        let output = ToolOutput {
            call_id: text_of(record, "tool_call_id").map(str::to_owned),
            name: self.tool_name(record),
            tool_kind: None,
            text,
            parts,
            is_error: observation.get("is_error").and_then(Value::as_bool),
            exit_code,
            failed: None,
            duration_ms: None,
            result: Some(Json::from_value_of_raw(observation)),
        };
        let mut event = self.new_event(record, line, Payload::ToolOutput(output));
        event.extra = extra(record, &["id", "timestamp", "source", "kind", "tool_name", "tool_call_id", "observation"]);
        event
    }

    /// The output of a call that did not run or failed in the agent: an error, a rejection.
    fn failure(&self, record: &Map<String, Value>, line: u64, message: &str) -> Event {
        let output = ToolOutput {
            call_id: text_of(record, "tool_call_id").map(str::to_owned),
            name: self.tool_name(record),
            tool_kind: None,
            text: message.to_owned(),
            parts: Vec::new(),
            is_error: Some(true),
            exit_code: None,
            failed: None,
            duration_ms: None,
            result: None,
        };
        let mut event = self.new_event(record, line, Payload::ToolOutput(output));
        event.extra = extra(record, &["id", "timestamp", "source", "kind", "tool_name", "tool_call_id", "error"]);
        event
    }

    fn tool_name(&self, record: &Map<String, Value>) -> Option<String> {
        text_of(record, "tool_name")
            .map(str::to_owned)
            .or_else(|| text_of(record, "tool_call_id").and_then(|id| self.tools.get(id)).cloned())
    }

    /// The system prompt and the tools offered, as a `request_shape`: `system` the prompt's
    /// text blocks (its dynamic context second), `tools` each tool's name, description and
    /// parameters, `event` the whole record.
    fn system_prompt(&self, record: &Map<String, Value>, line: u64) -> Event {
        let system: Vec<Value> = ["system_prompt", "dynamic_context"]
            .iter()
            .filter_map(|k| record.get(*k).and_then(|c| text(c, "text")))
            .map(|text| serde_json::json!({ "type": "text", "text": text }))
            .collect();
        let tools: Vec<Value> = record
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|tool| {
                let schema =
                    tool.get("parameters").or_else(|| tool.get("input_schema")).cloned().unwrap_or(Value::Null);
                // The SDK keeps a tool's name in `title` (its class in `kind`) and no parameters.
                let name = tool.get("name").or_else(|| tool.get("title"));
                serde_json::json!({ "name": name, "description": tool.get("description"), "input_schema": schema })
            })
            .collect();
        let data = serde_json::json!({ "system": system, "tools": tools, "event": record });
        let mut event = self.meta(record, line, MetaType::RequestShape);
        if let Payload::Meta(meta) = &mut event.payload {
            meta.data = Some(Json::from_value_of_raw(&data));
        }
        event
    }

    /// The usage events of the response `id`, once.
    fn usage_of(
        &mut self,
        id: &str,
        time: Option<chrono::DateTime<chrono::Utc>>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let Some(indices) = self.by_response.remove(id) else { return Ok(()) };
        for i in indices {
            self.emit_usage(i, time, out)?;
        }
        Ok(())
    }

    fn emit_usage(
        &mut self,
        i: usize,
        time: Option<chrono::DateTime<chrono::Utc>>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        let response = &mut self.responses[i];
        response.emitted = true;
        let mut context = self.context.clone();
        context.model.clone_from(&response.usage.model);
        let mut event = Event::new(
            self.session.clone(),
            Payload::Meta(Meta {
                meta_type: MetaType::Usage,
                data: Some(Json::from_value_of_raw(&response.data)),
                usage: Some(response.usage.clone()),
            }),
        );
        event.timestamp = time;
        event.response_id.clone_from(&response.response_id);
        event.context = context;
        event.source.line = 1;
        event.source.record_type = Some("token_usage".to_owned());
        let key = format!("base_state#{}", response.key);
        out.emit_record(event, &key, USAGE_SLOT)
    }

    /// Emits what no event placed: the state of a conversation without events, the usage of
    /// responses no event names, and the totals.
    pub(super) fn finish(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        self.start(None, out)?;
        for i in 0..self.responses.len() {
            if !self.responses[i].emitted {
                self.emit_usage(i, None, out)?;
            }
        }
        let Some(stats) = self.state.as_ref().and_then(|s| s.get("stats")) else { return Ok(()) };
        let totals = totals(stats);
        let record: Map<String, Value> = [("kind".to_owned(), Value::from("stats"))].into_iter().collect();
        let mut event = self.new_event(
            &record,
            1,
            Payload::Meta(Meta {
                meta_type: MetaType::AgentTotals,
                data: Some(Json::from_value_of_raw(&totals)),
                usage: None,
            }),
        );
        event.timestamp = self.last_time;
        out.emit_record(event, "base_state", 1)
    }
}

/// The per-response usage of a conversation's state, LLM by LLM (`usage_to_metrics`, in the
/// order written), each LLM's responses in the order counted.
fn responses(state: &Map<String, Value>) -> Vec<Response> {
    let mut out = Vec::new();
    let metrics = state.get("stats").and_then(|s| s.get("usage_to_metrics")).and_then(Value::as_object);
    for (usage_id, metrics) in metrics.into_iter().flatten() {
        let usages = metrics.get("token_usages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let costs = metrics.get("costs").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        // Costs name no response: they pair with the usages only when every response cost something.
        let paired = costs.len() == usages.len();
        let model_name = text(metrics, "model_name");
        for (n, entry) in usages.iter().enumerate() {
            let count = |key: &str| entry.get(key).and_then(Value::as_u64);
            let cache_read = count("cache_read_tokens");
            let cache_write = count("cache_write_tokens");
            let prompt = count("prompt_tokens");
            let input =
                prompt.map(|p| p.saturating_sub(cache_read.unwrap_or(0)).saturating_sub(cache_write.unwrap_or(0)));
            let output = count("completion_tokens");
            let total = match (input, output) {
                (Some(i), Some(o)) => Some(i + cache_read.unwrap_or(0) + cache_write.unwrap_or(0) + o),
                _ => None,
            };
            let model = text(entry, "model").filter(|m| !m.is_empty()).or(model_name).map(str::to_owned);
            let usage = Usage {
                input_tokens: input,
                cache_read_tokens: cache_read,
                cache_write_tokens: cache_write,
                output_tokens: output,
                reasoning_tokens: count("reasoning_tokens"),
                total_tokens: total,
                model,
                response_id: text(entry, "response_id").filter(|r| !r.is_empty()).map(str::to_owned),
                ..Usage::default()
            };
            let mut data = serde_json::json!({ "usage_id": usage_id, "token_usage": entry });
            if paired && let Some(cost) = costs.get(n) {
                data["cost"] = cost.clone();
            }
            out.push(Response {
                key: format!("{usage_id}#{n}"),
                response_id: usage.response_id.clone(),
                usage,
                data,
                emitted: false,
            });
        }
    }
    out
}

/// The totals of the conversation's `stats`: per LLM its model, accumulated cost and token
/// usage, without the per-response lists.
fn totals(stats: &Value) -> Value {
    let mut per_llm = Map::new();
    for (usage_id, metrics) in stats.get("usage_to_metrics").and_then(Value::as_object).into_iter().flatten() {
        let mut kept = Map::new();
        for (key, value) in metrics.as_object().into_iter().flatten() {
            if !matches!(key.as_str(), "costs" | "response_latencies" | "token_usages") {
                kept.insert(key.clone(), value.clone());
            }
        }
        per_llm.insert(usage_id.clone(), Value::Object(kept));
    }
    serde_json::json!({ "usage_to_metrics": per_llm })
}

/// A message's content parts: text, and images by URL (`data:` URLs included).
fn parts(content: Option<&Value>) -> Vec<Part> {
    let mut out = Vec::new();
    for item in content.and_then(Value::as_array).into_iter().flatten() {
        match text(item, "type") {
            Some("image") => {
                for url in
                    item.get("image_urls").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
                {
                    let media_type = url.strip_prefix("data:").and_then(|r| r.split(';').next()).map(str::to_owned);
                    out.push(Part::Image { media_type, data: None, url: Some(url.to_owned()) });
                }
            }
            _ => {
                if let Some(text) = text(item, "text") {
                    out.push(Part::Text { text: text.to_owned() });
                }
            }
        }
    }
    out
}

/// The fields of `record` other than `known`, as an object; `None` when there are none.
fn extra(record: &Map<String, Value>, known: &[&str]) -> Option<Json> {
    let rest: Map<String, Value> =
        record.iter().filter(|(k, _)| !known.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    (!rest.is_empty()).then(|| Json::from_value_of_raw(&rest))
}

fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

fn text_of<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// An event's time: ISO 8601, with a zone or (as the SDK writes it) without one, then UTC;
/// to the millisecond, as events keep times (the SDK writes microseconds).
fn parse_time(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    use chrono::SubsecRound;
    crate::read::parse_time(text)
        .or_else(|| chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|t| t.and_utc()))
        .map(|t| t.trunc_subsecs(3))
}
