//! Codex rollout records as they are on disk, borrowed from the line.
//!
//! Names follow Codex's own (`RolloutLine`, `ResponseItem`, `EventMsg`, `SessionMeta` in
//! `codex-rs/protocol` of github.com/openai/codex). Every field is optional: the shapes changed many times
//! between 0.1 and today.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::read::{Count, RawField, borrowed};

/// Any rollout line: the envelope (`timestamp`, `type`, `payload`) or a bare legacy line.
#[derive(Debug, Deserialize)]
pub struct Line<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default, deserialize_with = "borrowed")]
    pub line_type: Option<Cow<'a, str>>,
    /// Read apart with [`Object::parse_split`](crate::read::Object::parse_split).
    #[serde(rename = "payload")]
    _payload: RawField,
    /// Legacy meta line: the session id.
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub id: Option<Cow<'a, str>>,
    /// Legacy state marker (`"state"`).
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub record_type: Option<Cow<'a, str>>,
}

/// A TypeScript-era rollout: one JSON document `{session, items}`.
#[derive(Debug, Deserialize)]
pub struct Document<'a> {
    #[serde(borrow)]
    pub session: &'a RawValue,
    #[serde(borrow)]
    pub items: Vec<&'a RawValue>,
}

/// `session_meta` payload (and the legacy first line and the TypeScript `session` object).
#[derive(Debug, Deserialize)]
pub struct SessionMeta<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub forked_from_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub parent_thread_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub cli_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub source: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub agent_nickname: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub agent_path: Option<Cow<'a, str>>,
    pub git: Option<Git<'a>>,
}

/// `git` of a session meta.
#[derive(Debug, Deserialize)]
pub struct Git<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub branch: Option<Cow<'a, str>>,
}

/// `source: {"subagent": …}` of a session meta.
#[derive(Debug, Deserialize)]
pub struct SubagentSource<'a> {
    #[serde(borrow)]
    pub subagent: Option<&'a RawValue>,
}

/// `subagent: {"thread_spawn": …}`.
#[derive(Debug, Deserialize)]
pub struct ThreadSpawn<'a> {
    #[serde(borrow)]
    pub thread_spawn: Option<Spawn<'a>>,
}

/// The spawn record of a sub-agent thread.
#[derive(Debug, Deserialize)]
pub struct Spawn<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub parent_thread_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub agent_nickname: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub agent_path: Option<Cow<'a, str>>,
}

/// `turn_context` payload, the fields the mapper uses.
#[derive(Debug, Deserialize)]
pub struct TurnContext<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub cwd: Option<Cow<'a, str>>,
}

/// A `ResponseItem`, every field optional; `type` says which apply.
#[derive(Debug, Deserialize)]
pub struct Item<'a> {
    #[serde(rename = "type", borrow)]
    pub item_type: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub role: Option<Cow<'a, str>>,
    /// Message content parts, or reasoning's raw `reasoning_text` parts.
    #[serde(borrow)]
    pub content: Option<Vec<ContentItem<'a>>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub phase: Option<Cow<'a, str>>,
    pub summary: Option<Vec<ContentItem<'a>>>,
    /// Read with [`Object::raw`](crate::read::Object::raw), as are the other [`RawField`]s.
    #[serde(rename = "encrypted_content")]
    _encrypted_content: RawField,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub name: Option<Cow<'a, str>>,
    /// `function_call`: a string holding JSON; `tool_search_call`: JSON.
    #[serde(rename = "arguments")]
    _arguments: RawField,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub call_id: Option<Cow<'a, str>>,
    /// `custom_tool_call`: free text.
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub input: Option<Cow<'a, str>>,
    /// Tool output: a string or an array of content items.
    #[serde(rename = "output")]
    _output: RawField,
    #[serde(rename = "action")]
    _action: RawField,
}

/// A `ContentItem` of a message, a summary part or a raw reasoning part.
#[derive(Debug, Deserialize)]
pub struct ContentItem<'a> {
    #[serde(rename = "type", borrow)]
    pub item_type: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub image_url: Option<Cow<'a, str>>,
}

