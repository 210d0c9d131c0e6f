//! Parquet and Arrow IPC output read back: the same events, field by field, for the whole
//! corpus. The events are rebuilt from the columns by name here, independently of the writer.

mod common;

use std::fs::File;
use std::sync::Arc;

use agentlog::model::{
    Agent, Context, Event, Json, Message, Meta, MetaType, Payload, Reasoning, Role, SessionSummary, Source, ToolCall,
    ToolOutput, Usage,
};
use agentlog::write::{Options, PartitionKey, Target, writer};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Every event of the project's and the shared corpus, read as a run reads them.
fn corpus_events() -> Vec<Event> {
    let mut events = Vec::new();
    let mut roots = vec![common::own_corpus()];
    roots.extend(common::shared_corpus());
    for root in roots {
        for (agent_dir, reader) in [
            ("claude", &agentlog::read::claude::Claude as &dyn agentlog::read::Reader),
            ("codex", &agentlog::read::codex::Codex),
        ] {
            events.extend(common::read_tree(reader, &root.join(agent_dir)).0);
        }
    }
    events
}

fn write_all(format: &str, target: Target<'_>, options: &Options, events: &[Event]) {
    let mut sink = writer(format).unwrap().open(target, options).unwrap();
    for e in events {
        sink.event(e).unwrap();
    }
    sink.finish().unwrap();
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> &'a Arc<dyn Array> {
    batch.column_by_name(name).unwrap_or_else(|| panic!("no column {name}"))
}

fn string(batch: &RecordBatch, name: &str, i: usize) -> Option<String> {
    let col = column(batch, name);
    if col.is_null(i) {
        return None;
    }
    Some(match col.data_type() {
        arrow_schema::DataType::Dictionary(..) => {
            let dict = col.as_dictionary::<Int32Type>();
            let values = dict.values().as_any().downcast_ref::<StringArray>().unwrap();
            values.value(dict.keys().value(i) as usize).to_owned()
        }
        _ => col.as_string::<i32>().value(i).to_owned(),
    })
}

fn int(batch: &RecordBatch, name: &str, i: usize) -> Option<i64> {
    let col = column(batch, name).as_primitive::<Int64Type>();
    (!col.is_null(i)).then(|| col.value(i))
}

fn boolean(batch: &RecordBatch, name: &str, i: usize) -> Option<bool> {
    let col = column(batch, name).as_boolean();
    (!col.is_null(i)).then(|| col.value(i))
}

fn json(batch: &RecordBatch, name: &str, i: usize) -> Option<Json> {
    string(batch, name, i).map(|s| Json::parse(&s).unwrap())
}

fn enum_value<T: serde::de::DeserializeOwned>(text: Option<String>) -> Option<T> {
    text.map(|t| serde_json::from_value(serde_json::Value::String(t)).unwrap())
}

