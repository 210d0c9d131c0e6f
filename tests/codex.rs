//! The Codex reader on the project's samples (one per era and quirk) and on the real corpus.
//! Expected values come from the samples and the format reference, or from the independent
//! script `tests/independent/codex_usage.py`, never from agentlog itself.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentlog::model::{Event, Kind, MetaType, Payload, Role, Usage};
use agentlog::read::codex::Codex;

fn sample(rel: &str) -> PathBuf {
    common::own_corpus().join("codex").join(rel)
}

fn read(path: &Path) -> (Vec<Event>, agentlog::read::ReadReport) {
    common::read_file(&Codex, path, &path.display().to_string())
}

use common::meta_type;

fn usages(events: &[Event]) -> Vec<(u64, &Usage)> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Meta(m) if m.meta_type == MetaType::Usage && !e.copied => {
                Some((e.source.line, m.usage.as_ref().unwrap()))
            }
            _ => None,
        })
        .collect()
}

/// Usage in Codex's own terms: [input (cached included), cached, output, reasoning, total, calls].
fn codex_totals(events: &[Event]) -> [u64; 6] {
    let mut t = [0; 6];
    for (_, u) in usages(events) {
        let cached = u.cache_read_tokens.unwrap_or(0);
        t[0] += u.input_tokens.unwrap_or(0) + cached;
        t[1] += cached;
        t[2] += u.output_tokens.unwrap_or(0);
        t[3] += u.reasoning_tokens.unwrap_or(0);
        t[4] += u.total_tokens.unwrap_or(0);
        t[5] += 1;
    }
    t
}

fn describe(e: &Event) -> String {
    match &e.payload {
        Payload::Message(m) => format!("{:?}{}", m.role, if e.injected { " injected" } else { "" }),
        Payload::Reasoning(_) => "reasoning".into(),
        Payload::ToolCall(c) => format!("call {}", c.name),
        Payload::ToolOutput(o) => format!("output {}", o.name.as_deref().unwrap_or("?")),
        Payload::Meta(m) => format!("{:?}", m.meta_type),
    }
}

#[test]
fn typescript_era_document_maps_each_item_at_its_line() {
    let path = sample("e0-typescript-cli/rollout-2025-04-21-0a0e0000-0000-4000-8000-000000000e00.json");
    let (events, report) = read(&path);
    assert!(report.diagnostics.is_empty());
    assert_eq!(report.lines, report.lines_mapped);
    let got: Vec<(u64, String)> = events.iter().map(|e| (e.source.line, describe(e))).collect();
    let expected = [
        (2, "SessionStart"),
        (8, "User"),
        (20, "reasoning"),
        (30, "call shell"),
        (38, "output shell"),
        (43, "Assistant"),
    ];
    assert_eq!(got, expected.map(|(l, d)| (l, d.to_owned())));
    assert!(events.iter().all(|e| e.session_id == "0a0e0000-0000-4000-8000-000000000e00" && e.timestamp.is_none()));
    match &events[4].payload {
        Payload::ToolOutput(o) => {
            assert_eq!((o.text.as_str(), o.exit_code, o.duration_ms), ("main.rs\nlib.rs\n", Some(0), Some(100)));
        }
        _ => unreachable!(),
    }
}

#[test]
fn bare_jsonl_era_maps_meta_messages_and_shell_calls() {
    let path = sample("e1-bare-jsonl/rollout-2025-06-01T10-00-00-0a0e0000-0000-4000-8000-000000000e01.jsonl");
    let (events, report) = read(&path);
    assert!(report.diagnostics.is_empty());
    let got: Vec<String> = events.iter().map(describe).collect();
    assert_eq!(
        got,
        [
            "SessionStart",
            "User injected",
            "User",
            "call shell",
            "output shell",
            "call local_shell",
            "output local_shell",
            "Assistant"
        ]
    );
    match &events[4].payload {
        Payload::ToolOutput(o) => assert_eq!((o.exit_code, o.duration_ms), (Some(101), Some(12500))),
        _ => unreachable!(),
    }
    match &events[3].payload {
        Payload::ToolCall(c) => {
            assert_eq!(
                c.input.as_ref().unwrap().to_value()["command"],
                serde_json::json!(["bash", "-lc", "cargo test"])
            );
        }
        _ => unreachable!(),
    }
    assert!(events[0].timestamp.is_some(), "the header's session start");
    assert!(events[1..].iter().all(|e| e.timestamp.is_none()), "bare items carry no time");
}

