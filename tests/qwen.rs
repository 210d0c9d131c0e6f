//! The Qwen Code reader on the sessions Qwen Code 0.24.4 wrote against the test server
//! (`corpus/recorded/qwen/0.24.4/`). Expected values come from the files read as plain JSON and
//! from the server's ledger beside them, never from agentlog itself; usage totals are compared
//! with the independent script `tests/independent/qwen_usage.py`.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, Role, ToolFamily};
use agentlog::read::Reader;
use agentlog::read::qwen::Qwen;
use serde_json::Value;

/// The scenario folders of the recorded sessions.
const SCENARIOS: [&str; 10] = [
    "api-error",
    "compaction",
    "reasoning",
    "resume",
    "subagent",
    "subagent-background",
    "text",
    "text-memory",
    "tools",
    "two-turns",
];

fn dir(scenario: &str) -> PathBuf {
    common::own_corpus().join("recorded/qwen/0.24.4").join(scenario)
}

/// The session files of one scenario (main file first: `chats/` sorts before `subagents/`).
fn recorded(scenario: &str) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = common::session_files(&dir(scenario)).into_iter().map(|(path, _)| path).collect();
    assert!(!files.is_empty(), "{scenario} holds no session");
    files
}

fn main_file(scenario: &str) -> PathBuf {
    let files: Vec<PathBuf> =
        recorded(scenario).into_iter().filter(|p| p.parent().unwrap().ends_with("chats")).collect();
    assert_eq!(files.len(), 1, "{scenario}: {files:?}");
    files.into_iter().next().unwrap()
}

fn read(path: &Path) -> Vec<Event> {
    let (events, report) = common::read_file(&Qwen, path, &path.display().to_string());
    assert_eq!(report.lines, common::non_empty_lines(path), "{}", path.display());
    assert_eq!((report.lines_mapped, report.lines_diagnosed), (report.lines, 0), "{}", path.display());
    events
}

fn records(path: &Path) -> Vec<Value> {
    common::text(path).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The responses the server served in a scenario, by response id.
fn served(scenario: &str) -> HashMap<String, Value> {
    let ledger: Value = serde_json::from_str(&common::text(&dir(scenario).join("ledger.json"))).unwrap();
    let entries = ledger["entries"].as_array().unwrap();
    entries
        .iter()
        .filter(|e| e["response"]["status"] == 200)
        .map(|e| (e["response"]["id"].as_str().unwrap().to_owned(), e["response"]["usage"].clone()))
        .collect()
}

fn texts(events: &[Event], role: Role) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) if m.role == role => Some(m.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn every_record_of_every_file_is_mapped_and_known() {
    for scenario in SCENARIOS {
        for path in recorded(scenario) {
            let events = read(&path);
            let unknown: Vec<_> = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Unknown)).collect();
            assert!(unknown.is_empty(), "{}: {unknown:?}", path.display());
            // One event at least per line, each naming its record.
            let uuids: Vec<String> = records(&path).iter().map(|r| r["uuid"].as_str().unwrap().to_owned()).collect();
            for uuid in &uuids {
                assert!(events.iter().any(|e| e.record_id.as_deref() == Some(uuid)), "{}: {uuid}", path.display());
            }
            assert!(events.iter().all(|e| e.context.agent_version.as_deref() == Some("0.24.4")));
        }
    }
}

#[test]
fn every_served_response_is_one_usage_event_with_the_served_counts() {
    for scenario in SCENARIOS {
        let served = served(scenario);
        let events: Vec<Event> = recorded(scenario).iter().flat_map(|p| read(p)).collect();
        let usages = common::usages(&events);
        assert_eq!(usages.len(), served.len(), "{scenario}: one usage event per response");
        for (event, usage) in usages {
            let id = usage.response_id.as_deref().expect("a usage event names its response");
            assert_eq!(event.response_id.as_deref(), Some(id));
            let want = &served[id];
            let cached = want["prompt_tokens_details"]["cached_tokens"].as_u64();
            assert_eq!(usage.cache_read_tokens, cached, "{scenario} {id}");
            assert_eq!(usage.input_tokens, Some(want["prompt_tokens"].as_u64().unwrap() - cached.unwrap()));
            assert_eq!(usage.output_tokens, want["completion_tokens"].as_u64(), "{scenario} {id}");
            let reasoning = want["completion_tokens_details"]["reasoning_tokens"].as_u64();
            assert_eq!(usage.reasoning_tokens, reasoning, "{scenario} {id}");
            assert_eq!(usage.total_tokens, want["total_tokens"].as_u64(), "{scenario} {id}");
            assert_eq!(usage.cache_write_tokens, None, "Qwen Code records no cache writes");
        }
    }
}

