//! The Factory Droid reader on sessions Droid 0.225.2 wrote (`corpus/recorded/droid/`, each with
//! the server's `ledger.json`), the synthetic samples (`corpus/droid/`) and the third-party
//! sample beside the project (`../shared/other-agents/factory-droid`). Expected values come from
//! the files and ledgers, read here as plain JSON, and usage totals from the independent script
//! `tests/independent/droid_usage.py`, never from agentlog.

mod common;

use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, Role, ToolFamily};
use agentlog::read::droid::Droid;
use serde_json::Value;

use common::{meta_type, read_file, usages};

fn recorded(scenario: &str) -> PathBuf {
    common::own_corpus().join("recorded/droid/0.225.2").join(scenario)
}

/// The session files of a recorded scenario, in name order.
fn sessions(scenario: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(recorded(scenario).join("sessions"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.to_string_lossy().ends_with(".jsonl"))
        .collect();
    files.sort();
    files
}

fn read(path: &Path) -> Vec<Event> {
    let (events, report) = read_file(&Droid, path, &path.display().to_string());
    assert_eq!(report.lines, report.lines_mapped, "{}: {:?}", path.display(), report.diagnostics);
    events
}

fn ledger(scenario: &str) -> Value {
    serde_json::from_str(&common::text(&recorded(scenario).join("ledger.json"))).unwrap()
}

/// The usage the server served with each successful response of a scenario.
fn served(scenario: &str) -> Vec<Value> {
    ledger(scenario)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["response"]["status"] == 200)
        .map(|e| e["response"]["usage"].clone())
        .collect()
}

fn texts(events: &[Event], role: Role) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) if m.role == role && !e.injected => Some(m.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_session_is_the_settings_totals_once_and_they_equal_what_was_served() {
    let path = &sessions("tools")[0];
    let events = read(path);
    let usage = usages(&events);
    assert_eq!(usage.len(), 1, "one usage event for the session");
    let served = served("tools");
    assert_eq!(served.len(), 3);
    let sum = |key: &str| served.iter().map(|u| u[key].as_u64().unwrap()).sum::<u64>();
    let u = usage[0].1;
    assert_eq!(u.input_tokens, Some(sum("input_tokens")));
    assert_eq!(u.cache_read_tokens, Some(sum("cache_read_input_tokens")));
    assert_eq!(u.cache_write_tokens, Some(sum("cache_creation_input_tokens")));
    assert_eq!(u.output_tokens, Some(sum("output_tokens")));
    // Droid writes `thinkingTokens: 0`: no count, not zero tokens.
    assert_eq!(u.reasoning_tokens, None);
    assert_eq!(u.model.as_deref(), Some("custom:Scripted-0"));
    assert_eq!(usage[0].0.source.record_type.as_deref(), Some("settings.json"));
}

#[test]
fn tool_calls_pair_with_their_outputs_and_a_failed_command_keeps_its_exit_code() {
    let events = read(&sessions("tools")[0]);
    let calls: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    let served_calls: Vec<Value> = ledger("tools")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["response"]["tool_calls"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(calls.len(), served_calls.len());
    for (call, served) in calls.iter().zip(&served_calls) {
        assert_eq!(call.call_id.as_deref(), served["id"].as_str());
        assert_eq!(call.name, "Execute");
        assert_eq!(call.tool_kind, Some(ToolFamily::Shell));
    }
    let outputs: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some(o),
            _ => None,
        })
        .collect();
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[0].call_id, calls[0].call_id);
    assert_eq!((outputs[0].exit_code, outputs[0].failed), (Some(0), Some(false)));
    assert!(outputs[0].text.starts_with("hello\n"));
    assert_eq!(outputs[1].call_id, calls[1].call_id);
    assert_eq!((outputs[1].exit_code, outputs[1].is_error, outputs[1].failed), (Some(2), Some(true), Some(true)));
    assert_eq!(outputs[1].name.as_deref(), Some("Execute"));
}

