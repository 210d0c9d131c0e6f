//! The pi reader on the sessions the real pi 0.73.1 and 1.6.0 wrote against the scripted model
//! server (`corpus/recorded/pi/`, each scenario with the server's `ledger.json`), on the
//! synthetic samples (`corpus/pi/`) and on a third-party session (`../shared/other-agents/pi`).
//! Expected values come from the ledgers or from the session files read as plain JSON, never
//! from agentlog itself; usage totals are compared with `tests/independent/pi_usage.py`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Part, Payload, Role, ToolFamily, Usage};
use agentlog::read::Reader;
use agentlog::read::pi::Pi;
use serde_json::Value;

use common::{meta_type, usages};

/// The session files of a recorded scenario, in name (= time) order.
fn recorded(version: &str, scenario: &str) -> Vec<PathBuf> {
    let dir = common::own_corpus().join("recorded/pi").join(version).join(scenario);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

fn ledger(version: &str, scenario: &str) -> Value {
    let path = common::own_corpus().join("recorded/pi").join(version).join(scenario).join("ledger.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The responses the server served (not errors), with their usage.
fn served(ledger: &Value) -> Vec<&Value> {
    ledger["entries"].as_array().unwrap().iter().filter(|e| e["response"]["status"] == 200).collect()
}

fn read(path: &Path) -> Vec<Event> {
    let (events, report) = common::read_file(&Pi, path, &path.display().to_string());
    assert!(report.diagnostics.is_empty(), "{}: {:?}", path.display(), report.diagnostics);
    assert_eq!(
        (report.lines, report.lines_mapped),
        (common::non_empty_lines(path), report.lines),
        "{}",
        path.display()
    );
    events
}

/// The file's records, read as plain JSON.
fn records(path: &Path) -> Vec<Value> {
    common::text(path).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// [fresh input, cache reads, cache writes, output] of a served response, in pi's terms: the
/// OpenAI APIs' prompt count includes the cached tokens, and pi subtracts them.
fn served_counts(entry: &Value) -> [u64; 4] {
    let u = &entry["response"]["usage"];
    let n = |v: &Value| v.as_u64().unwrap();
    match entry["api"].as_str().unwrap() {
        "anthropic-messages" => [
            n(&u["input_tokens"]),
            n(&u["cache_read_input_tokens"]),
            n(&u["cache_creation_input_tokens"]),
            n(&u["output_tokens"]),
        ],
        "openai-chat-completions" => {
            let cached = n(&u["prompt_tokens_details"]["cached_tokens"]);
            [n(&u["prompt_tokens"]) - cached, cached, 0, n(&u["completion_tokens"])]
        }
        _ => {
            let cached = n(&u["input_tokens_details"]["cached_tokens"]);
            [n(&u["input_tokens"]) - cached, cached, 0, n(&u["output_tokens"])]
        }
    }
}

fn counts(u: &Usage) -> [u64; 4] {
    [u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens].map(Option::unwrap)
}

fn text_of(e: &Event) -> Option<(Role, &str)> {
    match &e.payload {
        Payload::Message(m) => Some((m.role, m.text.as_str())),
        _ => None,
    }
}

fn data(e: &Event) -> Value {
    match &e.payload {
        Payload::Meta(m) => m.data.as_ref().map(|d| d.to_value()).unwrap_or_default(),
        _ => Value::Null,
    }
}

/// Each scenario of 0.73.1 (and three of 1.6.0) run over one API or more.
const SCENARIOS: [(&str, &str); 14] = [
    ("0.73.1", "text"),
    ("0.73.1", "tools"),
    ("0.73.1", "reasoning"),
    ("0.73.1", "reasoning-responses"),
    ("0.73.1", "reasoning-chat"),
    ("0.73.1", "two-turns"),
    ("0.73.1", "api-error-retry"),
    ("0.73.1", "rpc"),
    ("0.73.1", "fork-first"),
    ("0.73.1", "fork-cli"),
    ("0.73.1", "branch"),
    ("1.6.0", "reasoning-responses"),
    ("1.6.0", "api-error-retry"),
    ("1.6.0", "branch"),
];

#[test]
fn one_usage_event_per_response_with_the_counts_served() {
    for (version, scenario) in SCENARIOS {
        let ledger = ledger(version, scenario);
        let files = recorded(version, scenario);
        let raw: String = files.iter().map(|f| common::text(f)).collect();
        let events: Vec<Event> = files.iter().flat_map(|f| read(f)).collect();
        let counted: Vec<(&Event, &Usage)> =
            usages(&events).into_iter().filter(|(e, u)| !e.copied && u.response_id.is_some()).collect();
        // every response of the conversation that the files name, once
        let logged: Vec<&Value> = served(&ledger)
            .into_iter()
            .filter(|e| e["channel"] == "main" && raw.contains(e["response"]["id"].as_str().unwrap()))
            .collect();
        assert!(!logged.is_empty(), "{version}/{scenario}");
        assert_eq!(counted.len(), logged.len(), "{version}/{scenario}");
        for entry in logged {
            let id = entry["response"]["id"].as_str().unwrap();
            let (event, usage) = counted.iter().find(|(_, u)| u.response_id.as_deref() == Some(id)).unwrap();
            assert_eq!(counts(usage), served_counts(entry), "{version}/{scenario} {id}");
            assert_eq!(event.response_id.as_deref(), Some(id));
        }
    }
}

#[test]
fn usage_keeps_pis_own_cost_and_model() {
    let path = &recorded("0.73.1", "text")[0];
    let message = records(path).into_iter().find(|r| r["message"]["role"] == "assistant").unwrap();
    let events = read(path);
    let [(event, usage)] = usages(&events)[..] else { panic!("one usage event") };
    assert_eq!(data(event)["cost"], message["message"]["usage"]["cost"]);
    assert_eq!(usage.total_tokens, message["message"]["usage"]["totalTokens"].as_u64());
    assert_eq!(usage.model.as_deref(), Some("claude-scripted"));
    assert_eq!(usage.cost_usd, None, "priced by agentlog's tables, not here");
}

#[test]
fn reasoning_tokens_are_counted_apart_from_pi_1_only() {
    for (version, want) in [("0.73.1", None), ("1.6.0", Some(10))] {
        let ledger = ledger(version, "reasoning-responses");
        let served = served(&ledger)[0]["response"]["usage"]["output_tokens_details"]["reasoning_tokens"].as_u64();
        assert_eq!(served, Some(10));
        let events = read(&recorded(version, "reasoning-responses")[0]);
        let [(_, usage)] = usages(&events)[..] else { panic!("one usage event") };
        assert_eq!(usage.reasoning_tokens, want, "{version}");
    }
}

#[test]
fn thinking_is_reasoning_over_every_api() {
    for scenario in ["reasoning", "reasoning-responses", "reasoning-chat"] {
        let ledger = ledger("0.73.1", scenario);
        let thinking = served(&ledger)[0]["response"]["thinking"].as_str().unwrap().to_owned();
        let events = read(&recorded("0.73.1", scenario)[0]);
        let reasoning: Vec<&str> = events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::Reasoning(r) => Some(r.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasoning, [thinking.as_str()], "{scenario}");
    }
}

#[test]
fn tool_calls_pair_with_outputs_and_a_failed_command_has_its_exit_code() {
    let ledger = ledger("0.73.1", "tools");
    let events = read(&recorded("0.73.1", "tools")[0]);
    let calls: Vec<&Value> =
        served(&ledger).iter().flat_map(|e| e["response"]["tool_calls"].as_array().unwrap()).collect();
    assert_eq!(calls.len(), 2);
    for call in calls {
        let id = call["id"].as_str().unwrap();
        let tool_call = events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolCall(c) if c.call_id.as_deref() == Some(id) => Some(c),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            (tool_call.name.as_str(), tool_call.input.as_ref().unwrap().to_value()),
            ("bash", call["input"].clone())
        );
        assert_eq!(tool_call.tool_kind, Some(ToolFamily::Shell));
        let output = events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolOutput(o) if o.call_id.as_deref() == Some(id) => Some(o),
                _ => None,
            })
            .unwrap();
        let failing = call["input"]["command"] == "ls /nonexistent";
        assert_eq!(output.failed, Some(failing), "{id}");
        assert_eq!(output.exit_code, failing.then_some(2), "{id}");
        assert_eq!(output.name.as_deref(), Some("bash"));
    }
}

/// The ids of the entries on the path from the last entry to the root, walked here on the raw
/// records.
fn path_ids(records: &[Value]) -> BTreeSet<String> {
    let entries: Vec<&Value> = records.iter().filter(|r| r["type"] != "session").collect();
    let parent: BTreeMap<&str, Option<&str>> =
        entries.iter().map(|r| (r["id"].as_str().unwrap(), r["parentId"].as_str())).collect();
    let mut at = entries.last().and_then(|r| r["id"].as_str());
    let mut ids = BTreeSet::new();
    while let Some(id) = at {
        ids.insert(id.to_owned());
        at = parent[id];
    }
    ids
}

#[test]
fn the_branch_left_is_rolled_back() {
    for version in ["0.73.1", "1.6.0"] {
        let path = &recorded(version, "branch")[0];
        let records = records(path);
        let on_path = path_ids(&records);
        let events = read(path);
        for e in events.iter().filter(|e| e.record_id.is_some()) {
            let id = e.record_id.as_ref().unwrap();
            assert_eq!(e.rolled_back, !on_path.contains(id), "{version} {id}");
        }
        let left: Vec<&str> =
            events.iter().filter(|e| e.rolled_back).filter_map(text_of).map(|(_, text)| text).collect();
        assert_eq!(left.len(), 2, "{version}: {left:?}");
        assert_eq!(left[0], "[branch] Second prompt.");
        let summary = records.iter().find(|r| r["type"] == "branch_summary").unwrap();
        let injected = events.iter().find(|e| meta_type(e) == Some(MetaType::InjectedContext)).unwrap();
        assert_eq!(data(injected)["summary"], summary["summary"]);
        assert!(!injected.rolled_back);
        let label = records.iter().find(|r| r["type"] == "label").unwrap();
        let system = events.iter().find(|e| e.source.record_type.as_deref() == Some("label")).unwrap();
        assert_eq!(data(system)["label"], label["label"]);
    }
}

#[test]
fn a_forks_copies_are_flagged_and_its_events_name_the_parent() {
    for (scenario, new_prompts) in [
        ("rpc", &["[rpc] Prompt after fork.", "[rpc] Prompt after compaction."][..]),
        ("fork-cli", &["[fork-cli] Prompt in the fork."][..]),
    ] {
        let [parent, fork] = &recorded("0.73.1", scenario)[..] else { panic!("two files") };
        let parent_id = records(parent)[0]["id"].as_str().unwrap().to_owned();
        let parent_ids: BTreeSet<String> =
            records(parent).iter().skip(1).map(|r| r["id"].as_str().unwrap().to_owned()).collect();
        let events = read(fork);
        assert!(events.iter().all(|e| e.parent_session_id.as_deref() == Some(parent_id.as_str())), "{scenario}");
        for e in events.iter().filter(|e| e.record_id.is_some()) {
            assert_eq!(e.copied, parent_ids.contains(e.record_id.as_ref().unwrap()), "{scenario}");
        }
        let typed: Vec<&str> = events
            .iter()
            .filter(|e| !e.copied)
            .filter_map(text_of)
            .filter(|(role, _)| *role == Role::User)
            .map(|(_, t)| t)
            .collect();
        assert_eq!(typed, new_prompts, "{scenario}");
        // the parent's events name no parent
        assert!(read(parent).iter().all(|e| e.parent_session_id.is_none() && !e.copied));
    }
}

#[test]
fn the_session_id_is_the_headers_not_the_file_names() {
    // pi 0.73.1 names a fork at the first prompt with another uuid than its header's
    let fork = &recorded("0.73.1", "fork-first")[1];
    let header = records(fork)[0]["id"].as_str().unwrap().to_owned();
    assert!(!fork.file_name().unwrap().to_string_lossy().contains(&header));
    let events = read(fork);
    assert!(events.iter().all(|e| e.session_id == header && e.parent_session_id.is_none() && !e.copied));
    assert_eq!(Pi.peek(&records(fork)[0]).session, Some(header));
}

#[test]
fn commands_the_user_ran_are_user_shell_calls_with_their_exit_codes() {
    let path = &recorded("0.73.1", "rpc")[0];
    let commands: Vec<Value> = records(path)
        .into_iter()
        .filter(|r| r["message"]["role"] == "bashExecution")
        .map(|r| r["message"].clone())
        .collect();
    assert_eq!(commands.len(), 2);
    let events = read(path);
    for command in commands {
        let call = events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolCall(c) if c.input.as_ref().unwrap().to_value()["command"] == command["command"] => {
                    Some(c)
                }
                _ => None,
            })
            .unwrap();
        assert_eq!((call.name.as_str(), call.tool_kind), ("user_shell", Some(ToolFamily::Shell)));
        let output = events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolOutput(o) if o.call_id == call.call_id => Some(o),
                _ => None,
            })
            .unwrap();
        assert_eq!(output.text, command["output"].as_str().unwrap());
        assert_eq!(output.exit_code, command["exitCode"].as_i64());
        assert_eq!(output.failed, Some(command["exitCode"] != 0));
    }
}

