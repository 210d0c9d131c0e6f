//! The Cline reader on the sessions Cline CLI 3.0.65 wrote against the test server
//! (`corpus/recorded/cline/3.0.65/`) and on the synthetic samples (`corpus/cline/`). Expected
//! values come from the files and the server's ledgers read as plain JSON, and from the
//! independent script `tests/independent/cline_usage.py`, never from agentlog itself.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, Role, ToolFamily, Usage};
use agentlog::read::Reader;
use agentlog::read::cline::Cline;
use serde_json::Value;

const SCENARIOS: [&str; 8] =
    ["api-error", "reasoning", "resume", "subagent", "text", "tools", "tools-openai", "two-turns"];

fn scenario_dir(scenario: &str) -> PathBuf {
    common::own_corpus().join("recorded/cline/3.0.65").join(scenario)
}

/// The messages files of one recorded scenario, in name order.
fn recorded(scenario: &str) -> Vec<PathBuf> {
    let files: Vec<PathBuf> =
        common::session_files(&scenario_dir(scenario)).into_iter().map(|(path, _)| path).collect();
    assert!(!files.is_empty(), "{scenario} holds no session");
    files
}

/// The one session file of a scenario that is not a sub-agent's.
fn main_file(scenario: &str) -> PathBuf {
    let files: Vec<PathBuf> = recorded(scenario)
        .into_iter()
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with("agent_"))
        .collect();
    assert_eq!(files.len(), 1, "{scenario}: {files:?}");
    files.into_iter().next().unwrap()
}

fn read(path: &Path) -> (Vec<Event>, agentlog::read::ReadReport) {
    common::read_file(&Cline, path, &path.display().to_string())
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&common::text(path)).unwrap()
}

/// The responses the server served (status 200), in serving order.
fn served(scenario: &str) -> Vec<Value> {
    let ledger = json(&scenario_dir(scenario).join("ledger.json"));
    ledger["entries"].as_array().unwrap().iter().filter(|e| e["response"]["status"] == 200).cloned().collect()
}

fn usages(events: &[Event]) -> Vec<&Usage> {
    common::usages(events).into_iter().map(|(_, u)| u).collect()
}

fn texts(events: &[Event], role: Role) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) if m.role == role => Some(m.text.as_str()),
            _ => None,
        })
        .collect()
}

/// The line of each element of `messages`, found in the text independently of the reader: the
/// line of the element's opening brace (the CLI writes two-space indented JSON).
fn element_lines(path: &Path) -> Vec<u64> {
    let text = common::text(path);
    let messages = json(path)["messages"].as_array().map_or(0, Vec::len);
    let lines: Vec<u64> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("    {") && l.trim() == "{")
        .map(|(i, _)| i as u64 + 1)
        .collect();
    assert_eq!(lines.len(), messages, "{}", path.display());
    lines
}

#[test]
fn every_recorded_file_is_told_as_cline_and_every_message_has_events() {
    for scenario in SCENARIOS {
        for path in recorded(scenario) {
            let (events, report) = read(&path);
            assert_eq!(report.lines, common::non_empty_lines(&path), "{}", path.display());
            assert_eq!((report.lines_mapped, report.lines_diagnosed), (report.lines, 0), "{}", path.display());
            let mut want = vec![1];
            want.extend(element_lines(&path));
            let mut got: Vec<u64> = events.iter().map(|e| e.source.line).collect();
            got.dedup();
            assert_eq!(got, want, "{}", path.display());
            let unknown = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Unknown)).count();
            assert_eq!(unknown, 0, "{}", path.display());
        }
    }
}

#[test]
fn typed_prompt_is_the_user_message_without_its_wrapper() {
    let path = main_file("tools");
    let raw = json(&path);
    // the file wraps it: <user_input mode="act">…</user_input>
    let wrapped = raw["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(wrapped, "<user_input mode=\"act\">[tools] Run echo hello, then list /nonexistent.</user_input>");
    let (events, _) = read(&path);
    assert_eq!(texts(&events, Role::User), ["[tools] Run echo hello, then list /nonexistent."]);
    let answers: Vec<String> =
        served("tools").iter().filter_map(|e| e["response"]["text"].as_str().map(str::to_owned)).collect();
    assert_eq!(texts(&events, Role::Assistant), answers);
}