/// An `EventMsg` payload, every field optional; `type` says which apply.
#[derive(Debug, Deserialize)]
pub struct EventMsg<'a> {
    #[serde(rename = "type", borrow)]
    pub event_type: Cow<'a, str>,
    /// `user_message` and `agent_message`.
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub message: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub images: Option<Vec<Cow<'a, str>>>,
    /// `user_message.kind` (0.32–0.47): `plain`, `user_instructions`, `environment_context`.
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub phase: Option<Cow<'a, str>>,
    /// `agent_reasoning` and `agent_reasoning_raw_content`.
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub text: Option<Cow<'a, str>>,
    pub info: Option<TokenInfo>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub call_id: Option<Cow<'a, str>>,
    pub exit_code: Option<i64>,
    pub duration: Option<Duration>,
    pub success: Option<bool>,
    /// Read with [`Object::raw`](crate::read::Object::raw).
    #[serde(rename = "result")]
    _result: RawField,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub thread_name: Option<Cow<'a, str>>,
}

/// `token_count.info`.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenInfo {
    pub total_token_usage: Option<Counters>,
    pub last_token_usage: Option<Counters>,
}

/// Codex's token counters as written; a counter that is not a count is reported when read.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Counters {
    #[serde(default)]
    pub input_tokens: Count,
    #[serde(default)]
    pub cached_input_tokens: Count,
    #[serde(default)]
    pub output_tokens: Count,
    #[serde(default)]
    pub reasoning_output_tokens: Count,
    #[serde(default)]
    pub total_tokens: Count,
}

impl Counters {
    /// The counters, unless one of them is not a count: such a row counts nothing.
    pub fn checked(&self) -> Option<TokenUsage> {
        let all = [self.input_tokens, self.cached_input_tokens, self.output_tokens, self.reasoning_output_tokens];
        if all.iter().chain([&self.total_tokens]).any(|c| c.is_invalid()) {
            return None;
        }
        let [input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens] =
            all.map(|c| c.get().unwrap_or(0));
        let total_tokens = self.total_tokens.get();
        Some(TokenUsage { input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens, total_tokens })
    }
}

/// Codex's token counters: cached ⊆ input, reasoning ⊆ output, total = input + output. Each is
/// at most [`crate::model::MAX_COUNT`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
    pub total_tokens: Option<u64>,
}

impl TokenUsage {
    /// The total, or input plus output where it is missing (no overflow: each is at most
    /// `MAX_COUNT`, a half of `u64::MAX`).
    pub fn total(&self) -> u64 {
        self.total_tokens.unwrap_or(self.input_tokens + self.output_tokens)
    }
}

/// A `token_usage_record` line's payload (0.169 and later): one model response's usage, with its
/// id, written before the `token_count` row whose counters it advances; only the id is read.
#[derive(Debug, Deserialize)]
pub struct UsageRecord<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub response_id: Option<Cow<'a, str>>,
}

/// `item_completed.item` (0.169 and later): a turn item Codex finished, written beside its
/// `response_item` copy as `user_message`, `agent_message`, `agent_reasoning` and
/// `exec_command_end` were before.
#[derive(Debug, Deserialize)]
pub struct CompletedItem<'a> {
    /// `UserMessage`, `AgentMessage`, `Reasoning`, `CommandExecution`, …
    #[serde(rename = "type", borrow)]
    pub item_type: Cow<'a, str>,
    /// A command's call id.
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub id: Option<Cow<'a, str>>,
    /// A message's text parts.
    #[serde(borrow, default)]
    pub content: Vec<ItemText<'a>>,
    /// A reasoning item's summary.
    #[serde(borrow, default)]
    pub summary_text: Vec<Cow<'a, str>>,
    pub exit_code: Option<i64>,
    pub duration: Option<Duration>,
}

/// A part of a completed message item; parts without text are images or other kinds.
#[derive(Debug, Deserialize)]
pub struct ItemText<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub text: Option<Cow<'a, str>>,
}

/// A Rust `Duration` as serde writes it.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Duration {
    pub secs: u64,
    #[serde(default)]
    pub nanos: u64,
}

/// `mcp_tool_call_end.result`: `{"Ok": {…, "is_error"?}}` or `{"Err": "…"}`.
#[derive(Debug, Deserialize)]
pub enum McpResult {
    Ok(McpOk),
    Err(serde::de::IgnoredAny),
}

/// The `Ok` side of an MCP result.
#[derive(Debug, Deserialize)]
pub struct McpOk {
    pub is_error: Option<bool>,
}

/// The JSON-in-string tool output: `{"output": "…", "metadata": {exit_code, duration_seconds}}`.
#[derive(Debug, Deserialize)]
pub struct ShellOutput {
    pub output: String,
    pub metadata: Option<ShellMetadata>,
}

/// `metadata` of a JSON-in-string tool output.
#[derive(Debug, Deserialize)]
pub struct ShellMetadata {
    pub exit_code: Option<i64>,
    pub duration_seconds: Option<f64>,
}
