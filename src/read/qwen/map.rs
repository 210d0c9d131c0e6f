//! Qwen Code records → agentlog events.
//!
//! Each record becomes its events as it is read; nothing spans lines but what the mapper
//! remembers below. Every event has the record's `uuid` as `record_id` and its `parentUuid`
//! as `parent_record_id`, its `cwd` and `version`.
//!
//! - **`user`** (a typed prompt), **`assistant`** (a model response, `role: "model"`) and
//!   **`tool_result`** (what a tool sent back to the model): the `message.parts` in order.
//!   Text and media parts in a row make one message; a `thought: true` text part is
//!   reasoning; a `functionCall` a tool call; a `functionResponse` a tool output (the Gemini
//!   reader's part functions, [`crate::read::gemini_parts`]). A tool output takes what the
//!   record's `toolCallResult` says: `status` (`error` for a failed call, a shell command
//!   that exited non-zero included), `resultDisplay.exitCode`, `durationMs` (else the
//!   duration of the call's `tool_call` telemetry), and the whole `toolCallResult` as
//!   `result`.
//! - **`user` with `subtype: "notification"`**: a background subagent's `<task-notification>`,
//!   fed to the model as a new turn: a `task_notification` meta event.
//! - **`system`**: `ui_telemetry` (`systemPayload.uiEvent`): `qwen-code.api_response` is a
//!   `usage` event (below), other events `system` meta events; `attribution_snapshot` a
//!   `file_snapshot`, `chat_compression` (`/compress`, or the automatic compression) a
//!   `compaction` holding the summary history. Other subtypes and record types are kept
//!   whole as `unknown`.
//! - **Subagents.** A subagent's transcript (`subagents/<session>/agent-<agent id>.jsonl`) has
//!   its parent's `sessionId`; its events are flagged `is_sidechain`, with `agent_id` and
//!   `parent_session_id` set, and `parent_call_id` the `toolUseId` of the `agent-<id>.meta.json`
//!   beside it (Claude Code's representation of its subagent files).
//!
//! **Usage.** Qwen Code records a `ui_telemetry` `qwen-code.api_response` record in the main
//! session file for every model response of the session, each once: the main conversation's,
//! its subagents', the compression's and the background memory agent's (which have no
//! transcript of their own). That record is the `usage` event, with its `response_id`; a
//! subagent's carries the subagent's `agent_id`. The same counts are also on the response's
//! `assistant` record (`usageMetadata`, on the main conversation's right after the
//! telemetry, on a subagent's in its transcript): an `assistant` record whose parent record
//! was an `api_response` telemetry adds no usage, and a subagent transcript's are
//! `usage_snapshot` events, counted by the main file. An `assistant` record's usage counts only
//! where no telemetry came before it.
//!
//! Counts are Gemini's names (`promptTokenCount`/`input_token_count` includes the cached
//! tokens); through an OpenAI-compatible API the completion tokens (`candidatesTokenCount`)
//! include the thoughts, and `total = prompt + completion`. Thoughts are taken as part of the
//! output unless the total counts them beside it (`total = prompt + output + thoughts`, the
//! Gemini API's own metadata).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{Map, Value};

use crate::model::{Context, Event, Json, Message, Meta, MetaType, Payload, Reasoning, Role};
use crate::read::gemini_parts::{self as parts, Tokens};
use crate::read::{Emitter, Line, LineMapper, file_name, file_stem, parse_time};

