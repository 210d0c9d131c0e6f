//! The Copilot CLI reader on the sessions the real Copilot CLI 1.0.102 and 1.0.20 wrote against
//! the scripted model server (`corpus/recorded/copilot/`). Expected values come from the
//! server's script (the k-th response of a scenario: fresh input `1000 + 37k`, cache reads
//! `300 + 23k`, output `50 + 11k`) or from the session files read as plain JSON, never from
//! agentlog itself.

mod common;

use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Part, Payload, Role, Usage};
use agentlog::read::copilot::Copilot;
use serde_json::Value;

use common::meta_type;

/// The `events.jsonl` of a recorded scenario.
fn recorded(version: &str, scenario: &str) -> PathBuf {
    let dir = common::own_corpus().join("recorded/copilot").join(version).join(scenario).join("session-state");
    let session = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    session.join("events.jsonl")
}

const SCENARIOS_1_0_102: [&str; 7] =
    ["tools", "reasoning", "image", "resume", "compaction", "subagent", "subagent-background"];

fn read(path: &Path) -> Vec<Event> {
    let (events, report) = common::read_file(&Copilot, path, &path.display().to_string());
    assert!(report.diagnostics.is_empty(), "{}: {:?}", path.display(), report.diagnostics);
    assert_eq!(report.lines, report.lines_mapped, "{}", path.display());
    events
}

