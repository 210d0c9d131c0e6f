//! The unified event model that every reader produces and every writer consumes.
//!
//! A session is a sequence of [`Event`]s. Each event has an identity (`id`, `agent`,
//! `session_id`, `seq`, subagent fields), a `timestamp`, flags, the [`Context`] in force, its
//! [`Source`] in the input, and a typed [`Payload`] of one [`Kind`]. A [`SessionSummary`]
//! describes a whole session. The JSON form of both is published under `schema/` and versioned
//! by [`SCHEMA_VERSION`]; a test keeps the two in step.
//!
//! This module depends on no reader and no writer.
//!
//! # Decisions
//!
//! **How are event ids derived?** As a UUIDv5 over agent, session id, the input file's *name*
//! (not its directory), the 1-based line and the event's slot within that line (see
//! [`EventKey`]). The same input gives the same ids on any machine, and moving the files to
//! another folder keeps them. Renaming a file changes its ids.
//!
//! **What counts as one usage record?** One model response. Claude Code repeats a response's
//! usage on each of its lines with a growing `output_tokens`; the line with the largest value is
//! the response's usage. Codex writes cumulative counters; the positive delta of the counter is
//! one response's usage. Either way there is exactly one `usage` meta event per response, and
//! copies of it (resumed or forked history) are flagged `copied` and left out of totals.
//!
//! **What do the token counts mean?** [`Usage`] splits input into three parts that do not
//! overlap: fresh input, cache reads and cache writes. Codex reports cached tokens as part of
//! its input count; readers subtract them, so totals mean the same for every agent.
//!
//! **Why is every field always present?** A line's shape does not depend on the input: absent
//! values are `null`, empty lists are `[]`. Loaders that infer a schema from the first rows
//! (DuckDB, Polars) then see every column.
//!
//! **Why does the model own its strings?** Writers may hold events (sorting, batching into
//! Arrow arrays); owned events keep lifetimes out of every signature. Readers move their parsed
//! strings into events without copying where the parser already allocated them.

mod agent;
mod check;
mod event;
mod id;
mod interchange;
mod json;
mod meta;
mod session;
pub(crate) mod time;
mod tools;
mod usage;

#[cfg(test)]
mod schema;

pub use agent::Agent;
pub use check::{AtifSchema, Schemas, Violation};
pub use event::{
    Context, Event, Kind, Message, Part, Payload, PromptHistory, Reasoning, Role, Source, ToolCall, ToolOutput,
};
pub use id::{EventKey, USAGE_SLOT, uuid_v5};
pub use interchange::{Document, Header, Producer, SessionEntry};
pub(crate) use json::has_line_break;
pub use json::{Json, MAX_DEPTH, Noted, Repair, has_repairs, repair_text, take_repairs};
pub use meta::{Meta, MetaType};
pub use session::{Counts, Diagnostic, MAX_COUNT, Relation, SessionSummary, SessionTally, UsageTotals};
pub use tools::{ToolFamily, failed, mcp_server};
pub use usage::Usage;

/// Version of the unified event and interchange schemas written by this build, as a literal
/// (for `concat!`, as in `agentlog --version`); [`SCHEMA_VERSION`] is the same as a constant.
#[macro_export]
macro_rules! schema_version {
    () => {
        "1.6"
    };
}

/// Version of the unified event and interchange schemas written by this build.
pub const SCHEMA_VERSION: &str = schema_version!();

/// `$id` of the published unified event schema (`schema/event.schema.json`).
pub const EVENT_SCHEMA_ID: &str = "https://agentlog.dev/schema/v1/event.schema.json";

/// `$id` of the published interchange schema (`schema/interchange.schema.json`).
pub const INTERCHANGE_SCHEMA_ID: &str = "https://agentlog.dev/schema/v1/interchange.schema.json";

/// The published unified event schema, as checked in under `schema/`.
pub const EVENT_SCHEMA: &str = include_str!("../../schema/event.schema.json");

/// agentlog's JSON Schema of ATIF v1.7 documents, as checked in under `schema/`.
pub const ATIF_SCHEMA: &str = include_str!("../../schema/atif.schema.json");

/// The published interchange schema, as checked in under `schema/`.
pub const INTERCHANGE_SCHEMA: &str = include_str!("../../schema/interchange.schema.json");
