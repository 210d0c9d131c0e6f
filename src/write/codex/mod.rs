//! Codex rollouts (`--to codex`): any agent's session as the JSON Lines file Codex resumes with
//! `codex resume <id>`, at the place it keeps it
//! (`YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl` under `~/.codex/sessions`).
//!
//! A `session_meta` line, then one `response_item` line per message, reasoning item, tool call
//! and tool output: the items Codex sends the model again when it resumes; each typed prompt is
//! also a `user_message` event, by which `codex resume --last` finds the session. No token counts are
//! written (the source's usage stays the source's), and `session_meta` names the session the
//! rollout was made from in `agentlog_source`.
//!
//! From another agent: prompts, answers, images, and shell calls as Codex's own
//! `exec_command`; writes and edits as `apply_patch` patches; other calls and their outputs as
//! text. Reasoning of another provider cannot be sent to OpenAI's models: it is kept as
//! `agent_reasoning` events, which Codex shows but does not send. From Codex itself, every item
//! is rebuilt as it was, reasoning with its encrypted content, and its own context lines
//! (`turn_context`, `world_state`, developer instructions) copied.

mod index;

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::model::{Agent, Event, MetaType, Part, Payload, Role, ToolCall, ToolOutput};
use crate::write::native::tools::{Action, action, call_as_text, output_as_text};
use crate::write::native::{self, Carried, Format, NativeOptions, Rendered, Session};
use crate::write::{EventSink, Options, Target, WriteError, Writer};

pub use index::{Registered, register};

/// The Codex writer.
pub struct Codex;

/// The Codex version written on rollouts of other agents' sessions: the one they were checked
/// with.
const VERSION: &str = "0.169.0";

impl Writer for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn description(&self) -> &'static str {
        "Codex rollouts that `codex resume` continues, from any agent; -o DIR/ for one per session"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        native::open(&Codex, target, options)
    }
}

impl Format for Codex {
    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn name(&self) -> &'static str {
        "codex"
    }

    fn label(&self) -> &'static str {
        "Codex"
    }

    fn store(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<std::path::PathBuf> {
        Some(native::agent_home(env, "CODEX_HOME", ".codex")?.join("sessions"))
    }

    fn resume_command(&self, id: &str) -> String {
        format!("codex resume {id}")
    }

    fn render(&self, session: &Session, options: &NativeOptions) -> Result<Option<Rendered>, WriteError> {
        let id = session.new_id(Agent::Codex).to_string();
        let started = session.started_at().unwrap_or_default();
        let mut rollout = Rollout {
            answered: session.answered_calls(Agent::Codex),
            same: session.agent == Agent::Codex,
            time: crate::model::time::format(&started),
            calls: HashMap::new(),
            bytes: Vec::new(),
            counts: Carried::default(),
        };
        rollout.session_meta(session, options, &id);
        for e in session.conversation(Agent::Codex) {
            rollout.event(e, session.agent);
        }
        let c = &rollout.counts;
        if c.prompts + c.answers + c.tool_calls + c.tool_calls_as_text == 0 {
            return Ok(None);
        }
        let path = std::path::PathBuf::from(started.format("%Y/%m/%d").to_string())
            .join(format!("rollout-{}-{id}.jsonl", started.format("%Y-%m-%dT%H-%M-%S")));
        Ok(Some(Rendered { path, id, bytes: rollout.bytes, counts: rollout.counts }))
    }
}

/// How a call of the source was written.
enum Written {
    /// As a call item; its output is a `function_call_output` or `custom_tool_call_output`.
    Call(&'static str),
    /// As text.
    Text,
}

/// The lines of one rollout being written.
struct Rollout {
    same: bool,
    time: String,
    calls: HashMap<String, Written>,
    /// The calls whose output the session has: another agent's call without one is text, so
    /// that Codex does not answer it with an output of its own making (`aborted`).
    answered: std::collections::HashSet<String>,
    bytes: Vec<u8>,
    counts: Carried,
}

impl Rollout {
    /// The first line: the session's id, working directory and origin; a Codex session's own
    /// header, with the new id.
    fn session_meta(&mut self, session: &Session, options: &NativeOptions, id: &str) {
        let source = json!({ "agent": session.agent.as_str(), "session": session.id });
        let own = session.events.iter().find_map(|e| match &e.payload {
            Payload::Meta(m) if self.same && m.meta_type == MetaType::SessionStart => {
                m.data.as_ref().map(|d| d.to_value())
            }
            _ => None,
        });
        let mut payload = match own {
            Some(Value::Object(mut own)) => {
                // The provider is the resuming Codex's (it refuses to change it on resume), and the
                // paginated history kept beside the source's rollout is not carried over.
                for key in ["model_provider", "history_mode", "context_window"] {
                    own.remove(key);
                }
                own
            }
            _ => {
                let mut payload = Map::new();
                payload.insert("originator".into(), "agentlog".into());
                payload.insert("cli_version".into(), VERSION.into());
                payload.insert("source".into(), "cli".into());
                payload.insert("thread_source".into(), "user".into());
                payload
            }
        };
        payload.insert("id".into(), id.into());
        if payload.contains_key("session_id") || !self.same {
            payload.insert("session_id".into(), id.into());
        }
        payload.insert("timestamp".into(), self.time.clone().into());
        if let Some(cwd) = session.cwd(options) {
            payload.insert("cwd".into(), cwd.into());
        }
        payload.insert("agentlog_source".into(), source);
        self.line("session_meta", Value::Object(payload));
    }