/// The file's records, read as plain JSON.
fn records(path: &Path) -> Vec<Value> {
    common::text(path).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

use common::usages;

fn n(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// [fresh input, cache reads, output, reasoning] of Copilot's own counts, where `inputTokens`
/// includes the cache reads and writes and `outputTokens` the reasoning.
fn copilot_counts(u: &Value) -> [u64; 4] {
    let reads = n(u, "cacheReadTokens");
    [n(u, "inputTokens") - reads - n(u, "cacheWriteTokens"), reads, n(u, "outputTokens"), n(u, "reasoningTokens")]
}

fn counts(u: &Usage) -> [u64; 4] {
    [u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens].map(|c| c.unwrap_or(0))
}

fn sum(all: impl IntoIterator<Item = [u64; 4]>) -> [u64; 4] {
    all.into_iter().fold([0; 4], |a, b| std::array::from_fn(|i| a[i] + b[i]))
}

// Copilot CLI 1.0.102 writes a `session.usage_record` per response (keyed by `apiCallId`, the
// `assistant.message` carrying the same id and no counts) and a `session.shutdown` per process
// whose totals cover the whole session; the `/compact` call is counted only in its `model.*`
// records and `compactionTokensUsed`. The records stayed `unknown`, the usage came only from the
// shutdowns, and a resumed session was counted once per shutdown (input 5148 for 3111).
#[test]
fn copilot_1_0_102_counts_each_response_once_by_its_api_call_id() {
    for scenario in SCENARIOS_1_0_102 {
        let path = recorded("1.0.102", scenario);
        let events = read(&path);
        // What the file counts per response: its usage records and the compaction's model call.
        let mut want: Vec<(String, [u64; 4], bool)> = Vec::new();
        for r in records(&path) {
            let subagent = r.get("agentId").is_some();
            match r["type"].as_str().unwrap() {
                "session.usage_record" => {
                    let u = &r["data"]["usage"];
                    want.push((u["apiCallId"].as_str().unwrap().to_owned(), copilot_counts(u), subagent));
                }
                "model.model_call_success" => {
                    let u = &r["data"]["responseUsage"];
                    let cached = u["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap();
                    let c = [n(u, "prompt_tokens") - cached, cached, n(u, "completion_tokens"), 0];
                    want.push((r["data"]["modelCall"]["api_id"].as_str().unwrap().to_owned(), c, subagent));
                }
                _ => {}
            }
        }
        let got: Vec<(String, [u64; 4], bool)> = usages(&events)
            .into_iter()
            .map(|(e, u)| {
                assert_eq!(e.response_id, u.response_id, "{scenario}");
                (u.response_id.clone().unwrap_or_default(), counts(u), e.is_sidechain)
            })
            .collect();
        assert_eq!(got, want, "{scenario}: one usage event per response, nothing from the shutdowns");
        // The same, from the server's script: the k-th response of the scenario.
        let mut served: Vec<[u64; 3]> = got.iter().map(|(_, c, _)| [c[0], c[1], c[2]]).collect();
        served.sort_unstable();
        let script: Vec<[u64; 3]> =
            (0..served.len() as u64).map(|k| [1000 + 37 * k, 300 + 23 * k, 50 + 11 * k]).collect();
        assert_eq!(served, script, "{scenario}");
    }
    // The resumed session: three responses over two runs, and two shutdowns of cumulative totals.
    let events = read(&recorded("1.0.102", "resume"));
    assert_eq!(sum(usages(&events).into_iter().map(|(_, u)| counts(u))), [3111, 969, 183, 0]);
}

// The `/compact` summarisation is a real model response: counted once, from its
// `model.model_call_success` (`responseUsage`, `modelCall.api_id`), on the main thread; its
// `compactionTokensUsed` says the same and adds nothing, and no shutdown total holds it.
#[test]
fn copilot_1_0_102_compaction_call_is_one_response() {
    let path = recorded("1.0.102", "compaction");
    let events = read(&path);
    let all = records(&path);
    let complete = all.iter().find(|r| r["type"] == "session.compaction_complete").unwrap();
    let success = all.iter().find(|r| r["type"] == "model.model_call_success").unwrap();
    let id = success["data"]["modelCall"]["api_id"].as_str().unwrap();
    let of_call: Vec<_> = usages(&events).into_iter().filter(|(_, u)| u.response_id.as_deref() == Some(id)).collect();
    assert_eq!(of_call.len(), 1);
    let (event, usage) = of_call[0];
    assert_eq!(counts(usage), copilot_counts(&complete["data"]["compactionTokensUsed"]));
    assert_eq!(usage.model.as_deref(), complete["data"]["compactionTokensUsed"]["model"].as_str());
    assert!(!event.is_sidechain);
    // Everything else: the records of the three runs; the last shutdown's totals are theirs.
    let last = all.iter().rfind(|r| r["type"] == "session.shutdown").unwrap();
    let runs =
        sum(usages(&events).into_iter().filter(|(e, _)| e.response_id.as_deref() != Some(id)).map(|(_, u)| counts(u)));
    assert_eq!(runs, copilot_counts(&last["data"]["modelMetrics"]["gpt-4.1"]["usage"]));
}

// Record types new in 1.0.102 stayed `unknown`.
#[test]
fn copilot_1_0_102_record_types_are_known() {
    let expected = [
        ("session.usage_record", MetaType::Usage),
        ("session.binary_asset", MetaType::Attachment),
        ("subagent.configured", MetaType::TurnContext),
        ("system.notification", MetaType::TaskNotification),
        ("model.turn_started", MetaType::Progress),
        ("model.model_call_started", MetaType::Progress),
        ("model.model_call_success", MetaType::Request),
        ("model.message", MetaType::Progress),
        ("model.response", MetaType::Progress),
        ("model.turn_ended", MetaType::Progress),
        ("model.messages_snapshot", MetaType::Progress),
    ];
    let mut seen = Vec::new();
    for version in ["1.0.102", "1.0.20"] {
        let dir = common::own_corpus().join("recorded/copilot").join(version);
        for scenario in std::fs::read_dir(&dir).unwrap() {
            let scenario = scenario.unwrap().file_name().into_string().unwrap();
            let events = read(&recorded(version, &scenario));
            let unknown: Vec<_> = events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).collect();
            assert!(
                unknown.is_empty(),
                "{version}/{scenario}: {:?}",
                unknown.iter().map(|e| &e.source.record_type).collect::<Vec<_>>()
            );
            // The first event of each line is the record's own (a model call's usage follows it).
            let mut line = 0;
            for e in events.iter().filter(|e| std::mem::replace(&mut line, e.source.line) != e.source.line) {
                let kind = e.source.record_type.as_deref().unwrap();
                if let Some((_, want)) = expected.iter().find(|(k, _)| *k == kind) {
                    assert_eq!(meta_type(e), Some(*want), "{version}/{scenario} line {}", e.source.line);
                    seen.push(kind.to_owned());
                }
            }
        }
    }
    for (kind, _) in &expected {
        assert!(seen.iter().any(|s| s == kind), "no {kind} in the recorded files");
    }
}

// `ls /nonexistent` exits 2 and Copilot CLI still writes `success: true`: 1.0.102 puts the code
// in `shellExecution.exitCode`, 1.0.20 only in the output's last line
// (`<exited with exit code 2>`). Both were `failed: false`.
#[test]
fn shell_commands_carry_their_exit_code() {
    for version in ["1.0.102", "1.0.20"] {
        let path = recorded(version, "tools");
        let events = read(&path);
        let outputs: Vec<(Option<i64>, Option<bool>, Option<bool>)> = events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::ToolOutput(o) => Some((o.exit_code, o.failed, o.is_error)),
                _ => None,
            })
            .collect();
        // What the file says: `success`, and the code in `shellExecution` or the output's text.
        let want: Vec<(Option<i64>, Option<bool>, Option<bool>)> = records(&path)
            .iter()
            .filter(|r| r["type"] == "tool.execution_complete")
            .map(|r| {
                let d = &r["data"];
                let text = d["result"]["content"].as_str().unwrap();
                let code = d["shellExecution"]["exitCode"].as_i64().unwrap_or_else(|| {
                    let tail = text.rsplit_once("exit code ").unwrap().1;
                    tail.trim_end_matches('>').parse().unwrap()
                });
                assert_eq!(d["success"], true);
                (Some(code), Some(code != 0), Some(false))
            })
            .collect();
        assert_eq!(outputs, want, "{version}");
        assert_eq!(outputs.iter().map(|o| o.0.unwrap()).collect::<Vec<_>>(), [0, 2], "{version}: echo, then ls");
    }
}