/// Rebuilds the events of a batch from its columns.
fn events_of(batch: &RecordBatch, agent_from_path: Option<Agent>) -> Vec<Event> {
    let ts = column(batch, "timestamp").as_primitive::<TimestampMicrosecondType>();
    let usage = column(batch, "usage").as_struct();
    (0..batch.num_rows())
        .map(|i| {
            let s = |n: &str| string(batch, n, i);
            let b = |n: &str| boolean(batch, n, i);
            let parts = || json(batch, "parts", i).map(|p| serde_json::from_str(p.get()).unwrap()).unwrap_or_default();
            let payload = match s("kind").as_deref().unwrap() {
                // A message whose only part is its text has no `parts` (schema 1.6).
                "message" => Payload::Message(
                    Message {
                        role: enum_value::<Role>(s("role")).unwrap(),
                        text: s("text").unwrap(),
                        parts: parts(),
                        phase: s("phase"),
                        prompt_history: enum_value(s("prompt_history")),
                    }
                    .with_parts_restored(),
                ),
                "reasoning" => Payload::Reasoning(Reasoning {
                    text: s("text").unwrap(),
                    raw_text: s("raw_text"),
                    encrypted: b("encrypted").unwrap(),
                    omitted: b("omitted").unwrap(),
                    signature: s("signature"),
                }),
                "tool_call" => Payload::ToolCall(ToolCall {
                    tool_kind: enum_value(s("tool_kind")),
                    call_id: s("call_id"),
                    name: s("tool_name").unwrap(),
                    input: json(batch, "tool_input", i),
                    input_text: s("tool_input_text"),
                }),
                "tool_output" => Payload::ToolOutput(ToolOutput {
                    tool_kind: enum_value(s("tool_kind")),
                    failed: b("failed"),
                    call_id: s("call_id"),
                    name: s("tool_name"),
                    text: s("text").unwrap(),
                    parts: parts(),
                    is_error: b("is_error"),
                    exit_code: int(batch, "exit_code", i),
                    duration_ms: int(batch, "duration_ms", i).map(|d| d as u64),
                    result: json(batch, "tool_result", i),
                }),
                "meta" => Payload::Meta(Meta {
                    meta_type: enum_value::<MetaType>(s("meta_type")).unwrap(),
                    data: json(batch, "data", i),
                    usage: (!usage.is_null(i)).then(|| {
                        let n = |f: &str| {
                            let c = usage.column_by_name(f).unwrap().as_primitive::<Int64Type>();
                            (!c.is_null(i)).then(|| c.value(i) as u64)
                        };
                        Usage {
                            input_tokens: n("input_tokens"),
                            cache_read_tokens: n("cache_read_tokens"),
                            cache_write_tokens: n("cache_write_tokens"),
                            cache_write_1h_tokens: n("cache_write_1h_tokens"),
                            output_tokens: n("output_tokens"),
                            reasoning_tokens: n("reasoning_tokens"),
                            total_tokens: n("total_tokens"),
                            cost_usd: {
                                let c = batch.column_by_name("cost_usd").unwrap().as_primitive::<Float64Type>();
                                (!c.is_null(i)).then(|| c.value(i))
                            },
                            model: s("model"),
                            response_id: s("response_id"),
                        }
                    }),
                }),
                other => panic!("unknown kind {other}"),
            };
            let mut e = Event::new(s("session_id").unwrap(), payload);
            e.id = s("id").unwrap();
            e.agent = agent_from_path.unwrap_or_else(|| enum_value(s("agent")).unwrap());
            e.seq = int(batch, "seq", i).unwrap() as u64;
            e.timestamp = (!ts.is_null(i)).then(|| chrono::DateTime::from_timestamp_micros(ts.value(i)).unwrap());
            e.record_id = s("record_id");
            e.parent_record_id = s("parent_record_id");
            e.response_id = s("response_id");
            e.agent_id = s("agent_id");
            e.is_sidechain = b("is_sidechain").unwrap();
            e.parent_session_id = s("parent_session_id");
            e.parent_call_id = s("parent_call_id");
            e.injected = b("injected").unwrap();
            e.copied = b("copied").unwrap();
            e.rolled_back = b("rolled_back").unwrap();
            e.context = Context {
                model: s("model"),
                cwd: s("cwd"),
                git_branch: s("git_branch"),
                agent_version: s("agent_version"),
            };
            e.source = Source {
                file: s("source_file").unwrap(),
                line: int(batch, "source_line", i).unwrap() as u64,
                byte_offset: int(batch, "source_byte_offset", i).unwrap() as u64,
                record_type: s("source_record_type"),
            };
            e.extra = json(batch, "extra", i);
            e
        })
        .collect()
}

fn read_parquet(path: &std::path::Path, agent: Option<Agent>) -> Vec<Event> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap().build().unwrap();
    reader.flat_map(|b| events_of(&b.unwrap(), agent)).collect()
}