#[test]
fn the_typed_prompt_is_a_user_message_and_droids_context_is_injected() {
    let path = &sessions("two-turns")[0];
    let events = read(path);
    let typed: Vec<String> = ledger("two-turns")["meta"]["typed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap().into())
        .collect();
    assert_eq!(texts(&events, Role::User), typed);
    let answers: Vec<String> = ledger("two-turns")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["response"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(texts(&events, Role::Assistant), answers);
    // The `llm_only` context record: one injected user message, from line 2.
    let injected: Vec<&Event> = events.iter().filter(|e| e.injected).collect();
    assert_eq!(injected.len(), 1);
    assert_eq!(injected[0].source.line, 2);
    let start = events.iter().find(|e| meta_type(e) == Some(MetaType::SessionStart)).unwrap();
    assert_eq!(start.context.cwd.as_deref(), common::first_record(path, "session_start")["cwd"].as_str());
    let ends = events.iter().filter(|e| meta_type(e) == Some(MetaType::TurnEnd)).count();
    assert_eq!(ends, 2);
}

#[test]
fn thinking_is_reasoning_with_its_signature() {
    let events = read(&sessions("reasoning")[0]);
    let reasoning: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Reasoning(r) => Some(r),
            _ => None,
        })
        .collect();
    let served = &ledger("reasoning")["entries"][0]["response"];
    assert_eq!(reasoning.len(), 1);
    assert_eq!(reasoning[0].text, served["thinking"].as_str().unwrap());
    assert!(reasoning[0].signature.as_deref().is_some_and(|s| s.starts_with("sig-")));
}

#[test]
fn a_fork_copies_its_parents_records_and_counts_only_its_own_response() {
    let files = sessions("fork");
    let (fork, parent): (Vec<_>, Vec<_>) =
        files.iter().partition(|p| common::first_record(p, "session_start").get("parent").is_some());
    let (fork, parent) = (fork[0], parent[0]);
    let parent_id = common::first_record(parent, "session_start")["id"].as_str().unwrap().to_owned();
    let forked_at = common::first_record(fork, "session_start")["forkedAtMessageId"].as_str().unwrap().to_owned();
    let events = read(fork);
    assert!(events.iter().all(|e| e.parent_session_id.as_deref() == Some(parent_id.as_str())));
    let last_copied = events.iter().rposition(|e| e.record_id.as_deref() == Some(forked_at.as_str())).unwrap();
    let first_own = events.iter().position(|e| !e.copied && meta_type(e) != Some(MetaType::SessionStart)).unwrap();
    assert!(first_own > last_copied, "the events up to the forked-at message are copies");
    assert!(events[1..=last_copied].iter().all(|e| e.copied));
    assert_eq!(texts(&events[first_own..], Role::User), ["[fork] Prompt of the fork."]);
    let usage = usages(&events);
    assert_eq!(usage.len(), 1);
    assert!(!usage[0].0.copied);
    // The fork's own response is the second served.
    assert_eq!(usage[0].1.input_tokens, served("fork")[1]["input_tokens"].as_u64());
}

#[test]
fn per_message_usage_is_counted_where_it_stands_and_the_settings_add_only_the_rest() {
    let path = common::own_corpus().join("droid/per-message-usage.jsonl");
    let events = read(&path);
    let usage = usages(&events);
    assert_eq!(usage.len(), 3, "two messages and the remainder of the settings totals");
    assert_eq!(usage[0].1.response_id.as_deref(), Some("msg_01"));
    assert_eq!(
        (usage[0].1.input_tokens, usage[0].1.cache_write_tokens, usage[0].1.output_tokens),
        (Some(1200), Some(300), Some(80))
    );
    assert_eq!((usage[1].1.cache_read_tokens, usage[1].1.output_tokens), (Some(1500), Some(12)));
    // totals 1740/1600/300/122 less what the messages counted
    let rest = usage[2].1;
    assert_eq!(
        (rest.input_tokens, rest.cache_read_tokens, rest.cache_write_tokens, rest.output_tokens),
        (Some(500), Some(100), Some(0), Some(30))
    );
    // the LS output pairs with its call and names its tool
    let output = events.iter().find_map(|e| match &e.payload {
        Payload::ToolOutput(o) => Some(o),
        _ => None,
    });
    assert_eq!(output.and_then(|o| o.name.as_deref()), Some("LS"));
    assert_eq!(output.map(|o| o.text.as_str()), Some("a.txt\nb.txt"));
}