#[test]
fn each_answer_names_the_model_that_gave_it_and_the_name_is_a_title() {
    let [parent, fork] = &recorded("0.73.1", "rpc")[..] else { panic!("two files") };
    for path in [parent, fork] {
        let answers: Vec<Value> = records(path)
            .into_iter()
            .filter(|r| r["message"]["role"] == "assistant")
            .map(|r| r["message"].clone())
            .collect();
        let events = read(path);
        for answer in answers {
            let text = answer["content"][0]["text"].as_str().unwrap();
            let event = events.iter().find(|e| text_of(e) == Some((Role::Assistant, text))).unwrap();
            assert_eq!(event.context.model.as_deref(), answer["model"].as_str(), "{text}");
        }
        let title = events.iter().find(|e| meta_type(e) == Some(MetaType::Title)).unwrap();
        assert_eq!(data(title)["title"], "scripted rpc session");
    }
    // the fork's last model_change is to chat-scripted, but the answers after it were Anthropic's
    let events = read(fork);
    let third = events.iter().find(|e| text_of(e) == Some((Role::Assistant, "Third answer after fork."))).unwrap();
    assert_eq!(third.context.model.as_deref(), Some("claude-scripted"));
    assert!(events.iter().any(|e| meta_type(e) == Some(MetaType::Compaction) && !e.copied));
}

