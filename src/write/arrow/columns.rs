//! The columnar schemas of events and sessions, and builders that fill them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int64Builder, ListBuilder, StringBuilder, StringDictionaryBuilder, StructBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::extension::Json as JsonType;
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use chrono::{DateTime, Utc};

use crate::model::{Event, Json, Payload, SCHEMA_VERSION, SessionSummary, Usage};

/// Names of the token usage struct's fields, in order.
const USAGE_FIELDS: [&str; 6] =
    ["input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "total_tokens"];

/// Names of the session counts struct's fields, in order.
const COUNT_FIELDS: [&str; 8] =
    ["lines", "events", "messages", "reasoning", "tool_calls", "tool_outputs", "meta", "diagnostics"];

/// Names of the session usage totals struct's fields, in order.
const TOTAL_FIELDS: [&str; 7] = [
    "responses",
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "total_tokens",
];

fn dict() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

fn timestamp() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

fn json(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true).with_extension_type(JsonType::default())
}

fn int_struct(names: &[&str]) -> DataType {
    DataType::Struct(names.iter().map(|n| Field::new(*n, DataType::Int64, true)).collect::<Fields>())
}

fn list() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

/// Key-value metadata of every file: what it holds and which versions wrote it.
pub fn metadata(table: &str) -> HashMap<String, String> {
    HashMap::from([
        ("agentlog.table".to_owned(), table.to_owned()),
        ("agentlog.schema_version".to_owned(), SCHEMA_VERSION.to_owned()),
        ("agentlog.version".to_owned(), env!("CARGO_PKG_VERSION").to_owned()),
    ])
}

/// The events table. With `with_agent` false the `agent` column is left out: it is a partition
/// column and lives in the path.
pub fn event_schema(with_agent: bool) -> SchemaRef {
    let mut fields = vec![Field::new("id", DataType::Utf8, false)];
    if with_agent {
        fields.push(Field::new("agent", dict(), false));
    }
    fields.extend([
        Field::new("session_id", DataType::Utf8, false),
        Field::new("seq", DataType::Int64, false),
        Field::new("timestamp", timestamp(), true),
        Field::new("kind", dict(), false),
        Field::new("role", dict(), true),
        Field::new("meta_type", dict(), true),
        Field::new("text", DataType::Utf8, true),
        Field::new("tool_name", dict(), true),
        Field::new("call_id", DataType::Utf8, true),
        Field::new("model", dict(), true),
        Field::new("is_error", DataType::Boolean, true),
        Field::new("exit_code", DataType::Int64, true),
        Field::new("duration_ms", DataType::Int64, true),
        Field::new("usage", int_struct(&USAGE_FIELDS), true),
        Field::new("injected", DataType::Boolean, false),
        Field::new("copied", DataType::Boolean, false),
        Field::new("rolled_back", DataType::Boolean, false),
        Field::new("is_sidechain", DataType::Boolean, false),
        Field::new("agent_id", DataType::Utf8, true),
        Field::new("parent_session_id", DataType::Utf8, true),
        Field::new("parent_call_id", DataType::Utf8, true),
        Field::new("record_id", DataType::Utf8, true),
        Field::new("parent_record_id", DataType::Utf8, true),
        Field::new("response_id", DataType::Utf8, true),
        Field::new("cwd", dict(), true),
        Field::new("git_branch", dict(), true),
        Field::new("agent_version", dict(), true),
        Field::new("source_file", dict(), false),
        Field::new("source_line", DataType::Int64, false),
        Field::new("source_byte_offset", DataType::Int64, false),
        Field::new("source_record_type", dict(), true),
        Field::new("phase", dict(), true),
        json("parts"),
        Field::new("raw_text", DataType::Utf8, true),
        Field::new("encrypted", DataType::Boolean, true),
        Field::new("omitted", DataType::Boolean, true),
        Field::new("signature", DataType::Utf8, true),
        json("tool_input"),
        Field::new("tool_input_text", DataType::Utf8, true),
        json("tool_result"),
        json("data"),
        json("extra"),
    ]);
    Arc::new(Schema::new_with_metadata(fields, metadata("events")))
}

