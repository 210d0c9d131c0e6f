//! The task folders of Cline's VS Code extension,
//! `…/globalStorage/saoudrizwan.claude-dev/tasks/<task id>/`, shape taken from a third-party
//! export (GitHub gmfstu/Online-Card-Architecture @2e6753c4,
//! `exported_conversation_1769053680585/`, extension of January 2026):
//!
//! ```text
//! api_conversation_history.json  [{role, content: [blocks], modelInfo?, metrics?}]   the model's messages
//! ui_messages.json               [{ts, type: say|ask, say|ask, text, modelInfo, …}]   what the panel showed
//! task_metadata.json             files in context (not read)
//! ```
//!
//! The two arrays tell one task twice. agentlog takes the conversation from the history and
//! the **usage** from the panel, each file an input of the task's session (the folder's name):
//!
//! * the history gives messages, reasoning, tool calls and their outputs. The first prompt is
//!   wrapped in `<task>…</task>`, later ones in `<feedback>`, `<user_message>` or `<answer>`;
//!   other user text (`<environment_details>`, reminders) is injected. A tool's output comes
//!   back as user text `[<tool> for '<arg>'] Result:` (or a `tool_result` block), paired with
//!   the previous assistant message's `tool_use` blocks in order. Its per-message `metrics
//!   {tokens {prompt, completion, cached}}` lump cache reads and writes together: a
//!   `usage_snapshot`, never counted;
//! * the panel's `say: api_req_started` records are the requests: their `text` is JSON
//!   `{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost}`, one usage event each
//!   (`tokensIn` is fresh input, Anthropic's `input_tokens`; a count it lacks, or all of them
//!   when `usageMissing` is set, stays null). Every other record repeats the conversation or
//!   is the panel's own (checkpoints, progress): a meta event, `unknown` for a kind not listed.

use std::io;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::map::{At, image};
use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, USAGE_SLOT,
    Usage,
};
use crate::read::Emitter;

/// The panel's record kinds that repeat the conversation or report progress.
const SAY_KINDS: &[&str] = &[
    "task",
    "text",
    "reasoning",
    "tool",
    "command",
    "command_output",
    "completion_result",
    "user_feedback",
    "user_feedback_diff",
    "api_req_retried",
    "api_req_finished",
    "error",
    "error_retry",
    "diff_error",
    "checkpoint_created",
    "task_progress",
    "info",
    "mcp_server_request_started",
    "mcp_server_response",
    "use_mcp_server",
    "browser_action",
    "browser_action_launch",
    "browser_action_result",
    "shell_integration_warning",
    "clineignore_error",
    "deleted_api_reqs",
    "hook",
    "hook_output",
    "load_mcp_documentation",
];
const ASK_KINDS: &[&str] = &[
    "followup",
    "plan_mode_respond",
    "command",
    "command_output",
    "completion_result",
    "tool",
    "api_req_failed",
    "resume_task",
    "resume_completed_task",
    "mistake_limit_reached",
    "auto_approval_max_req_reached",
    "browser_action_launch",
    "use_mcp_server",
    "new_task",
    "condense",
    "report_bug",
];

/// Which file of a task folder `name` is, if one.
pub(super) enum Kind {
    History,
    Panel,
}

/// The kind of a task folder file, by its name.
pub(super) fn kind(name: &str) -> Option<Kind> {
    let file = crate::read::file_name(name);
    match file {
        "api_conversation_history.json" => Some(Kind::History),
        "ui_messages.json" => Some(Kind::Panel),
        _ => None,
    }
}

/// The task's id: the folder's name.
fn task_id(name: &str) -> String {
    let dir = name.rsplit_once(['/', '\\']).map_or("", |(dir, _)| dir);
    let id = crate::read::file_name(dir);
    if id.is_empty() { "task".to_owned() } else { id.to_owned() }
}