#[test]
fn an_error_pi_gave_up_on_is_a_notice_without_usage() {
    let path = &recorded("0.73.1", "api-error-fatal")[0];
    let error = records(path).into_iter().find(|r| r["message"]["stopReason"] == "error").unwrap();
    let events = read(path);
    assert!(usages(&events).is_empty());
    let notice = events.iter().find(|e| meta_type(e) == Some(MetaType::System)).unwrap();
    assert_eq!(data(notice)["errorMessage"], error["message"]["errorMessage"]);
    let retried = read(&recorded("0.73.1", "api-error-retry")[0]);
    let errors = records(&recorded("0.73.1", "api-error-retry")[0])
        .iter()
        .filter(|r| r["message"]["stopReason"] == "error")
        .count();
    assert_eq!(errors, 2);
    assert_eq!(retried.iter().filter(|e| meta_type(e) == Some(MetaType::System)).count(), errors);
    assert_eq!(usages(&retried).len(), 1);
}

#[test]
fn pi_1_counts_its_summary_requests_on_the_compaction_and_the_branch_summary() {
    for (scenario, record_type) in [("rpc", "compaction"), ("branch", "branch_summary")] {
        let ledger = ledger("1.6.0", scenario);
        let summaries: Vec<&Value> = served(&ledger).into_iter().filter(|e| e["channel"] == "side:summary").collect();
        assert!(!summaries.is_empty(), "{scenario}");
        let want = summaries.iter().map(|e| served_counts(e)).fold([0; 4], |a, b| std::array::from_fn(|i| a[i] + b[i]));
        let path = recorded("1.6.0", scenario).pop().unwrap();
        let events = read(&path);
        let summed: Vec<&Usage> = usages(&events)
            .into_iter()
            .filter(|(e, _)| e.source.record_type.as_deref() == Some(record_type))
            .map(|(_, u)| u)
            .collect();
        let [usage] = summed[..] else { panic!("{scenario}: one usage event on the {record_type}") };
        assert_eq!(counts(usage), want, "{scenario}");
        assert_eq!(usage.response_id, None);
    }
    // the system prompt and tools, before the first request
    let events = read(&recorded("1.6.0", "reasoning-responses")[0]);
    let shape = events.iter().find(|e| meta_type(e) == Some(MetaType::RequestShape)).unwrap();
    assert!(data(shape)["sections"]["preamble"].as_str().unwrap().contains("pi"));
    assert!(data(shape)["toolsAdded"].as_array().is_some_and(|t| !t.is_empty()));
}