#[test]
fn token_counts_become_one_usage_per_model_call() {
    let (events, _) = read(&sample("token-accounting.jsonl"));
    let got: Vec<(u64, [u64; 4], Option<&str>)> = usages(&events)
        .into_iter()
        .map(|(line, u)| {
            (
                line,
                [u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens].map(Option::unwrap),
                u.model.as_deref(),
            )
        })
        .collect();
    // Line 2 has info null; 5 repeats 3; 7 is the estimate after compaction; 9 is a reset
    // (counts its last_token_usage) and 10 repeats it; 11 advances from 9.
    assert_eq!(
        got,
        [
            (3, [800, 200, 50, 10], None),
            (6, [1000, 1000, 100, 30], Some("gpt-5.3-codex")),
            (9, [600, 100, 20, 5], Some("gpt-5.5")),
            (11, [500, 0, 60, 0], Some("gpt-5.5")),
        ]
    );
    let snapshots: Vec<u64> =
        events.iter().filter(|e| meta_type(e) == Some(MetaType::UsageSnapshot)).map(|e| e.source.line).collect();
    assert_eq!(snapshots, [2, 5, 7, 10]);
}

#[test]
fn forked_thread_marks_the_replayed_parent_and_counts_only_its_own_usage() {
    let (events, _) = read(&sample("fork-replays-parent.jsonl"));
    let copied: Vec<u64> = events.iter().filter(|e| e.copied).map(|e| e.source.line).collect();
    assert_eq!(copied, [2, 3, 5, 6, 7]);
    assert_eq!(codex_totals(&events), [5000, 4000, 200, 50, 5200, 1]);
    assert!(events.iter().all(|e| e.parent_session_id.as_deref() == Some("0a0e0000-0000-7000-8000-0000000000aa")));
    assert!(
        events.iter().all(|e| e.session_id == "0a0e0000-0000-7000-8000-000000000e03"),
        "the first header is canonical"
    );
    let summary = common::summaries(&events).into_values().next().unwrap();
    assert_eq!(summary.usage.responses, 1);
}

#[test]
fn subagent_thread_names_its_parent() {
    let (events, _) = read(&sample("subagent-thread.jsonl"));
    for e in &events {
        assert_eq!(e.agent_id.as_deref(), Some("reviewer"));
        assert!(e.is_sidechain);
        assert_eq!(e.parent_session_id.as_deref(), Some("0a0e0000-0000-7000-8000-0000000000bb"));
    }
}

