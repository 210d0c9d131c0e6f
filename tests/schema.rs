//! Every unified line agentlog writes validates against `schema/event.schema.json`, checked by
//! the `jsonschema` crate and, where Python's `jsonschema` is installed, independently by it.

mod common;

use std::path::Path;
use std::process::Command;

use agentlog::write::EventSink;
use agentlog::write::jsonl::Writer;
use serde_json::Value;

/// Unified JSONL of every corpus file, written through the JSONL writer.
fn unified_corpus() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut sink = Writer::new(&mut out);
        for (path, reader) in common::all_session_files() {
            let name = path.display().to_string();
            let (events, _) = common::read_file(reader, &path, &name);
            for e in &events {
                sink.event(e).unwrap();
            }
        }
        sink.finish().unwrap();
    }
    out
}

fn schema(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema").join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The schema with `unevaluatedProperties: false` on the root and on every definition, so that
/// a field the Rust types write but the schema does not describe fails validation.
fn closed(mut schema: Value) -> Value {
    let close = |v: &mut Value| {
        if let Value::Object(map) = v
            && (map.contains_key("properties") || map.contains_key("oneOf"))
        {
            map.insert("unevaluatedProperties".into(), false.into());
        }
    };
    close(&mut schema);
    for def in schema["$defs"].as_object_mut().unwrap().values_mut() {
        close(def);
    }
    schema
}

#[test]
fn every_unified_line_validates_against_the_closed_event_schema() {
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&closed(schema("event.schema.json")))
        .unwrap();
    let out = unified_corpus();
    let mut lines = 0;
    for (i, line) in std::str::from_utf8(&out).unwrap().lines().enumerate() {
        let value: Value = serde_json::from_str(line).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "line {}: {errors:#?}\n{line}", i + 1);
        lines += 1;
    }
    assert!(lines > 10, "the corpus produced {lines} lines");
}

#[test]
fn every_unified_line_reads_back_as_the_same_event() {
    let out = unified_corpus();
    for line in std::str::from_utf8(&out).unwrap().lines() {
        let event: agentlog::model::Event = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }
}

#[test]
fn python_jsonschema_accepts_the_schemas_and_the_output() {
    if !common::python_has("jsonschema") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("corpus.unified.jsonl");
    std::fs::write(&jsonl, unified_corpus()).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("tests/independent/check_schema.py"))
        .arg(root.join("schema"))
        .arg(&jsonl)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("lines and documents valid"));
}
