//! Factory Droid records → agentlog events.
//!
//! A `message` record becomes one event per content block, in block order: text and images of
//! a user message one `message` (the `<system-reminder>` blocks Droid adds before the typed
//! text a second one, `injected`), `thinking` a `reasoning`, `text` of the assistant a
//! `message`, `tool_use` a `tool_call` and `tool_result` a `tool_output` named after its call.
//! `Execute` ends its output with `[Process exited with code N]`: that is the exit code.
//!
//! **Forks.** `droid exec --fork <id>` writes a new file that starts with a copy of the parent's
//! records up to `forkedAtMessageId`: those events are `copied`, and every event of the file
//! names the parent in `parent_session_id`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, Usage,
};
use crate::read::{Emitter, Line, LineMapper, file_stem, parse_time};

/// A parsed line: where it is, and its record.
pub type Parsed = (Line<'static>, Map<String, Value>);

/// Token counts in agentlog's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    fresh: u64,
    reads: u64,
    writes: u64,
    output: u64,
    thinking: u64,
}

impl Counts {
    /// An Anthropic `usage` of one message: `input_tokens` excludes the cache reads and writes.
    fn of_anthropic(usage: &Value) -> Option<Counts> {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        Some(Counts {
            fresh: count("input_tokens")?,
            reads: count("cache_read_input_tokens").unwrap_or(0),
            writes: count("cache_creation_input_tokens").unwrap_or(0),
            output: count("output_tokens")?,
            thinking: 0,
        })
    }

    /// The `tokenUsage` totals of a settings file: `inputTokens` excludes the cache, as the
    /// Anthropic API counts it (Droid 0.225.2 sums each response's counts as served).
    fn of_settings(usage: &Value) -> Option<Counts> {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        Some(Counts {
            fresh: count("inputTokens")?,
            reads: count("cacheReadTokens").unwrap_or(0),
            writes: count("cacheCreationTokens").unwrap_or(0),
            output: count("outputTokens")?,
            thinking: count("thinkingTokens").unwrap_or(0),
        })
    }

    fn add(&mut self, other: Counts) {
        self.fresh += other.fresh;
        self.reads += other.reads;
        self.writes += other.writes;
        self.output += other.output;
        self.thinking += other.thinking;
    }

    /// What `self` holds beyond `counted`, each count at least zero.
    fn beyond(self, counted: Counts) -> Counts {
        Counts {
            fresh: self.fresh.saturating_sub(counted.fresh),
            reads: self.reads.saturating_sub(counted.reads),
            writes: self.writes.saturating_sub(counted.writes),
            output: self.output.saturating_sub(counted.output),
            thinking: self.thinking.saturating_sub(counted.thinking),
        }
    }

    fn is_zero(self) -> bool {
        self == Counts::default()
    }

    /// The unified usage: thinking tokens are part of the output, and null where Droid counted
    /// none (it writes 0 also when the model thought, since Anthropic does not count them apart).
    fn usage(self, model: Option<String>, response_id: Option<String>) -> Usage {
        Usage {
            input_tokens: Some(self.fresh),
            cache_read_tokens: Some(self.reads),
            cache_write_tokens: Some(self.writes),
            output_tokens: Some(self.output),
            reasoning_tokens: (self.thinking > 0).then_some(self.thinking),
            total_tokens: Some(self.fresh + self.reads + self.writes + self.output),
            model,
            response_id,
            ..Usage::default()
        }
    }
}

/// The slot of the session's usage event, after any block of the file's last line.
const SETTINGS_SLOT: u32 = 1 << 20;

/// Maps the records of one session file, in order.
pub struct Mapper {
    path: String,
    session_id: String,
    context: Context,
    /// The session this one was forked from.
    parent: Option<String>,
    /// The parent's message up to which a fork's records are copies; `None` once passed.
    forked_at: Option<String>,
    /// Whether the records being read are a fork's copies of its parent's.
    copying: bool,
    /// Tool names by call id, to name outputs.
    tools: HashMap<String, String>,
    /// Per-message usage counted so far.
    counted: Counts,
    /// The last line read, its offset and time: where the session's usage event is placed.
    last: (u64, u64, Option<chrono::DateTime<chrono::Utc>>),
}

impl Mapper {
    /// A mapper for the file named `name`, whose stem is the session id until `session_start`
    /// names it.
    pub fn new(name: &str) -> Self {
        Mapper {
            path: name.to_owned(),
            session_id: file_stem(name).to_owned(),
            context: Context::default(),
            parent: None,
            forked_at: None,
            copying: false,
            tools: HashMap::new(),
            counted: Counts::default(),
            last: (0, 0, None),
        }
    }