#[test]
fn injected_context_is_flagged_and_twins_are_merged_once() {
    let (events, report) = read(&sample("injected-context-and-twins.jsonl"));
    assert!(report.diagnostics.is_empty());
    let got: Vec<(u64, String)> = events.iter().map(|e| (e.source.line, describe(e))).collect();
    let expected = [
        (1, "SessionStart"),
        (2, "Developer injected"),
        (3, "User injected"),
        (4, "User injected"),
        // Redacted text, but no user_message twin follows: injected, not typed.
        (5, "User injected"),
        (6, "TurnStart"),
        (7, "User"),
        (9, "TurnContext"),
        (12, "Usage"),
        (13, "reasoning"),
        (15, "Assistant"),
        (16, "TurnEnd"),
    ];
    assert_eq!(got, expected.map(|(l, d)| (l, d.to_owned())));
    let extra = |i: usize| events[i].extra.as_ref().unwrap().to_value();
    // The typed prompt: image wrappers dropped, the image kept, local path from its twin.
    match &events[6].payload {
        Payload::Message(m) => {
            assert_eq!(m.text, "What does this error mean?");
            assert!(
                matches!(&m.parts[1], agentlog::model::Part::Image { media_type: Some(t), .. } if t == "image/png")
            );
            assert_eq!(m.parts.len(), 2);
        }
        _ => unreachable!(),
    }
    assert_eq!(extra(6)["local_images"], serde_json::json!(["/home/dev/Desktop/error.png"]));
    assert_eq!(extra(6)["merged_lines"][0]["line"], 8);
    let merged = |i: usize| {
        extra(i)["merged_lines"].as_array().unwrap().iter().map(|m| m["line"].as_u64().unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(merged(9), [10, 11], "both reasoning summaries");
    assert_eq!(merged(10), [14]);
    match &events[9].payload {
        Payload::Reasoning(r) => {
            assert!(r.encrypted && r.text == "**Reading the screenshot**\nIt shows a borrow error.")
        }
        _ => unreachable!(),
    }
}

#[test]
fn tool_outputs_recover_exit_codes_and_durations() {
    let (events, _) = read(&sample("tool-outputs.jsonl"));
    /// Call id, exit code, duration and error flag of an output.
    type Facts<'a> = (Option<&'a str>, Option<i64>, Option<u64>, Option<bool>);
    let outputs: Vec<Facts<'_>> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some((o.call_id.as_deref(), o.exit_code, o.duration_ms, o.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        outputs,
        [
            // still running at the output; exec_command_end right after gives the exit code
            (Some("call_T1"), Some(0), Some(1002), None),
            (Some("call_T2"), Some(101), Some(4500), None),
            // patch_apply_end before the output gives success
            (Some("call_T3"), Some(0), Some(200), Some(false)),
            // mcp_tool_call_end with Err
            (Some("call_T4"), None, Some(870), Some(true)),
        ]
    );
    let calls: Vec<(&str, bool, bool)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => Some((c.name.as_str(), c.input.is_some(), c.input_text.is_some())),
            _ => None,
        })
        .collect();
    // call_T2's arguments are cut short: kept as text. apply_patch input is free text.
    assert_eq!(
        calls,
        [
            ("exec_command", true, false),
            ("exec_command", false, true),
            ("apply_patch", false, true),
            ("mcp__docs__search", true, false),
            ("exec_command", true, false),
        ]
    );
    assert_eq!(events.iter().filter(|e| meta_type(e) == Some(MetaType::ServerTool)).count(), 1, "web_search_call");
    let summary = common::summaries(&events).into_values().next().unwrap();
    assert_eq!(summary.orphan_calls, ["call_T5"]);
}

#[test]
fn compacted_history_is_one_meta_event_and_not_replayed() {
    let (events, _) = read(&sample("compacted-and-rolled-back.jsonl"));
    let got: Vec<String> = events.iter().map(describe).collect();
    assert_eq!(got, ["SessionStart", "User", "Assistant", "Compaction", "System", "Rollback"]);
    // thread_rolled_back {num_turns: 1} removes the one turn before it.
    let rolled: Vec<bool> = events.iter().map(|e| e.rolled_back).collect();
    assert_eq!(rolled, [false, true, true, true, true, false]);
}

#[test]
fn unknown_types_at_every_level_are_kept_whole() {
    let path = sample("unknown-types.jsonl");
    let (events, report) = read(&path);
    assert!(report.diagnostics.is_empty());
    let unknown: Vec<u64> =
        events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).map(|e| e.source.line).collect();
    assert_eq!(unknown, [2, 3, 4, 5]);
    let text = std::fs::read_to_string(&path).unwrap();
    // Unknown records are kept whole; an unknown response item (line 3) keeps its item.
    for e in events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)) {
        let data = match &e.payload {
            Payload::Meta(m) => m.data.as_ref().unwrap().to_value(),
            _ => unreachable!(),
        };
        let line: serde_json::Value =
            serde_json::from_str(text.lines().nth(e.source.line as usize - 1).unwrap()).unwrap();
        let original = if e.source.line == 3 { &line["payload"] } else { &line };
        assert_eq!(&data, original, "line {}", e.source.line);
    }
}

// --- the real corpus -------------------------------------------------------------------------

fn real(rel: &str) -> Option<PathBuf> {
    Some(common::shared_corpus()?.join("codex").join(rel))
}

#[test]
fn usage_totals_match_the_independent_rule_on_real_rollouts() {
    // [input, cached, output, reasoning, total, calls] from tests/independent/codex_usage.py.
    let expected: [(&str, [u64; 6]); 5] = [
        // 0.58: info null first, 39 re-emits
        (
            "acidicsoil-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
            [1099261, 1027328, 22305, 19520, 1121566, 39],
        ),
        // 0.104: 162 rows, half of them re-emits
        (
            "localpush/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl",
            [7204025, 6836352, 36075, 17896, 7240100, 81],
        ),
        // 0.104 with remote compaction and its synthetic rows
        (
            "localpush/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
            [33810485, 31621504, 133999, 42113, 33944484, 286],
        ),
        // 0.125, extended events
        (
            "codemie/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
            [6055836, 4929536, 9118, 1759, 6064954, 66],
        ),
        // truncated session
        (
            "localpush/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
            [34469, 3456, 431, 264, 34900, 1],
        ),
    ];
    for (rel, want) in expected {
        let Some(path) = real(rel) else { return };
        let (events, _) = read(&path);
        assert_eq!(codex_totals(&events), want, "{rel}");
    }
}

