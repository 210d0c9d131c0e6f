//! [`Event`]: one line of unified output, and the payload of each event kind.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Agent, Json, Meta, SCHEMA_VERSION, ToolFamily};

/// One event of a coding-agent session: a message, a reasoning block, a tool call, a tool
/// output or a meta record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "EventRepr")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Event {
    /// Version of the unified event schema this event follows, `MAJOR.MINOR`.
    #[cfg_attr(test, schemars(regex(pattern = r"^1\.[0-9]+$"), example = "1.0"))]
    pub schema_version: Cow<'static, str>,
    /// Stable event id: a UUIDv5 of agent, session id, source file name, line and position
    /// within the line; the same input gives the same id on any machine.
    #[cfg_attr(test, schemars(example = "3f1c2a9e-5b7d-5e2f-9a41-0c6d8e7f1b23"))]
    pub id: String,
    /// The agent that wrote the session.
    pub agent: Agent,
    /// Session (Claude Code) or thread (Codex) id; subagent events carry their own thread's
    /// session id and name the parent in `parent_session_id`.
    pub session_id: String,
    /// Position of the event within its thread (one source file), from 0.
    pub seq: u64,
    /// When the source recorded the event, RFC 3339 UTC with milliseconds; null where the
    /// source has no time for it (old Codex files).
    #[serde(with = "super::time::option")]
    #[cfg_attr(test, schemars(with = "Option<String>", extend("format" = "date-time"), example = "2026-02-23T11:40:29.275Z"))]
    pub timestamp: Option<DateTime<Utc>>,
    /// The source's own id for the record this event comes from (Claude Code `uuid`), if any.
    pub record_id: Option<String>,
    /// The source's parent link (Claude Code `parentUuid`); null for roots and for sources
    /// without a tree.
    pub parent_record_id: Option<String>,
    /// Id of the model response this event belongs to (Claude Code `message.id`), if known.
    pub response_id: Option<String>,
    /// Subagent id when the event belongs to a subagent thread; null in the main thread.
    pub agent_id: Option<String>,
    /// True for subagent (sidechain) events.
    pub is_sidechain: bool,
    /// Session that spawned this subagent or from which this session was forked.
    pub parent_session_id: Option<String>,
    /// Call id of the tool call that spawned this subagent, where the source says so.
    pub parent_call_id: Option<String>,
    /// True for context the user did not type: injected instructions, environment context,
    /// system reminders, caveats.
    pub injected: bool,
    /// True for a line replayed from an earlier session by resume or fork.
    pub copied: bool,
    /// True for events of turns that a later rollback removed from the conversation.
    pub rolled_back: bool,
    /// Model, working directory, git branch and agent version in force for the event.
    pub context: Context,
    /// Where the event comes from in the input.
    pub source: Source,
    /// Fields of the source record that no other field carries, as a JSON object; null when
    /// there are none.
    pub extra: Option<Json>,
    /// What the event is, with its typed payload.
    #[serde(flatten)]
    pub payload: Payload,
}

impl Event {
    /// An event of `session_id` with `payload` and every other field empty.
    ///
    /// Readers fill in what they know; `id`, `seq`, `agent`, `schema_version` and
    /// `source.file` are set when the event is emitted.
    pub fn new(session_id: String, payload: Payload) -> Self {
        Event {
            schema_version: Cow::Borrowed(SCHEMA_VERSION),
            id: String::new(),
            agent: Agent::ClaudeCode,
            session_id,
            seq: 0,
            timestamp: None,
            record_id: None,
            parent_record_id: None,
            response_id: None,
            agent_id: None,
            is_sidechain: false,
            parent_session_id: None,
            parent_call_id: None,
            injected: false,
            copied: false,
            rolled_back: false,
            context: Context::default(),
            source: Source::default(),
            extra: None,
            payload,
        }
    }

    /// The kind of the event, as given by its payload.
    pub fn kind(&self) -> Kind {
        self.payload.kind()
    }
}

/// The kind of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Kind {
    /// Text and images exchanged between user, assistant, system or developer.
    Message,
    /// The model's reasoning (thinking) block.
    Reasoning,
    /// The model asking for a tool to run.
    ToolCall,
    /// The result of a tool call.
    ToolOutput,
    /// Everything else: session start, usage, titles, compaction, unknown records.
    Meta,
}

