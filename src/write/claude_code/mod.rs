//! Claude Code session files (`--to claude-code`): any agent's session as the JSON Lines file
//! Claude Code resumes with `claude --resume <id>`, in its project folder
//! (`<project key>/<id>.jsonl`, the key being the working directory with every character but
//! ASCII letters and digits made `-`).
//!
//! One line per message part, as Claude Code writes them: a user line per prompt and per tool
//! result, an assistant line per text, thinking or tool-use block, the lines of one response
//! sharing its `message.id` and chained by `parentUuid`. Assistant lines carry the API envelope
//! Claude Code needs to load them (`id`, `type`, `model`, `stop_reason`, `usage`), with zero
//! token counts: the source's usage stays the source's. Every line names the session it was
//! made from in `agentlogSource`, and agentlog's Claude Code reader reads those lines as copied,
//! so that reading the source and the copy counts each response once.
//!
//! From another agent: prompts, answers, images, and tool calls of the shell, read, write, edit
//! and search families as Claude Code's own `Bash`, `Read`, `Write`, `Edit`, `Grep` and `Glob`;
//! other calls and their outputs as text. Reasoning is left out: a thinking block needs
//! Anthropic's signature, which only Claude Code's own sessions have. From Claude Code itself,
//! every line is rebuilt as it was (its fields kept in the events' `extra`), thinking with its
//! signature, and its own records (attachments, summaries) copied.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::model::{Agent, Event, MetaType, Part, Payload, Role, ToolCall, ToolOutput};
use crate::write::native::tools::{Action, action, call_as_text, output_as_text};
use crate::write::native::{self, Carried, Format, NativeOptions, Rendered, Session};
use crate::write::{EventSink, Options, Target, WriteError, Writer};

/// The Claude Code writer.
pub struct ClaudeCode;

/// The Claude Code version written on lines of other agents' sessions: the one the files were
/// checked with.
const VERSION: &str = "2.1.328";

impl Writer for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["claude"]
    }

    fn description(&self) -> &'static str {
        "Claude Code session files that `claude --resume` continues, from any agent; -o DIR/ for one per session"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        native::open(&ClaudeCode, target, options)
    }
}

impl Format for ClaudeCode {
    fn agent(&self) -> Agent {
        Agent::ClaudeCode
    }

    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn label(&self) -> &'static str {
        "Claude Code"
    }

    fn store(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<std::path::PathBuf> {
        Some(native::agent_home(env, "CLAUDE_CONFIG_DIR", ".claude")?.join("projects"))
    }

    fn resume_command(&self, id: &str) -> String {
        format!("claude --resume {id}")
    }

    fn render(&self, session: &Session, options: &NativeOptions) -> Result<Option<Rendered>, WriteError> {
        let id = session.new_id(Agent::ClaudeCode).to_string();
        let cwd = session.cwd(options).unwrap_or("/").to_owned();
        let same = session.agent == Agent::ClaudeCode;
        let mut lines = Lines {
            same,
            source: json!({ "agent": session.agent.as_str(), "session": session.id }),
            common: common(&id, &cwd, session, same),
            id: id.clone(),
            model: session.model().unwrap_or("unknown").to_owned(),
            parent: None,
            last_record: None,
            uuids: HashMap::new(),
            calls: HashMap::new(),
            answered: session.answered_calls(Agent::ClaudeCode),
            response: None,
            time: session
                .started_at()
                .as_ref()
                .map(crate::model::time::format)
                .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_owned()),
            bytes: Vec::new(),
            counts: Carried::default(),
        };
        for e in session.conversation(Agent::ClaudeCode) {
            lines.event(e, session.agent)?;
        }
        let c = &lines.counts;
        if c.prompts + c.answers + c.tool_calls + c.tool_calls_as_text == 0 {
            return Ok(None);
        }
        let path = std::path::Path::new(&project_key(&cwd)).join(format!("{id}.jsonl"));
        Ok(Some(Rendered { path, id, bytes: lines.bytes, counts: lines.counts }))
    }
}