#[test]
fn usage_totals_match_the_independent_script_for_every_file() {
    let Some(root) = real("") else { return };
    let files: Vec<PathBuf> = common::session_files(&root)
        .into_iter()
        .map(|(p, _)| p)
        .chain(common::session_files(&common::own_corpus().join("codex")).into_iter().map(|(p, _)| p))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/codex_usage.py");
    let Ok(out) = std::process::Command::new("python3").arg(script).args(&files).output() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3");
        return;
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let independent: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    for path in &files {
        let t = &independent[&path.display().to_string()];
        let n = |k: &str| t[k].as_u64().unwrap();
        let want = [n("input"), n("cached"), n("output"), n("reasoning"), n("total"), n("calls")];
        assert_eq!(codex_totals(&read(path).0), want, "{}", path.display());
    }
}

#[test]
fn the_compaction_files_synthetic_rows_count_nothing() {
    let Some(path) = real("localpush/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl") else {
        return;
    };
    let (events, _) = read(&path);
    for line in [1787, 1791] {
        let e = events.iter().find(|e| e.source.line == line).unwrap();
        assert_eq!(meta_type(e), Some(MetaType::UsageSnapshot), "line {line}");
    }
    assert_eq!(events.iter().filter(|e| meta_type(e) == Some(MetaType::Compaction)).count(), 1);
}

#[test]
fn tool_calls_equal_call_items_and_outputs_link_to_their_calls() {
    let Some(root) = real("") else { return };
    for (path, _) in
        common::session_files(&root).into_iter().chain(common::session_files(&common::own_corpus().join("codex")))
    {
        let name = path.display().to_string();
        let text = common::text(&path);
        let mut items = 0;
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            let item = if v["type"] == "response_item" { &v["payload"] } else { &v };
            if matches!(item["type"].as_str(), Some("function_call" | "custom_tool_call" | "local_shell_call")) {
                items += 1;
            }
        }
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) {
            items += doc["items"].as_array().into_iter().flatten().filter(|i| i["type"] == "function_call").count();
        }
        let (events, _) = read(&path);
        let calls: BTreeMap<String, String> = events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::ToolCall(c) => Some((c.call_id.clone()?, c.name.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(events.iter().filter(|e| e.kind() == Kind::ToolCall).count(), items, "{name}");
        for e in &events {
            if let Payload::ToolOutput(o) = &e.payload
                && let Some(call) = o.call_id.as_ref().and_then(|id| calls.get(id))
            {
                assert_eq!(o.name.as_ref(), Some(call), "{name}: output {:?}", o.call_id);
            }
        }
    }
}

#[test]
fn the_orphan_call_of_the_truncated_session_is_reported() {
    let Some(path) = real("localpush/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl") else {
        return;
    };
    let (events, _) = read(&path);
    let last_call = events.iter().rev().find_map(|e| match &e.payload {
        Payload::ToolCall(c) => c.call_id.clone(),
        _ => None,
    });
    let summary = common::summaries(&events).into_values().next().unwrap();
    assert_eq!(summary.orphan_calls, [last_call.unwrap()]);
}

#[test]
fn each_message_is_emitted_once_and_typed_prompts_are_the_user_message_twins() {
    for rel in [
        "localpush/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl",
        "localpush/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
        "codemie/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    ] {
        let Some(path) = real(rel) else { return };
        let text = std::fs::read_to_string(&path).unwrap();
        let count = |ty: &str, sub: &str, role: Option<&str>| {
            text.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| {
                    v["type"] == ty && v["payload"]["type"] == sub && role.is_none_or(|r| v["payload"]["role"] == r)
                })
                .count()
        };
        let (events, _) = read(&path);
        let messages = |role: Role, injected: bool| {
            events
                .iter()
                .filter(|e| e.injected == injected && matches!(&e.payload, Payload::Message(m) if m.role == role))
                .count()
        };
        assert_eq!(messages(Role::Assistant, false), count("response_item", "message", Some("assistant")), "{rel}");
        assert_eq!(messages(Role::User, false), count("event_msg", "user_message", None), "{rel}: typed prompts");
        assert_eq!(
            messages(Role::User, false) + messages(Role::User, true),
            count("response_item", "message", Some("user")),
            "{rel}: every user item once"
        );
        let reasoning = events.iter().filter(|e| e.kind() == Kind::Reasoning).count();
        assert_eq!(reasoning, count("response_item", "reasoning", None), "{rel}");
    }
}

