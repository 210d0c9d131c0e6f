//! The sessions table: one row per session summary.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Schema, SchemaRef};

use super::kinds::{Flag, Float, Ints, Json, Runs, Strings, Text, Time};
use super::{int, metadata};
use crate::model::{self, Counts, SessionSummary, UsageTotals};

/// Names of the session counts struct's fields, in order.
const COUNT_FIELDS: [&str; 8] =
    ["lines", "events", "messages", "reasoning", "tool_calls", "tool_outputs", "meta", "diagnostics"];

/// Names of the session usage totals struct's fields, in order.
const TOTAL_FIELDS: [&str; 9] = [
    "responses",
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_tokens",
    "unpriced_responses",
];

table! {
    /// The sessions table's columns.
    Columns(s: SessionSummary, _: ()) {
        session_id: Text, required => Some(&s.session_id);
        agent: Runs, required, in_path => Some(s.agent.as_str());
        title: Text, nullable => s.title.as_deref();
        started_at: Time, nullable => s.started_at;
        ended_at: Time, nullable => s.ended_at;
        cwd: Text, nullable => s.cwd.as_deref();
        git_branch: Text, nullable => s.git_branch.as_deref();
        entrypoint: Runs, nullable => s.entrypoint.as_deref();
        agent_versions: Strings, required => &s.agent_versions;
        models: Strings, required => &s.models;
        parent_session_id: Text, nullable => s.parent_session_id.as_deref();
        relation: Runs, nullable => s.relation.map(|r| serde_plain(&r));
        prompts_only: Flag, required => Some(s.prompts_only);
        agent_ids: Strings, required => &s.agent_ids;
        files: Strings, required => &s.files;
        counts: Ints<8> = Ints::new(COUNT_FIELDS), required => Some(counts(&s.counts));
        usage: Ints<9> = Ints::new(TOTAL_FIELDS), required => Some(totals(&s.usage));
        cost_usd: Float, nullable => s.usage.cost_usd;
        orphan_calls: Strings, required => &s.orphan_calls;
        orphan_outputs: Strings, required => &s.orphan_outputs;
        diagnostics: Json, nullable => Some(model::Json::from_value(&s.diagnostics).get());
    }
}

/// The sessions table; `with_agent` as for [`event_schema`](super::event_schema).
pub fn session_schema(with_agent: bool) -> SchemaRef {
    Arc::new(Schema::new_with_metadata(Columns::new(with_agent).fields(), metadata("sessions")))
}

/// The sessions of a run as one record batch; with `dictionaries` false, of the
/// [`plain`](super::plain) schema.
///
/// # Errors
/// Only on a bug (a required column holding a null).
pub fn session_batch(
    sessions: &[&SessionSummary],
    with_agent: bool,
    dictionaries: bool,
) -> Result<RecordBatch, ArrowError> {
    let mut columns = Columns::new(with_agent);
    for s in sessions {
        columns.append(s, &());
    }
    let schema = session_schema(with_agent);
    let schema = if dictionaries { schema } else { super::plain(&schema) };
    RecordBatch::try_new(schema, columns.finish(dictionaries))
}

fn counts(c: &Counts) -> [Option<i64>; 8] {
    [c.lines, c.events, c.messages, c.reasoning, c.tool_calls, c.tool_outputs, c.meta, c.diagnostics]
        .map(|v| int(Some(v)))
}

fn totals(u: &UsageTotals) -> [Option<i64>; 9] {
    [
        u.responses,
        u.input_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.cache_write_1h_tokens,
        u.output_tokens,
        u.reasoning_tokens,
        u.total_tokens,
        u.unpriced_responses,
    ]
    .map(|v| int(Some(v)))
}

/// A unit enum's serde name (`subagent`, `tool_call`, …).
fn serde_plain<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => unreachable!("unit enums serialise as strings"),
    }
}
