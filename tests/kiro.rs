//! The Kiro CLI reader on the synthetic samples (`corpus/kiro/`: a conversation document, a
//! 2.20+ session journal with its sidecar, and `data.sqlite3` written by `make_store.py`) and
//! the third-party sample beside the project (`../shared/other-agents/kiro`). Expected values
//! come from the files and the database, read here as plain JSON and SQL. Kiro keeps credits,
//! not tokens: there is no token usage to check, and the test is that none is made up.

mod common;

use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, Role, ToolFamily};
use agentlog::pipeline::InputSpec;
use agentlog::read::kiro::Kiro;
use agentlog::read::store::Db;
use agentlog::read::{ReadReport, Shared, StoredInput};
use serde_json::Value;

use common::{meta_type, read_file, usages};

fn corpus(name: &str) -> PathBuf {
    common::own_corpus().join("kiro").join(name)
}

fn read(path: &Path) -> Vec<Event> {
    let (events, report) = read_file(&Kiro, path, &path.display().to_string());
    assert_eq!(report.lines, report.lines_mapped, "{}: {:?}", path.display(), report.diagnostics);
    events
}

fn outputs(events: &[Event]) -> Vec<&agentlog::model::ToolOutput> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some(o),
            _ => None,
        })
        .collect()
}

fn calls(events: &[Event]) -> Vec<&agentlog::model::ToolCall> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn user_texts(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) if m.role == Role::User && !e.injected => Some(m.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_conversation_document_gives_prompts_calls_results_and_cancellations() {
    let path = corpus("conversation-document.jsonl");
    let events = read(&path);
    let doc: Value = serde_json::from_str(&common::text(&path)).unwrap();
    let history = doc["history"].as_array().unwrap();
    assert!(events.iter().all(|e| e.session_id == doc["conversation_id"].as_str().unwrap()));
    assert_eq!(user_texts(&events), ["list the files and add a comment", "stop, use b.py"]);
    let calls = calls(&events);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].call_id.as_deref(), history[0]["assistant"]["ToolUse"]["tool_uses"][0]["id"].as_str());
    assert_eq!(
        calls.iter().map(|c| c.tool_kind).collect::<Vec<_>>(),
        [Some(ToolFamily::Shell), Some(ToolFamily::Write)]
    );
    let outputs = outputs(&events);
    assert_eq!(outputs.len(), 3, "two results and one cancelled call");
    assert_eq!(outputs[0].call_id, calls[0].call_id);
    assert_eq!(outputs[0].name.as_deref(), Some("execute_bash"));
    assert_eq!(outputs[0].failed, Some(false));
    assert!(outputs[0].text.contains("a.py"));
    assert_eq!((outputs[1].name.as_deref(), outputs[1].failed), (Some("fs_write"), Some(true)));
    assert_eq!(outputs[1].text, "No such file or directory");
    assert_eq!((outputs[2].call_id.as_deref(), outputs[2].failed), (Some("tooluse_zz"), Some(true)));
    // the prompt's time, with its offset, in UTC
    let first = events.iter().find(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User)).unwrap();
    assert_eq!(first.timestamp.map(|t| t.to_rfc3339()), Some("2026-09-01T08:00:00.123+00:00".into()));
    assert_eq!(first.context.model.as_deref(), Some("claude-sonnet-4"));
    // the assistant's message ids are its response ids
    let answer = events
        .iter()
        .find(|e| matches!(&e.payload, Payload::Message(m) if m.text == "The file does not exist."))
        .unwrap();
    assert_eq!(answer.response_id.as_deref(), Some("m-003"));
    // additional context is injected; thinking is reasoning; request metadata is a request
    assert_eq!(events.iter().filter(|e| e.injected).count(), 1);
    assert!(events.iter().any(|e| matches!(&e.payload, Payload::Reasoning(r) if r.text == "The user wants b.py.")));
    assert_eq!(events.iter().filter(|e| meta_type(e) == Some(MetaType::Request)).count(), 1);
    // the entry with both halves null is kept
    assert_eq!(events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).count(), 1);
    assert!(usages(&events).is_empty());
    // every event comes from the one line, told apart by its place in it
    assert!(events.iter().all(|e| e.source.line == 1));
    let ids: std::collections::HashSet<&String> = events.iter().map(|e| &e.id).collect();
    assert_eq!(ids.len(), events.len());
}

