//! Claude Code records as they are on disk, borrowed from the line.
//!
//! Field names follow Claude Code's own (camelCase on disk). Every field is optional: records change shape between
//! versions, and a field this reader does not need is simply not declared.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::read::{Count, Nested, Object, RawField, borrowed};

/// The fields of any record that the mapper reads; `message` is parsed according to `type`.
#[derive(Debug, Deserialize)]
pub struct Record<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "borrowed")]
    pub record_type: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(rename = "parentUuid", borrow, default, deserialize_with = "borrowed")]
    pub parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow, default, deserialize_with = "borrowed")]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub version: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub cwd: Option<Cow<'a, str>>,
    #[serde(rename = "gitBranch", borrow, default, deserialize_with = "borrowed")]
    pub git_branch: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    pub is_sidechain: bool,
    #[serde(rename = "agentId", borrow, default, deserialize_with = "borrowed")]
    pub agent_id: Option<Cow<'a, str>>,
    #[serde(rename = "isMeta", default)]
    pub is_meta: bool,
    #[serde(rename = "isCompactSummary", default)]
    pub is_compact_summary: bool,
    #[serde(rename = "isApiErrorMessage", default)]
    pub is_api_error_message: bool,
    /// Set on lines agentlog wrote from another session (`--to claude-code`): their usage is
    /// the source's, counted there.
    #[serde(rename = "agentlogSource", default)]
    pub agentlog_source: Option<serde::de::IgnoredAny>,
    #[serde(rename = "sourceToolUseID", borrow, default, deserialize_with = "borrowed")]
    pub source_tool_use_id: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", borrow, default, deserialize_with = "borrowed")]
    pub request_id: Option<Cow<'a, str>>,
    /// Read with [`Object::raw`](crate::read::Object::raw), as are the other [`RawField`]s.
    #[serde(rename = "message")]
    _message: RawField,
    #[serde(rename = "toolUseResult")]
    _tool_use_result: RawField,
    /// `summary` records: the title text.
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub summary: Option<Cow<'a, str>>,
    /// `summary` records: the leaf the title describes, often in another session.
    #[serde(rename = "leafUuid", borrow, default, deserialize_with = "borrowed")]
    pub leaf_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "customTitle", borrow, default, deserialize_with = "borrowed")]
    pub custom_title: Option<Cow<'a, str>>,
    #[serde(rename = "aiTitle", borrow, default, deserialize_with = "borrowed")]
    pub ai_title: Option<Cow<'a, str>>,
}

/// `message` of a `user` or `assistant` record.
#[derive(Debug, Deserialize)]
pub struct Message<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub model: Option<Cow<'a, str>>,
    #[serde(rename = "content")]
    _content: RawField,
    pub usage: Option<Usage>,
}

/// `data` of a `progress` record whose `type` is `agent_progress` (2.0, 2.1): a subagent's
/// message as it went by, `message.message` being the model's reply for an assistant message.
#[derive(Debug, Deserialize)]
pub struct AgentProgress<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "borrowed")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(rename = "agentId", default)]
    pub agent_id: Option<String>,
    pub message: Option<ProgressMessage<'a>>,
}

/// `data.message` of an `agent_progress` record.
#[derive(Debug, Deserialize)]
pub struct ProgressMessage<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "borrowed")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", default)]
    pub request_id: Option<String>,
    #[serde(borrow)]
    pub message: Option<Message<'a>>,
}

/// `message.usage` of an assistant record: a snapshot taken when the line was written.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: Count,
    #[serde(default)]
    pub cache_creation_input_tokens: Count,
    #[serde(default)]
    pub cache_read_input_tokens: Count,
    #[serde(default)]
    pub output_tokens: Count,
    pub output_tokens_details: Option<OutputDetails>,
    pub cache_creation: Option<CacheCreation>,
}