#[test]
fn no_injected_context_is_an_unflagged_user_message() {
    const PREFIXES: [&str; 7] = [
        "<user_instructions>",
        "# AGENTS.md instructions for ",
        "<environment_context>",
        "<permissions instructions>",
        "<skill>",
        "<turn_aborted>",
        "<user_shell_command>",
    ];
    let mut files = common::session_files(&common::own_corpus().join("codex"));
    if let Some(root) = real("") {
        files.extend(common::session_files(&root));
    }
    let mut flagged = 0;
    for (path, _) in files {
        for e in read(&path).0 {
            if let Payload::Message(m) = &e.payload
                && m.role == Role::User
            {
                let looks_injected = PREFIXES.iter().any(|p| m.text.trim_start().starts_with(p));
                assert!(!looks_injected || e.injected, "{}:{}: {}", path.display(), e.source.line, m.text);
                flagged += usize::from(looks_injected);
            }
        }
    }
    // Three samples of the own corpus begin with such context; the shared E2 file adds more.
    assert!(flagged >= common::at_least(4, 3), "the samples and the E2 file hold injected context ({flagged})");
}

#[test]
fn item_fields_no_event_field_carries_are_kept_in_extra() {
    let path = sample("e0-typescript-cli/rollout-2025-04-21-0a0e0000-0000-4000-8000-000000000e00.json");
    let (events, _) = read(&path);
    let extra = |i: usize| events[i].extra.as_ref().map(|e| e.to_value());
    assert_eq!(extra(1), Some(serde_json::json!({"id": "msg_e0u1", "status": "completed"})));
    assert_eq!(extra(3), Some(serde_json::json!({"id": "fc_e0f1", "status": "completed"})));
    let (events, _) = read(&sample("injected-context-and-twins.jsonl"));
    let reasoning = events.iter().find(|e| e.kind() == Kind::Reasoning).unwrap();
    assert_eq!(reasoning.extra.as_ref().unwrap().to_value()["encrypted_content"], "gAAAAABsynthetic");
}

#[test]
fn a_rollback_marks_exactly_the_turns_it_removes() {
    let header = r#"{"timestamp":"2026-03-07T07:00:00.000Z","type":"session_meta","payload":{"id":"0a0e0000-0000-7000-8000-000000000e09"}}"#;
    let turn = |n: u32| {
        format!(
            "{{\"timestamp\":\"2026-03-07T07:0{n}:00.000Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"task_started\",\"turn_id\":\"t{n}\"}}}}\n\
             {{\"timestamp\":\"2026-03-07T07:0{n}:01.000Z\",\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"prompt {n}\"}}]}}}}\n\
             {{\"timestamp\":\"2026-03-07T07:0{n}:01.001Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"user_message\",\"message\":\"prompt {n}\"}}}}\n\
             {{\"timestamp\":\"2026-03-07T07:0{n}:02.000Z\",\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"output_text\",\"text\":\"answer {n}\"}}]}}}}\n"
        )
    };
    let rollback = r#"{"timestamp":"2026-03-07T07:09:00.000Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}"#;
    let text = format!("{header}\n{}{}{}{rollback}\n{}", turn(1), turn(2), turn(3), turn(4));
    let mut events = Vec::new();
    let input = agentlog::read::Input {
        name: "r.jsonl",
        bytes: Box::new(text.as_bytes()),
        shared: &mut agentlog::read::Shared::default(),
    };
    agentlog::read::Reader::read(&Codex, input, &mut |e| {
        events.push(e);
        Ok(())
    })
    .unwrap();
    let rolled: Vec<String> = events
        .iter()
        .filter(|e| e.rolled_back)
        .filter_map(|e| match &e.payload {
            Payload::Message(m) => Some(m.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(rolled, ["prompt 2", "answer 2", "prompt 3", "answer 3"]);
    assert_eq!(events.len(), 1 + 4 * 3 + 1, "every event once, in order");
    assert!(events.windows(2).all(|w| w[0].seq + 1 == w[1].seq));
}

/// Every line of `path` is accounted: it is an event's line, a merged twin's line, or diagnosed.
fn assert_every_line_accounted(path: &Path, events: &[Event], report: &agentlog::read::ReadReport) {
    let mut seen: std::collections::BTreeSet<u64> = events.iter().map(|e| e.source.line).collect();
    for e in events {
        if let Some(lines) = e.extra.as_ref().map(|x| x.to_value()).and_then(|x| x.get("merged_lines").cloned()) {
            seen.extend(lines.as_array().unwrap().iter().map(|l| l["line"].as_u64().unwrap()));
        }
    }
    seen.extend(report.diagnostics.iter().map(|d| d.line));
    let text = std::fs::read_to_string(path).unwrap();
    for (i, line) in text.lines().enumerate() {
        let number = i as u64 + 1;
        assert!(line.trim().is_empty() || seen.contains(&number), "{}:{number} is lost: {line}", path.display());
    }
}

// A prompt or an assistant message's copy held back for its twin was dropped when an
// `exec_command_end` or `mcp_tool_call_end` came next: no event, no diagnostic.
#[test]
fn a_message_waiting_for_its_twin_survives_a_command_end() {
    let path = sample("twin-interrupted-by-exec-end.jsonl");
    let (events, report) = read(&path);
    assert!(report.diagnostics.is_empty());
    assert_every_line_accounted(&path, &events, &report);
    let texts: Vec<(Role, &str)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) => Some((m.role, m.text.as_str())),
            _ => None,
        })
        .collect();
    assert!(texts.contains(&(Role::User, "run the tests please")), "{texts:?}");
    assert_eq!(texts.iter().filter(|(r, t)| *r == Role::Assistant && *t == "The tests pass.").count(), 2, "{texts:?}");
}