/// The sessions table; `with_agent` as for [`event_schema`].
pub fn session_schema(with_agent: bool) -> SchemaRef {
    let mut fields = vec![Field::new("session_id", DataType::Utf8, false)];
    if with_agent {
        fields.push(Field::new("agent", dict(), false));
    }
    fields.extend([
        Field::new("title", DataType::Utf8, true),
        Field::new("started_at", timestamp(), true),
        Field::new("ended_at", timestamp(), true),
        Field::new("cwd", DataType::Utf8, true),
        Field::new("git_branch", DataType::Utf8, true),
        Field::new("agent_versions", list(), false),
        Field::new("models", list(), false),
        Field::new("parent_session_id", DataType::Utf8, true),
        Field::new("relation", dict(), true),
        Field::new("agent_ids", list(), false),
        Field::new("files", list(), false),
        Field::new("counts", int_struct(&COUNT_FIELDS), false),
        Field::new("usage", int_struct(&TOTAL_FIELDS), false),
        Field::new("orphan_calls", list(), false),
        Field::new("orphan_outputs", list(), false),
        json("diagnostics"),
    ]);
    Arc::new(Schema::new_with_metadata(fields, metadata("sessions")))
}

fn micros(t: Option<DateTime<Utc>>) -> Option<i64> {
    t.map(|t| t.timestamp_micros())
}

