//! The spans of one session, built from its events: an `invoke_agent` span for the session
//! and one for each subagent, a `chat` span per model response, an `execute_tool` span per tool
//! call.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::model::{Agent, Event, MetaType, Payload, Role, Usage, uuid_v5};

/// OTLP span kinds.
const INTERNAL: u8 = 1;
const CLIENT: u8 = 3;

/// One span being built.
#[derive(Debug)]
struct Span {
    id: [u8; 8],
    parent: Option<[u8; 8]>,
    name: String,
    kind: u8,
    start: Option<DateTime<Utc>>,
    end: Option<DateTime<Utc>>,
    attributes: Vec<(&'static str, Value)>,
    error: Option<String>,
    /// Whether the span is complete while the session goes on: a response's once its usage is
    /// known, a tool call's once its output is; a session's or subagent's never.
    done: bool,
}

impl Span {
    fn new(id: [u8; 8], parent: Option<[u8; 8]>, name: String, kind: u8, at: Option<DateTime<Utc>>) -> Self {
        Span { id, parent, name, kind, start: at, end: at, attributes: Vec::new(), error: None, done: false }
    }

    fn seen(&mut self, at: Option<DateTime<Utc>>) {
        if let Some(t) = at {
            self.start = Some(self.start.map_or(t, |s| s.min(t)));
            self.end = Some(self.end.map_or(t, |e| e.max(t)));
        }
    }
}

/// A thread of the session: its `invoke_agent` span and the response being gathered.
#[derive(Debug, Default)]
struct Thread {
    span: usize,
    /// The call that spawned a subagent's thread.
    spawned_by: Option<String>,
    /// Where the open response started, and its messages, for the next usage event.
    response_start: Option<DateTime<Utc>>,
    output: Vec<Value>,
    input: Vec<Value>,
    /// The system prompt and tool definitions of the thread's latest request shape, as the
    /// `gen_ai.system_instructions` and `gen_ai.tool.definitions` JSON its chat spans carry
    /// with content.
    shape: Option<(String, String)>,
}

/// The spans of one session.
pub struct Session {
    agent: Agent,
    id: String,
    trace: [u8; 16],
    spans: Vec<Span>,
    threads: HashMap<Option<String>, Thread>,
    calls: HashMap<String, usize>,
    /// The usage events met so far per response id.
    responses: HashMap<String, u32>,
    content: bool,
    /// The agent version first seen.
    version: Option<String>,
}

/// A span id from an event id (a UUID) and a purpose, so that re-exports give the same ids.
fn span_id(seed: &str, purpose: &str) -> [u8; 8] {
    let id = uuid_v5(&uuid::Uuid::NAMESPACE_OID, format!("agentlog-otel:{purpose}:{seed}").as_bytes());
    id.as_bytes()[..8].try_into().expect("a UUID has 16 bytes")
}

/// A request shape's system prompt and tool definitions as the GenAI conventions write them:
/// `gen_ai.system_instructions` a list of text parts, `gen_ai.tool.definitions` a list of
/// function definitions; both as JSON text.
fn request_shape(data: &Value) -> (String, String) {
    let system: Vec<Value> = match &data["system"] {
        Value::String(text) => vec![json!({ "type": "text", "content": text })],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().or_else(|| b.as_str()))
            .map(|text| json!({ "type": "text", "content": text }))
            .collect(),
        _ => Vec::new(),
    };
    let tools: Vec<Value> = data["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| json!({ "type": "function", "name": t["name"], "description": t["description"], "parameters": t["input_schema"] }))
        .collect();
    (Value::Array(system).to_string(), Value::Array(tools).to_string())
}

/// The `gen_ai.provider.name` of an agent's models.
fn provider(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "anthropic",
        Agent::Codex => "openai",
        Agent::GeminiCli => "gcp.gemini",
        // Copilot serves several providers' models through GitHub; the convention has no name
        // for it, and a custom value is allowed.
        Agent::CopilotCli => "github_copilot",
        // The others call whatever provider the user configured, and their logs name it by the
        // user's own provider id: the agent's name stands in, as a custom value.
        other => other.as_str(),
    }
}

