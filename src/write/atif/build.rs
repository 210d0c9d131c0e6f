//! Steps of one thread (a session's main thread, or one of its subagents) built from its
//! events, and the trajectory document they make.
//!
//! One agent step per model response: the events of one response id (Claude Code
//! `message.id`), or, where responses have no id (Codex), what the model said and called until
//! its usage was reported. Tool outputs become results of the observation of the step that
//! issued the call; usage becomes the step's metrics.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::model::{Event, MetaType, Part, Payload, Role, UsageTotals};

/// The ATIF version written.
pub const ATIF_VERSION: &str = "ATIF-v1.7";

/// Who a step comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    System,
    User,
    Agent,
}

/// One step being built.
#[derive(Debug)]
struct Step {
    source: Source,
    timestamp: Option<String>,
    text: Vec<String>,
    images: Vec<Value>,
    reasoning: Vec<String>,
    tool_calls: Vec<Value>,
    results: Vec<Value>,
    /// The usage of the step's responses (usually one), summed as session totals are.
    usage: Option<UsageTotals>,
    /// Whether a response split its cache writes by lifetime (Claude Code).
    cache_write_1h: bool,
    model: Option<String>,
    copied: bool,
    rolled_back: bool,
    extra: Map<String, Value>,
}

impl Step {
    fn new(source: Source, e: &Event) -> Self {
        Step {
            source,
            timestamp: e.timestamp.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            text: Vec::new(),
            images: Vec::new(),
            reasoning: Vec::new(),
            tool_calls: Vec::new(),
            results: Vec::new(),
            usage: None,
            cache_write_1h: false,
            model: None,
            copied: e.copied,
            rolled_back: e.rolled_back,
            extra: Map::new(),
        }
    }
}

/// The steps of one thread, in order.
#[derive(Debug, Default)]
pub struct Thread {
    steps: Vec<Step>,
    /// The agent step that takes the model's next output when it names no response.
    open: Option<usize>,
    by_response: HashMap<String, usize>,
    by_call: HashMap<String, usize>,
    /// The tool call that spawned this thread, for a subagent.
    pub spawned_by: Option<String>,
    /// Agent version and model first seen.
    pub version: Option<String>,
    /// The model first seen.
    pub model: Option<String>,
    /// The tool definitions of the first request shape, as ATIF's `agent.tool_definitions`.
    tool_definitions: Option<Vec<Value>>,
}