/// A parsed line: where it is, and its record.
pub type Parsed = (Line<'static>, Map<String, Value>);

/// The telemetry event of a model response.
const API_RESPONSE: &str = "qwen-code.api_response";

/// The telemetry event of a tool call.
const TOOL_CALL: &str = "qwen-code.tool_call";

/// The name of Qwen Code's shell tool.
const SHELL_TOOL: &str = "run_shell_command";

/// Maps the records of one Qwen Code file, in order.
pub struct Mapper {
    path: String,
    /// For a subagent transcript (`subagents/<session>/agent-<id>.jsonl`): its agent id.
    file_agent: Option<String>,
    /// The subagent's spawning call, from its `.meta.json`, read once.
    sidecar_call: Option<Option<String>>,
    /// Uuids of the `api_response` telemetry records read: their usage is counted.
    counted: HashSet<String>,
    /// The ids of the tool calls of this file.
    calls: HashSet<String>,
    /// How long each tool call ran, by call id, from its `tool_call` telemetry.
    durations: HashMap<String, u64>,
}

impl Mapper {
    /// A mapper for the file named `name`.
    pub fn new(name: &str) -> Self {
        let path = Path::new(name);
        let in_subagents =
            path.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|n| n == "subagents");
        let file_agent = file_name(name)
            .strip_prefix("agent-")
            .and_then(|rest| rest.strip_suffix(".jsonl"))
            .filter(|_| in_subagents)
            .map(str::to_owned);
        Mapper {
            path: name.to_owned(),
            file_agent,
            sidecar_call: None,
            counted: HashSet::new(),
            calls: HashSet::new(),
            durations: HashMap::new(),
        }
    }

    /// The `toolUseId` of this subagent file's `.meta.json`.
    fn sidecar_call(&mut self) -> Option<String> {
        let path = &self.path;
        self.sidecar_call
            .get_or_insert_with(|| {
                let sidecar = Path::new(path).with_extension("meta.json");
                let meta: Value = serde_json::from_slice(&std::fs::read(sidecar).ok()?).ok()?;
                meta.get("toolUseId").and_then(Value::as_str).map(str::to_owned)
            })
            .clone()
    }

    /// The event every event of `record` starts from.
    fn head(&mut self, record: &Map<String, Value>, line: &Line<'_>) -> Event {
        let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
        let session = text("sessionId").unwrap_or_else(|| file_stem(&self.path).to_owned());
        let mut event =
            Event::new(session, Payload::Meta(Meta { meta_type: MetaType::System, data: None, usage: None }));
        event.timestamp = record.get("timestamp").and_then(Value::as_str).and_then(parse_time);
        event.record_id = text("uuid");
        event.parent_record_id = text("parentUuid");
        event.context =
            Context { model: text("model"), cwd: text("cwd"), agent_version: text("version"), ..Context::default() };
        event.source.line = line.number;
        event.source.byte_offset = line.offset;
        event.source.record_type = text("type");
        let sidechain = record.get("isSidechain").and_then(Value::as_bool) == Some(true);
        if self.file_agent.is_some() || sidechain {
            event.is_sidechain = true;
            event.agent_id = text("agentId").or_else(|| self.file_agent.clone());
            event.parent_session_id = Some(event.session_id.clone());
            if self.file_agent.is_some() {
                event.parent_call_id = self.sidecar_call();
            }
        }
        event
    }

    /// The events of a record's `message.parts`, in order.
    fn parts(&mut self, record: &Map<String, Value>, role: Role, new: &dyn Fn(Payload) -> Event) -> Vec<Event> {
        let parts = record.get("message").and_then(|m| m.get("parts")).and_then(Value::as_array);
        let mut events = Vec::new();
        let mut content: Vec<Value> = Vec::new();
        for part in parts.into_iter().flatten() {
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            if !thought && ["text", "inlineData", "fileData"].iter().any(|k| part.get(k).is_some()) {
                content.push(part.clone());
                continue;
            }
            flush(&mut content, role, new, &mut events);
            if thought {
                let text = part.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                let reasoning = Reasoning { text, raw_text: None, encrypted: false, omitted: false, signature: None };
                events.push(new(Payload::Reasoning(reasoning)));
            } else if let Some(call) = part.get("functionCall") {
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    self.calls.insert(id.to_owned());
                }
                events.extend(parts::tool(call, new, &[]));
            } else if let Some(response) = part.get("functionResponse") {
                events.push(self.tool_output(response, record.get("toolCallResult"), new));
            } else {
                let data = serde_json::json!({ "part": part });
                events.push(new(meta(MetaType::Unknown, &data)));
            }
        }
        flush(&mut content, role, new, &mut events);
        events
    }

    /// A tool's result as sent back to the model, with what `toolCallResult` says of it.
    fn tool_output(&self, response: &Value, result: Option<&Value>, new: &dyn Fn(Payload) -> Event) -> Event {
        let mut event = parts::sent_result(response, new);
        let Payload::ToolOutput(output) = &mut event.payload else { return event };
        let result = result.filter(|r| r.is_object());
        let field = |key: &str| result.and_then(|r| r.get(key));
        let status = field("status").or_else(|| field("executionStatus")).and_then(Value::as_str);
        if let Some(status) = status {
            output.is_error = Some(status != "success");
        } else if output.is_error.is_none() {
            output.is_error = Some(false);
        }
        let exit_code = field("resultDisplay").and_then(|d| d.get("exitCode")).and_then(Value::as_i64);
        let from_text =
            || (output.name.as_deref() == Some(SHELL_TOOL)).then(|| parts::shell_exit_code(&output.text)).flatten();
        output.exit_code = exit_code.or(output.exit_code).or_else(from_text);
        let id = output.call_id.as_deref();
        output.duration_ms =
            field("durationMs").and_then(Value::as_u64).or_else(|| id.and_then(|id| self.durations.get(id).copied()));
        if let Some(result) = result {
            output.result = Some(Json::from_value_of_raw(result));
        }
        event
    }

    /// The events of a `ui_telemetry` record.
    fn telemetry(&mut self, record: &Map<String, Value>, new: &dyn Fn(Payload) -> Event) -> Vec<Event> {
        let ui = record.get("systemPayload").and_then(|p| p.get("uiEvent")).filter(|u| u.is_object());
        let Some(ui) = ui else { return vec![new(meta(MetaType::Unknown, &Value::Object(record.clone())))] };
        let text = |key: &str| ui.get(key).and_then(Value::as_str);
        match text("event.name") {
            Some(API_RESPONSE) => {
                if let Some(uuid) = record.get("uuid").and_then(Value::as_str) {
                    self.counted.insert(uuid.to_owned());
                }
                let count = |key: &str| ui.get(key).and_then(Value::as_u64);
                let tokens = Tokens {
                    input: count("input_token_count"),
                    cached: count("cached_content_token_count"),
                    output: count("output_token_count"),
                    thoughts: count("thoughts_token_count"),
                    tool: count("tool_token_count"),
                    total: count("total_token_count"),
                };
                let model = text("model").map(str::to_owned);
                let mut usage = parts::usage(tokens, thoughts_in_output(tokens), model.clone());
                usage.response_id = text("response_id").map(str::to_owned);
                let mut event = new(Payload::Meta(Meta { meta_type: MetaType::Usage, data: None, usage: Some(usage) }));
                event.response_id = text("response_id").map(str::to_owned);
                event.context.model = model.or(event.context.model);
                if let Some(agent) = text("subagent_id") {
                    event.is_sidechain = true;
                    event.agent_id = Some(agent.to_owned());
                    event.parent_session_id = Some(event.session_id.clone());
                    // A subagent of the `agent` tool is `<subagent type>-<call id>`.
                    let call = text("subagent_name").and_then(|name| agent.strip_prefix(name)?.strip_prefix('-'));
                    event.parent_call_id = call.filter(|id| self.calls.contains(*id)).map(str::to_owned);
                }
                vec![event]
            }
            name => {
                if name == Some(TOOL_CALL)
                    && let (Some(id), Some(ms)) = (text("call_id"), ui.get("duration_ms").and_then(Value::as_u64))
                {
                    self.durations.insert(id.to_owned(), ms);
                }
                vec![new(meta(MetaType::System, ui))]
            }
        }
    }

    /// The usage event of an `assistant` record's `usageMetadata`, when no telemetry counted it.
    fn response_usage(&self, record: &Map<String, Value>, new: &dyn Fn(Payload) -> Event) -> Option<Event> {
        let metadata = record.get("usageMetadata").filter(|u| u.is_object())?;
        let count = |key: &str| metadata.get(key).and_then(Value::as_u64);
        let tokens = Tokens {
            input: count("promptTokenCount"),
            cached: count("cachedContentTokenCount"),
            output: count("candidatesTokenCount"),
            thoughts: count("thoughtsTokenCount"),
            tool: count("toolUsePromptTokenCount"),
            total: count("totalTokenCount"),
        };
        let parent = record.get("parentUuid").and_then(Value::as_str);
        let meta_type = if parent.is_some_and(|p| self.counted.contains(p)) {
            return None;
        } else if self.file_agent.is_some() {
            // Counted by the main session file's telemetry.
            MetaType::UsageSnapshot
        } else {
            MetaType::Usage
        };
        let model = record.get("model").and_then(Value::as_str).map(str::to_owned);
        let usage = parts::usage(tokens, thoughts_in_output(tokens), model);
        Some(new(Payload::Meta(Meta { meta_type, data: None, usage: Some(usage) })))
    }
}