impl Session {
    /// An empty session; `content` records message content on the spans.
    pub fn new(agent: Agent, id: &str, content: bool) -> Self {
        let trace = *uuid_v5(&uuid::Uuid::NAMESPACE_OID, format!("agentlog-otel:{}:{id}", agent.as_str()).as_bytes())
            .as_bytes();
        Session {
            agent,
            id: id.to_owned(),
            trace,
            spans: Vec::new(),
            threads: HashMap::new(),
            calls: HashMap::new(),
            responses: HashMap::new(),
            content,
            version: None,
        }
    }

    /// The key of an event's thread (`None` for the session's own, else the subagent's id),
    /// its `invoke_agent` span made on first use.
    fn thread(&mut self, e: &Event) -> Option<String> {
        let own = e.parent_session_id.as_deref() == Some(e.session_id.as_str());
        let key = e.agent_id.clone().filter(|_| own);
        if !self.threads.contains_key(&key) {
            // A subagent's parent is found when the session is written: its file may be read
            // before the session's.
            let seed = match &key {
                None => self.id.clone(),
                Some(agent_id) => format!("{}/{agent_id}", self.id),
            };
            let name = format!("invoke_agent {}", self.agent.as_str());
            let mut span = Span::new(span_id(&seed, "invoke_agent"), None, name, INTERNAL, e.timestamp);
            span.attributes = vec![
                ("gen_ai.operation.name", "invoke_agent".into()),
                ("gen_ai.provider.name", provider(self.agent).into()),
                ("gen_ai.agent.name", self.agent.as_str().into()),
                ("gen_ai.conversation.id", self.id.clone().into()),
            ];
            if let Some(agent_id) = &key {
                span.attributes.push(("gen_ai.agent.id", agent_id.clone().into()));
            }
            self.spans.push(span);
            let span = self.spans.len() - 1;
            self.threads
                .insert(key.clone(), Thread { span, spawned_by: e.parent_call_id.clone(), ..Thread::default() });
        }
        key
    }

    /// Takes one event of the session; copied events (replayed by resume or fork) are left out.
    pub fn add(&mut self, e: &Event) {
        if e.copied {
            return;
        }
        if self.version.is_none() {
            self.version.clone_from(&e.context.agent_version);
        }
        let key = self.thread(e);
        let content = self.content;
        let span = self.threads[&key].span;
        let thread = self.threads.get_mut(&key).expect("made above");
        match &e.payload {
            Payload::Message(m) if m.role == Role::Assistant && !e.injected => {
                thread.response_start = thread.response_start.or(e.timestamp);
                if content {
                    thread.output.push(json!({ "type": "text", "content": m.text }));
                }
            }
            Payload::Reasoning(r) => {
                thread.response_start = thread.response_start.or(e.timestamp);
                if content && !r.text.is_empty() {
                    thread.output.push(json!({ "type": "reasoning", "content": r.text }));
                }
            }
            Payload::Message(m) => {
                if content {
                    let message = json!({ "role": m.role.as_str(), "parts": [{ "type": "text", "content": m.text }] });
                    thread.input.push(message);
                }
            }
            Payload::ToolCall(c) => {
                thread.response_start = thread.response_start.or(e.timestamp);
                let input = c.input.as_ref().and_then(|j| serde_json::from_str::<Value>(j.get()).ok());
                if content {
                    let part = json!({ "type": "tool_call", "id": c.call_id, "name": c.name, "arguments": input });
                    thread.output.push(part);
                }
                let parent = Some(self.spans[span].id);
                let name = format!("execute_tool {}", c.name);
                let mut tool = Span::new(span_id(&e.id, "execute_tool"), parent, name, INTERNAL, e.timestamp);
                tool.attributes = vec![
                    ("gen_ai.operation.name", "execute_tool".into()),
                    ("gen_ai.tool.name", c.name.clone().into()),
                    ("gen_ai.tool.type", "function".into()),
                ];
                if let Some(id) = &c.call_id {
                    tool.attributes.push(("gen_ai.tool.call.id", id.clone().into()));
                }
                if content && let Some(input) = &input {
                    tool.attributes.push(("gen_ai.tool.call.arguments", input.to_string().into()));
                }
                self.spans.push(tool);
                if let Some(id) = &c.call_id {
                    self.calls.insert(id.clone(), self.spans.len() - 1);
                }
            }
            Payload::ToolOutput(o) => {
                if let Some(&i) = o.call_id.as_ref().and_then(|id| self.calls.get(id)) {
                    let tool = &mut self.spans[i];
                    tool.seen(e.timestamp);
                    tool.done = true;
                    if o.failed == Some(true) {
                        tool.error = Some(match o.exit_code {
                            Some(code) => format!("exit_code_{code}"),
                            None => "tool_error".to_owned(),
                        });
                    }
                    if content {
                        tool.attributes.push(("gen_ai.tool.call.result", o.text.clone().into()));
                    }
                }
            }
            Payload::Meta(m) if m.meta_type == MetaType::RequestShape && content => {
                let data = m.data.as_ref().and_then(|d| serde_json::from_str::<Value>(d.get()).ok());
                thread.shape = data.map(|data| request_shape(&data));
            }
            Payload::Meta(m) if m.meta_type == MetaType::Usage => {
                if let Some(usage) = &m.usage {
                    let start = thread.response_start.take().or(e.timestamp);
                    let messages = (std::mem::take(&mut thread.input), std::mem::take(&mut thread.output));
                    let shape = thread.shape.clone();
                    self.chat(e, usage, start, span, messages, shape);
                }
            }
            Payload::Meta(_) => {}
        }
        self.spans[span].seen(e.timestamp);
        if let Some(root) = self.threads.get(&None).map(|t| t.span) {
            self.spans[root].seen(e.timestamp);
        }
    }