fn int(v: Option<u64>) -> Option<i64> {
    v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

/// A string dictionary column.
type Dict = StringDictionaryBuilder<Int32Type>;

/// A string dictionary column of events, which looks each run of equal values up once: events
/// of one session repeat the same file, model and directory row after row.
#[derive(Default)]
struct Runs {
    builder: Dict,
    /// The value of the rows not yet appended, unless they are null.
    value: String,
    null: bool,
    /// How many rows hold it.
    rows: usize,
}

impl Runs {
    fn append_value(&mut self, value: &str) {
        self.append_option(Some(value));
    }

    fn append_option(&mut self, value: Option<&str>) {
        let same = self.rows > 0 && value.map_or(self.null, |v| !self.null && self.value == v);
        if !same {
            self.append_run();
            self.null = value.is_none();
            self.value.clear();
            self.value.push_str(value.unwrap_or_default());
        }
        self.rows += 1;
    }

    /// Appends the rows not yet appended to the builder.
    fn append_run(&mut self) {
        if self.rows == 0 {
            return;
        }
        let value = (!self.null).then_some(self.value.as_str());
        self.builder.append_options(value, std::mem::take(&mut self.rows));
    }

    /// The rows so far; with `preserve`, the dictionary's values stay for the next batch.
    fn finish(&mut self, preserve: bool) -> ArrayRef {
        self.append_run();
        Arc::new(if preserve { self.builder.finish_preserve_values() } else { self.builder.finish() })
    }
}

fn struct_builder(names: &[&str]) -> StructBuilder {
    let fields: Fields = names.iter().map(|n| Field::new(*n, DataType::Int64, true)).collect();
    StructBuilder::from_fields(fields, 0)
}

fn append_ints(b: &mut StructBuilder, values: Option<&[Option<i64>]>) {
    for i in 0..b.num_fields() {
        let v = values.and_then(|v| v[i]);
        b.field_builder::<Int64Builder>(i).expect("an Int64 field").append_option(v);
    }
    b.append(values.is_some());
}

/// Finishes a string column, leaving it room for as much as it held, so that the next batch
/// does not grow it again from nothing (every growth copies the column).
fn strings(b: &mut StringBuilder) -> ArrayRef {
    let array = b.finish();
    *b = StringBuilder::with_capacity(array.len(), array.value_data().len());
    Arc::new(array)
}

/// Builds event record batches column by column.
pub struct EventColumns {
    with_agent: bool,
    /// Keep dictionary values across batches, so that each batch's dictionary extends the last
    /// (Arrow IPC files allow only such deltas).
    preserve_dictionaries: bool,
    rows: usize,
    bytes: usize,
    id: StringBuilder,
    agent: Runs,
    session_id: StringBuilder,
    seq: Int64Builder,
    timestamp: TimestampMicrosecondBuilder,
    kind: Runs,
    role: Runs,
    meta_type: Runs,
    text: StringBuilder,
    tool_name: Runs,
    call_id: StringBuilder,
    model: Runs,
    is_error: BooleanBuilder,
    exit_code: Int64Builder,
    duration_ms: Int64Builder,
    usage: StructBuilder,
    injected: BooleanBuilder,
    copied: BooleanBuilder,
    rolled_back: BooleanBuilder,
    is_sidechain: BooleanBuilder,
    agent_id: StringBuilder,
    parent_session_id: StringBuilder,
    parent_call_id: StringBuilder,
    record_id: StringBuilder,
    parent_record_id: StringBuilder,
    response_id: StringBuilder,
    cwd: Runs,
    git_branch: Runs,
    agent_version: Runs,
    source_file: Runs,
    source_line: Int64Builder,
    source_byte_offset: Int64Builder,
    source_record_type: Runs,
    phase: Runs,
    parts: StringBuilder,
    raw_text: StringBuilder,
    encrypted: BooleanBuilder,
    omitted: BooleanBuilder,
    signature: StringBuilder,
    tool_input: StringBuilder,
    tool_input_text: StringBuilder,
    tool_result: StringBuilder,
    data: StringBuilder,
    extra: StringBuilder,
    /// The `parts` of the row being appended, as JSON.
    scratch: Vec<u8>,
}

impl EventColumns {
    /// Empty columns; see [`event_schema`] for `with_agent`.
    pub fn new(with_agent: bool, preserve_dictionaries: bool) -> Self {
        EventColumns {
            with_agent,
            preserve_dictionaries,
            rows: 0,
            bytes: 0,
            id: StringBuilder::new(),
            agent: Runs::default(),
            session_id: StringBuilder::new(),
            seq: Int64Builder::new(),
            timestamp: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            kind: Runs::default(),
            role: Runs::default(),
            meta_type: Runs::default(),
            text: StringBuilder::new(),
            tool_name: Runs::default(),
            call_id: StringBuilder::new(),
            model: Runs::default(),
            is_error: BooleanBuilder::new(),
            exit_code: Int64Builder::new(),
            duration_ms: Int64Builder::new(),
            usage: struct_builder(&USAGE_FIELDS),
            injected: BooleanBuilder::new(),
            copied: BooleanBuilder::new(),
            rolled_back: BooleanBuilder::new(),
            is_sidechain: BooleanBuilder::new(),
            agent_id: StringBuilder::new(),
            parent_session_id: StringBuilder::new(),
            parent_call_id: StringBuilder::new(),
            record_id: StringBuilder::new(),
            parent_record_id: StringBuilder::new(),
            response_id: StringBuilder::new(),
            cwd: Runs::default(),
            git_branch: Runs::default(),
            agent_version: Runs::default(),
            source_file: Runs::default(),
            source_line: Int64Builder::new(),
            source_byte_offset: Int64Builder::new(),
            source_record_type: Runs::default(),
            phase: Runs::default(),
            parts: StringBuilder::new(),
            raw_text: StringBuilder::new(),
            encrypted: BooleanBuilder::new(),
            omitted: BooleanBuilder::new(),
            signature: StringBuilder::new(),
            tool_input: StringBuilder::new(),
            tool_input_text: StringBuilder::new(),
            tool_result: StringBuilder::new(),
            data: StringBuilder::new(),
            extra: StringBuilder::new(),
            scratch: Vec::new(),
        }
    }

    /// Rows appended since the last batch.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Approximate bytes of text appended since the last batch.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends one event as a row.
    pub fn append(&mut self, e: &Event) {
        fn json(j: &Option<Json>) -> Option<&str> {
            j.as_ref().map(Json::get)
        }
        let mut bytes = e.id.len() + e.session_id.len() + 64;
        let mut text = |b: &mut StringBuilder, v: Option<&str>| {
            bytes += v.map_or(0, str::len);
            b.append_option(v);
        };
        text(&mut self.id, Some(&e.id));
        if self.with_agent {
            self.agent.append_value(e.agent.as_str());
        }
        text(&mut self.session_id, Some(&e.session_id));
        self.seq.append_value(int(Some(e.seq)).expect("a value"));
        self.timestamp.append_option(micros(e.timestamp));
        self.kind.append_value(e.kind().as_str());
        text(&mut self.agent_id, e.agent_id.as_deref());
        text(&mut self.parent_session_id, e.parent_session_id.as_deref());
        text(&mut self.parent_call_id, e.parent_call_id.as_deref());
        text(&mut self.record_id, e.record_id.as_deref());
        text(&mut self.parent_record_id, e.parent_record_id.as_deref());
        text(&mut self.response_id, e.response_id.as_deref());
        text(&mut self.extra, json(&e.extra));
        self.injected.append_value(e.injected);
        self.copied.append_value(e.copied);
        self.rolled_back.append_value(e.rolled_back);
        self.is_sidechain.append_value(e.is_sidechain);
        self.model.append_option(e.context.model.as_deref());
        self.cwd.append_option(e.context.cwd.as_deref());
        self.git_branch.append_option(e.context.git_branch.as_deref());
        self.agent_version.append_option(e.context.agent_version.as_deref());
        self.source_file.append_value(&e.source.file);
        self.source_line.append_value(int(Some(e.source.line)).expect("a value"));
        self.source_byte_offset.append_value(int(Some(e.source.byte_offset)).expect("a value"));
        self.source_record_type.append_option(e.source.record_type.as_deref());

        // Payload columns: each kind fills its own, the rest stay null.
        let (mut role, mut meta_type, mut body, mut tool_name, mut call_id) = (None, None, None, None, None);
        let (mut is_error, mut exit_code, mut duration_ms, mut usage) = (None, None, None, None::<&Usage>);
        let (mut phase, mut parts, mut raw_text, mut encrypted, mut omitted, mut signature) =
            (None, None, None, None, None, None);
        let (mut tool_input, mut tool_input_text, mut tool_result, mut data) = (None, None, None, None);
        match &e.payload {
            Payload::Message(m) => {
                role = Some(m.role.as_str());
                body = Some(m.text.as_str());
                phase = m.phase.as_deref();
                parts = Some(&m.parts[..]);
            }
            Payload::Reasoning(r) => {
                body = Some(r.text.as_str());
                raw_text = r.raw_text.as_deref();
                encrypted = Some(r.encrypted);
                omitted = Some(r.omitted);
                signature = r.signature.as_deref();
            }
            Payload::ToolCall(c) => {
                tool_name = Some(c.name.as_str());
                call_id = c.call_id.as_deref();
                tool_input = json(&c.input);
                tool_input_text = c.input_text.as_deref();
            }
            Payload::ToolOutput(o) => {
                tool_name = o.name.as_deref();
                call_id = o.call_id.as_deref();
                body = Some(o.text.as_str());
                parts = Some(&o.parts[..]);
                is_error = o.is_error;
                exit_code = o.exit_code;
                duration_ms = int(o.duration_ms);
                tool_result = json(&o.result);
            }
            Payload::Meta(m) => {
                meta_type = Some(m.meta_type.as_str());
                data = json(&m.data);
                usage = m.usage.as_ref();
            }
        }
        self.role.append_option(role);
        self.meta_type.append_option(meta_type);
        text(&mut self.text, body);
        self.tool_name.append_option(tool_name);
        text(&mut self.call_id, call_id);
        self.is_error.append_option(is_error);
        self.exit_code.append_option(exit_code);
        self.duration_ms.append_option(duration_ms);
        let counts = usage.map(|u| {
            [
                u.input_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
                u.output_tokens,
                u.reasoning_tokens,
                u.total_tokens,
            ]
            .map(int)
        });
        append_ints(&mut self.usage, counts.as_ref().map(|c| &c[..]));
        self.phase.append_option(phase);
        let parts = parts.filter(|p| !p.is_empty()).map(|p| {
            self.scratch.clear();
            crate::write::encode::parts(p, &mut self.scratch);
            simdutf8::basic::from_utf8(&self.scratch).expect("JSON written from strings is UTF-8")
        });
        text(&mut self.parts, parts);
        text(&mut self.raw_text, raw_text);
        self.encrypted.append_option(encrypted);
        self.omitted.append_option(omitted);
        text(&mut self.signature, signature);
        text(&mut self.tool_input, tool_input);
        text(&mut self.tool_input_text, tool_input_text);
        text(&mut self.tool_result, tool_result);
        text(&mut self.data, data);
        self.rows += 1;
        self.bytes += bytes;
    }

    /// The rows appended so far as one batch; the builders start empty again.
    ///
    /// # Errors
    /// Only on a bug (columns of different lengths).
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let preserve = self.preserve_dictionaries;
        let dict = |b: &mut Runs| b.finish(preserve);
        let mut columns: Vec<ArrayRef> = vec![strings(&mut self.id)];
        if self.with_agent {
            columns.push(dict(&mut self.agent));
        }
        columns.extend([
            strings(&mut self.session_id),
            Arc::new(self.seq.finish()),
            Arc::new(self.timestamp.finish()),
            dict(&mut self.kind),
            dict(&mut self.role),
            dict(&mut self.meta_type),
            strings(&mut self.text),
            dict(&mut self.tool_name),
            strings(&mut self.call_id),
            dict(&mut self.model),
            Arc::new(self.is_error.finish()),
            Arc::new(self.exit_code.finish()),
            Arc::new(self.duration_ms.finish()),
            Arc::new(self.usage.finish()),
            Arc::new(self.injected.finish()),
            Arc::new(self.copied.finish()),
            Arc::new(self.rolled_back.finish()),
            Arc::new(self.is_sidechain.finish()),
            strings(&mut self.agent_id),
            strings(&mut self.parent_session_id),
            strings(&mut self.parent_call_id),
            strings(&mut self.record_id),
            strings(&mut self.parent_record_id),
            strings(&mut self.response_id),
            dict(&mut self.cwd),
            dict(&mut self.git_branch),
            dict(&mut self.agent_version),
            dict(&mut self.source_file),
            Arc::new(self.source_line.finish()),
            Arc::new(self.source_byte_offset.finish()),
            dict(&mut self.source_record_type),
            dict(&mut self.phase),
            strings(&mut self.parts),
            strings(&mut self.raw_text),
            Arc::new(self.encrypted.finish()),
            Arc::new(self.omitted.finish()),
            strings(&mut self.signature),
            strings(&mut self.tool_input),
            strings(&mut self.tool_input_text),
            strings(&mut self.tool_result),
            strings(&mut self.data),
            strings(&mut self.extra),
        ]);
        self.rows = 0;
        self.bytes = 0;
        RecordBatch::try_new(event_schema(self.with_agent), columns)
    }
}