// 1.0.102 writes an attached file's bytes in `session.binary_asset`, which the `user.message`
// names by `assetId`; the prompt had no image part.
#[test]
fn copilot_1_0_102_attached_image_is_an_image_part() {
    let path = recorded("1.0.102", "image");
    let events = read(&path);
    let all = records(&path);
    let asset = all.iter().find(|r| r["type"] == "session.binary_asset").unwrap();
    let prompt = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::Message(m) if m.role == Role::User => Some(m),
            _ => None,
        })
        .unwrap();
    let images: Vec<&Part> = prompt.parts.iter().filter(|p| matches!(p, Part::Image { .. })).collect();
    assert_eq!(
        images,
        [&Part::Image {
            media_type: asset["data"]["mimeType"].as_str().map(str::to_owned),
            data: asset["data"]["data"].as_str().map(str::to_owned),
            url: None,
        }]
    );
    assert_eq!(prompt.parts.first().and_then(Part::text), all[2]["data"]["content"].as_str());
}

/// (line, is_sidechain, agent_id, parent_call_id) of every event.
fn threads(events: &[Event]) -> Vec<(u64, bool, Option<&str>, Option<&str>)> {
    events.iter().map(|e| (e.source.line, e.is_sidechain, e.agent_id.as_deref(), e.parent_call_id.as_deref())).collect()
}

// 1.0.20 marks a subagent's records only with `data.parentToolCallId`, the `task` call's id:
// they were main-thread events, and the subagent's output was counted as the main thread's.
#[test]
fn copilot_1_0_20_subagent_records_are_a_sidechain_of_their_task_call() {
    let path = recorded("1.0.20", "subagent");
    let events = read(&path);
    let all = records(&path);
    let mut want = Vec::new();
    for (i, r) in all.iter().enumerate() {
        let call = r["data"]["parentToolCallId"].as_str();
        for e in events.iter().filter(|e| e.source.line == i as u64 + 1) {
            want.push((e.source.line, call.is_some(), call, call));
        }
    }
    assert_eq!(threads(&events), want);
    assert!(want.iter().filter(|w| w.1).count() >= 4, "{want:?}");
    // The subagent's two responses are its own; the main thread's two are the main thread's.
    let output = |side: bool| -> Vec<u64> {
        usages(&events)
            .into_iter()
            .filter(|(e, u)| e.is_sidechain == side && u.input_tokens.is_none())
            .map(|(_, u)| u.output_tokens.unwrap())
            .collect()
    };
    assert_eq!(output(false), [50, 83]);
    assert_eq!(output(true), [61, 72]);
}