fn assert_same(read: &[Event], written: &[Event]) {
    assert_eq!(read.len(), written.len(), "row count");
    for (r, w) in read.iter().zip(written) {
        assert_eq!(r, w, "event {} of {} line {}", w.id, w.source.file, w.source.line);
    }
}

#[test]
fn parquet_gives_back_the_same_events_field_by_field() {
    let events = corpus_events();
    assert!(events.len() > 200);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.parquet");
    write_all("parquet", Target::Path(path.clone()), &Options::default(), &events);
    assert_same(&read_parquet(&path, None), &events);
    assert!(dir.path().join("events.sessions.parquet").is_file());
}

#[test]
fn parquet_encoded_on_a_pool_is_the_same_file() {
    // Enough rows for many record batches and more than one row group.
    let corpus = corpus_events();
    let events: Vec<Event> = corpus.iter().cycle().take(140_000).cloned().collect();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, threads: usize| {
        let path = dir.path().join(name);
        write_all("parquet", Target::Path(path.clone()), &Options { threads, ..Options::default() }, &events);
        path
    };
    let (here, pooled) = (write("here.parquet", 1), write("pooled.parquet", 3));
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&pooled).unwrap()).unwrap();
    assert!(builder.metadata().num_row_groups() >= 2, "{}", builder.metadata().num_row_groups());
    assert!(std::fs::read(&here).unwrap() == std::fs::read(&pooled).unwrap(), "the two files differ");
    let mut stream = Vec::new();
    let options = Options { threads: 2, ..Options::default() };
    write_all("parquet", Target::Stream(Box::new(&mut stream)), &options, &events[..1000]);
    let read: Vec<Event> = ParquetRecordBatchReaderBuilder::try_new(bytes_file(&dir, &stream))
        .unwrap()
        .build()
        .unwrap()
        .flat_map(|b| events_of(&b.unwrap(), None))
        .collect();
    assert_same(&read, &events[..1000]);
}

/// A file holding `bytes`, for readers that need one.
fn bytes_file(dir: &tempfile::TempDir, bytes: &[u8]) -> File {
    let path = dir.path().join("stream.parquet");
    std::fs::write(&path, bytes).unwrap();
    File::open(path).unwrap()
}

#[test]
fn arrow_ipc_gives_back_the_same_events_field_by_field() {
    let events = corpus_events();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.arrow");
    write_all("arrow", Target::Path(path.clone()), &Options::default(), &events);
    let reader = arrow_ipc::reader::FileReader::try_new(File::open(&path).unwrap(), None).unwrap();
    let read: Vec<Event> = reader.flat_map(|b| events_of(&b.unwrap(), None)).collect();
    assert_same(&read, &events);
    // The stream form, as written to standard output.
    let mut stream = Vec::new();
    write_all("arrow", Target::Stream(Box::new(&mut stream)), &Options::default(), &events);
    let reader = arrow_ipc::reader::StreamReader::try_new(&stream[..], None).unwrap();
    let read: Vec<Event> = reader.flat_map(|b| events_of(&b.unwrap(), None)).collect();
    assert_same(&read, &events);
}

#[test]
fn partitioned_dataset_holds_every_event_once_with_partition_columns_only_in_paths() {
    let events = corpus_events();
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        partition_by: vec![PartitionKey::Agent, PartitionKey::Date],
        run_id: "test".into(),
        ..Options::default()
    };
    write_all("parquet", Target::Path(dir.path().to_owned()), &options, &events);
    let mut read = Vec::new();
    for entry in walkdir::WalkDir::new(dir.path().join("events")).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_type().is_dir() {
            continue;
        }
        let path = entry.path();
        let rel = path.strip_prefix(dir.path().join("events")).unwrap().to_string_lossy().to_string();
        assert!(rel.starts_with("agent=") && rel.contains("/date=") && rel.ends_with(".parquet"), "{rel}");
        let agent = if rel.starts_with("agent=codex/") { Agent::Codex } else { Agent::ClaudeCode };
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
        assert!(builder.schema().field_with_name("agent").is_err(), "{rel}: agent only in the path");
        assert!(builder.schema().field_with_name("date").is_err(), "{rel}: date only in the path");
        read.extend(read_parquet(path, Some(agent)));
    }
    // Files group events by partition: compare as sets of ids, then each event.
    let by_id: std::collections::HashMap<&str, &Event> = events.iter().map(|e| (e.id.as_str(), e)).collect();
    assert_eq!(read.len(), events.len());
    for r in &read {
        assert_eq!(Some(&r), by_id.get(r.id.as_str()), "{}", r.id);
    }
    assert!(dir.path().join("sessions").is_dir());
}