#[test]
fn usage_totals_equal_the_independent_script() {
    let mut files: Vec<PathBuf> = SCENARIOS.iter().flat_map(|s| recorded(s)).collect();
    files.extend(common::session_files(&common::own_corpus().join("qwen")).into_iter().map(|(p, _)| p));
    let Some(expected) = common::independent("qwen_usage.py", &files) else { return };
    for path in &files {
        let events = read(path);
        let usages: Vec<_> = common::usages(&events).into_iter().map(|(_, u)| u).collect();
        let sum = |f: fn(&agentlog::model::Usage) -> Option<u64>| usages.iter().filter_map(|u| f(u)).sum::<u64>();
        let got = BTreeMap::from([
            ("input", sum(|u| u.input_tokens)),
            ("cached", sum(|u| u.cache_read_tokens)),
            ("output", sum(|u| u.output_tokens)),
            ("reasoning", sum(|u| u.reasoning_tokens)),
            ("total", sum(|u| u.total_tokens)),
            ("calls", usages.len() as u64),
        ]);
        let want = &expected[path.display().to_string()];
        for (key, value) in &got {
            assert_eq!(want[key].as_u64(), Some(*value), "{}: {key} ({got:?} vs {want})", path.display());
        }
    }
}

#[test]
fn tool_calls_pair_with_their_outputs_and_the_failed_command_is_flagged() {
    let path = main_file("tools");
    let events = read(&path);
    let raw = records(&path);
    let results: Vec<&Value> = raw.iter().filter(|r| r["type"] == "tool_result").collect();
    assert_eq!(results.len(), 2);
    let calls: Vec<_> =
        events.iter().filter_map(|e| if let Payload::ToolCall(c) = &e.payload { Some(c) } else { None }).collect();
    let outputs: Vec<_> =
        events.iter().filter_map(|e| if let Payload::ToolOutput(o) = &e.payload { Some(o) } else { None }).collect();
    assert_eq!((calls.len(), outputs.len()), (2, 2));
    for ((call, output), result) in calls.iter().zip(&outputs).zip(&results) {
        let id = result["toolCallResult"]["callId"].as_str().unwrap();
        assert_eq!((call.call_id.as_deref(), output.call_id.as_deref()), (Some(id), Some(id)));
        assert_eq!(call.name, "run_shell_command");
        assert_eq!(call.tool_kind, Some(ToolFamily::Shell));
        let exit = result["toolCallResult"]["resultDisplay"]["exitCode"].as_i64();
        assert_eq!(output.exit_code, exit);
        let error = result["toolCallResult"]["status"] == "error";
        assert_eq!((output.is_error, output.failed), (Some(error), Some(error)));
        let response = &result["message"]["parts"][0]["functionResponse"]["response"];
        assert_eq!(Some(output.text.as_str()), response["output"].as_str().or(response["error"].as_str()));
    }
    assert_eq!((outputs[0].exit_code, outputs[1].exit_code), (Some(0), Some(2)));
    // The duration comes from the call's telemetry record.
    let telemetry = raw.iter().find(|r| r["systemPayload"]["uiEvent"]["event.name"] == "qwen-code.tool_call").unwrap();
    assert_eq!(outputs[0].duration_ms, telemetry["systemPayload"]["uiEvent"]["duration_ms"].as_u64());
}

#[test]
fn thoughts_are_reasoning_and_inside_the_output_count() {
    let path = main_file("reasoning");
    let events = read(&path);
    let raw = records(&path);
    let assistant = raw.iter().find(|r| r["type"] == "assistant").unwrap();
    let parts = assistant["message"]["parts"].as_array().unwrap();
    let reasoning: Vec<&str> = events
        .iter()
        .filter_map(|e| if let Payload::Reasoning(r) = &e.payload { Some(r.text.as_str()) } else { None })
        .collect();
    assert_eq!(reasoning, [parts[0]["text"].as_str().unwrap()]);
    assert_eq!(texts(&events, Role::Assistant), [parts[1]["text"].as_str().unwrap()]);
    let metadata = &assistant["usageMetadata"];
    let (_, usage) = common::usages(&events)[0];
    assert_eq!(usage.output_tokens, metadata["candidatesTokenCount"].as_u64());
    assert_eq!(usage.reasoning_tokens, metadata["thoughtsTokenCount"].as_u64());
    assert_eq!(
        metadata["totalTokenCount"].as_u64(),
        Some(metadata["promptTokenCount"].as_u64().unwrap() + metadata["candidatesTokenCount"].as_u64().unwrap())
    );
}