impl Kind {
    /// The name used in output (`message`, `tool_call`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Message => "message",
            Kind::Reasoning => "reasoning",
            Kind::ToolCall => "tool_call",
            Kind::ToolOutput => "tool_output",
            Kind::Meta => "meta",
        }
    }
}

/// The typed payload of an event; serialised as `kind` plus `payload`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "payload", rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Payload {
    /// A message.
    Message(Message),
    /// A reasoning block.
    Reasoning(Reasoning),
    /// A tool call.
    ToolCall(ToolCall),
    /// A tool output.
    ToolOutput(ToolOutput),
    /// A meta record.
    Meta(Meta),
}

impl Payload {
    /// The kind this payload belongs to.
    pub fn kind(&self) -> Kind {
        match self {
            Payload::Message(_) => Kind::Message,
            Payload::Reasoning(_) => Kind::Reasoning,
            Payload::ToolCall(_) => Kind::ToolCall,
            Payload::ToolOutput(_) => Kind::ToolOutput,
            Payload::Meta(_) => Kind::Meta,
        }
    }
}

/// Who speaks in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Role {
    /// The person using the agent (or text injected on their behalf, see `injected`).
    User,
    /// The model.
    Assistant,
    /// System prompt or harness text.
    System,
    /// Developer instructions (Codex).
    Developer,
}

impl Role {
    /// The name used in output (`user`, `assistant`, `system`, `developer`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Developer => "developer",
        }
    }
}

/// A message: its role, its plain text and its content parts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The text parts joined with newlines; empty when the message has none.
    pub text: String,
    /// The content parts in source order (text, image, document). Outputs leave them out
    /// when the only part is the text ([`Message::written_parts`]).
    pub parts: Vec<Part>,
    /// Codex message phase (`commentary`, `final_answer`), where recorded.
    pub phase: Option<String>,
    /// Set on a prompt read from the agent's prompt history (`history.jsonl`) rather than a
    /// transcript: whether the session's transcript holds the same prompt. Null for messages
    /// of transcripts. Added in 1.2.
    #[serde(default)]
    pub prompt_history: Option<PromptHistory>,
}

/// Whether a prompt read from the agent's prompt history is also in the session's transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum PromptHistory {
    /// The transcript holds the prompt too: counts and transcripts leave this copy out.
    InTranscript,
    /// The session's transcript exists but does not hold the prompt (Codex leaves slash
    /// commands out of its rollouts): counted, and left out of transcripts, which show the
    /// session from its own file.
    NotInTranscript,
    /// No transcript of the session was found beside the prompt history (deleted, or never
    /// written): this is all that is left of the session.
    NoTranscript,
}

impl PromptHistory {
    /// The name used in output (`in_transcript`, `not_in_transcript`, `no_transcript`).
    pub fn as_str(self) -> &'static str {
        match self {
            PromptHistory::InTranscript => "in_transcript",
            PromptHistory::NotInTranscript => "not_in_transcript",
            PromptHistory::NoTranscript => "no_transcript",
        }
    }
}

impl Serialize for Message {
    /// The fields in order, with the parts as written out ([`Message::written_parts`]).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut message = serializer.serialize_struct("Message", 5)?;
        message.serialize_field("role", &self.role)?;
        message.serialize_field("text", &self.text)?;
        message.serialize_field("parts", self.written_parts())?;
        message.serialize_field("phase", &self.phase)?;
        message.serialize_field("prompt_history", &self.prompt_history)?;
        message.end()
    }
}

impl Message {
    /// A message of `role` whose plain text is its text parts joined with newlines.
    pub fn from_parts(role: Role, parts: Vec<Part>) -> Self {
        let text = parts.iter().filter_map(Part::text).collect::<Vec<_>>().join("\n");
        Message { role, text, parts, phase: None, prompt_history: None }
    }

    /// The parts as written out: none when the only part is the text, which `text` holds
    /// already (the text is then stored once; schema 1.6).
    pub fn written_parts(&self) -> &[Part] {
        match &self.parts[..] {
            [Part::Text { text }] if !text.is_empty() && *text == self.text => &[],
            parts => parts,
        }
    }