#[test]
fn the_third_party_session_of_an_earlier_version() {
    let Some(other) = common::other_agents() else { return };
    let path = other.join("pi/computermode-entire/de/5a2f809927/0/full.jsonl");
    let records = records(&path);
    let events = read(&path);
    assert_eq!(events[0].session_id, records[0]["id"].as_str().unwrap());
    assert!(events.iter().all(|e| e.context.cwd.as_deref() == records[0]["cwd"].as_str() && !e.rolled_back));
    let answers: Vec<&Value> = records.iter().filter(|r| r["message"]["role"] == "assistant").collect();
    let usage = usages(&events);
    assert_eq!(usage.len(), answers.len());
    for (answer, (_, u)) in answers.iter().zip(usage) {
        let raw = &answer["message"]["usage"];
        let n = |k: &str| raw[k].as_u64().unwrap();
        assert_eq!(counts(u), [n("input"), n("cacheRead"), n("cacheWrite"), n("output")]);
        assert_eq!(u.model.as_deref(), Some("claude-opus-4-7"));
        assert_eq!(u.response_id.as_deref(), answer["message"]["responseId"].as_str());
    }
    let results: Vec<&Value> = records.iter().filter(|r| r["message"]["role"] == "toolResult").collect();
    for result in results {
        let id = result["message"]["toolCallId"].as_str();
        let call = events.iter().find(|e| matches!(&e.payload, Payload::ToolCall(c) if c.call_id.as_deref() == id));
        let output = events.iter().find(|e| matches!(&e.payload, Payload::ToolOutput(o) if o.call_id.as_deref() == id));
        assert!(call.is_some() && output.is_some(), "{id:?}");
    }
    let kinds: BTreeSet<ToolFamily> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => c.tool_kind,
            _ => None,
        })
        .collect();
    assert_eq!(kinds, BTreeSet::from([ToolFamily::Shell, ToolFamily::Write]));
    assert_eq!(events.iter().filter(|e| matches!(e.payload, Payload::Reasoning(_))).count(), 1);
}