    fn event(&mut self, e: &Event, from: Agent) {
        if let Some(t) = e.timestamp {
            self.time = crate::model::time::format(&t);
        }
        match &e.payload {
            Payload::Message(m) => {
                let assistant = m.role == Role::Assistant;
                match m.role {
                    Role::Assistant => self.counts.answers += 1,
                    Role::User if !e.injected => self.counts.prompts += 1,
                    _ => {}
                }
                self.counts.images += m.parts.iter().filter(|p| matches!(p, Part::Image { .. })).count() as u64;
                let content: Vec<Value> = match m.parts.as_slice() {
                    [] => vec![text_item(assistant, &m.text)],
                    parts => parts.iter().filter_map(|p| content_item(assistant, p)).collect(),
                };
                if content.is_empty() {
                    // Only parts the source did not record (a file named but not kept).
                    return;
                }
                let mut item = json!({ "type": "message", "role": m.role.as_str(), "content": content });
                if let Some(phase) = &m.phase {
                    item["phase"] = phase.clone().into();
                }
                self.item(e, item);
                if m.role == Role::User && !e.injected {
                    // What Codex records of a typed prompt besides the item: `resume --last` and
                    // the session's title go by it.
                    self.line("event_msg", json!({ "type": "user_message", "message": m.text }));
                }
            }
            Payload::Reasoning(r) => {
                if self.same && (r.encrypted || r.raw_text.is_none()) {
                    self.counts.reasoning += 1;
                    let summary: Vec<Value> = if r.text.is_empty() {
                        Vec::new()
                    } else {
                        vec![json!({ "type": "summary_text", "text": r.text })]
                    };
                    let mut item = json!({ "type": "reasoning", "summary": summary });
                    if let Some(raw) = &r.raw_text {
                        item["content"] = json!([{ "type": "reasoning_text", "text": raw }]);
                    }
                    self.item(e, item);
                } else {
                    // Shown by Codex, never sent to the model.
                    self.counts.reasoning_left_out += 1;
                    let text = if r.text.is_empty() { r.raw_text.clone().unwrap_or_default() } else { r.text.clone() };
                    if !text.is_empty() {
                        self.line("event_msg", json!({ "type": "agent_reasoning", "text": text }));
                    }
                }
            }
            Payload::ToolCall(call) => self.call(e, call, from),
            Payload::ToolOutput(output) => self.output(e, output),
            Payload::Meta(meta) => {
                let record = e.source.record_type.as_deref();
                if self.same
                    && matches!(record, Some("turn_context" | "world_state"))
                    && let Some(data) = &meta.data
                {
                    self.line(record.unwrap_or_default(), data.to_value());
                }
            }
        }
    }

    fn call(&mut self, e: &Event, call: &ToolCall, from: Agent) {
        let call_id = call.call_id.clone().unwrap_or_else(|| format!("call_{}", native::short_hash(&e.id)));
        let item = if self.same {
            let kind = e.source.record_type.as_deref().and_then(|r| r.rsplit('/').next()).unwrap_or("function_call");
            match kind {
                "custom_tool_call" => json!({ "type": "custom_tool_call", "name": call.name, "call_id": call_id,
                    "input": call.input_text.clone().unwrap_or_else(|| input_string(call)) }),
                "local_shell_call" => json!({ "type": "local_shell_call", "call_id": call_id,
                    "action": call.input.as_ref().map(|i| i.to_value()) }),
                _ => json!({ "type": "function_call", "name": call.name, "call_id": call_id,
                    "arguments": call.input_text.clone().unwrap_or_else(|| input_string(call)) }),
            }
        } else {
            let answered = call.call_id.as_ref().is_some_and(|id| self.answered.contains(id));
            match action(call).filter(|_| answered).and_then(codex_tool) {
                Some(item) => {
                    let mut item = item;
                    item["call_id"] = call_id.clone().into();
                    item
                }
                None => {
                    self.counts.tool_calls_as_text += 1;
                    if let Some(id) = &call.call_id {
                        self.calls.insert(id.clone(), Written::Text);
                    }
                    let message = json!({ "type": "message", "role": "assistant",
                        "content": [text_item(true, &call_as_text(from, call))] });
                    self.item(e, message);
                    return;
                }
            }
        };
        self.counts.tool_calls += 1;
        let output_kind = match item["type"].as_str() {
            Some("custom_tool_call") => "custom_tool_call_output",
            _ => "function_call_output",
        };
        self.calls.insert(call.call_id.clone().unwrap_or(call_id), Written::Call(output_kind));
        self.item(e, item);
    }