    /// A `chat` span for one response's usage.
    fn chat(
        &mut self,
        e: &Event,
        u: &Usage,
        start: Option<DateTime<Utc>>,
        parent: usize,
        messages: (Vec<Value>, Vec<Value>),
        shape: Option<(String, String)>,
    ) {
        let model = u.model.clone().or_else(|| e.context.model.clone());
        let name = format!("chat {}", model.as_deref().unwrap_or("unknown"));
        // By the response where the log names it: a response read again with more of its lines
        // (a session still being written) keeps its span id.
        // (Some agents' message ids name several calls of the model, one per step: they count.)
        let seed = match e.response_id.as_ref().or(u.response_id.as_ref()) {
            Some(response) => {
                let n = self.responses.entry(response.clone()).or_default();
                *n += 1;
                format!("{}/{}/{response}/{n}", self.agent.as_str(), self.id)
            }
            None => e.id.clone(),
        };
        let mut span = Span::new(span_id(&seed, "chat"), Some(self.spans[parent].id), name, CLIENT, start);
        span.seen(e.timestamp);
        span.done = true;
        // OTLP integers are 64-bit signed: counts are held at the largest, as session totals are.
        let count = |n: Option<u64>| Value::from(n.unwrap_or(0).min(crate::model::MAX_COUNT));
        span.attributes = vec![
            ("gen_ai.operation.name", "chat".into()),
            ("gen_ai.provider.name", provider(self.agent).into()),
            ("gen_ai.conversation.id", self.id.clone().into()),
            ("gen_ai.usage.input_tokens", count(Some(u.prompt_tokens()))),
            ("gen_ai.usage.cache_read.input_tokens", count(u.cache_read_tokens)),
            ("gen_ai.usage.cache_creation.input_tokens", count(u.cache_write_tokens)),
            ("gen_ai.usage.output_tokens", count(u.output_tokens)),
            ("gen_ai.usage.reasoning.output_tokens", count(u.reasoning_tokens)),
        ];
        if let Some(model) = model {
            span.attributes.push(("gen_ai.request.model", model.clone().into()));
            span.attributes.push(("gen_ai.response.model", model.into()));
        }
        if let Some(id) = e.response_id.as_ref().or(u.response_id.as_ref()) {
            span.attributes.push(("gen_ai.response.id", id.clone().into()));
        }
        let (input, output) = messages;
        if let Some((system, tools)) = shape {
            span.attributes.push(("gen_ai.system_instructions", system.into()));
            span.attributes.push(("gen_ai.tool.definitions", tools.into()));
        }
        if self.content {
            if !input.is_empty() {
                span.attributes.push(("gen_ai.input.messages", Value::Array(input).to_string().into()));
            }
            let finish = if output.iter().any(|p| p["type"] == "tool_call") { "tool_call" } else { "stop" };
            let message = json!([{ "role": "assistant", "parts": output, "finish_reason": finish }]);
            span.attributes.push(("gen_ai.output.messages", message.to_string().into()));
        }
        self.spans.push(span);
    }