    /// An event of the record: its time, ids, fork links and place.
    fn event(&self, parsed: &Parsed, kind: &str, payload: Payload) -> Event {
        let r = &parsed.1;
        let mut event = Event::new(self.session_id.clone(), payload);
        event.timestamp = text(r, "timestamp").and_then(parse_time);
        event.record_id = text(r, "id").map(str::to_owned);
        event.parent_record_id = text(r, "parentId").map(str::to_owned);
        event.parent_session_id.clone_from(&self.parent);
        event.copied = self.copying;
        event.context = self.context.clone();
        event.source.line = parsed.0.number;
        event.source.byte_offset = parsed.0.offset;
        event.source.record_type = Some(kind.to_owned());
        event
    }

    fn meta(&self, parsed: &Parsed, kind: &str, meta_type: MetaType, data: &Map<String, Value>) -> Event {
        let data = Some(Json::from_value_of_raw(data));
        self.event(parsed, kind, Payload::Meta(Meta { meta_type, data, usage: None }))
    }

    fn session_start(&mut self, parsed: &Parsed) -> Event {
        let r = &parsed.1;
        if let Some(id) = text(r, "id") {
            self.session_id = id.to_owned();
        }
        if let Some(cwd) = text(r, "cwd") {
            self.context.cwd = Some(cwd.to_owned());
        }
        self.parent = text(r, "parent").map(str::to_owned);
        let event = self.meta(parsed, "session_start", MetaType::SessionStart, r);
        self.forked_at = self.parent.as_ref().and(text(r, "forkedAtMessageId")).map(str::to_owned);
        self.copying = self.forked_at.is_some();
        event
    }

