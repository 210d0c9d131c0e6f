//! The interchange writer, `agentlog validate` on interchange documents, and agentlog reading
//! its own outputs back.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use agentlog::model::SCHEMA_VERSION;
use assert_cmd::cargo::cargo_bin_cmd;

fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![common::own_corpus()];
    inputs.extend(common::shared_corpus());
    inputs
}

/// Runs `agentlog convert -q INPUTS ARGS` with a fixed creation time; returns the exit code.
fn convert(inputs: &[PathBuf], args: &[&str]) -> i32 {
    let out = cargo_bin_cmd!("agentlog")
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .arg("convert")
        .arg("-q")
        .args(inputs)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.status.code().unwrap()
}

fn path_arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn interchange_of_the_whole_corpus_validates_with_agentlog_and_python() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("all.json");
    convert(&inputs(), &["-o", path_arg(&doc)]);
    let out = cargo_bin_cmd!("agentlog").args(["validate", "--format", "json"]).arg(&doc).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"][0]["format"], "interchange");
    assert_eq!(report["files"][0]["valid"], true);
    assert!(report["files"][0]["events"].as_u64().unwrap() > 200);

    if !common::python_has("jsonschema") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("tests/independent/check_schema.py"))
        .arg(root.join("schema"))
        .arg(&doc)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn same_input_gives_the_same_document() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    convert(&inputs(), &["-o", path_arg(&a)]);
    convert(&inputs(), &["-o", path_arg(&b)]);
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
}

/// Events of a unified JSONL text grouped by session, in order within each session.
fn by_session(text: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut sessions: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = format!("{}/{}", v["agent"].as_str().unwrap(), v["session_id"].as_str().unwrap());
        sessions.entry(key).or_default().push(line.to_owned());
    }
    sessions
}

#[test]
fn interchange_read_back_gives_the_direct_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let (doc, direct, back) =
        (dir.path().join("all.json"), dir.path().join("direct.jsonl"), dir.path().join("back.jsonl"));
    convert(&inputs(), &["-o", path_arg(&doc)]);
    convert(&inputs(), &["-o", path_arg(&direct)]);
    assert_eq!(convert(&[doc], &["--from", "interchange", "-o", path_arg(&back)]), 0);
    let (direct, back) = (std::fs::read_to_string(direct).unwrap(), std::fs::read_to_string(back).unwrap());
    // The document groups events by session: the same events, byte for byte, in the same
    // order within every session.
    assert_eq!(direct.lines().count(), back.lines().count());
    assert_eq!(by_session(&direct), by_session(&back));
}

#[test]
fn unified_read_back_is_byte_identical_and_auto_detected() {
    let dir = tempfile::tempdir().unwrap();
    let (direct, back) = (dir.path().join("direct.jsonl"), dir.path().join("back.jsonl"));
    convert(&inputs(), &["-o", path_arg(&direct)]);
    assert_eq!(convert(std::slice::from_ref(&direct), &["-o", path_arg(&back)]), 0, "auto-detected as unified");
    assert!(std::fs::read(&direct).unwrap() == std::fs::read(&back).unwrap());
}

#[test]
fn one_document_per_session_stays_inside_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    // A session id that tries to climb out of the output directory.
    let line =
        std::fs::read_to_string(common::own_corpus().join("codex/envelope-user-and-assistant-text.jsonl")).unwrap();
    let evil = dir.path().join("evil.jsonl");
    let unified =
        cargo_bin_cmd!("agentlog").arg("convert").arg("-q").arg("-").write_stdin(line).output().unwrap().stdout;
    let text =
        String::from_utf8(unified).unwrap().replace("019c8a4c-0000-7000-8000-00000000c0de", "../../../escape/../x");
    std::fs::write(&evil, text).unwrap();
    let out_dir = dir.path().join("docs");
    let target = format!("{}/", out_dir.display());
    assert_eq!(convert(&[evil], &["--to", "interchange", "-o", &target]), 0);
    let names: Vec<String> = std::fs::read_dir(out_dir.join("codex"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 1, "only the agent folder");
    assert!(names[0].starts_with("codex-") && !names[0].contains(".."), "{names:?}");
    assert!(!dir.path().join("escape").exists());
}

#[test]
fn an_event_breaking_the_schema_stops_the_writer_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let line =
        std::fs::read_to_string(common::own_corpus().join("codex/envelope-user-and-assistant-text.jsonl")).unwrap();
    let unified =
        cargo_bin_cmd!("agentlog").arg("convert").arg("-q").arg("-").write_stdin(line).output().unwrap().stdout;
    let text = String::from_utf8(unified).unwrap().replacen(
        &format!("\"schema_version\":\"{SCHEMA_VERSION}\""),
        "\"schema_version\":\"9.0\"",
        2,
    );
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, text).unwrap();
    let doc = dir.path().join("out.json");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "--from", "unified"])
        .arg(&bad)
        .arg("-o")
        .arg(&doc)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "event seq 0 of session 019c8a4c-0000-7000-8000-00000000c0de breaks the event schema at /schema_version"
        ),
        "{stderr}"
    );
    // Its own diagnostic, not an I/O failure to write the file.
    assert!(stderr.contains("agentlog::output::schema") && !stderr.contains("cannot write"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "only the input is left: {left:?}");
}

#[test]
fn validate_names_the_pointer_of_a_bad_event_and_where_a_truncated_document_stops() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("one.json");
    convert(&[common::own_corpus().join("codex/envelope-user-and-assistant-text.jsonl")], &["-o", path_arg(&doc)]);
    let text = std::fs::read_to_string(&doc).unwrap();
    let wrong = dir.path().join("wrong.json");
    std::fs::write(&wrong, text.replacen("\"seq\":1,", "\"seq\":\"one\",", 1)).unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let out =
        cargo_bin_cmd!("agentlog").arg("validate").arg(&wrong).arg(&truncated).env("NO_COLOR", "1").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/sessions/0/events/1/seq: \"one\" is not of type \"integer\" (schema keyword `type`)"),
        "{stderr}"
    );
    assert!(stderr.contains("invalid JSON: EOF while parsing"), "{stderr}");
    assert!(stderr.contains(&format!("{}:", truncated.display())), "{stderr}");
}