impl Thread {
    /// Takes one event of the thread.
    pub fn add(&mut self, e: &Event) {
        if self.version.is_none() {
            self.version.clone_from(&e.context.agent_version);
        }
        if self.model.is_none() {
            self.model.clone_from(&e.context.model);
        }
        if self.spawned_by.is_none() {
            self.spawned_by.clone_from(&e.parent_call_id);
        }
        match &e.payload {
            Payload::Message(m) if m.role == Role::User && !e.injected => {
                let i = self.push(Source::User, e);
                self.steps[i].text.push(m.text.clone());
                self.steps[i].images.extend(images(&m.parts));
            }
            Payload::Message(m) if m.role == Role::Assistant && !e.injected => {
                let i = self.agent_step(e);
                if !m.text.is_empty() {
                    self.steps[i].text.push(m.text.clone());
                }
                self.steps[i].images.extend(images(&m.parts));
            }
            Payload::Message(m) => {
                let i = self.push(Source::System, e);
                let step = &mut self.steps[i];
                step.text.push(m.text.clone());
                step.extra.insert("role".into(), m.role.as_str().into());
                step.extra.insert("injected".into(), e.injected.into());
            }
            Payload::Reasoning(r) => {
                let i = self.agent_step(e);
                if !r.text.is_empty() {
                    self.steps[i].reasoning.push(r.text.clone());
                }
                if r.encrypted {
                    self.steps[i].extra.insert("reasoning_encrypted".into(), true.into());
                }
            }
            Payload::ToolCall(c) => {
                let i = self.agent_step(e);
                let id = c.call_id.clone().unwrap_or_else(|| format!("call-{}", e.id));
                let mut call = json!({ "tool_call_id": id, "function_name": c.name });
                let input = c.input.as_ref().and_then(|j| serde_json::from_str::<Value>(j.get()).ok());
                match input {
                    Some(Value::Object(arguments)) => call["arguments"] = Value::Object(arguments),
                    other => {
                        // ATIF arguments are an object: other input goes to `extra`.
                        call["arguments"] = json!({});
                        let mut extra = Map::new();
                        if let Some(other) = other {
                            extra.insert("input".into(), other);
                        }
                        if let Some(text) = &c.input_text {
                            extra.insert("input_text".into(), text.clone().into());
                        }
                        if !extra.is_empty() {
                            call["extra"] = Value::Object(extra);
                        }
                    }
                }
                self.steps[i].tool_calls.push(call);
                self.by_call.insert(id, i);
            }
            Payload::ToolOutput(o) => {
                let content = content(&o.text, &o.parts);
                let mut extra = Map::new();
                for (key, value) in
                    [("is_error", o.is_error.map(Value::from)), ("exit_code", o.exit_code.map(Value::from))]
                {
                    if let Some(value) = value {
                        extra.insert(key.into(), value);
                    }
                }
                match o.call_id.as_ref().and_then(|id| Some((id, *self.by_call.get(id)?))) {
                    Some((id, i)) => {
                        let mut result = json!({ "source_call_id": id, "content": content });
                        if !extra.is_empty() {
                            result["extra"] = Value::Object(extra);
                        }
                        self.steps[i].results.push(result);
                    }
                    None => {
                        // An output whose call is not in the thread: a result of no call, on a
                        // system step of its own, so that the document stays valid.
                        extra.insert("orphan".into(), true.into());
                        if let Some(id) = &o.call_id {
                            extra.insert("call_id".into(), id.clone().into());
                        }
                        if let Some(name) = &o.name {
                            extra.insert("tool_name".into(), name.clone().into());
                        }
                        let i = self.push(Source::System, e);
                        self.steps[i]
                            .results
                            .push(json!({ "source_call_id": null, "content": content, "extra": extra }));
                    }
                }
            }
            Payload::Meta(m) if m.meta_type == MetaType::Usage && !e.copied => {
                let Some(usage) = &m.usage else { return };
                let named = e.response_id.as_ref().or(usage.response_id.as_ref());
                let i = match named.and_then(|r| self.by_response.get(r)) {
                    Some(&i) => i,
                    None => match self.open.filter(|&i| self.steps[i].usage.is_none()) {
                        Some(i) => i,
                        None => self.new_agent(e),
                    },
                };
                let step = &mut self.steps[i];
                step.usage.get_or_insert_with(UsageTotals::default).add(usage);
                step.cache_write_1h |= usage.cache_write_1h_tokens.is_some();
                if step.model.is_none() {
                    step.model.clone_from(&usage.model);
                }
                if named.is_none() {
                    // A response without an id ends with its usage.
                    self.open = None;
                }
            }
            // What the agent sends the model besides the conversation: its system prompt as a
            // system step, its first tools as the agent's tool definitions.
            Payload::Meta(m) if m.meta_type == MetaType::RequestShape && !e.copied => {
                let Some(data) = m.data.as_ref().and_then(|d| serde_json::from_str::<Value>(d.get()).ok()) else {
                    return;
                };
                if self.tool_definitions.is_none()
                    && let Some(tools) = data["tools"].as_array()
                {
                    self.tool_definitions = Some(tools.iter().map(tool_definition).collect());
                }
                let i = self.push(Source::System, e);
                self.steps[i].text.push(system_text(&data["system"]));
                self.steps[i].extra.insert("system_prompt".into(), true.into());
                if let Some(hash) = data["shape_hash"].as_str() {
                    self.steps[i].extra.insert("request_shape".into(), hash.into());
                }
            }
            Payload::Meta(m) if m.meta_type == MetaType::Compaction => {
                let i = self.push(Source::System, e);
                let data = m.data.as_ref().and_then(|d| serde_json::from_str::<Value>(d.get()).ok());
                let summary = data.as_ref().and_then(|d| d.get("summary").or_else(|| d.get("message")));
                if let Some(Value::String(text)) = summary {
                    self.steps[i].text.push(text.clone());
                }
                let management = json!({ "type": "compaction", "boundary": "replace" });
                self.steps[i].extra.insert("context_management".into(), management);
            }
            Payload::Meta(_) => {}
        }
    }