#[test]
fn notices_unknown_records_and_blocks_survive() {
    let path = common::own_corpus().join("droid/notices-and-unknown-records.jsonl");
    let events = read(&path);
    let system: Vec<&Event> = events.iter().filter(|e| meta_type(e) == Some(MetaType::System)).collect();
    assert_eq!(system.len(), 1, "the user_only notice");
    let unknown = events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).count();
    assert_eq!(unknown, 3, "the server_tool_use block, the compaction_marker record, the system message");
    let image = events.iter().any(|e| match &e.payload {
        Payload::Message(m) => m.parts.iter().any(|p| matches!(p, agentlog::model::Part::Image { .. })),
        _ => false,
    });
    assert!(image);
    assert!(usages(&events).is_empty(), "no settings file, no usage in the messages: no usage");
}

#[test]
fn usage_totals_equal_the_independent_script() {
    let mut files: Vec<PathBuf> =
        ["tools", "reasoning", "fork", "two-turns", "api-error"].iter().flat_map(|s| sessions(s)).collect();
    files.extend(common::session_files(&common::own_corpus().join("droid")).into_iter().map(|(p, _)| p));
    if let Some(other) = common::other_agents() {
        files.extend(common::session_files(&other.join("factory-droid")).into_iter().map(|(p, _)| p));
    }
    assert!(files.len() >= 8, "{files:?}");
    let Some(expected) = common::independent("droid_usage.py", &files) else { return };
    for path in &files {
        let events = read(path);
        let usage = usages(&events);
        let sum = |f: fn(&agentlog::model::Usage) -> Option<u64>| usage.iter().filter_map(|(_, u)| f(u)).sum::<u64>();
        let want = &expected[path.display().to_string()];
        let got = serde_json::json!({
            "input": sum(|u| u.input_tokens), "cache_read": sum(|u| u.cache_read_tokens),
            "cache_write": sum(|u| u.cache_write_tokens), "output": sum(|u| u.output_tokens),
            "total": sum(|u| u.total_tokens),
        });
        assert_eq!(&got, want, "{}", path.display());
    }
}

#[test]
fn the_third_party_sample_keeps_its_notice_and_typed_command() {
    let Some(other) = common::other_agents() else {
        eprintln!("../shared/other-agents not present: skipped");
        return;
    };
    let path = other.join("factory-droid/computermode-entire/b1/b2d74d8ef1/0/full.jsonl");
    let events = read(&path);
    let start = common::first_record(&path, "session_start");
    assert!(events.iter().all(|e| e.session_id == start["id"].as_str().unwrap()));
    assert_eq!(texts(&events, Role::User), ["echo \"test\""]);
    // the two <system-reminder> blocks of the first message: one injected message of two parts
    let injected: Vec<&Event> = events.iter().filter(|e| e.injected).collect();
    assert_eq!(injected.len(), 1);
    assert!(matches!(&injected[0].payload, Payload::Message(m) if m.parts.len() == 2));
    let notice = events.iter().find(|e| meta_type(e) == Some(MetaType::System)).unwrap();
    assert_eq!(notice.parent_record_id.as_deref(), Some("278c85c4-8b9b-4d82-baed-aa8192335aea"));
    assert!(usages(&events).is_empty());
}
