//! Claude Code records as they are on disk, borrowed from the line.
//!
//! Field names follow Claude Code's own (camelCase on disk); see
//! `reference/claude-format.md` §4–§6.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The envelope shared by all records; the `message` is parsed according to `type`.
#[derive(Debug, Deserialize)]
pub struct Record<'a> {
    #[serde(rename = "type", borrow)]
    pub record_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(rename = "parentUuid", borrow)]
    pub parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub cwd: Option<Cow<'a, str>>,
    #[serde(rename = "gitBranch", borrow)]
    pub git_branch: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    pub is_sidechain: bool,
    #[serde(rename = "agentId", borrow)]
    pub agent_id: Option<Cow<'a, str>>,
    #[serde(rename = "isMeta", default)]
    pub is_meta: bool,
    #[serde(borrow)]
    pub message: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", borrow)]
    pub tool_use_result: Option<&'a RawValue>,
}

/// `message` of a `user` or `assistant` record.
#[derive(Debug, Deserialize)]
pub struct Message<'a> {
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
}

/// Message content: a plain string, or content blocks kept raw until their type is known.
#[derive(Debug)]
pub enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<&'a RawValue>),
}

impl<'a> Content<'a> {
    /// Reads `content` as given on disk: a string, an array of blocks, or `null`.
    ///
    /// (An untagged serde enum would buffer the value and lose the borrowed raw blocks.)
    pub fn parse(raw: &'a RawValue) -> serde_json::Result<Option<Self>> {
        match raw.get().as_bytes().first() {
            Some(b'"') => Ok(Some(Content::Text(serde_json::from_str(raw.get())?))),
            Some(b'[') => Ok(Some(Content::Blocks(serde_json::from_str(raw.get())?))),
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
    #[serde(borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    pub is_error: Option<bool>,
    #[serde(borrow)]
    pub source: Option<MediaSource<'a>>,
}

/// `source` of an image or document block.
#[derive(Debug, Deserialize)]
pub struct MediaSource<'a> {
    #[serde(borrow)]
    pub media_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub data: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub url: Option<Cow<'a, str>>,
}