/// Maps a task folder file; `false` when it is not one JSON array.
///
/// # Errors
/// When `out` fails.
pub(super) fn document(kind: Kind, name: &str, text: &str, out: &mut Emitter<'_>) -> io::Result<bool> {
    let Ok(elements) = serde_json::from_str::<Vec<&RawValue>>(text) else { return Ok(false) };
    let session = task_id(name);
    let mut mapper = Mapper { session, context: Context::default(), pending: Vec::new() };
    for (index, element) in elements.into_iter().enumerate() {
        let at = At::of(text, element.get());
        let value: Value = serde_json::from_str(element.get()).unwrap_or(Value::Null);
        let key = format!("{}[{index}]", if matches!(kind, Kind::History) { "history" } else { "ui" });
        let events = match (&kind, value) {
            (Kind::History, Value::Object(message)) => mapper.history(&message, at),
            (Kind::Panel, Value::Object(record)) => vec![(0, mapper.panel(record, at))],
            (_, other) => vec![(0, mapper.meta(at, "element", MetaType::Unknown, other))],
        };
        for (slot, event) in events {
            out.emit_record(event, &key, slot)?;
        }
    }
    Ok(true)
}

struct Mapper {
    session: String,
    context: Context,
    /// The tool calls of the last assistant message whose outputs have not come back yet.
    pending: Vec<(String, String)>,
}