#[test]
fn version_1_sessions_are_one_line_of_conversation() {
    let path = common::own_corpus().join("pi/version-1-linear.jsonl");
    let events = read(&path);
    assert!(events.iter().all(|e| !e.rolled_back && e.record_id.is_none()));
    assert_eq!(usages(&events).len(), 2);
    let call = events.iter().find_map(|e| match &e.payload {
        Payload::ToolCall(c) => Some(c),
        _ => None,
    });
    assert_eq!(call.map(|c| (c.name.as_str(), c.tool_kind)), Some(("ls", Some(ToolFamily::Search))));
    assert!(events.iter().any(|e| meta_type(e) == Some(MetaType::Compaction)));
    assert_eq!(events.iter().filter_map(text_of).next(), Some((Role::User, "List the files.")));
}

#[test]
fn extension_entries_and_pi_1_entries() {
    let path = common::own_corpus().join("pi/extension-entries.jsonl");
    let events = read(&path);
    let injected: Vec<&str> = events.iter().filter(|e| e.injected).filter_map(text_of).map(|(_, t)| t).collect();
    assert_eq!(injected, ["Remember the open todo items.", "Branch main, clean."]);
    let image = events.iter().find_map(|e| match &e.payload {
        Payload::Message(m) => m.parts.iter().find(|p| matches!(p, Part::Image { .. })),
        _ => None,
    });
    assert!(matches!(image, Some(Part::Image { media_type: Some(t), .. }) if t == "image/png"));
    assert!(events.iter().any(|e| matches!(&e.payload, Payload::Reasoning(r) if r.encrypted)));
    assert!(events.iter().any(|e| meta_type(e) == Some(MetaType::Interrupt)));
    // the answer, the aborted one and the cache warming
    let usage = usages(&events);
    assert_eq!(usage.len(), 3);
    assert_eq!(data(usage[2].0)["kind"], "cache_warm");
    assert_eq!(usage[2].1.cache_read_tokens, Some(1000));
    let unknown: Vec<&Event> = events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).collect();
    assert_eq!(unknown.len(), 1);
    assert_eq!(data(unknown[0])["payload"]["x"], 1);
    assert_eq!(events.iter().filter(|e| meta_type(e) == Some(MetaType::System)).count(), 3);
}