/// Claude Code's folder name for a working directory: every character but ASCII letters and
/// digits becomes `-`.
pub fn project_key(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// The fields every line of the session has.
fn common(id: &str, cwd: &str, session: &Session, same: bool) -> Map<String, Value> {
    let mut line = Map::new();
    line.insert("isSidechain".into(), false.into());
    line.insert("userType".into(), "external".into());
    line.insert("cwd".into(), cwd.into());
    line.insert("sessionId".into(), id.into());
    let version = if same { session.agent_version().unwrap_or(VERSION) } else { VERSION };
    line.insert("version".into(), version.into());
    if let Some(branch) = session.git_branch() {
        line.insert("gitBranch".into(), branch.into());
    }
    line
}

/// How a call of the source was written.
enum Written {
    /// As a `tool_use` block with this id.
    Tool(String),
    /// As text.
    Text,
}

/// The lines of one session being written.
struct Lines {
    same: bool,
    source: Value,
    common: Map<String, Value>,
    id: String,
    model: String,
    /// The uuid of the line written last, and the source line it came from.
    parent: Option<String>,
    last_record: Option<String>,
    /// The new uuid of each source line (by its record id), for links between lines.
    uuids: HashMap<String, String>,
    calls: HashMap<String, Written>,
    /// The calls whose output the session has: Claude Code drops an assistant message whose
    /// tool use is not answered by the next line, so another agent's unanswered call is text.
    answered: std::collections::HashSet<String>,
    /// The message id of the assistant lines being written, and the source response it is for.
    response: Option<(Option<String>, String)>,
    /// The time of the last line: lines of events without one take it.
    time: String,
    bytes: Vec<u8>,
    counts: Carried,
}

impl Lines {
    fn event(&mut self, e: &Event, from: Agent) -> Result<(), WriteError> {
        if let Some(t) = e.timestamp {
            self.time = crate::model::time::format(&t);
        }
        match &e.payload {
            Payload::Message(m) if m.role == Role::Assistant => {
                self.counts.answers += 1;
                let text = json!({ "type": "text", "text": m.text });
                self.assistant(e, text, "end_turn");
            }
            Payload::Message(m) => {
                if m.role == Role::User && !e.injected {
                    self.counts.prompts += 1;
                }
                self.counts.images += m.parts.iter().filter(|p| matches!(p, Part::Image { .. })).count() as u64;
                let content = match m.parts.as_slice() {
                    [Part::Text { text }] => Value::String(text.clone()),
                    [] => Value::String(m.text.clone()),
                    parts => Value::Array(parts.iter().filter_map(block).collect()),
                };
                if content.as_array().is_some_and(Vec::is_empty) {
                    // Only parts the source did not record (a file named but not kept).
                    return Ok(());
                }
                self.user(e, content, None);
            }
            Payload::Reasoning(r) => match (&r.signature, self.same) {
                (Some(signature), true) => {
                    self.counts.reasoning += 1;
                    let thinking = json!({ "type": "thinking", "thinking": r.text, "signature": signature });
                    self.assistant(e, thinking, "end_turn");
                }
                _ => self.counts.reasoning_left_out += 1,
            },
            Payload::ToolCall(call) => self.call(e, call, from),
            Payload::ToolOutput(output) => self.output(e, output),
            Payload::Meta(meta) if self.same && meta.meta_type != MetaType::Usage => self.record(e),
            Payload::Meta(_) => {}
        }
        Ok(())
    }

    fn call(&mut self, e: &Event, call: &ToolCall, from: Agent) {
        let (name, input) = if self.same {
            (call.name.clone(), call.input.as_ref().map_or_else(|| json!({}), |i| i.to_value()))
        } else {
            let answered = call.call_id.as_ref().is_some_and(|id| self.answered.contains(id));
            match action(call).filter(|_| answered).map(claude_tool) {
                Some(tool) => tool,
                None => {
                    self.counts.tool_calls_as_text += 1;
                    if let Some(id) = &call.call_id {
                        self.calls.insert(id.clone(), Written::Text);
                    }
                    let text = json!({ "type": "text", "text": call_as_text(from, call) });
                    self.assistant(e, text, "end_turn");
                    return;
                }
            }
        };
        self.counts.tool_calls += 1;
        let id = match &call.call_id {
            Some(id) if self.same || valid_tool_id(id) => id.clone(),
            _ => format!("toolu_{}", native::short_hash(&e.id)),
        };
        if let Some(source) = &call.call_id {
            self.calls.insert(source.clone(), Written::Tool(id.clone()));
        }
        self.assistant(e, json!({ "type": "tool_use", "id": id, "name": name, "input": input }), "tool_use");
    }

    fn output(&mut self, e: &Event, output: &ToolOutput) {
        let written = output.call_id.as_ref().and_then(|id| self.calls.get(id));
        let Some(Written::Tool(id)) = written else {
            self.user(e, Value::String(output_as_text(output)), None);
            return;
        };
        let content = if output.parts.is_empty() {
            Value::String(output.text.clone())
        } else {
            let mut blocks = vec![json!({ "type": "text", "text": output.text })];
            blocks.extend(output.parts.iter().filter_map(block));
            Value::Array(blocks)
        };
        let failed = output.is_error.or(output.failed).unwrap_or(false);
        let result = json!({ "type": "tool_result", "tool_use_id": id, "content": content, "is_error": failed });
        let tool_use_result = if self.same { output.result.as_ref().map(|r| r.to_value()) } else { None };
        self.user(e, Value::Array(vec![result]), tool_use_result);
    }

    /// A user line.
    fn user(&mut self, e: &Event, content: Value, tool_use_result: Option<Value>) {
        self.response = None;
        let mut line = self.line(e, "user", json!({ "role": "user", "content": content }));
        if let Some(result) = tool_use_result {
            line.insert("toolUseResult".into(), result);
        }
        self.push(e, line);
    }

    /// An assistant line of one block; blocks of one response share its message id.
    fn assistant(&mut self, e: &Event, block: Value, stop_reason: &str) {
        let response = e.response_id.clone().filter(|_| self.same);
        let message_id = match &self.response {
            Some((r, id)) if response.is_none() || *r == response => id.clone(),
            _ => {
                let id = match &response {
                    Some(r) => r.clone(),
                    None => format!("msg_{}", native::short_hash(&e.id)),
                };
                self.response = Some((response, id.clone()));
                id
            }
        };
        let model = e.context.model.clone().unwrap_or_else(|| self.model.clone());
        let message = json!({
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": { "input_tokens": 0, "output_tokens": 0 },
        });
        let line = self.line(e, "assistant", message);
        self.push(e, line);
    }

    /// A line of `kind` holding `message`: the line's own fields as the source had them (a
    /// Claude Code session), then the session's.
    fn line(&self, e: &Event, kind: &str, mut message: Value) -> Map<String, Value> {
        let mut line = Map::new();
        if self.same
            && let Some(extra) = e.extra.as_ref().map(|x| x.to_value())
            && let Value::Object(extra) = extra
        {
            for (key, value) in extra {
                match (key.as_str(), &value, &mut message) {
                    ("message", Value::Object(fields), Value::Object(message)) => {
                        for (k, v) in fields {
                            message.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                    _ => {
                        line.insert(key, value);
                    }
                }
            }
        }
        if self.same && e.injected {
            line.insert("isMeta".into(), true.into());
        }
        line.extend(self.common.clone());
        line.insert("type".into(), kind.into());
        line.insert("message".into(), message);
        line
    }

    /// A record of a Claude Code session copied as it was, with the new session's ids.
    fn record(&mut self, e: &Event) {
        let Payload::Meta(meta) = &e.payload else { return };
        let Some(Value::Object(mut record)) = meta.data.as_ref().map(|d| d.to_value()) else { return };
        // Only whole records are copied; meta events built from parts of one are not, nor the
        // progress of running tools and subagents, which Claude Code shows and never sends.
        let kind = record.get("type").and_then(Value::as_str);
        if kind != e.source.record_type.as_deref() || kind == Some("progress") {
            return;
        }
        if record.contains_key("sessionId") {
            record.insert("sessionId".into(), self.id.clone().into());
        }
        for key in ["leafUuid", "messageId", "logicalParentUuid", "sourceToolAssistantUUID"] {
            if let Some(Value::String(old)) = record.get(key)
                && let Some(new) = self.uuids.get(old)
            {
                record.insert(key.into(), new.clone().into());
            }
        }
        if record.contains_key("uuid") {
            self.push(e, record);
        } else {
            record.insert("agentlogSource".into(), self.source.clone());
            self.write(&record);
        }
    }

    /// Gives a line its uuid, its parent and the source's mark, and writes it.
    fn push(&mut self, e: &Event, mut line: Map<String, Value>) {
        let uuid = crate::model::uuid_v5(&uuid::Uuid::NAMESPACE_OID, format!("{}/{}", self.id, e.id).as_bytes());
        let uuid = uuid.to_string();
        // A line of the same agent keeps its place in the tree (the parts of one source line
        // follow each other); others follow the line before.
        let old_parent = line.get("parentUuid").and_then(Value::as_str).or(e.parent_record_id.as_deref());
        let split = e.record_id.is_some() && e.record_id == self.last_record;
        let parent = match old_parent.and_then(|old| self.uuids.get(old)) {
            Some(new) if self.same && !split => Some(new.clone()),
            _ => self.parent.clone(),
        };
        line.insert("parentUuid".into(), parent.map_or(Value::Null, Value::String));
        line.insert("uuid".into(), uuid.clone().into());
        line.insert("timestamp".into(), self.time.clone().into());
        line.insert("agentlogSource".into(), self.source.clone());
        if let Some(old) = &e.record_id {
            self.uuids.insert(old.clone(), uuid.clone());
        }
        self.last_record.clone_from(&e.record_id);
        self.parent = Some(uuid);
        self.write(&line);
    }

    fn write(&mut self, line: &Map<String, Value>) {
        serde_json::to_writer(&mut self.bytes, line).expect("a JSON value serialises");
        self.bytes.push(b'\n');
    }
}

/// Whether Anthropic's API takes `id` as a tool use id.
fn valid_tool_id(id: &str) -> bool {
    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Claude Code's own tool for what a call did: its name and input.
fn claude_tool(action: Action) -> (String, Value) {
    match action {
        Action::Shell { command } => ("Bash".into(), json!({ "command": command })),
        Action::Read { path } => ("Read".into(), json!({ "file_path": path })),
        Action::Write { path, content } => ("Write".into(), json!({ "file_path": path, "content": content })),
        Action::Edit { path, old, new } => {
            ("Edit".into(), json!({ "file_path": path, "old_string": old, "new_string": new }))
        }
        Action::Grep { pattern, path: Some(path) } => ("Grep".into(), json!({ "pattern": pattern, "path": path })),
        Action::Grep { pattern, path: None } => ("Grep".into(), json!({ "pattern": pattern })),
        Action::Glob { pattern } => ("Glob".into(), json!({ "pattern": pattern })),
    }
}

/// A content block of Anthropic's Messages API for a part; `None` for an image or document the
/// source did not record.
fn block(part: &Part) -> Option<Value> {
    Some(match part {
        Part::Text { text } => json!({ "type": "text", "text": text }),
        Part::Image { media_type, data, url } | Part::Document { media_type, data, url } => {
            let kind = if matches!(part, Part::Image { .. }) { "image" } else { "document" };
            let (media_type, data) = match (data, url.as_deref().and_then(data_url)) {
                (Some(data), _) => (media_type.clone(), Some(data.clone())),
                (None, Some((t, d))) => (Some(t), Some(d)),
                (None, None) => (media_type.clone(), None),
            };
            let fallback = if kind == "image" { "image/png" } else { "application/pdf" };
            match (data, url) {
                (Some(data), _) => json!({ "type": kind, "source": {
                    "type": "base64", "media_type": media_type.as_deref().unwrap_or(fallback), "data": data } }),
                (None, Some(url)) => json!({ "type": kind, "source": { "type": "url", "url": url } }),
                (None, None) => return None,
            }
        }
    })
}

/// The media type and base64 data of a `data:` URL.
fn data_url(url: &str) -> Option<(String, String)> {
    let rest = url.strip_prefix("data:")?;
    let (media_type, data) = rest.split_once(";base64,")?;
    Some((media_type.to_owned(), data.to_owned()))
}