#[test]
fn subagent_transcripts_are_sidechains_of_the_parent_session_linked_to_their_call() {
    for scenario in ["subagent", "subagent-background"] {
        let files = recorded(scenario);
        assert_eq!(files.len(), 2, "{scenario}");
        let main = read(&files[0]);
        let sub = read(&files[1]);
        let sidecar: Value = serde_json::from_str(&common::text(&files[1].with_extension("meta.json"))).unwrap();
        let agent = sidecar["agentId"].as_str().unwrap();
        let call = sidecar["toolUseId"].as_str().unwrap();
        let spawn = main.iter().find_map(|e| match &e.payload {
            Payload::ToolCall(c) if c.name == "agent" => Some(c),
            _ => None,
        });
        assert_eq!(spawn.map(|c| (c.call_id.as_deref(), c.tool_kind)), Some((Some(call), Some(ToolFamily::Subagent))));
        for e in &sub {
            assert!(e.is_sidechain, "{scenario}: {e:?}");
            assert_eq!(e.session_id, sidecar["parentSessionId"].as_str().unwrap());
            assert_eq!(e.parent_session_id.as_deref(), Some(e.session_id.as_str()));
            assert_eq!((e.agent_id.as_deref(), e.parent_call_id.as_deref()), (Some(agent), Some(call)));
        }
        assert!(texts(&sub, Role::User)[0].contains("run echo from-subagent"));
        // The subagent's responses are counted once, by the main file's telemetry, as the
        // subagent's; its transcript repeats them as snapshots.
        let theirs: Vec<_> =
            common::usages(&main).into_iter().filter(|(e, _)| e.agent_id.as_deref() == Some(agent)).collect();
        let snapshots = sub.iter().filter(|e| common::meta_type(e) == Some(MetaType::UsageSnapshot)).count();
        assert_eq!((theirs.len(), snapshots), (2, 2), "{scenario}");
        assert!(theirs.iter().all(|(e, _)| e.is_sidechain && e.parent_call_id.as_deref() == Some(call)));
        assert!(common::usages(&sub).is_empty());
    }
    let notification = read(&main_file("subagent-background"));
    let notification: Vec<_> =
        notification.iter().filter(|e| common::meta_type(e) == Some(MetaType::TaskNotification)).collect();
    assert_eq!(notification.len(), 1);
}

#[test]
fn compression_is_a_compaction_and_its_request_is_counted() {
    let path = main_file("compaction");
    let events = read(&path);
    let compaction: Vec<_> = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Compaction)).collect();
    assert_eq!(compaction.len(), 1);
    let Payload::Meta(meta) = &compaction[0].payload else { unreachable!() };
    let data = meta.data.as_ref().unwrap().to_value();
    let raw = records(&path);
    let record = raw.iter().find(|r| r["subtype"] == "chat_compression").unwrap();
    assert_eq!(data["compressedHistory"], record["systemPayload"]["compressedHistory"]);
    // Three responses: two answers and the summary, which has no assistant record.
    assert_eq!(raw.iter().filter(|r| r["type"] == "assistant").count(), 2);
    assert_eq!(common::usages(&events).len(), 3);
}

