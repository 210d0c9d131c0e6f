//! The interchange document: a header, then each session's summary and events.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Event, SessionSummary};

/// One interchange document: who wrote it, from what, and the sessions with their events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Document {
    /// Version of the interchange schema, `MAJOR.MINOR`.
    #[cfg_attr(test, schemars(regex(pattern = r"^1\.[0-9]+$"), example = "1.0"))]
    pub schema_version: String,
    /// Who wrote the document, when and from which inputs.
    pub header: Header,
    /// The sessions, each with its summary and events.
    pub sessions: Vec<SessionEntry>,
}

/// The document header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Header {
    /// `$id` of the schema the document follows.
    pub schema: String,
    /// The program that wrote the document.
    pub producer: Producer,
    /// When the document was written.
    #[serde(with = "super::time")]
    #[cfg_attr(test, schemars(with = "String", extend("format" = "date-time")))]
    pub created_at: DateTime<Utc>,
    /// The inputs as given on the command line.
    pub inputs: Vec<String>,
}

/// The program that wrote a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Producer {
    /// Program name (`agentlog`).
    pub name: String,
    /// Program version.
    pub version: String,
}

/// One session of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SessionEntry {
    /// The session's summary.
    pub session: SessionSummary,
    /// The session's events, main thread first, then each subagent thread.
    pub events: Vec<Event>,
}
