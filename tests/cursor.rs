//! The Cursor transcript reader on the synthetic sample (`corpus/cursor/`) and the third-party
//! sample beside the project (`../shared/other-agents/cursor`). Expected values come from the
//! files, read here as plain JSON. Cursor keeps no token usage in its transcripts, so there is
//! no usage to check: the test is that none is made up.

mod common;

use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, Role, ToolFamily};
use agentlog::read::cursor::Cursor;
use serde_json::Value;

use common::{meta_type, read_file, usages};

fn sample() -> PathBuf {
    common::own_corpus().join("cursor/tool-use-and-timestamps.jsonl")
}

fn read(path: &Path) -> Vec<Event> {
    let (events, report) = read_file(&Cursor, path, &path.display().to_string());
    assert_eq!(report.lines, report.lines_mapped, "{}: {:?}", path.display(), report.diagnostics);
    events
}

/// Every content block of a transcript, with its line: `(line, role, block)`.
fn blocks(path: &Path) -> Vec<(u64, String, Value)> {
    let mut all = Vec::new();
    for (i, line) in common::text(path).lines().enumerate() {
        let record: Value = serde_json::from_str(line).unwrap();
        for block in record["message"]["content"].as_array().cloned().unwrap_or_default() {
            all.push((i as u64 + 1, record["role"].as_str().unwrap().to_owned(), block));
        }
    }
    all
}

#[test]
fn each_block_is_one_event_and_tool_calls_have_no_id_and_no_output() {
    let path = sample();
    let events = read(&path);
    let raw = blocks(&path);
    // one event per block, plus one `unknown` for the line with no blocks
    assert_eq!(events.len(), raw.len() + 1);
    let calls: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    let raw_calls: Vec<&Value> = raw.iter().map(|(_, _, b)| b).filter(|b| b["type"] == "tool_use").collect();
    assert_eq!(calls.len(), raw_calls.len());
    for (call, raw) in calls.iter().zip(raw_calls) {
        assert_eq!(call.name, raw["name"].as_str().unwrap());
        assert_eq!(call.call_id, None);
    }
    let kinds: Vec<ToolFamily> = calls.iter().filter_map(|c| c.tool_kind).collect();
    assert_eq!(kinds, [ToolFamily::Read, ToolFamily::Search, ToolFamily::Edit, ToolFamily::Shell, ToolFamily::Write]);
    assert!(!events.iter().any(|e| matches!(e.payload, Payload::ToolOutput(_))));
    let unknown = events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).count();
    assert_eq!(unknown, 2, "the image_url block and the line without blocks");
}

#[test]
fn user_texts_are_kept_whole_and_their_timestamp_is_their_time() {
    let path = sample();
    let events = read(&path);
    let users: Vec<&Event> =
        events.iter().filter(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User)).collect();
    let raw: Vec<String> = blocks(&path)
        .into_iter()
        .filter(|(_, role, _)| role == "user")
        .map(|(_, _, b)| b["text"].as_str().unwrap().to_owned())
        .collect();
    let texts: Vec<String> = users
        .iter()
        .map(|e| match &e.payload {
            Payload::Message(m) => m.text.clone(),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(texts, raw);
    // 9:35 AM at UTC+3 is 06:35 UTC; the message without a <timestamp> has no time
    assert_eq!(users[0].timestamp.map(|t| t.to_rfc3339()), Some("2026-08-22T06:35:00+00:00".into()));
    assert_eq!(users[1].timestamp.map(|t| t.to_rfc3339()), Some("2026-08-22T06:41:00+00:00".into()));
    assert_eq!(users[2].timestamp, None);
    // the finished-task notice is not typed
    assert_eq!(users.iter().map(|e| e.injected).collect::<Vec<_>>(), [false, true, false]);
    // assistant events have no time: the transcript records none
    assert!(
        events
            .iter()
            .filter(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::Assistant))
            .all(|e| e.timestamp.is_none())
    );
}

#[test]
fn ids_come_from_the_place_of_each_block_and_no_usage_is_made_up() {
    let path = sample();
    let a = read(&path);
    let b = read(&path);
    assert_eq!(a.iter().map(|e| &e.id).collect::<Vec<_>>(), b.iter().map(|e| &e.id).collect::<Vec<_>>());
    let ids: std::collections::HashSet<&String> = a.iter().map(|e| &e.id).collect();
    assert_eq!(ids.len(), a.len());
    assert!(a.iter().all(|e| e.session_id == "tool-use-and-timestamps"));
    assert!(usages(&a).is_empty());
    assert!(a.iter().all(|e| e.context.model.is_none()));
}

#[test]
fn the_third_party_sample_reads_as_text_only_with_no_usage() {
    let Some(other) = common::other_agents() else {
        eprintln!("../shared/other-agents not present: skipped");
        return;
    };
    let path = other.join("cursor/computermode-entire/b8/b6fbd5f55f/0/full.jsonl");
    let events = read(&path);
    let raw = blocks(&path);
    assert_eq!(common::non_empty_lines(&path), 56);
    assert_eq!(events.len(), raw.len());
    let users = events.iter().filter(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User)).count();
    let raw_users = raw.iter().filter(|(_, role, _)| role == "user").count();
    assert_eq!(users, raw_users);
    assert_eq!(users, 5);
    assert!(usages(&events).is_empty());
    assert!(events.iter().all(|e| e.timestamp.is_none()), "no <timestamp> in this transcript");
    // Entire's metadata.json beside the transcript is not Cursor's, and is not read
    let files: Vec<PathBuf> = common::session_files(&other.join("cursor")).into_iter().map(|(p, _)| p).collect();
    assert_eq!(files.len(), 1, "{files:?}");
}