/// Whether a response's output count includes its thoughts: unless the total counts them
/// beside it.
fn thoughts_in_output(tokens: Tokens) -> bool {
    match (tokens.input, tokens.output, tokens.thoughts, tokens.total) {
        (Some(input), Some(output), Some(thoughts), Some(total)) if thoughts > 0 => {
            let tool = tokens.tool.unwrap_or(0);
            total != input.saturating_add(output).saturating_add(thoughts).saturating_add(tool)
        }
        _ => true,
    }
}

/// Emits the text and media parts gathered so far as one message.
fn flush(content: &mut Vec<Value>, role: Role, new: &dyn Fn(Payload) -> Event, events: &mut Vec<Event>) {
    if content.is_empty() {
        return;
    }
    let content = Value::Array(std::mem::take(content));
    let text = parts::content_text(Some(&content));
    let parts = parts::parts_of(Some(&content));
    if text.trim().is_empty() && parts.iter().all(|p| p.text().is_some()) {
        return;
    }
    events.push(new(Payload::Message(Message { role, text, parts, phase: None, prompt_history: None })));
}

fn meta(meta_type: MetaType, data: &Value) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(Json::from_value_of_raw(data)), usage: None })
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let (line, record) = parsed;
        let head = self.head(&record, &line);
        let new = |payload: Payload| {
            let mut event = head.clone();
            event.payload = payload;
            event
        };
        let text = |key: &str| record.get(key).and_then(Value::as_str);
        let payload = |key: &str| record.get("systemPayload").and_then(|p| p.get(key).map(|_| p));
        let mut events = match (text("type"), text("subtype")) {
            (Some("user"), None) => self.parts(&record, Role::User, &new),
            (Some("user"), Some("notification")) => {
                let parts = record.get("message").and_then(|m| m.get("parts"));
                let mut data = serde_json::json!({ "text": parts::content_text(parts) });
                if let Some(shown) = record.get("systemPayload").and_then(|p| p.get("displayText")) {
                    data["display_text"] = shown.clone();
                }
                vec![new(meta(MetaType::TaskNotification, &data))]
            }
            (Some("assistant"), None) => {
                let mut events = self.parts(&record, Role::Assistant, &new);
                events.extend(self.response_usage(&record, &new));
                events
            }
            (Some("tool_result"), None) => self.parts(&record, Role::User, &new),
            (Some("system"), Some("ui_telemetry")) => self.telemetry(&record, &new),
            (Some("system"), Some("attribution_snapshot")) if payload("snapshot").is_some() => {
                vec![new(meta(MetaType::FileSnapshot, payload("snapshot").unwrap_or(&Value::Null)))]
            }
            (Some("system"), Some("chat_compression")) if payload("info").is_some() => {
                vec![new(meta(MetaType::Compaction, payload("info").unwrap_or(&Value::Null)))]
            }
            _ => vec![new(meta(MetaType::Unknown, &Value::Object(record.clone())))],
        };
        if events.is_empty() {
            // A response or prompt without content: the record itself.
            events.push(new(meta(MetaType::System, &Value::Object(record.clone()))));
        }
        for (slot, event) in events.into_iter().enumerate() {
            out.emit(event, slot as u32)?;
        }
        Ok(())
    }
}
