//! The events table: one row per event.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Schema, SchemaRef};

use super::kinds::{Flag, Float, Int, Ints, Json, Runs, Text, Time};
use super::{int, metadata, plain};
use crate::model::{self, Event, Payload, Usage};
use crate::write::arrow::{BATCH_BYTES, BATCH_ROWS};

/// Names of the token usage struct's fields, in order.
const USAGE_FIELDS: [&str; 7] = [
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_tokens",
];

table! {
    /// The events table's columns.
    Columns(e: Event, p: Cells<'_>) {
        id: Text, required => Some(&e.id);
        agent: Runs, required, in_path => Some(e.agent.as_str());
        session_id: Text, required => Some(&e.session_id);
        seq: Int, required => int(Some(e.seq));
        timestamp: Time, nullable => e.timestamp;
        kind: Runs, required => Some(e.kind().as_str());
        role: Runs, nullable => p.role;
        meta_type: Runs, nullable => p.meta_type;
        text: Text, nullable => p.text;
        tool_name: Runs, nullable => p.tool_name;
        tool_kind: Runs, nullable => p.tool_kind;
        call_id: Text, nullable => p.call_id;
        model: Runs, nullable => e.context.model.as_deref();
        is_error: Flag, nullable => p.is_error;
        exit_code: Int, nullable => p.exit_code;
        failed: Flag, nullable => p.failed;
        duration_ms: Int, nullable => p.duration_ms;
        usage: Ints<7> = Ints::new(USAGE_FIELDS), nullable => p.usage.map(usage_counts);
        cost_usd: Float, nullable => p.usage.and_then(|u| u.cost_usd);
        injected: Flag, required => Some(e.injected);
        copied: Flag, required => Some(e.copied);
        rolled_back: Flag, required => Some(e.rolled_back);
        is_sidechain: Flag, required => Some(e.is_sidechain);
        agent_id: Text, nullable => e.agent_id.as_deref();
        parent_session_id: Text, nullable => e.parent_session_id.as_deref();
        parent_call_id: Text, nullable => e.parent_call_id.as_deref();
        record_id: Text, nullable => e.record_id.as_deref();
        parent_record_id: Text, nullable => e.parent_record_id.as_deref();
        response_id: Text, nullable => e.response_id.as_deref();
        cwd: Runs, nullable => e.context.cwd.as_deref();
        git_branch: Runs, nullable => e.context.git_branch.as_deref();
        agent_version: Runs, nullable => e.context.agent_version.as_deref();
        source_file: Runs, required => Some(&e.source.file);
        source_line: Int, required => int(Some(e.source.line));
        source_byte_offset: Int, required => int(Some(e.source.byte_offset));
        source_record_type: Runs, nullable => e.source.record_type.as_deref();
        phase: Runs, nullable => p.phase;
        prompt_history: Runs, nullable => p.prompt_history;
        parts: Json, nullable => p.parts;
        raw_text: Text, nullable => p.raw_text;
        encrypted: Flag, nullable => p.encrypted;
        omitted: Flag, nullable => p.omitted;
        signature: Text, nullable => p.signature;
        tool_input: Json, nullable => p.tool_input;
        tool_input_text: Text, nullable => p.tool_input_text;
        tool_result: Json, nullable => p.tool_result;
        data: Json, nullable => p.data;
        extra: Json, nullable => document(&e.extra);
    }
}

/// The events table. With `with_agent` false the `agent` column is left out: it is a partition
/// column and lives in the path.
pub fn event_schema(with_agent: bool) -> SchemaRef {
    Arc::new(Schema::new_with_metadata(Columns::new(with_agent).fields(), metadata("events")))
}

fn document(j: &Option<model::Json>) -> Option<&str> {
    j.as_ref().map(model::Json::get)
}

fn usage_counts(u: &Usage) -> [Option<i64>; 7] {
    [
        u.input_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.cache_write_1h_tokens,
        u.output_tokens,
        u.reasoning_tokens,
        u.total_tokens,
    ]
    .map(int)
}

/// The payload's share of a row: each kind of payload fills its own columns, the rest stay null.
#[derive(Default)]
struct Cells<'a> {
    role: Option<&'a str>,
    meta_type: Option<&'a str>,
    text: Option<&'a str>,
    tool_name: Option<&'a str>,
    tool_kind: Option<&'a str>,
    call_id: Option<&'a str>,
    is_error: Option<bool>,
    exit_code: Option<i64>,
    failed: Option<bool>,
    duration_ms: Option<i64>,
    usage: Option<&'a Usage>,
    phase: Option<&'a str>,
    prompt_history: Option<&'a str>,
    parts: Option<&'a str>,
    raw_text: Option<&'a str>,
    encrypted: Option<bool>,
    omitted: Option<bool>,
    signature: Option<&'a str>,
    tool_input: Option<&'a str>,
    tool_input_text: Option<&'a str>,
    tool_result: Option<&'a str>,
    data: Option<&'a str>,
}