#[test]
fn a_resumed_session_is_the_same_file_with_both_prompts() {
    for (scenario, prompts) in [
        ("two-turns", ["[two-turns] First prompt of two.", "[two-turns] Second prompt of two."]),
        ("resume", ["[resume] Run a command and stop.", "[resume] Pick up where we left off."]),
    ] {
        let (events, _) = read(&main_file(scenario));
        let typed: Vec<&str> = events
            .iter()
            .filter(|e| !e.injected)
            .filter_map(|e| match &e.payload {
                Payload::Message(m) if m.role == Role::User => Some(m.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(typed, prompts, "{scenario}");
        let answers: Vec<String> =
            served(scenario).iter().filter_map(|e| e["response"]["text"].as_str().map(str::to_owned)).collect();
        assert_eq!(texts(&events, Role::Assistant), answers, "{scenario}");
        let sessions: std::collections::BTreeSet<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
        assert_eq!(sessions.len(), 1, "{scenario}");
    }
}

#[test]
fn tool_calls_pair_with_outputs_and_the_failed_command_is_flagged() {
    let (events, _) = read(&main_file("tools"));
    let calls: Vec<(String, String, Value)> = served("tools")
        .iter()
        .flat_map(|e| e["response"]["tool_calls"].as_array().unwrap().clone())
        .map(|c| (c["id"].as_str().unwrap().to_owned(), c["name"].as_str().unwrap().to_owned(), c["input"].clone()))
        .collect();
    assert_eq!(calls.len(), 2);
    for (i, (id, name, input)) in calls.iter().enumerate() {
        let call = events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolCall(c) if c.call_id.as_deref() == Some(id) => Some(c),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no call {id}"));
        assert_eq!((&call.name, call.tool_kind), (name, Some(ToolFamily::Shell)));
        assert_eq!(call.input.as_ref().unwrap().to_value(), *input);
        let output = events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolOutput(o) if o.call_id.as_deref() == Some(id) => Some(o),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no output of {id}"));
        if i == 0 {
            assert_eq!((output.text.as_str(), output.failed, output.exit_code), ("hello\n", Some(false), None));
        } else {
            assert!(output.text.contains("No such file or directory"), "{}", output.text);
            assert_eq!((output.failed, output.exit_code), (Some(true), Some(2)));
        }
    }
}

#[test]
fn usage_is_the_served_usage_once_per_request() {
    // Anthropic: the served input, cache reads and cache writes, apart
    for scenario in ["text", "reasoning", "tools", "api-error", "two-turns", "resume"] {
        let (events, _) = read(&main_file(scenario));
        let want: Vec<[Option<u64>; 4]> = served(scenario)
            .iter()
            .map(|e| {
                let u = &e["response"]["usage"];
                ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"]
                    .map(|k| u[k].as_u64())
            })
            .collect();
        let got: Vec<[Option<u64>; 4]> = usages(&events)
            .iter()
            .map(|u| [u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens])
            .collect();
        assert_eq!(got, want, "{scenario}");
    }
    // Chat Completions: prompt_tokens holds the cached tokens
    let (events, _) = read(&main_file("tools-openai"));
    let want: Vec<[Option<u64>; 4]> = served("tools-openai")
        .iter()
        .map(|e| {
            let u = &e["response"]["usage"];
            let cached = u["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap();
            [
                Some(u["prompt_tokens"].as_u64().unwrap() - cached),
                Some(cached),
                Some(0),
                u["completion_tokens"].as_u64(),
            ]
        })
        .collect();
    let got: Vec<[Option<u64>; 4]> = usages(&events)
        .iter()
        .map(|u| [u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens])
        .collect();
    assert_eq!(got, want);
}

#[test]
fn reasoning_is_the_served_thinking() {
    let (events, _) = read(&main_file("reasoning"));
    let thinking: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Reasoning(r) => Some(r.text.as_str()),
            _ => None,
        })
        .collect();
    let served = served("reasoning");
    assert_eq!(thinking, [served[0]["response"]["thinking"].as_str().unwrap()]);
}

#[test]
fn subagent_names_its_parent_session() {
    let main = main_file("subagent");
    let parent = json(&main)["sessionId"].as_str().unwrap().to_owned();
    let sub = recorded("subagent").into_iter().find(|p| p != &main).unwrap();
    let origin = json(&sub)["origin"].clone();
    assert_eq!(origin["parentThreadId"], parent.as_str());
    let (events, _) = read(&sub);
    assert!(!events.is_empty());
    for e in &events {
        assert_eq!(e.parent_session_id.as_deref(), Some(parent.as_str()));
        assert_eq!(e.agent_id.as_deref(), origin["subagent"].as_str());
        assert!(e.is_sidechain);
    }
    let (main_events, _) = read(&main);
    assert!(main_events.iter().all(|e| e.parent_session_id.is_none() && !e.is_sidechain));
    // the spawn_agent call's tool family, and the sub-agent's own usage (two requests)
    assert!(main_events.iter().any(|e| matches!(&e.payload,
        Payload::ToolCall(c) if c.name == "spawn_agent" && c.tool_kind == Some(ToolFamily::Subagent))));
    assert_eq!(usages(&events).len(), 2);
}

#[test]
fn synthetic_quirks() {
    let path = common::own_corpus().join("cline/quirks.messages.json");
    let (events, report) = read(&path);
    assert_eq!(report.lines_diagnosed, 0);
    // the assistant message without metrics has no usage; metrics without cache counts give null
    let u = usages(&events);
    assert_eq!(u.len(), 2);
    assert_eq!(
        (u[0].input_tokens, u[0].cache_read_tokens, u[0].cache_write_tokens),
        (Some(1400), Some(500), Some(100))
    );
    assert_eq!((u[1].input_tokens, u[1].cache_read_tokens, u[1].cache_write_tokens), (Some(300), None, None));
    let injected: Vec<&str> = events
        .iter()
        .filter(|e| e.injected)
        .filter_map(|e| match &e.payload {
            Payload::Message(m) => Some(m.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(injected, ["[SYSTEM] Continue if the task is not done."]);
    let kinds: Vec<MetaType> = events.iter().filter_map(common::meta_type).collect();
    assert_eq!(kinds.iter().filter(|k| **k == MetaType::Compaction).count(), 1);
    assert_eq!(kinds.iter().filter(|k| **k == MetaType::Unknown).count(), 2);
    let output = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some(o),
            _ => None,
        })
        .unwrap();
    assert_eq!((output.failed, output.exit_code), (Some(true), None), "two commands: no one exit code");
    assert!(output.text.starts_with("$ ls\na.txt\n"));

    let (events, _) = read(&common::own_corpus().join("cline/one-line.messages.json"));
    assert!(events.iter().all(|e| e.source.line == 1));
    let ids: std::collections::BTreeSet<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), events.len(), "event ids differ on one line");
    assert_eq!(texts(&events, Role::User), ["Say hi."]);
}

#[test]
fn vscode_task_folder_takes_usage_from_the_panel_only() {
    let dir = common::own_corpus().join("cline/vscode/tasks/1795700100000");
    let (history, report) = read(&dir.join("api_conversation_history.json"));
    assert_eq!(report.lines_diagnosed, 0);
    let (panel, _) = read(&dir.join("ui_messages.json"));
    // the task's id is the folder's name, in both files
    assert!(history.iter().chain(&panel).all(|e| e.session_id == "1795700100000"));
    // typed prompts unwrapped; the extension's environment details injected
    let typed: Vec<&str> = history
        .iter()
        .filter(|e| !e.injected)
        .filter_map(|e| match &e.payload {
            Payload::Message(m) if m.role == Role::User => Some(m.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(typed, ["Read hello.py and run it.", "Use python instead."]);
    assert_eq!(history.iter().filter(|e| e.injected).count(), 2);
    // outputs written as `[tool for '…'] Result:` text pair with the calls in order
    let raw = json(&dir.join("api_conversation_history.json"));
    let ids: Vec<&str> = raw
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let outputs: Vec<(Option<&str>, Option<bool>)> = history
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some((o.call_id.as_deref(), o.failed)),
            _ => None,
        })
        .collect();
    assert_eq!(outputs, [(Some(ids[0]), None), (Some(ids[1]), Some(true))]);
    // the history's metrics are not usage; the panel's four requests are
    assert!(usages(&history).is_empty());
    let u = usages(&panel);
    let got: Vec<[Option<u64>; 4]> =
        u.iter().map(|u| [u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens]).collect();
    assert_eq!(
        got,
        [
            [Some(12), Some(0), Some(5000), Some(40)],
            [Some(9), Some(5000), Some(200), Some(30)],
            [None, None, None, None],
            [Some(7), None, None, Some(25)],
        ]
    );
    let unknown: Vec<&str> = panel
        .iter()
        .filter(|e| common::meta_type(e) == Some(MetaType::Unknown))
        .filter_map(|e| e.source.record_type.as_deref())
        .collect();
    assert_eq!(unknown, ["say/new_kind_of_record"]);
    assert!(!Cline.accepts(&dir.join("task_metadata.json")));
    assert!(Cline.owns(&dir.join("ui_messages.json")));
}

#[test]
fn only_messages_files_are_read_from_directories() {
    let dir = scenario_dir("tools");
    let manifest = common::session_files(&dir);
    assert_eq!(manifest.len(), 1);
    assert!(manifest[0].0.to_string_lossy().ends_with(".messages.json"));
    assert!(!Cline.accepts(Path::new("sessions/1_a/1_a.json")));
    assert!(!Cline.accepts(Path::new("sessions/1_a/1_a.compaction.json")));
    assert!(Cline.owns(Path::new("/h/.cline/data/sessions/1_a/1_a.messages.json")));
    assert!(Cline.owns(Path::new("/h/.cline/data/sessions/1_a/agent_2_b.messages.json")));
    let env = |key: &str| (key == "HOME").then(|| std::ffi::OsString::from(scenario_dir("tools").parent().unwrap()));
    assert!(Cline.discover(&env).is_empty(), "no .cline/data/sessions under the corpus");
}

#[test]
fn usage_totals_equal_the_independent_script() {
    let mut files: Vec<PathBuf> = SCENARIOS.iter().flat_map(|s| recorded(s)).collect();
    files.extend(common::session_files(&common::own_corpus().join("cline")).into_iter().map(|(p, _)| p));
    let Some(expected) = common::independent("cline_usage.py", &files) else { return };
    for path in &files {
        let (events, _) = read(path);
        let u = usages(&events);
        let sum = |f: fn(&Usage) -> Option<u64>| -> u64 { u.iter().filter_map(|u| f(u)).sum() };
        let got = BTreeMap::from([
            ("input", sum(|u| u.input_tokens)),
            ("cached", sum(|u| u.cache_read_tokens)),
            ("cache_write", sum(|u| u.cache_write_tokens)),
            ("output", sum(|u| u.output_tokens)),
            ("total", sum(|u| u.total_tokens)),
            ("calls", u.len() as u64),
        ]);
        let want = &expected[path.display().to_string()];
        for (key, value) in &got {
            assert_eq!(want[key].as_u64(), Some(*value), "{}: {key}", path.display());
        }
        // the agent's own cost stays in the usage events' data
        let cost: f64 = common::usages(&events)
            .iter()
            .filter_map(|(e, _)| match &e.payload {
                Payload::Meta(m) => m.data.as_ref().map(|d| {
                    let d = d.to_value();
                    // the CLI's metrics, or a VS Code task's api_req_started request
                    d["metrics"]["cost"].as_f64().or(d["text"]["cost"].as_f64()).unwrap_or(0.0)
                }),
                _ => None,
            })
            .sum();
        assert!((cost - want["cost"].as_f64().unwrap()).abs() < 1e-12, "{}", path.display());
    }
}