    fn message(&mut self, parsed: &Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let r = &parsed.1;
        // A fork's copies end with the message it was forked at.
        let id = text(r, "id");
        if self.copying && self.forked_at.is_none() {
            self.copying = false;
        }
        let Some(message) = r.get("message").and_then(Value::as_object) else {
            return out.emit(self.meta(parsed, "message", MetaType::Unknown, r), 0);
        };
        if let Some(model) = text(message, "modelId") {
            self.context.model = Some(model.to_owned());
        }
        let role = text(message, "role");
        let visibility = text(message, "visibility");
        let blocks: Vec<&Value> = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(text @ Value::String(_)) => vec![text],
            _ => Vec::new(),
        };
        let events = if visibility == Some("user_only") {
            // A notice shown to the user (a limit reached, an error) that the model never sees.
            let mut data = message.clone();
            data.insert("text".into(), Value::String(joined_text(&blocks)));
            vec![self.meta(parsed, "message", MetaType::System, &data)]
        } else {
            match role {
                Some("assistant") => self.assistant(parsed, &blocks, message),
                Some("user") => self.user(parsed, &blocks, visibility == Some("llm_only")),
                _ => vec![self.meta(parsed, "message", MetaType::Unknown, r)],
            }
        };
        let events = if events.is_empty() { vec![self.meta(parsed, "message", MetaType::Unknown, r)] } else { events };
        for (slot, event) in events.into_iter().enumerate() {
            out.emit(event, slot as u32)?;
        }
        if id.is_some() && id == self.forked_at.as_deref() {
            self.forked_at = None;
        }
        Ok(())
    }

    fn user(&mut self, parsed: &Parsed, blocks: &[&Value], context: bool) -> Vec<Event> {
        let (mut typed, mut reminders, mut events) = (Vec::new(), Vec::new(), Vec::new());
        for block in blocks {
            match block_type(block) {
                Some("text") | None if block.is_string() || block.get("text").is_some() => {
                    let text = block.as_str().or_else(|| block.get("text").and_then(Value::as_str)).unwrap_or("");
                    let part = Part::Text { text: text.to_owned() };
                    if context || text.trim_start().starts_with("<system-reminder>") {
                        reminders.push(part);
                    } else {
                        typed.push(part);
                    }
                }
                Some("image") => typed.push(image(block)),
                Some("tool_result") => events.push(self.tool_result(parsed, block)),
                _ => events.push(self.unknown_block(parsed, block)),
            }
        }
        let mut out = Vec::new();
        if !reminders.is_empty() {
            let mut event = self.event(parsed, "message", Payload::Message(Message::from_parts(Role::User, reminders)));
            event.injected = true;
            out.push(event);
        }
        if !typed.is_empty() {
            out.push(self.event(parsed, "message", Payload::Message(Message::from_parts(Role::User, typed))));
        }
        out.extend(events);
        out
    }

    fn assistant(&mut self, parsed: &Parsed, blocks: &[&Value], message: &Map<String, Value>) -> Vec<Event> {
        let mut events = Vec::new();
        for block in blocks {
            let payload = match block_type(block) {
                Some("text") => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or_default();
                    Payload::Message(Message::from_parts(Role::Assistant, vec![Part::Text { text: text.to_owned() }]))
                }
                Some("thinking") | Some("redacted_thinking") => {
                    let text = block.get("thinking").and_then(Value::as_str).unwrap_or_default().to_owned();
                    Payload::Reasoning(Reasoning {
                        encrypted: block_type(block) == Some("redacted_thinking"),
                        omitted: false,
                        raw_text: None,
                        signature: block.get("signature").and_then(Value::as_str).map(str::to_owned),
                        text,
                    })
                }
                Some("tool_use") => {
                    let call_id = block.get("id").and_then(Value::as_str).map(str::to_owned);
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
                    if let Some(id) = &call_id {
                        self.tools.insert(id.clone(), name.clone());
                    }
                    let input = block.get("input");
                    Payload::ToolCall(ToolCall::from_input(call_id, name, input))
                }
                _ => {
                    events.push(self.unknown_block(parsed, block));
                    continue;
                }
            };
            let mut event = self.event(parsed, "message", payload);
            if let Some(extra) = block_extra(block) {
                event.extra = Some(Json::from_value_of_raw(&extra));
            }
            events.push(event);
        }
        // A message with its own Anthropic usage counts it here (not in Droid 0.225.2's files).
        if let Some(counts) = message.get("usage").and_then(Counts::of_anthropic) {
            self.counted.add(counts);
            let usage = counts.usage(self.context.model.clone(), text(message, "id").map(str::to_owned));
            let meta = Meta { meta_type: MetaType::Usage, data: None, usage: Some(usage) };
            events.push(self.event(parsed, "message", Payload::Meta(meta)));
        }
        events
    }

    fn tool_result(&self, parsed: &Parsed, block: &Value) -> Event {
        let call_id = block.get("tool_use_id").and_then(Value::as_str).map(str::to_owned);
        let name = call_id.as_ref().and_then(|id| self.tools.get(id)).cloned();
        let (text, parts) = match block.get("content") {
            Some(Value::String(text)) => (text.clone(), Vec::new()),
            Some(Value::Array(items)) => {
                let parts: Vec<Part> = items
                    .iter()
                    .filter_map(|item| match block_type(item) {
                        Some("text") => item.get("text").and_then(Value::as_str).map(|t| Part::Text { text: t.into() }),
                        Some("image") => Some(image(item)),
                        _ => None,
                    })
                    .collect();
                (parts.iter().filter_map(Part::text).collect::<Vec<_>>().join("\n"), parts)
            }
            _ => (String::new(), Vec::new()),
        };
        let exit_code = (name.as_deref() == Some("Execute")).then(|| exit_code(&text)).flatten();
        let result = block.get("content").filter(|c| !c.is_string()).map(Json::from_value_of_raw);
        self.event(
            parsed,
            "message",
            Payload::ToolOutput(ToolOutput {
                call_id,
                name,
                tool_kind: None,
                text,
                parts: if parts.iter().all(|p| p.text().is_some()) { Vec::new() } else { parts },
                is_error: block.get("is_error").and_then(Value::as_bool),
                exit_code,
                failed: None,
                duration_ms: None,
                result,
            }),
        )
    }

    fn unknown_block(&self, parsed: &Parsed, block: &Value) -> Event {
        let data = Some(Json::from_value_of_raw(&serde_json::json!({ "block": block })));
        self.event(parsed, "message", Payload::Meta(Meta { meta_type: MetaType::Unknown, data, usage: None }))
    }

    /// The session's usage from the settings file beside it: its totals, less what the messages
    /// counted; `None` when there is no such file, or nothing left to count.
    fn settings_usage(&self) -> Option<Event> {
        let path = Path::new(&self.path);
        let settings = path.with_file_name(format!("{}.settings.json", file_stem(&self.path)));
        let settings: Value = serde_json::from_slice(&std::fs::read(settings).ok()?).ok()?;
        let totals = Counts::of_settings(settings.get("tokenUsage")?)?;
        let remainder = totals.beyond(self.counted);
        if remainder.is_zero() {
            return None;
        }
        let model = settings.get("model").and_then(Value::as_str).map(str::to_owned).or(self.context.model.clone());
        let usage = remainder.usage(model, None);
        let mut data = Map::new();
        data.insert("tokenUsage".into(), settings["tokenUsage"].clone());
        for key in ["model", "providerLock", "reasoningEffort", "autonomyMode"] {
            if let Some(value) = settings.get(key) {
                data.insert(key.into(), value.clone());
            }
        }
        let meta = Meta { meta_type: MetaType::Usage, data: Some(Json::from_value_of_raw(&data)), usage: Some(usage) };
        let mut event = Event::new(self.session_id.clone(), Payload::Meta(meta));
        event.timestamp = self.last.2;
        event.parent_session_id.clone_from(&self.parent);
        event.context = self.context.clone();
        event.source.line = self.last.0;
        event.source.byte_offset = self.last.1;
        event.source.record_type = Some("settings.json".to_owned());
        let note = serde_json::json!({ "session_totals": true, "counted_in_messages": !self.counted.is_zero() });
        event.extra = Some(Json::from_value_of_raw(&note));
        Some(event)
    }
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let time = text(&parsed.1, "timestamp").and_then(parse_time).or(self.last.2);
        self.last = (parsed.0.number, parsed.0.offset, time);
        match text(&parsed.1, "type") {
            Some("session_start") => {
                let event = self.session_start(&parsed);
                out.emit(event, 0)
            }
            Some("message") => self.message(&parsed, out),
            Some("agent_turn_outcome") => {
                out.emit(self.meta(&parsed, "agent_turn_outcome", MetaType::TurnEnd, &parsed.1), 0)
            }
            Some(kind) => {
                let kind = kind.to_owned();
                out.emit(self.meta(&parsed, &kind, MetaType::Unknown, &parsed.1), 0)
            }
            None => out.emit(self.meta(&parsed, "record", MetaType::Unknown, &parsed.1), 0),
        }
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        match self.settings_usage() {
            Some(event) => out.emit(event, SETTINGS_SLOT),
            None => Ok(()),
        }
    }
}

