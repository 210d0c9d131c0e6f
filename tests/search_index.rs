//! `agentlog search` with the full-text index `agentlog archive --index` keeps: the same
//! results as reading the archive's files, for words, phrases, several terms and restrictions,
//! on the real corpora and on words a tokenizer may split differently; kept up to date by later
//! archive runs; set aside when a file changed under it.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// Archives `inputs` into `dir` with an index; returns what archive said on stderr.
fn archive(dir: &Path, inputs: &[PathBuf]) -> String {
    let out = cargo_bin_cmd!("agentlog").args(["archive", "--index"]).arg(dir).args(inputs).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `agentlog search --json` over the archive in `dir`; the document and stderr.
fn search(dir: &Path, query: &str, args: &[&str]) -> (Value, String) {
    let out = cargo_bin_cmd!("agentlog")
        .args(["search", "--json", "--limit", "100000"])
        .args(args)
        .arg(query)
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{query}: {}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Searches with the index and without it: both must give the same document, but for what
/// they say was searched. Returns the number of sessions found.
fn same_both_ways(dir: &Path, query: &str, args: &[&str]) -> usize {
    let (mut indexed, stderr) = search(dir, query, args);
    assert_eq!(indexed["searched"], "index", "{query} {args:?} did not use the index: {stderr}");
    let (mut read, _) = search(dir, query, &[args, &["--no-index"]].concat());
    assert_eq!(read["searched"], "files");
    indexed.as_object_mut().unwrap().remove("searched");
    read.as_object_mut().unwrap().remove("searched");
    assert_eq!(indexed, read, "{query} {args:?}: the index and the files differ");
    indexed["sessions"].as_array().unwrap().len()
}

#[test]
fn the_index_answers_as_the_files_of_the_real_corpora_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = vec![common::own_corpus()];
    inputs.extend(common::shared_corpus());
    let said = archive(dir.path(), &inputs);
    assert!(said.contains("index: ") && said.contains(" files indexed"), "{said}");
    let mut found = 0;
    for (query, args) in [
        ("error", &[][..]),
        ("pytest", &[]),
        ("hello", &[]),
        ("\"no such file\"", &[]),
        ("test passed", &[]),
        ("README", &["--in", "tool-input"]),
        ("error", &["--in", "prompt,answer"]),
        ("file", &["--tool", "Bash", "--agent", "claude-code"]),
        ("the", &["--since", "2025-10-01", "--until", "2026-06-01"]),
        ("zzzyxwvut", &[]),
    ] {
        found += same_both_ways(dir.path(), query, args);
    }
    assert!(found >= common::at_least(100, 10), "only {found} sessions found in all");
}

#[test]
fn words_the_tokenizer_may_split_otherwise_match_as_in_the_files() {
    let source = tempfile::tempdir().unwrap();
    let session = "5e1ec7ed-0000-4000-8000-000000000001";
    let texts = [
        "run snake_case_name now",
        "un café naïve à Zürich",
        "STRASSE and straße",
        "日本語のテキスト and 中文",
        "x² plus H₂O and ½ cup",
        "an id 0f3c9a2e-aaaa-bbbb and base64 aGVsbG8gd29ybGQ=",
        "dotted.name.here and path/to/file.rs",
    ];
    let mut lines = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let line = serde_json::json!({
            "type": "user", "uuid": format!("00000000-0000-4000-8000-{i:012}"), "parentUuid": null,
            "sessionId": session, "timestamp": format!("2026-01-0{}T00:00:00Z", i + 1), "cwd": "/tmp/p",
            "message": {"role": "user", "content": text},
        });
        lines.push(line.to_string());
    }
    std::fs::write(source.path().join(format!("{session}.jsonl")), lines.join("\n") + "\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    archive(dir.path(), &[source.path().to_owned()]);
    let mut found = 0;
    for query in [
        "snake_case_name",
        "snake",
        "case",
        "café",
        "cafe",
        "naive",
        "zürich",
        "straße",
        "strasse",
        "日本語のテキスト",
        "日本語",
        "中文",
        "x",
        "x²",
        "h₂o",
        "H",
        "0f3c9a2e",
        "aGVsbG8gd29ybGQ",
        "dotted",
        "\"name here\"",
        "\"path to file rs\"",
        "file.rs",
    ] {
        found += same_both_ways(dir.path(), query, &[]);
    }
    assert!(found >= 10, "only {found} of the queries found the session");
}

#[test]
fn later_archive_runs_keep_the_index_current_and_a_changed_file_sets_it_aside() {
    let source = tempfile::tempdir().unwrap();
    let samples = common::own_corpus().join("claude");
    let copy = |name: &str| std::fs::copy(samples.join(name), source.path().join(name)).unwrap();
    copy("user-and-assistant-text.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let first = archive(dir.path(), &[source.path().to_owned()]);
    assert!(first.contains("index: 1 files indexed"), "{first}");
    let again = archive(dir.path(), &[source.path().to_owned()]);
    assert!(again.contains("index: 0 files indexed") && again.contains("1 unchanged"), "{again}");

    // A new session: indexed by the next run, found through the index.
    let session = "5e1ec7ed-0000-4000-8000-000000000002";
    let line = serde_json::json!({
        "type": "user", "uuid": "00000000-0000-4000-8000-000000000001", "parentUuid": null,
        "sessionId": session, "timestamp": "2026-01-01T00:00:00Z", "cwd": "/tmp/p",
        "message": {"role": "user", "content": "where is zanzibarquux defined"},
    });
    std::fs::write(source.path().join(format!("{session}.jsonl")), line.to_string() + "\n").unwrap();
    let third = archive(dir.path(), &[source.path().to_owned()]);
    // (Claude Code's files of one folder are one group: convert redoes both.)
    assert!(third.contains("index: 2 files indexed") && third.contains("0 removed"), "{third}");
    let (doc, _) = search(dir.path(), "zanzibarquux", &[]);
    assert_eq!(doc["searched"], "index");
    assert_eq!(doc["sessions"][0]["session_id"], session);

    // A file of the archive changed behind the index's back: the files are read, and say so.
    let archived = dir.path().join(format!("sessions/claude-code/claude-code-{session}.jsonl"));
    let mut text = std::fs::read_to_string(&archived).unwrap();
    text = text.replace("zanzibarquux", "quuxzanzibar and more");
    std::fs::write(&archived, text).unwrap();
    let (doc, stderr) = search(dir.path(), "quuxzanzibar", &[]);
    assert_eq!(doc["searched"], "files");
    assert!(stderr.contains("out of date"), "{stderr}");
    assert_eq!(doc["sessions"][0]["session_id"], session);
}