    /// This message read back from an output written by [`Message::written_parts`]: a text
    /// without parts is its one part.
    #[must_use]
    pub fn with_parts_restored(mut self) -> Self {
        if self.parts.is_empty() && !self.text.is_empty() {
            self.parts.push(Part::Text { text: self.text.clone() });
        }
        self
    }
}

/// One content part of a message or tool output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, inline (base64 `data`) or by `url`.
    Image {
        /// Media type such as `image/png`, when known.
        media_type: Option<String>,
        /// Base64 data, for inline images.
        data: Option<String>,
        /// URL (including `data:` URLs), for referenced images.
        url: Option<String>,
    },
    /// A document such as a PDF, inline (base64 `data`) or by `url`.
    Document {
        /// Media type such as `application/pdf`, when known.
        media_type: Option<String>,
        /// Base64 data, for inline documents.
        data: Option<String>,
        /// URL, for referenced documents.
        url: Option<String>,
    },
}

impl Part {
    /// The text of a text part; `None` for other parts.
    pub fn text(&self) -> Option<&str> {
        match self {
            Part::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// A reasoning (thinking) block of the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Reasoning {
    /// The visible reasoning text (Claude Code thinking, Codex summary); empty when none.
    pub text: String,
    /// The raw chain of thought, where the source records it separately from a summary.
    pub raw_text: Option<String>,
    /// True when the reasoning is present only in encrypted or redacted form.
    pub encrypted: bool,
    /// True when the source recorded the block but not its text.
    pub omitted: bool,
    /// The provider's signature over the block, if any.
    pub signature: Option<String>,
}

/// A call of a tool by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ToolCall {
    /// The id linking the call to its output; null where the source has none.
    pub call_id: Option<String>,
    /// The tool's name as the agent called it (`Bash`, `exec_command`, `mcp__server__tool`).
    pub name: String,
    /// The tool's family, the same for every agent (`shell`, `edit`, `mcp`, …; see
    /// `ToolFamily`). Added in 1.1; set by agentlog from `name`.
    #[serde(default)]
    pub tool_kind: Option<ToolFamily>,
    /// The input as JSON: the source's object, or its JSON string parsed; null when the source
    /// gave text that is not JSON (see `input_text`).
    pub input: Option<Json>,
    /// The input as the source gave it when it is free text or invalid JSON; null otherwise.
    pub input_text: Option<String>,
}

impl ToolCall {
    /// A call whose input the source gives as a JSON value: an object is the input, a string is
    /// the input's text, and anything else is neither.
    pub fn from_input(call_id: Option<String>, name: String, input: Option<&serde_json::Value>) -> Self {
        ToolCall {
            call_id,
            name,
            tool_kind: None,
            input: input.filter(|i| i.is_object()).map(Json::from_value_of_raw),
            input_text: input.and_then(serde_json::Value::as_str).map(str::to_owned),
        }
    }
}

/// The output of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ToolOutput {
    /// The id of the call this output answers; null where the source has none.
    pub call_id: Option<String>,
    /// The name of the tool, taken from the matching call when it was seen.
    pub name: Option<String>,
    /// The tool's family, from `name`; null when the name is unknown. Added in 1.1.
    #[serde(default)]
    pub tool_kind: Option<ToolFamily>,
    /// The output text (text parts joined with newlines).
    pub text: String,
    /// All content parts in order, when the output holds more than text (images); empty for
    /// text-only output, which `text` carries.
    pub parts: Vec<Part>,
    /// Whether the tool reported an error; null when the source does not say.
    pub is_error: Option<bool>,
    /// Process exit code, where recorded.
    pub exit_code: Option<i64>,
    /// Whether the call failed: true when the tool reported an error or a non-zero exit code;
    /// false when it reported success, or, for Claude Code, which marks only errors, when it
    /// reported nothing; null when unknown. Added in 1.1; set by agentlog.
    #[serde(default)]
    pub failed: Option<bool>,
    /// Run time in milliseconds, where recorded.
    pub duration_ms: Option<u64>,
    /// The tool's structured result as the source recorded it (Claude Code `toolUseResult`).
    pub result: Option<Json>,
}