/// The string at `key` of a record.
fn text<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// The texts of a message's blocks, one per line.
fn joined_text(blocks: &[&Value]) -> String {
    let texts: Vec<&str> =
        blocks.iter().filter_map(|b| b.as_str().or_else(|| b.get("text").and_then(Value::as_str))).collect();
    texts.join("\n")
}

/// An Anthropic image block (`source` base64 or url).
fn image(block: &Value) -> Part {
    let source = block.get("source");
    let field = |key: &str| source.and_then(|s| s.get(key)).and_then(Value::as_str).map(str::to_owned);
    Part::Image { media_type: field("media_type"), data: field("data"), url: field("url") }
}

/// Fields of a block beyond those the event carries (Droid's `signatureProvider`,
/// `durationMs` on thinking), as an object; `None` when there are none.
fn block_extra(block: &Value) -> Option<Map<String, Value>> {
    let known = ["type", "text", "thinking", "signature", "id", "name", "input"];
    let extra: Map<String, Value> = block
        .as_object()?
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!extra.is_empty()).then_some(extra)
}

/// The exit code `Execute` appends to its output: `[Process exited with code N]`.
fn exit_code(text: &str) -> Option<i64> {
    let tail = text.trim_end().strip_suffix(']')?;
    let at = tail.rfind("[Process exited with code ")?;
    tail[at + "[Process exited with code ".len()..].trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_code_is_read_from_the_output_tail() {
        assert_eq!(exit_code("hello\n\n\n[Process exited with code 0]"), Some(0));
        assert_eq!(exit_code("Error: Command failed (exit code: 2)\nls: x\n\n[Process exited with code 2]\n"), Some(2));
        assert_eq!(exit_code("no code here"), None);
    }

    #[test]
    fn settings_totals_beyond_message_counts() {
        let totals = Counts::of_settings(&serde_json::json!({
            "inputTokens": 3111, "outputTokens": 183, "cacheCreationTokens": 639, "cacheReadTokens": 969,
            "thinkingTokens": 0, "factoryCredits": 0
        }))
        .unwrap();
        let one = Counts::of_anthropic(&serde_json::json!({
            "input_tokens": 1000, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 300, "output_tokens": 50
        }))
        .unwrap();
        let left = totals.beyond(one);
        assert_eq!((left.fresh, left.writes, left.reads, left.output), (2111, 439, 669, 133));
        let usage = left.usage(None, None);
        assert_eq!(usage.reasoning_tokens, None);
        assert_eq!(usage.total_tokens, Some(2111 + 439 + 669 + 133));
    }
}