#[test]
fn a_journal_reads_with_its_sidecar_and_credits_stay_data() {
    let path = corpus("journal/3a4b5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d.jsonl");
    let events = read(&path);
    let sidecar: Value = serde_json::from_str(&common::text(&path.with_extension("json"))).unwrap();
    assert!(events.iter().all(|e| e.context.cwd.as_deref() == sidecar["cwd"].as_str()));
    assert_eq!(user_texts(&events), ["read the file"]);
    let calls = calls(&events);
    let outputs = outputs(&events);
    assert_eq!((calls.len(), outputs.len()), (1, 1));
    assert_eq!(outputs[0].call_id, calls[0].call_id);
    assert_eq!(outputs[0].name.as_deref(), Some("read"));
    assert_eq!(outputs[0].text, "print(1)");
    assert_eq!(events[0].timestamp.map(|t| t.timestamp()), Some(1788256800));
    let totals: Vec<&Event> = events.iter().filter(|e| meta_type(e) == Some(MetaType::AgentTotals)).collect();
    assert_eq!(totals.len(), 1);
    let data: Value = match &totals[0].payload {
        Payload::Meta(m) => serde_json::from_str(m.data.as_ref().unwrap().get()).unwrap(),
        _ => unreachable!(),
    };
    let want: f64 = sidecar["session_state"]["conversation_metadata"]["user_turn_metadatas"][0]["metering_usage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["value"].as_f64().unwrap())
        .sum();
    assert!((data["credits"].as_f64().unwrap() - want).abs() < 1e-9);
    assert!(usages(&events).is_empty(), "credits are not tokens");
    assert_eq!(events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).count(), 1, "the Compaction record");
}

/// Every conversation of the store, listed as `convert` lists them, each read on its own.
fn read_store(path: &Path) -> Vec<(String, Vec<Event>, ReadReport)> {
    let spec = InputSpec::File(path.display().to_string());
    let (groups, errors) = agentlog::pipeline::plan(&[spec], None, &|_| None, &Default::default());
    assert!(errors.is_empty(), "{errors:?}");
    let db = Db::open(path.to_str().unwrap()).unwrap();
    let mut read = Vec::new();
    for item in groups.iter().flat_map(|g| &g.items) {
        let InputSpec::Stored(stored) = &item.spec else { panic!("{}: not a conversation", item.spec.name()) };
        assert_eq!(item.reader.name(), "kiro");
        let mut events = Vec::new();
        let input = StoredInput { stored, db: &db, shared: &mut Shared::default() };
        let report = item
            .reader
            .read_stored(input, &mut |e| {
                events.push(e);
                Ok(())
            })
            .unwrap();
        read.push((stored.session.clone(), events, report));
    }
    read
}

#[test]
fn the_store_lists_each_conversation_once_and_a_broken_row_is_one_diagnostic() {
    let path = corpus("data.sqlite3");
    let sql = rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let v2: Vec<(String, String, String)> = sql
        .prepare("SELECT conversation_id, key, value FROM conversations_v2 ORDER BY created_at")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let v1: Vec<(String, String)> = sql
        .prepare("SELECT key, value FROM conversations ORDER BY rowid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let read = read_store(&path);
    // v2's two, v1's one of its own, v1's copy of a v2 conversation left out, the broken row
    assert_eq!(read.len(), v2.len() + v1.len() - 1);
    for (id, key, value) in &v2 {
        let (_, events, report) = read.iter().find(|(s, _, _)| s == id).unwrap();
        assert_eq!((report.lines, report.lines_mapped), (1, 1));
        assert!(events.iter().all(|e| e.context.cwd.as_deref() == Some(key.as_str())));
        let doc: Value = serde_json::from_str(value).unwrap();
        let prompts: Vec<String> = doc["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|h| h["user"]["content"]["Prompt"]["prompt"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(user_texts(events), prompts);
        assert!(usages(events).is_empty());
    }
    let a = &read.iter().find(|(s, _, _)| s == &v2[0].0).unwrap().1;
    assert_eq!(outputs(a)[0].call_id, calls(a)[0].call_id);
    let broken: Vec<_> = read.iter().filter(|(_, _, r)| r.lines_diagnosed == 1).collect();
    assert_eq!(broken.len(), 1);
    assert_eq!(broken[0].0, "/home/dev/broken", "a row whose value names no id is listed by its key");
    // ids are keyed by the conversation, not the row: the same on every read
    let again = read_store(&path);
    for ((_, a, _), (_, b, _)) in read.iter().zip(&again) {
        assert_eq!(a.iter().map(|e| &e.id).collect::<Vec<_>>(), b.iter().map(|e| &e.id).collect::<Vec<_>>());
    }
}

#[test]
fn the_third_party_sample_keeps_its_text_and_tool_call() {
    let Some(other) = common::other_agents() else {
        eprintln!("../shared/other-agents not present: skipped");
        return;
    };
    let path = other.join("kiro/computermode-entire/75/6b48023085/0/full.jsonl");
    let events = read(&path);
    let doc: Value = serde_json::from_str(&common::text(&path)).unwrap();
    let history = doc["history"].as_array().unwrap();
    assert_eq!(user_texts(&events), ["Add one more comment"]);
    let answers: Vec<&Event> =
        events.iter().filter(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::Assistant)).collect();
    let raw_answers = history.iter().filter(|h| h["assistant"]["Response"].is_object()).count();
    assert_eq!(answers.len(), raw_answers);
    let calls = calls(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "fs_write");
    // the call id is empty in this file: no id rather than an empty one
    assert_eq!(calls[0].call_id, None);
    assert!(usages(&events).is_empty());
}