/// The sessions of a run as one record batch.
///
/// # Errors
/// Only on a bug (columns of different lengths).
pub fn session_batch(sessions: &[&SessionSummary], with_agent: bool) -> Result<RecordBatch, ArrowError> {
    let mut session_id = StringBuilder::new();
    let mut agent = Dict::new();
    let mut title = StringBuilder::new();
    let mut started = TimestampMicrosecondBuilder::new().with_timezone("UTC");
    let mut ended = TimestampMicrosecondBuilder::new().with_timezone("UTC");
    let mut cwd = StringBuilder::new();
    let mut git_branch = StringBuilder::new();
    let mut versions = ListBuilder::new(StringBuilder::new());
    let mut models = ListBuilder::new(StringBuilder::new());
    let mut parent = StringBuilder::new();
    let mut relation = Dict::new();
    let mut agent_ids = ListBuilder::new(StringBuilder::new());
    let mut files = ListBuilder::new(StringBuilder::new());
    let mut counts = struct_builder(&COUNT_FIELDS);
    let mut usage = struct_builder(&TOTAL_FIELDS);
    let mut orphan_calls = ListBuilder::new(StringBuilder::new());
    let mut orphan_outputs = ListBuilder::new(StringBuilder::new());
    let mut diagnostics = StringBuilder::new();
    let list = |b: &mut ListBuilder<StringBuilder>, values: &[String]| {
        for v in values {
            b.values().append_value(v);
        }
        b.append(true);
    };
    for s in sessions {
        session_id.append_value(&s.session_id);
        agent.append_value(s.agent.as_str());
        title.append_option(s.title.as_deref());
        started.append_option(micros(s.started_at));
        ended.append_option(micros(s.ended_at));
        cwd.append_option(s.cwd.as_deref());
        git_branch.append_option(s.git_branch.as_deref());
        list(&mut versions, &s.agent_versions);
        list(&mut models, &s.models);
        parent.append_option(s.parent_session_id.as_deref());
        relation.append_option(s.relation.map(|r| serde_plain(&r)).as_deref());
        list(&mut agent_ids, &s.agent_ids);
        list(&mut files, &s.files);
        let c = &s.counts;
        let c = [c.lines, c.events, c.messages, c.reasoning, c.tool_calls, c.tool_outputs, c.meta, c.diagnostics]
            .map(|v| int(Some(v)));
        append_ints(&mut counts, Some(&c));
        let u = &s.usage;
        let u = [
            u.responses,
            u.input_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.output_tokens,
            u.reasoning_tokens,
            u.total_tokens,
        ]
        .map(|v| int(Some(v)));
        append_ints(&mut usage, Some(&u));
        list(&mut orphan_calls, &s.orphan_calls);
        list(&mut orphan_outputs, &s.orphan_outputs);
        diagnostics.append_value(Json::from_value(&s.diagnostics).get());
    }
    let mut columns: Vec<ArrayRef> = vec![Arc::new(session_id.finish())];
    if with_agent {
        columns.push(Arc::new(agent.finish()));
    }
    columns.extend([
        Arc::new(title.finish()) as ArrayRef,
        Arc::new(started.finish()),
        Arc::new(ended.finish()),
        Arc::new(cwd.finish()),
        Arc::new(git_branch.finish()),
        Arc::new(versions.finish()),
        Arc::new(models.finish()),
        Arc::new(parent.finish()),
        Arc::new(relation.finish()),
        Arc::new(agent_ids.finish()),
        Arc::new(files.finish()),
        Arc::new(counts.finish()),
        Arc::new(usage.finish()),
        Arc::new(orphan_calls.finish()),
        Arc::new(orphan_outputs.finish()),
        Arc::new(diagnostics.finish()),
    ]);
    RecordBatch::try_new(session_schema(with_agent), columns)
}

/// A unit enum's serde name (`subagent`, `tool_call`, …).
fn serde_plain<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => unreachable!("unit enums serialise as strings"),
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Runs of equal values give the arrays a lookup per row gives, batch after batch,
        /// with dictionaries kept across batches or not.
        #[test]
        fn runs_build_the_arrays_a_lookup_per_row_builds(
            batches in prop::collection::vec(
                prop::collection::vec(prop::option::of(prop::sample::select(vec!["", "a", "b", "ab"])), 0..12),
                1..4,
            ),
            preserve: bool,
        ) {
            let (mut runs, mut rows) = (Runs::default(), Dict::new());
            for batch in batches {
                for value in &batch {
                    runs.append_option(*value);
                    rows.append_option(*value);
                }
                let expected = if preserve { rows.finish_preserve_values() } else { rows.finish() };
                let built = runs.finish(preserve);
                let built = built.as_dictionary::<Int32Type>();
                // The same keys into the same values, not only the same strings.
                prop_assert_eq!(built.keys(), expected.keys());
                prop_assert_eq!(built.values(), expected.values());
            }
        }
    }
}