    /// The spans `keep` chooses, by id and whether complete, as one OTLP/JSON
    /// `ExportTraceServiceRequest`; `None` when it chooses none.
    pub fn request_of(&self, keep: &mut dyn FnMut([u8; 8], bool) -> bool) -> Option<Value> {
        let version = self.version.as_deref();
        let chosen: Vec<bool> = self.spans.iter().map(|s| keep(s.id, s.done)).collect();
        if !chosen.contains(&true) {
            return None;
        }
        let trace = hex(&self.trace);
        // A subagent hangs under the call that spawned it, else under the session.
        let root = self.threads.get(&None).map(|t| self.spans[t.span].id);
        let mut parents: HashMap<usize, [u8; 8]> = HashMap::new();
        for (key, thread) in &self.threads {
            let spawner = thread.spawned_by.as_ref().and_then(|c| self.calls.get(c)).map(|&i| self.spans[i].id);
            if let Some(parent) = spawner.or(root).filter(|_| key.is_some()) {
                parents.insert(thread.span, parent);
            }
        }
        let spans: Vec<Value> = self
            .spans
            .iter()
            .enumerate()
            .filter(|(i, _)| chosen[*i])
            .map(|(i, s)| span_json(s, parents.get(&i).or(s.parent.as_ref()), &trace, version))
            .collect();
        Some(json!({
            "resourceSpans": [{
                "resource": { "attributes": [attribute("service.name", &Value::from(self.agent.as_str()))] },
                "scopeSpans": [{
                    "scope": { "name": "agentlog", "version": env!("CARGO_PKG_VERSION") },
                    "spans": spans,
                }],
            }],
        }))
    }
}

fn span_json(s: &Span, parent: Option<&[u8; 8]>, trace: &str, version: Option<&str>) -> Value {
    let nanos = |t: Option<DateTime<Utc>>| t.and_then(|t| t.timestamp_nanos_opt()).unwrap_or(0).to_string();
    let mut attributes: Vec<Value> = s.attributes.iter().map(|(k, v)| attribute(k, v)).collect();
    if s.attributes.iter().any(|(k, v)| *k == "gen_ai.operation.name" && v == "invoke_agent")
        && let Some(version) = version
    {
        attributes.push(attribute("gen_ai.agent.version", &Value::from(version)));
    }
    if let Some(kind) = &s.error {
        attributes.push(attribute("error.type", &Value::from(kind.as_str())));
    }
    let mut span = json!({
        "traceId": trace,
        "spanId": hex(&s.id),
        "name": s.name,
        "kind": s.kind,
        "startTimeUnixNano": nanos(s.start),
        "endTimeUnixNano": nanos(s.end),
        "attributes": attributes,
        "status": if s.error.is_some() { json!({ "code": 2 }) } else { json!({}) },
    });
    if let Some(parent) = parent {
        span["parentSpanId"] = hex(parent).into();
    }
    span
}

/// An OTLP `KeyValue`: strings, integers (as decimal strings, as OTLP/JSON writes 64-bit
/// integers), floats and booleans.
fn attribute(key: &str, value: &Value) -> Value {
    let any = match value {
        Value::Bool(b) => json!({ "boolValue": b }),
        Value::Number(n) if n.is_u64() || n.is_i64() => json!({ "intValue": n.to_string() }),
        Value::Number(n) => json!({ "doubleValue": n.as_f64() }),
        Value::String(s) => json!({ "stringValue": s }),
        other => json!({ "stringValue": other.to_string() }),
    };
    json!({ "key": key, "value": any })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
