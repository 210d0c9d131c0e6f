//! Codex rollout records as they are on disk, borrowed from the line.
//!
//! Names follow Codex's own (`RolloutLine`, `ResponseItem`, `SessionMeta`); see
//! `reference/codex-format.md` §3–§4 and §10.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Any rollout line: the envelope (`timestamp`, `type`, `payload`) or a bare legacy line.
#[derive(Debug, Deserialize)]
pub struct Line<'a> {
    #[serde(borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    pub line_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub payload: Option<&'a RawValue>,
    /// Legacy meta line: the session id.
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    /// Legacy state marker (`"state"`).
    #[serde(borrow)]
    pub record_type: Option<Cow<'a, str>>,
}

/// `session_meta` payload (and the legacy first line), the fields the mapper uses.
#[derive(Debug, Deserialize)]
pub struct SessionMeta<'a> {
    #[serde(borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub cwd: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub cli_version: Option<Cow<'a, str>>,
    pub git: Option<Git<'a>>,
}

/// `git` of a session meta.
#[derive(Debug, Deserialize)]
pub struct Git<'a> {
    #[serde(borrow)]
    pub branch: Option<Cow<'a, str>>,
}

/// A `ResponseItem`, every field optional; `type` says which apply.
#[derive(Debug, Deserialize)]
pub struct Item<'a> {
    #[serde(rename = "type", borrow)]
    pub item_type: Cow<'a, str>,
    #[serde(borrow)]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub content: Option<Vec<ContentItem<'a>>>,
    #[serde(borrow)]
    pub phase: Option<Cow<'a, str>>,
}

/// A `ContentItem` of a message.
#[derive(Debug, Deserialize)]
pub struct ContentItem<'a> {
    #[serde(rename = "type", borrow)]
    pub item_type: Cow<'a, str>,
    #[serde(borrow)]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub image_url: Option<Cow<'a, str>>,
}