#[test]
fn its_own_layout_and_the_paths_it_looks_in() {
    let file = "2026-11-27T15-24-18-975Z_01a21d9b-7c9e-754e-84e7-9c4ad31f8b24.jsonl";
    assert!(Pi.owns(&Path::new("/home/u/.pi/agent/sessions/--home-u-project--").join(file)));
    assert!(!Pi.owns(&Path::new("/home/u/.pi/agent/sessions").join(file)));
    assert!(!Pi.owns(&Path::new("/home/u/notes/--x--").join(file)));
    let root = common::own_corpus().join("recorded/pi/0.73.1");
    let env = |dir: &'static str| {
        let root = root.clone();
        move |name: &str| (name == dir).then(|| root.clone().into_os_string())
    };
    let found = Pi.discover(&env("PI_CODING_AGENT_SESSION_DIR"));
    assert_eq!(found.len(), 15, "{found:?}");
    assert!(Pi.discover(&env("PI_CODING_AGENT_DIR")).is_empty(), "looks in its sessions folder");
}

/// What the independent script says of each file.
#[test]
fn usage_totals_equal_the_independent_script() {
    let mut files: Vec<PathBuf> = common::session_files(&common::own_corpus().join("recorded/pi"))
        .into_iter()
        .chain(common::session_files(&common::own_corpus().join("pi")))
        .map(|(p, _)| p)
        .collect();
    if let Some(other) = common::other_agents() {
        files.extend(common::session_files(&other.join("pi")).into_iter().map(|(p, _)| p));
    }
    assert!(files.len() >= 21, "{files:?}");
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let Some(expected) = common::independent("pi_usage.py", &paths) else { return };
    for path in paths {
        let events = read(path);
        let counted: Vec<&Usage> = usages(&events).into_iter().filter(|(e, _)| !e.copied).map(|(_, u)| u).collect();
        let sum = |f: fn(&Usage) -> Option<u64>| -> u64 { counted.iter().filter_map(|u| f(u)).sum() };
        let got = BTreeMap::from([
            ("input", sum(|u| u.input_tokens)),
            ("cached", sum(|u| u.cache_read_tokens)),
            ("cache_write", sum(|u| u.cache_write_tokens)),
            ("output", sum(|u| u.output_tokens)),
            ("reasoning", sum(|u| u.reasoning_tokens)),
            ("total", sum(|u| u.total_tokens)),
            ("calls", counted.len() as u64),
        ]);
        let want = &expected[path.display().to_string()];
        for (key, value) in &got {
            assert_eq!(want[key].as_u64(), Some(*value), "{}: {key} ({got:?} vs {want})", path.display());
        }
    }
}