// 1.0.102 marks them with a top-level `agentId` of the subagent's own; `subagent.started` pairs it
// with the `task` call's id, which `parent_call_id` now holds (it held the `agentId`).
#[test]
fn copilot_1_0_102_subagent_events_name_their_task_call() {
    for scenario in ["subagent", "subagent-background"] {
        let path = recorded("1.0.102", scenario);
        let events = read(&path);
        let all = records(&path);
        let started = all.iter().find(|r| r["type"] == "subagent.started").unwrap();
        let (agent, call) = (started["agentId"].as_str().unwrap(), started["data"]["toolCallId"].as_str().unwrap());
        let mut want = Vec::new();
        for (i, r) in all.iter().enumerate() {
            let side = r.get("agentId").is_some();
            for e in events.iter().filter(|e| e.source.line == i as u64 + 1) {
                want.push((e.source.line, side, side.then_some(agent), side.then_some(call)));
            }
        }
        assert_eq!(threads(&events), want, "{scenario}");
    }
}

// Copilot CLI 1.0.20 (and older) names no model in `session.start`: a `session.model_change`
// follows it. Without that line the messages' `outputTokens` were counted under no model, the
// shutdown's per-model remainder subtracted nothing, and the output was counted twice (183 as
// 366). The totals must be the shutdown's either way.
#[test]
fn a_session_without_a_model_counts_its_output_once() {
    for (version, scenario) in [("1.0.20", "tools"), ("1.0.20", "resume"), ("1.0.20", "subagent")] {
        let path = recorded(version, scenario);
        let text = common::text(&path);
        // The same file without its `session.model_change` lines.
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("session-state").join(scenario);
        std::fs::create_dir_all(&session).unwrap();
        let stripped = session.join("events.jsonl");
        let kept: Vec<&str> = text.lines().filter(|l| !l.contains("\"session.model_change\"")).collect();
        assert!(kept.len() < text.lines().count(), "{scenario}");
        std::fs::write(&stripped, kept.join("\n") + "\n").unwrap();
        // What the shutdowns say (1.0.20: each one the totals of its process's run).
        let shutdowns = sum(records(&path).iter().filter(|r| r["type"] == "session.shutdown").flat_map(|r| {
            r["data"]["modelMetrics"].as_object().unwrap().values().map(|m| copilot_counts(&m["usage"]))
        }));
        let outputs: Vec<u64> = records(&path)
            .iter()
            .filter(|r| r["type"] == "assistant.message")
            .map(|r| n(&r["data"], "outputTokens"))
            .collect();
        assert_eq!(outputs.iter().sum::<u64>(), shutdowns[2], "{scenario}");
        for file in [&path, &stripped] {
            let events = read(file);
            let got = sum(usages(&events).into_iter().map(|(_, u)| counts(u)));
            assert_eq!(got, shutdowns, "{scenario}: {}", file.display());
            let per_message: Vec<u64> = usages(&events)
                .into_iter()
                .filter(|(e, _)| e.source.record_type.as_deref() == Some("assistant.message"))
                .map(|(_, u)| u.output_tokens.unwrap())
                .collect();
            assert_eq!(per_message, outputs, "{scenario}: {}", file.display());
        }
    }
}

/// A mutated line found by `tests/fuzz_mutations.rs`: an `assistant.message` holding no text, no
/// tool request and no count made no event, and its line was lost.
#[test]
fn an_assistant_message_with_nothing_in_it_still_has_its_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let start = r#"{"type":"session.start","data":{"sessionId":"s1","version":1,"producer":"copilot-agent","copilotVersion":"1.0.20","startTime":"2026-11-27T10:45:34.323Z"},"id":"a","timestamp":"2026-11-27T10:45:34.323Z","parentId":null}"#;
    let empty = r#"{"type":"assistant.message","data":{"messageId":"m1","success":true},"id":"b","timestamp":"2026-11-27T10:45:37.285Z","parentId":"a"}"#;
    std::fs::write(&path, format!("{start}\n{empty}\n")).unwrap();
    let events = read(&path);
    let answer = events.iter().find(|e| e.source.line == 2).unwrap();
    assert!(matches!(&answer.payload, Payload::Message(m) if m.role == Role::Assistant && m.text.is_empty()));
}