#[test]
fn continued_and_resumed_runs_go_on_in_the_same_file() {
    for scenario in ["two-turns", "resume"] {
        let path = main_file(scenario);
        let events = read(&path);
        let raw = records(&path);
        let typed: Vec<String> = raw
            .iter()
            .filter(|r| r["type"] == "user" && r.get("subtype").is_none())
            .map(|r| r["message"]["parts"][0]["text"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(typed.len(), 2, "{scenario}");
        assert_eq!(texts(&events, Role::User), typed, "{scenario}");
        // The second run's prompt hangs on the first run's last record.
        let second = raw.iter().filter(|r| r["type"] == "user").nth(1).unwrap();
        assert!(second["parentUuid"].is_string());
        assert!(events.iter().all(|e| !e.copied && e.session_id == raw[0]["sessionId"].as_str().unwrap()));
    }
}

#[test]
fn the_memory_agent_is_counted_as_a_sidechain_without_a_transcript() {
    let events = read(&main_file("text-memory"));
    let usages = common::usages(&events);
    assert_eq!(usages.len(), 2);
    let memory = usages[1].0;
    assert!(memory.is_sidechain);
    assert!(memory.agent_id.as_deref().unwrap().starts_with("managed-auto-memory-extractor"));
    assert_eq!(memory.parent_call_id, None);
}

#[test]
fn qwen_files_are_told_from_claude_code_and_gemini_cli_files() {
    for scenario in SCENARIOS {
        for (path, reader) in common::session_files(&dir(scenario)) {
            assert_eq!(reader.name(), "qwen", "{}", path.display());
        }
    }
    for other in ["claude", "gemini"] {
        for (path, reader) in common::session_files(&common::own_corpus().join("recorded").join(other)) {
            assert_ne!(reader.name(), "qwen", "{}", path.display());
        }
    }
}

#[test]
fn tool_names_map_to_families() {
    let cases = [
        ("run_shell_command", ToolFamily::Shell),
        ("read_file", ToolFamily::Read),
        ("write_file", ToolFamily::Write),
        ("edit", ToolFamily::Edit),
        ("notebook_edit", ToolFamily::Edit),
        ("grep_search", ToolFamily::Search),
        ("glob", ToolFamily::Search),
        ("list_directory", ToolFamily::Search),
        ("web_fetch", ToolFamily::WebFetch),
        ("web_search", ToolFamily::WebSearch),
        ("todo_write", ToolFamily::Plan),
        ("agent", ToolFamily::Subagent),
        ("ask_user_question", ToolFamily::AskUser),
    ];
    for (name, family) in cases {
        assert_eq!(Qwen.tool_family(name), family, "{name}");
    }
}

#[test]
fn synthetic_gemini_usage_images_and_unknown_subtypes() {
    let files: Vec<PathBuf> =
        common::session_files(&common::own_corpus().join("qwen")).into_iter().map(|(p, _)| p).collect();
    assert_eq!(files.len(), 1);
    let events = read(&files[0]);
    let raw = records(&files[0]);
    // Through the Gemini API the thoughts lie beside the output: they are added to it.
    let metadata = &raw[2]["usageMetadata"];
    let count = |key: &str| metadata[key].as_u64().unwrap();
    assert_eq!(
        count("totalTokenCount"),
        count("promptTokenCount") + count("candidatesTokenCount") + count("thoughtsTokenCount")
    );
    let usages = common::usages(&events);
    assert_eq!(usages.len(), 2, "the telemetry counts the first response, the assistant record the second");
    let (first, second) = (usages[0].1, usages[1].1);
    assert_eq!(first.output_tokens, Some(count("candidatesTokenCount") + count("thoughtsTokenCount")));
    assert_eq!(first.reasoning_tokens, Some(count("thoughtsTokenCount")));
    assert_eq!(first.input_tokens, Some(count("promptTokenCount") - count("cachedContentTokenCount")));
    assert_eq!(first.response_id.as_deref(), raw[1]["systemPayload"]["uiEvent"]["response_id"].as_str());
    assert_eq!(second.output_tokens, raw[4]["usageMetadata"]["candidatesTokenCount"].as_u64());
    assert_eq!(second.model.as_deref(), Some("qwen3-coder-plus"));
    // The image part of the prompt.
    let Payload::Message(prompt) = &events[0].payload else { panic!("{:?}", events[0]) };
    let image = raw[0]["message"]["parts"][1]["inlineData"]["data"].as_str();
    assert!(matches!(&prompt.parts[1], agentlog::model::Part::Image { data, .. } if data.as_deref() == image));
    // A subtype no run wrote is kept whole.
    let unknown: Vec<_> = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Unknown)).collect();
    assert_eq!(unknown.len(), 1);
    let Payload::Meta(meta) = &unknown[0].payload else { unreachable!() };
    assert_eq!(meta.data.as_ref().unwrap().to_value(), raw[5]);
}