/// A rollout Codex 0.169.0 wrote against the test server (`corpus/recorded/`).
fn recorded(rel: &str) -> PathBuf {
    common::own_corpus().join("recorded/codex/0.169.0").join(rel)
}

/// The `response_id` of each `token_usage_record` line of `path`, read as plain JSON.
fn usage_record_ids(path: &Path) -> Vec<String> {
    common::text(path)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["type"] == "token_usage_record")
        .map(|v| v["payload"]["response_id"].as_str().unwrap().to_owned())
        .collect()
}

// Issue 42: Codex 0.169 pairs a typed prompt's item with an `event_msg` `item_completed`
// (`item.type` `UserMessage`) instead of `user_message`, and every prompt was classed as
// injected; `token_usage_record` and `world_state` stayed unknown.
#[test]
fn codex_0_169_typed_prompts_are_typed_and_each_response_is_counted_once_by_its_id() {
    for (file, prompts, served) in [
        (
            "tools.jsonl",
            vec!["[tools] Run echo hello, then list /nonexistent."],
            // The test server's k-th response: input 1300 + 60k (cached 300 + 23k included),
            // output 50 + 11k.
            vec![[1300, 300, 50], [1360, 323, 61], [1420, 346, 72]],
        ),
        (
            "resume.jsonl",
            vec!["[resume] Run a command and stop.", "[resume] Pick up where we left off."],
            vec![[1300, 300, 50], [1360, 323, 61], [1420, 346, 72]],
        ),
    ] {
        let path = recorded(file);
        let (events, report) = read(&path);
        assert!(report.diagnostics.is_empty(), "{file}: {:?}", report.diagnostics);
        assert_every_line_accounted(&path, &events, &report);
        let typed: Vec<&str> = events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::Message(m) if m.role == Role::User && !e.injected => Some(m.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(typed, prompts, "{file}");
        let unknown: Vec<_> = events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).collect();
        assert!(unknown.is_empty(), "{file}: {:?}", unknown.iter().map(|e| &e.source.record_type).collect::<Vec<_>>());
        let counted: Vec<[u64; 3]> = usages(&events)
            .iter()
            .map(|(_, u)| {
                let cached = u.cache_read_tokens.unwrap();
                [u.input_tokens.unwrap() + cached, cached, u.output_tokens.unwrap()]
            })
            .collect();
        assert_eq!(counted, served, "{file}");
        let ids: Vec<String> = usages(&events).iter().map(|(_, u)| u.response_id.clone().unwrap()).collect();
        assert_eq!(ids, usage_record_ids(&path), "{file}: each response named by its record");
    }
}