/// `usage.cache_creation` (1.0.98+): the cache writes split by how long they are kept.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CacheCreation {
    #[serde(default)]
    pub ephemeral_1h_input_tokens: Count,
}

/// `usage.output_tokens_details` (2.1.22x): thinking tokens, a part of output tokens.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OutputDetails {
    #[serde(default)]
    pub thinking_tokens: Count,
}

/// Message or tool-result content: a plain string, or content blocks.
#[derive(Debug)]
pub enum Content<'o, 'a> {
    Text(Cow<'o, str>),
    /// The blocks as objects; a block that is not an object is kept raw.
    Blocks(Vec<Result<Cow<'o, Object<'a>>, &'a RawValue>>),
}

impl<'o, 'a> Content<'o, 'a> {
    /// The `content` field of `object`, read apart in the line's pass or from its raw value: a
    /// string, an array of blocks, or `None` when absent or `null`.
    ///
    /// (An untagged serde enum would buffer the value and lose the borrowed blocks.)
    pub fn of(object: &'o Object<'a>) -> serde_json::Result<Option<Self>> {
        match object.nested("content") {
            Some(Nested::Text(text)) => return Ok(Some(Content::Text(Cow::Borrowed(text.as_ref())))),
            Some(Nested::List(blocks)) => {
                return Ok(Some(Content::Blocks(blocks.iter().map(|b| Ok(Cow::Borrowed(b))).collect())));
            }
            Some(Nested::Object(_)) | None => {}
        }
        let Some(raw) = object.raw("content") else { return Ok(None) };
        match raw.get().as_bytes().first() {
            Some(b'"') => Ok(Some(Content::Text(serde_json::from_str(raw.get())?))),
            Some(b'[') => {
                let blocks: Vec<&'a RawValue> = serde_json::from_str(raw.get())?;
                let blocks = blocks.into_iter().map(|raw| Object::from_raw(raw).map(Cow::Owned).map_err(|_| raw));
                Ok(Some(Content::Blocks(blocks.collect())))
            }
            _ => {
                serde_json::from_str::<()>(raw.get())?;
                Ok(None)
            }
        }
    }
}

/// One content block, every field optional; `type` says which apply.
#[derive(Debug, Deserialize)]
pub struct Block<'a> {
    #[serde(rename = "type", borrow)]
    pub block_type: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub signature: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub name: Option<Cow<'a, str>>,
    /// Read with [`Object::raw`], as is `content` (with [`Content::of`]).
    #[serde(rename = "input")]
    _input: RawField,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub tool_use_id: Option<Cow<'a, str>>,
    #[serde(rename = "content")]
    _content: RawField,
    pub is_error: Option<bool>,
    #[serde(borrow)]
    pub source: Option<MediaSource<'a>>,
}

/// `source` of an image or document block.
#[derive(Debug, Deserialize)]
pub struct MediaSource<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub media_type: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub data: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub url: Option<Cow<'a, str>>,
}

/// The facts of a `toolUseResult` object the mapper lifts into typed fields.
#[derive(Debug, Default, Deserialize)]
pub struct ResultFacts<'a> {
    #[serde(rename = "exitCode")]
    pub exit_code: Option<i64>,
    #[serde(rename = "durationMs")]
    pub duration_ms: Option<f64>,
    #[serde(rename = "totalDurationMs")]
    pub total_duration_ms: Option<f64>,
    #[serde(rename = "agentId", borrow, default, deserialize_with = "borrowed")]
    pub agent_id: Option<Cow<'a, str>>,
}

/// `input` of a Task or Agent tool call: the prompt given to the subagent.
#[derive(Debug, Deserialize)]
pub struct TaskInput<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    pub prompt: Option<Cow<'a, str>>,
}

/// A subagent's `agent-<id>.meta.json` sidecar (2.1).
#[derive(Debug, Deserialize)]
pub struct Sidecar {
    #[serde(rename = "toolUseId")]
    pub tool_use_id: Option<String>,
}