fn strings(batch: &RecordBatch, name: &str, i: usize) -> Vec<String> {
    let list = column(batch, name).as_list::<i32>().value(i);
    list.as_string::<i32>().iter().map(|v| v.unwrap().to_owned()).collect()
}

/// The fields of a struct of integers, by name, as a JSON object.
fn int_struct(batch: &RecordBatch, name: &str, i: usize) -> serde_json::Value {
    let s = column(batch, name).as_struct();
    let fields = s.fields().iter().zip(s.columns());
    fields.map(|(f, c)| (f.name().clone(), serde_json::Value::from(c.as_primitive::<Int64Type>().value(i)))).collect()
}

/// Rebuilds the session summaries of a batch from its columns.
fn sessions_of(batch: &RecordBatch) -> Vec<SessionSummary> {
    let time = |name: &str, i: usize| {
        let c = column(batch, name).as_primitive::<TimestampMicrosecondType>();
        (!c.is_null(i)).then(|| chrono::DateTime::from_timestamp_micros(c.value(i)).unwrap())
    };
    (0..batch.num_rows())
        .map(|i| {
            let s = |n: &str| string(batch, n, i);
            let l = |n: &str| strings(batch, n, i);
            SessionSummary {
                session_id: s("session_id").unwrap(),
                agent: enum_value::<Agent>(s("agent")).unwrap(),
                agent_versions: l("agent_versions"),
                title: s("title"),
                started_at: time("started_at", i),
                ended_at: time("ended_at", i),
                cwd: s("cwd"),
                git_branch: s("git_branch"),
                entrypoint: s("entrypoint"),
                models: l("models"),
                parent_session_id: s("parent_session_id"),
                relation: enum_value(s("relation")),
                prompts_only: boolean(batch, "prompts_only", i).unwrap(),
                agent_ids: l("agent_ids"),
                files: l("files"),
                counts: serde_json::from_value(int_struct(batch, "counts", i)).unwrap(),
                usage: serde_json::from_value(int_struct(batch, "usage", i)).unwrap(),
                orphan_calls: l("orphan_calls"),
                orphan_outputs: l("orphan_outputs"),
                diagnostics: serde_json::from_str(&s("diagnostics").unwrap()).unwrap(),
            }
        })
        .collect()
}

#[test]
fn sessions_table_gives_back_the_same_summaries_field_by_field() {
    let events = corpus_events();
    let mut expected = agentlog::write::Sessions::default();
    for e in &events {
        expected.observe(e);
    }
    let expected = expected.finish();
    // Every column is exercised: a summary with a relation, a title, orphans and versions.
    assert!(expected.iter().any(|s| s.relation.is_some() && s.title.is_some() && !s.agent_versions.is_empty()));
    assert!(expected.iter().any(|s| !s.orphan_calls.is_empty()));

    let dir = tempfile::tempdir().unwrap();
    write_all("parquet", Target::Path(dir.path().join("events.parquet")), &Options::default(), &events);
    let file = File::open(dir.path().join("events.sessions.parquet")).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let read: Vec<SessionSummary> = reader.flat_map(|b| sessions_of(&b.unwrap())).collect();
    assert_eq!(read.len(), expected.len());
    for (r, e) in read.iter().zip(&expected) {
        assert_eq!(r, e, "session {}", e.session_id);
    }
}