impl<'a> Cells<'a> {
    /// The cells of a payload; `parts`, when there are any, are written as JSON into `scratch`.
    fn of(payload: &'a Payload, scratch: &'a mut Vec<u8>) -> Self {
        let mut parts = None;
        let cells = match payload {
            Payload::Message(m) => {
                parts = Some(m.written_parts());
                Cells {
                    role: Some(m.role.as_str()),
                    text: Some(&m.text),
                    phase: m.phase.as_deref(),
                    prompt_history: m.prompt_history.map(model::PromptHistory::as_str),
                    ..Cells::default()
                }
            }
            Payload::Reasoning(r) => Cells {
                text: Some(&r.text),
                raw_text: r.raw_text.as_deref(),
                encrypted: Some(r.encrypted),
                omitted: Some(r.omitted),
                signature: r.signature.as_deref(),
                ..Cells::default()
            },
            Payload::ToolCall(c) => Cells {
                tool_name: Some(&c.name),
                tool_kind: c.tool_kind.map(|k| k.as_str()),
                call_id: c.call_id.as_deref(),
                tool_input: document(&c.input),
                tool_input_text: c.input_text.as_deref(),
                ..Cells::default()
            },
            Payload::ToolOutput(o) => {
                parts = Some(&o.parts[..]);
                Cells {
                    tool_name: o.name.as_deref(),
                    tool_kind: o.tool_kind.map(|k| k.as_str()),
                    call_id: o.call_id.as_deref(),
                    text: Some(&o.text),
                    is_error: o.is_error,
                    exit_code: o.exit_code,
                    failed: o.failed,
                    duration_ms: int(o.duration_ms),
                    tool_result: document(&o.result),
                    ..Cells::default()
                }
            }
            Payload::Meta(m) => Cells {
                meta_type: Some(m.meta_type.as_str()),
                data: document(&m.data),
                usage: m.usage.as_ref(),
                ..Cells::default()
            },
        };
        let parts = parts.filter(|p| !p.is_empty()).map(|p| {
            scratch.clear();
            crate::write::encode::parts(p, scratch);
            simdutf8::basic::from_utf8(scratch).expect("JSON written from strings is UTF-8")
        });
        Cells { parts, ..cells }
    }
}

/// Builds event record batches column by column.
pub struct EventColumns {
    columns: Columns,
    schema: SchemaRef,
    /// Whether string columns of few values are dictionaries, or plain strings.
    dictionaries: bool,
    rows: usize,
    bytes: usize,
    /// The `parts` of the row being appended, as JSON.
    scratch: Vec<u8>,
}

impl EventColumns {
    /// Empty columns; see [`event_schema`] for `with_agent`. With `dictionaries` false, the
    /// batches have the [`plain`] schema.
    pub fn new(with_agent: bool, dictionaries: bool) -> Self {
        let schema = event_schema(with_agent);
        EventColumns {
            columns: Columns::new(with_agent),
            schema: if dictionaries { schema } else { plain(&schema) },
            dictionaries,
            rows: 0,
            bytes: 0,
            scratch: Vec::new(),
        }
    }

    /// Rows appended since the last batch.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Whether the rows appended make a batch: [`BATCH_ROWS`] rows or [`BATCH_BYTES`] of text.
    pub fn is_full(&self) -> bool {
        self.rows >= BATCH_ROWS || self.bytes >= BATCH_BYTES
    }

    /// Appends one event as a row.
    pub fn append(&mut self, e: &Event) {
        let cells = Cells::of(&e.payload, &mut self.scratch);
        let text = self.columns.append(e, &cells);
        // Besides its text, a row's ids (counted a second time) and a share for the fixed-width
        // columns.
        self.bytes += e.id.len() + e.session_id.len() + 64 + text;
        self.rows += 1;
    }

    /// The rows appended so far as one batch; the builders start empty again.
    ///
    /// # Errors
    /// Only on a bug (a required column holding a null).
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        self.rows = 0;
        self.bytes = 0;
        RecordBatch::try_new(self.schema.clone(), self.columns.finish(self.dictionaries))
    }
}