/// Context in force for an event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Context {
    /// Model in use.
    pub model: Option<String>,
    /// Working directory of the agent.
    pub cwd: Option<String>,
    /// Git branch of the working directory.
    pub git_branch: Option<String>,
    /// Version of the agent that wrote the record.
    pub agent_version: Option<String>,
}

/// Where an event comes from in the input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Source {
    /// The input file as given on the command line (`-` for standard input).
    pub file: String,
    /// 1-based line of the record in the file.
    pub line: u64,
    /// Byte offset of the start of that line.
    pub byte_offset: u64,
    /// The source's record type (`user`, `assistant`, `response_item/function_call`, …).
    pub record_type: Option<String>,
}

/// The wire form of [`Event`] read back: `payload` is kept raw until `kind` is known.
///
/// serde buffers flattened fields, and a buffered value cannot yield the raw JSON text that
/// [`Json`] keeps byte for byte; reading `payload` as raw text and parsing it once the kind is
/// known avoids the buffer.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct EventRepr {
    schema_version: String,
    id: String,
    agent: Agent,
    session_id: String,
    seq: u64,
    #[serde(with = "super::time::option")]
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    timestamp: Option<DateTime<Utc>>,
    record_id: Option<String>,
    parent_record_id: Option<String>,
    response_id: Option<String>,
    agent_id: Option<String>,
    is_sidechain: bool,
    parent_session_id: Option<String>,
    parent_call_id: Option<String>,
    injected: bool,
    copied: bool,
    rolled_back: bool,
    context: Context,
    source: Source,
    extra: Option<Json>,
    kind: Kind,
    #[cfg_attr(test, schemars(with = "serde_json::Value"))]
    payload: Box<RawValue>,
}

impl TryFrom<EventRepr> for Event {
    type Error = serde_json::Error;

    fn try_from(r: EventRepr) -> Result<Self, Self::Error> {
        let text = r.payload.get();
        let payload = match r.kind {
            Kind::Message => Payload::Message(serde_json::from_str::<Message>(text)?.with_parts_restored()),
            Kind::Reasoning => Payload::Reasoning(serde_json::from_str(text)?),
            Kind::ToolCall => Payload::ToolCall(serde_json::from_str(text)?),
            Kind::ToolOutput => Payload::ToolOutput(serde_json::from_str(text)?),
            Kind::Meta => Payload::Meta(serde_json::from_str(text)?),
        };
        let schema_version = if r.schema_version == SCHEMA_VERSION {
            Cow::Borrowed(SCHEMA_VERSION)
        } else {
            Cow::Owned(r.schema_version)
        };
        Ok(Event {
            schema_version,
            id: r.id,
            agent: r.agent,
            session_id: r.session_id,
            seq: r.seq,
            timestamp: r.timestamp,
            record_id: r.record_id,
            parent_record_id: r.parent_record_id,
            response_id: r.response_id,
            agent_id: r.agent_id,
            is_sidechain: r.is_sidechain,
            parent_session_id: r.parent_session_id,
            parent_call_id: r.parent_call_id,
            injected: r.injected,
            copied: r.copied,
            rolled_back: r.rolled_back,
            context: r.context,
            source: r.source,
            extra: r.extra,
            payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MetaType;

    /// The `const` values a definition of the published event schema allows.
    fn schema_names(definition: &str) -> Vec<String> {
        let schema: serde_json::Value = serde_json::from_str(crate::model::EVENT_SCHEMA).unwrap();
        let names: Vec<String> = schema["$defs"][definition]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["const"].as_str().unwrap().to_owned())
            .collect();
        assert!(names.len() >= 2, "{definition}: {names:?}");
        names
    }

    #[test]
    fn names_are_the_published_serde_names() {
        for name in schema_names("MetaType") {
            let t: MetaType = serde_json::from_value(name.clone().into()).unwrap();
            assert_eq!(t.as_str(), name);
        }
        for name in schema_names("Role") {
            let r: Role = serde_json::from_value(name.clone().into()).unwrap();
            assert_eq!(r.as_str(), name);
        }
        for name in schema_names("Agent") {
            let a: Agent = serde_json::from_value(name.clone().into()).unwrap();
            assert_eq!(a.as_str(), name);
        }
        for k in [Kind::Message, Kind::Reasoning, Kind::ToolCall, Kind::ToolOutput, Kind::Meta] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
    }
}