    fn output(&mut self, e: &Event, output: &ToolOutput) {
        let written = output.call_id.as_ref().and_then(|id| self.calls.get(id).map(|w| (id, w)));
        let Some((call_id, Written::Call(kind))) = written else {
            let message =
                json!({ "type": "message", "role": "user", "content": [text_item(false, &output_as_text(output))] });
            self.item(e, message);
            return;
        };
        let item = json!({ "type": kind, "call_id": call_id, "output": output.text });
        self.item(e, item);
    }

    /// A `response_item` line; an item of a Codex session gets back its id, status and
    /// encrypted content, which the events keep in `extra`.
    fn item(&mut self, e: &Event, mut item: Value) {
        if let Some(Value::Object(mut extra)) = e.extra.as_ref().filter(|_| self.same).map(|x| x.to_value()) {
            for key in ["id", "status", "encrypted_content"] {
                if let Some(value) = extra.remove(key) {
                    item[key] = value;
                }
            }
        }
        self.line("response_item", item);
    }

    fn line(&mut self, kind: &str, payload: Value) {
        let line = json!({ "timestamp": self.time, "type": kind, "payload": payload });
        serde_json::to_writer(&mut self.bytes, &line).expect("a JSON value serialises");
        self.bytes.push(b'\n');
    }
}

/// A call's input as the JSON text of its arguments.
fn input_string(call: &ToolCall) -> String {
    call.input.as_ref().map(|i| i.to_value().to_string()).unwrap_or_else(|| "{}".to_owned())
}

/// A text content item: `output_text` for the model's, `input_text` for the rest.
fn text_item(assistant: bool, text: &str) -> Value {
    if assistant {
        json!({ "type": "output_text", "text": text, "annotations": [] })
    } else {
        json!({ "type": "input_text", "text": text })
    }
}

/// A content item of the Responses API for a part; `None` for an image or document the source
/// did not record.
fn content_item(assistant: bool, part: &Part) -> Option<Value> {
    Some(match part {
        Part::Text { text } => text_item(assistant, text),
        Part::Image { media_type, data, url } => {
            let url = match (data, url) {
                (Some(data), _) => format!("data:{};base64,{data}", media_type.as_deref().unwrap_or("image/png")),
                (None, Some(url)) => url.clone(),
                (None, None) => return None,
            };
            json!({ "type": "input_image", "image_url": url })
        }
        Part::Document { media_type, data, .. } => json!({ "type": "input_file",
            "file_data": format!("data:{};base64,{}", media_type.as_deref().unwrap_or("application/pdf"), data.as_ref()?) }),
    })
}

/// Codex's own tool for what a call did: a shell command as `exec_command`, a write or an
/// edit as an `apply_patch` patch; `None` for reads and searches, which Codex does with shell
/// commands of its choosing.
fn codex_tool(action: Action) -> Option<Value> {
    match action {
        Action::Shell { command } => Some(json!({ "type": "function_call", "name": "exec_command",
            "arguments": json!({ "cmd": command }).to_string() })),
        Action::Write { path, content } => {
            let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
            for line in content.lines() {
                patch.push_str(&format!("+{line}\n"));
            }
            patch.push_str("*** End Patch\n");
            Some(json!({ "type": "custom_tool_call", "name": "apply_patch", "input": patch }))
        }
        Action::Edit { path, old, new } => {
            let mut patch = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
            for line in old.lines() {
                patch.push_str(&format!("-{line}\n"));
            }
            for line in new.lines() {
                patch.push_str(&format!("+{line}\n"));
            }
            patch.push_str("*** End Patch\n");
            Some(json!({ "type": "custom_tool_call", "name": "apply_patch", "input": patch }))
        }
        Action::Read { .. } | Action::Grep { .. } | Action::Glob { .. } => None,
    }
}