    /// Appends a step of `source`, ending the open agent step.
    fn push(&mut self, source: Source, e: &Event) -> usize {
        self.open = None;
        self.steps.push(Step::new(source, e));
        self.steps.len() - 1
    }

    /// A new agent step, open for the model's output.
    fn new_agent(&mut self, e: &Event) -> usize {
        let i = self.push(Source::Agent, e);
        self.open = Some(i);
        if let Some(r) = &e.response_id {
            self.by_response.insert(r.clone(), i);
        }
        i
    }

    /// The agent step an event of the model's output belongs to.
    fn agent_step(&mut self, e: &Event) -> usize {
        let i = match &e.response_id {
            Some(r) => match self.by_response.get(r) {
                Some(&i) => i,
                None => self.new_agent(e),
            },
            None => match self.open {
                Some(i) => i,
                None => self.new_agent(e),
            },
        };
        let step = &mut self.steps[i];
        step.copied |= e.copied;
        step.rolled_back |= e.rolled_back;
        if step.model.is_none() {
            step.model.clone_from(&e.context.model);
        }
        i
    }

    /// Whether the thread has no step.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Marks the result of call `call_id` as having spawned the trajectory `trajectory_id`;
    /// false when no step of this thread made that call.
    pub fn link_subagent(&mut self, call_id: &str, trajectory_id: &str, session_id: &str) -> bool {
        let Some(&i) = self.by_call.get(call_id) else { return false };
        let reference = json!({ "trajectory_id": trajectory_id, "session_id": session_id });
        let results = &mut self.steps[i].results;
        match results.iter_mut().find(|r| r["source_call_id"] == call_id) {
            Some(result) => match result.get_mut("subagent_trajectory_ref").and_then(Value::as_array_mut) {
                Some(refs) => refs.push(reference),
                None => result["subagent_trajectory_ref"] = json!([reference]),
            },
            None => results.push(json!({ "source_call_id": call_id, "subagent_trajectory_ref": [reference] })),
        }
        true
    }

    /// The trajectory document of the thread, without subagents.
    pub fn document(&self, agent: &str, session_id: &str, trajectory_id: &str) -> Value {
        let mut totals = UsageTotals::default();
        let mut steps = Vec::with_capacity(self.steps.len());
        for (n, step) in self.steps.iter().enumerate() {
            if let Some(u) = &step.usage {
                totals.merge(u);
            }
            steps.push(step_value(n + 1, step));
        }
        let mut final_metrics = json!({
            "total_prompt_tokens": prompt_tokens(&totals),
            "total_completion_tokens": totals.output_tokens,
            "total_cached_tokens": totals.cache_read_tokens,
            "total_steps": steps.len(),
            "extra": {
                "total_input_tokens": totals.input_tokens,
                "total_cache_creation_input_tokens": totals.cache_write_tokens,
                "total_reasoning_tokens": totals.reasoning_tokens,
                "total_tool_calls": self.steps.iter().map(|s| s.tool_calls.len()).sum::<usize>(),
                "llm_call_count": totals.responses,
            },
        });
        if let Some(cost) = totals.cost_usd {
            final_metrics["total_cost_usd"] = cost.into();
        }
        let mut agent_value = json!({ "name": agent, "version": self.version.as_deref().unwrap_or("unknown") });
        if let Some(model) = &self.model {
            agent_value["model_name"] = model.clone().into();
        }
        if let Some(tools) = &self.tool_definitions {
            agent_value["tool_definitions"] = Value::Array(tools.clone());
        }
        json!({
            "schema_version": ATIF_VERSION,
            "session_id": session_id,
            "trajectory_id": trajectory_id,
            "agent": agent_value,
            "steps": steps,
            "final_metrics": final_metrics,
        })
    }
}

