//! `agentlog drift`: the record kinds, fields and files agentlog does not map yet, per agent
//! and version, checked against the samples read as plain JSON.

mod common;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

fn drift(args: &[&str]) -> (Value, i32) {
    let out = cargo_bin_cmd!("agentlog").args(["drift", "-q", "--json"]).args(args).output().unwrap();
    (serde_json::from_slice(&out.stdout).unwrap(), out.status.code().unwrap())
}

fn rows_of<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["rows"].as_array().unwrap().iter().filter(|r| r["kind"] == kind).collect()
}

#[test]
fn unknown_records_new_files_and_unmapped_fields_are_listed_with_where_and_which_version() {
    let codex = common::own_corpus().join("codex/unknown-types.jsonl");
    let journal = common::own_corpus().join("claude/workflow-journal");
    let (doc, code) = drift(&[codex.to_str().unwrap(), journal.to_str().unwrap()]);
    assert_eq!(code, 1, "the journal's warning");
    // The sample's lines 2–5 are of kinds no reader knows; its header names version 0.140.0.
    let lines: Vec<Value> = common::text(&codex).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["payload"]["cli_version"], "0.140.0");
    let records: Vec<(String, String, String)> = rows_of(&doc, "record")
        .iter()
        .map(|r| {
            let at = r["first_seen"].as_str().unwrap().rsplit(':').next().unwrap().to_owned();
            (r["agent"].as_str().unwrap().to_owned(), at, r["last_version"].as_str().unwrap().to_owned())
        })
        .collect();
    let mut at: Vec<&str> = records.iter().map(|(_, line, _)| line.as_str()).collect();
    at.sort_unstable();
    assert_eq!(at, ["2", "3", "4", "5"]);
    assert!(records.iter().all(|(agent, _, version)| agent == "codex" && version == "0.140.0"));
    let names: Vec<&str> = rows_of(&doc, "record").iter().map(|r| r["name"].as_str().unwrap()).collect();
    for (line, expected) in
        [(1, "quantum_ledger"), (2, "response_item/hologram_call"), (3, "event_msg/telepathy_begin")]
    {
        let kind = lines[line]["payload"]["type"].as_str().unwrap_or_else(|| lines[line]["type"].as_str().unwrap());
        assert!(expected.ends_with(kind), "{expected} names line {}'s kind {kind}", line + 1);
        assert!(names.contains(&expected), "{names:?}");
    }
    // The journal is a file of a new kind in Claude Code's places, named by its first record.
    let files = rows_of(&doc, "file");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["agent"], "claude-code");
    assert_eq!(files[0]["name"], "started");
    assert!(files[0]["first_seen"].as_str().unwrap().ends_with("journal.jsonl:1"));
}

#[test]
fn a_field_seen_in_two_versions_spans_them() {
    // Typed prompts of the recorded Claude Code 2.1.328 files carry `promptSource`, which no
    // event field carries.
    let recorded = common::own_corpus().join("recorded/claude/2.1.328");
    let (doc, _) = drift(&[recorded.to_str().unwrap()]);
    let fields = rows_of(&doc, "field");
    let prompt_source = fields.iter().find(|r| r["name"] == "user.promptSource").expect("a field of typed prompts");
    assert_eq!(prompt_source["first_version"], "2.1.328");
    assert_eq!(prompt_source["last_version"], "2.1.328");
    let versions =
        |r: &&Value| (r["first_version"].as_str().map(str::to_owned), r["last_version"].as_str().map(str::to_owned));
    // Against a mix of versions, the same field spans the lowest and the highest.
    let older = common::own_corpus().join("claude/user-and-assistant-text.jsonl");
    let (doc, _) = drift(&[older.to_str().unwrap(), recorded.to_str().unwrap()]);
    let fields = rows_of(&doc, "field");
    let request_id = fields.iter().find(|r| r["name"] == "assistant.requestId").expect("requestId is kept in extra");
    assert_eq!(versions(request_id), (Some("2.0.74".to_owned()), Some("2.1.328".to_owned())));
}