impl Mapper {
    fn event(&self, at: At, record_type: &str, payload: Payload) -> Event {
        let mut event = Event::new(self.session.clone(), payload);
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

    fn message(&self, at: At, record_type: &str, role: Role, text: &str) -> Event {
        let parts = vec![Part::Text { text: text.to_owned() }];
        self.event(at, record_type, Payload::Message(Message::from_parts(role, parts)))
    }

    /// One message of `api_conversation_history.json`.
    fn history(&mut self, message: &Map<String, Value>, at: At) -> Vec<(u32, Event)> {
        let role = message.get("role").and_then(Value::as_str).unwrap_or_default().to_owned();
        if let Some(model) = message.get("modelInfo").and_then(|m| m.get("modelId")).and_then(Value::as_str) {
            self.context.model = Some(model.to_owned());
        }
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(Value::String(text)) => vec![serde_json::json!({"type": "text", "text": text})],
            _ => Vec::new(),
        };
        let mut events = Vec::new();
        if role == "assistant" {
            self.pending.clear();
        }
        for (i, block) in blocks.iter().enumerate() {
            let kind = block.get("type").and_then(Value::as_str).unwrap_or("block");
            let record_type = format!("{role}/{kind}");
            let text = block.get("text").and_then(Value::as_str).unwrap_or_default();
            let event = match (role.as_str(), kind) {
                ("user", "text") => self.user_text(at, &record_type, text),
                ("user", "tool_result") => {
                    let call = block.get("tool_use_id").and_then(Value::as_str).map(str::to_owned);
                    let name = call
                        .as_deref()
                        .and_then(|c| self.pending.iter().find(|(id, _)| id == c))
                        .map(|(_, n)| n.clone());
                    let content = block.get("content");
                    let text = match content {
                        Some(Value::String(t)) => t.clone(),
                        Some(Value::Array(items)) => items
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                    let is_error = block.get("is_error").and_then(Value::as_bool);
                    self.output(at, &record_type, call, name, text, is_error)
                }
                ("user" | "assistant", "image") => {
                    let role = if role == "user" { Role::User } else { Role::Assistant };
                    self.event(at, &record_type, Payload::Message(Message::from_parts(role, vec![image(block)])))
                }
                ("assistant", "text") => self.message(at, &record_type, Role::Assistant, text),
                ("assistant", "thinking" | "redacted_thinking") => self.event(
                    at,
                    &record_type,
                    Payload::Reasoning(Reasoning {
                        text: block.get("thinking").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        raw_text: None,
                        encrypted: kind == "redacted_thinking",
                        omitted: false,
                        signature: block.get("signature").and_then(Value::as_str).map(str::to_owned),
                    }),
                ),
                ("assistant", "tool_use") => {
                    let call_id = block.get("id").and_then(Value::as_str).map(str::to_owned);
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
                    if let Some(id) = &call_id {
                        self.pending.push((id.clone(), name.clone()));
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
                _ => self.meta(at, &record_type, MetaType::Unknown, block.clone()),
            };
            events.push((i as u32, event));
        }
        if let Some(metrics) = message.get("metrics") {
            let data = serde_json::json!({ "metrics": metrics, "modelInfo": message.get("modelInfo") });
            events.push((USAGE_SLOT, self.meta(at, &format!("{role}/metrics"), MetaType::UsageSnapshot, data)));
        }
        if events.is_empty() {
            let kind = if role.is_empty() { "message" } else { role.as_str() };
            let meta_type = if role == "user" || role == "assistant" { MetaType::System } else { MetaType::Unknown };
            events.push((0, self.meta(at, kind, meta_type, Value::Object(message.clone()))));
        }
        events
    }

    /// A user text block: a prompt, a tool's output, or text the extension added.
    fn user_text(&mut self, at: At, record_type: &str, text: &str) -> Event {
        let trimmed = text.trim();
        for tag in ["task", "feedback", "user_message", "answer"] {
            let inner = trimmed
                .strip_prefix(&format!("<{tag}>"))
                .and_then(|rest| rest.strip_suffix(&format!("</{tag}>")))
                .map(str::trim);
            if let Some(inner) = inner {
                return self.message(at, record_type, Role::User, inner);
            }
        }
        if trimmed.starts_with('[')
            && let Some((head, output)) = trimmed.split_once("] Result:")
            && !self.pending.is_empty()
        {
            let (call, name) = self.pending.remove(0);
            let failed = output.trim_start().starts_with("The tool execution failed");
            let mut event = self.output(at, record_type, Some(call), Some(name), output.trim_start().to_owned(), None);
            if let Payload::ToolOutput(o) = &mut event.payload {
                o.is_error = failed.then_some(true);
            }
            event.extra = Some(Json::from_value_of_raw(&serde_json::json!({ "header": format!("{head}]") })));
            return event;
        }
        let mut event = self.message(at, record_type, Role::User, text);
        event.injected = true;
        event
    }

    fn output(
        &self,
        at: At,
        record_type: &str,
        call_id: Option<String>,
        name: Option<String>,
        text: String,
        is_error: Option<bool>,
    ) -> Event {
        let payload = Payload::ToolOutput(ToolOutput {
            call_id,
            name,
            tool_kind: None,
            text,
            parts: Vec::new(),
            is_error,
            exit_code: None,
            failed: None,
            duration_ms: None,
            result: None,
        });
        self.event(at, record_type, payload)
    }

    /// One record of `ui_messages.json`.
    fn panel(&mut self, record: Map<String, Value>, at: At) -> Event {
        let time = record.get("ts").and_then(Value::as_i64).and_then(chrono::DateTime::from_timestamp_millis);
        if let Some(model) = record.get("modelInfo").and_then(|m| m.get("modelId")).and_then(Value::as_str) {
            self.context.model = Some(model.to_owned());
        }
        let kind_of = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
        let (side, kind) = match (kind_of("type"), kind_of("say"), kind_of("ask")) {
            (Some(t), Some(say), _) if t == "say" => (t, say),
            (Some(t), _, Some(ask)) if t == "ask" => (t, ask),
            (t, _, _) => (t.unwrap_or_else(|| "record".to_owned()), String::new()),
        };
        let side = side.as_str();
        let record_type = format!("{side}/{kind}");
        let mut event = if side == "say" && kind == "api_req_started" {
            let request: Value = record
                .get("text")
                .and_then(Value::as_str)
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_default();
            let usage = request_usage(&request, self.context.model.clone());
            let mut data = record.clone();
            data.insert("text".into(), request);
            let meta =
                Meta { meta_type: MetaType::Usage, data: Some(Json::from_value_of_raw(&Value::Object(data))), usage };
            self.event(at, &record_type, Payload::Meta(meta))
        } else {
            let known = match side {
                "say" => SAY_KINDS.contains(&kind.as_str()),
                "ask" => ASK_KINDS.contains(&kind.as_str()),
                _ => false,
            };
            let meta_type = match kind.as_str() {
                _ if !known => MetaType::Unknown,
                "checkpoint_created" => MetaType::FileSnapshot,
                "task_progress" => MetaType::Progress,
                _ => MetaType::System,
            };
            self.meta(at, &record_type, meta_type, Value::Object(record))
        };
        event.timestamp = time;
        event
    }
}

/// The usage of an `api_req_started` record's request: null counts where it has none.
fn request_usage(request: &Value, model: Option<String>) -> Option<Usage> {
    let missing = request.get("usageMissing").and_then(Value::as_bool).unwrap_or(false);
    let count = |key: &str| if missing { None } else { request.get(key).and_then(Value::as_u64) };
    let (input, output, read, write) =
        (count("tokensIn"), count("tokensOut"), count("cacheReads"), count("cacheWrites"));
    let total = [input, read, write, output].into_iter().flatten().reduce(u64::saturating_add);
    Some(Usage {
        input_tokens: input,
        cache_read_tokens: read,
        cache_write_tokens: write,
        output_tokens: output,
        total_tokens: total,
        model,
        ..Usage::default()
    })
}