/// One step as ATIF writes it.
fn step_value(id: usize, step: &Step) -> Value {
    let source = match step.source {
        Source::System => "system",
        Source::User => "user",
        Source::Agent => "agent",
    };
    let text = step.text.join("\n\n");
    let message = if step.images.is_empty() {
        Value::String(text)
    } else {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({ "type": "text", "text": text }));
        }
        parts.extend(step.images.iter().cloned());
        Value::Array(parts)
    };
    let mut value = json!({ "step_id": id, "source": source, "message": message });
    if let Some(t) = &step.timestamp {
        value["timestamp"] = t.clone().into();
    }
    if step.source == Source::Agent {
        if let Some(model) = &step.model {
            value["model_name"] = model.clone().into();
        }
        if !step.reasoning.is_empty() {
            value["reasoning_content"] = step.reasoning.join("\n\n").into();
        }
        if !step.tool_calls.is_empty() {
            value["tool_calls"] = Value::Array(step.tool_calls.clone());
        }
        if let Some(u) = &step.usage {
            value["metrics"] = metrics(u, step.cache_write_1h);
            value["llm_call_count"] = u.responses.into();
        }
    }
    if !step.results.is_empty() {
        value["observation"] = json!({ "results": step.results });
    }
    if step.copied {
        value["is_copied_context"] = true.into();
    }
    let mut extra = step.extra.clone();
    if step.rolled_back {
        extra.insert("rolled_back".into(), true.into());
    }
    if !extra.is_empty() {
        value["extra"] = Value::Object(extra);
    }
    value
}

/// A tool definition as ATIF has them, in OpenAI's function-calling shape.
fn tool_definition(tool: &Value) -> Value {
    json!({
        "type": "function",
        "function": { "name": tool["name"], "description": tool["description"], "parameters": tool["input_schema"] },
    })
}

/// A system prompt's text: the string, or its text blocks one after another.
fn system_text(system: &Value) -> String {
    match system {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str().or_else(|| b.as_str())).collect();
            texts.join("\n\n")
        }
        _ => String::new(),
    }
}

/// All input of the responses: fresh, cache reads and cache writes.
fn prompt_tokens(u: &UsageTotals) -> u64 {
    u.input_tokens.saturating_add(u.cache_read_tokens).saturating_add(u.cache_write_tokens)
}

/// A step's usage as its metrics: `prompt_tokens` is all input, cache reads and writes
/// included; `cache_write_1h` when a response split its cache writes by lifetime.
fn metrics(u: &UsageTotals, cache_write_1h: bool) -> Value {
    let mut value = json!({
        "prompt_tokens": prompt_tokens(u),
        "completion_tokens": u.output_tokens,
        "cached_tokens": u.cache_read_tokens,
        "extra": {
            "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_write_tokens,
            "reasoning_tokens": u.reasoning_tokens,
        },
    });
    if cache_write_1h {
        value["extra"]["cache_creation_1h_input_tokens"] = u.cache_write_1h_tokens.into();
    }
    if let Some(cost) = u.cost_usd {
        value["cost_usd"] = cost.into();
    }
    value
}

/// Image parts as ATIF content parts: an image of a type ATIF knows, with its URL or its data
/// as a `data:` URL for `path`; other images and documents as a text part naming them.
fn images(parts: &[Part]) -> Vec<Value> {
    const TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
    parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { .. } => None,
            Part::Image { media_type, data, url } => {
                let known = media_type.as_deref().filter(|t| TYPES.contains(t));
                let path = match (data, url) {
                    (Some(data), _) => known.map(|t| format!("data:{t};base64,{data}")),
                    (None, Some(url)) => Some(url.clone()),
                    (None, None) => None,
                };
                Some(match (known, path) {
                    (Some(t), Some(path)) => json!({ "type": "image", "source": { "media_type": t, "path": path } }),
                    _ => json!({ "type": "text", "text": format!("[image: {}]", media_type.as_deref().unwrap_or("unknown type")) }),
                })
            }
            Part::Document { media_type, .. } => Some(
                json!({ "type": "text", "text": format!("[document: {}]", media_type.as_deref().unwrap_or("unknown type")) }),
            ),
        })
        .collect()
}

/// A tool output's content: its text, or content parts when it has images.
fn content(text: &str, parts: &[Part]) -> Value {
    let images = images(parts);
    if images.is_empty() {
        return Value::String(text.to_owned());
    }
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({ "type": "text", "text": text }));
    }
    content.extend(images);
    Value::Array(content)
}
