//! OpenHands: conversations read from their `base_state.json` and `events/` folder, checked on
//! the real CLI's files (`corpus/recorded/openhands/`, with the server's ledger beside each) and
//! the synthetic quirks of `corpus/openhands/`. Expected values come from the raw files and
//! the ledgers, never from agentlog's output.

mod common;

use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, Role};
use agentlog::read::Reader;
use agentlog::read::openhands::OpenHands;
use serde_json::Value;

/// The conversation of a folder holding one `conversations/<id>/`.
fn state_file(dir: &Path) -> PathBuf {
    let conversations = dir.join("conversations");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&conversations)
        .unwrap()
        .map(|e| e.unwrap().path().join("base_state.json"))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(found.len(), 1, "{}", conversations.display());
    found.pop().unwrap()
}

fn recorded(scenario: &str) -> PathBuf {
    common::own_corpus().join("recorded/openhands/1.16.0").join(scenario)
}

fn quirks() -> PathBuf {
    state_file(&common::own_corpus().join("openhands"))
}

fn read(path: &Path) -> (Vec<Event>, agentlog::read::ReadReport) {
    common::read_file(&OpenHands, path, &path.display().to_string())
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The ledger's responses served with a usage (HTTP 200).
fn served(dir: &Path) -> Vec<Value> {
    let ledger = json(&dir.join("ledger.json"));
    ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["response"]["status"] == 200 && e["response"].get("usage").is_some())
        .cloned()
        .collect()
}

fn event_files(state: &Path) -> usize {
    std::fs::read_dir(state.parent().unwrap().join("events"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("event-"))
        .count()
}

fn usage_events(events: &[Event]) -> Vec<&Event> {
    events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Usage)).collect()
}

fn data(e: &Event) -> Value {
    match &e.payload {
        Payload::Meta(m) => m.data.as_ref().map(|d| d.to_value()).unwrap_or_default(),
        _ => Value::Null,
    }
}

#[test]
fn the_state_file_and_every_event_file_are_one_line_each() {
    for scenario in ["tools", "reasoning", "resume", "tools-anthropic"] {
        let state = state_file(&recorded(scenario));
        let (events, report) = read(&state);
        let lines = 1 + event_files(&state) as u64;
        assert_eq!((report.lines, report.lines_mapped, report.lines_diagnosed), (lines, lines, 0), "{scenario}");
        let folder = state.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        assert!(events.iter().all(|e| e.session_id == folder), "{scenario}: one session, named as its folder");
        assert!(events.iter().all(|e| e.source.file == state.display().to_string()), "{scenario}");
        assert!(events.iter().all(|e| common::meta_type(e) != Some(MetaType::Unknown)), "{scenario}");
        // Every line has an event.
        let mut seen: Vec<u64> = events.iter().map(|e| e.source.line).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, (1..=lines).collect::<Vec<_>>(), "{scenario}");
    }
}

#[test]
fn tool_calls_pair_with_their_outputs_and_the_failing_command_failed() {
    for scenario in ["tools", "tools-anthropic"] {
        let dir = recorded(scenario);
        let (events, _) = read(&state_file(&dir));
        let calls: Vec<Value> =
            served(&dir).iter().flat_map(|e| e["response"]["tool_calls"].as_array().unwrap().clone()).collect();
        assert_eq!(calls.len(), 2, "{scenario}");
        for call in &calls {
            let id = call["id"].as_str().unwrap();
            let tool_call = events
                .iter()
                .find_map(|e| match &e.payload {
                    Payload::ToolCall(c) if c.call_id.as_deref() == Some(id) => Some(c),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{scenario}: no call {id}"));
            assert_eq!(tool_call.name, "terminal");
            assert_eq!(tool_call.input.as_ref().unwrap().to_value(), call["input"]);
            let output = events
                .iter()
                .find_map(|e| match &e.payload {
                    Payload::ToolOutput(o) if o.call_id.as_deref() == Some(id) => Some(o),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{scenario}: no output of {id}"));
            let abstract_ = &call["abstract"];
            assert!(output.text.contains(abstract_["expect_output"].as_str().unwrap()), "{}", output.text);
            assert_eq!(output.exit_code, abstract_["expect_exit_code"].as_i64());
            assert_eq!(output.failed, abstract_["expect_failed"].as_bool());
            assert_eq!(output.name.as_deref(), Some("terminal"));
        }
    }
}

/// Unified counts of a served response, from its wire usage: Chat Completions' `prompt_tokens`
/// holds the cached tokens; Anthropic's `input_tokens` is fresh input already.
fn served_counts(entry: &Value) -> [u64; 5] {
    let u = &entry["response"]["usage"];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    if entry["api"] == "anthropic-messages" {
        [
            n(&u["input_tokens"]),
            n(&u["cache_read_input_tokens"]),
            n(&u["cache_creation_input_tokens"]),
            n(&u["output_tokens"]),
            0,
        ]
    } else {
        let cached = n(&u["prompt_tokens_details"]["cached_tokens"]);
        [
            n(&u["prompt_tokens"]) - cached,
            cached,
            0,
            n(&u["completion_tokens"]),
            n(&u["completion_tokens_details"]["reasoning_tokens"]),
        ]
    }
}

#[test]
fn usage_is_what_the_server_served_once_per_response_after_its_first_event() {
    for scenario in ["tools", "reasoning", "resume", "tools-anthropic"] {
        let dir = recorded(scenario);
        let (events, _) = read(&state_file(&dir));
        let served = served(&dir);
        let usages = usage_events(&events);
        assert_eq!(usages.len(), served.len(), "{scenario}: one usage event per response");
        // In order: through litellm's Anthropic provider the ids are litellm's own, not the API's.
        for (entry, event) in served.iter().zip(&usages) {
            let served_id = entry["response"]["id"].as_str().unwrap();
            let Payload::Meta(meta) = &event.payload else { unreachable!() };
            let u = meta.usage.as_ref().unwrap();
            let got = [u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens, u.reasoning_tokens]
                .map(|n| n.expect("counted"));
            assert_eq!(got, served_counts(entry), "{scenario}: {served_id}");
            let id = u.response_id.as_deref().unwrap();
            if entry["api"] == "anthropic-messages" {
                assert!(id.starts_with("chatcmpl-") && id != served_id, "{id}");
            } else {
                assert_eq!(id, served_id);
            }
            assert_eq!(event.response_id.as_deref(), Some(id));
            let i = events.iter().position(|e| std::ptr::eq(e, *event)).unwrap();
            // Right after the first event of its response, with that event's time.
            let first = events.iter().position(|e| e.response_id.as_deref() == Some(id)).unwrap();
            assert!(first < i && events[first + 1..i].iter().all(|e| e.response_id.as_deref() == Some(id)));
            assert_eq!(event.timestamp, events[first].timestamp);
        }
    }
}

#[test]
fn the_agents_own_cost_is_kept_per_response_and_in_the_totals() {
    let state = state_file(&recorded("tools"));
    let raw = json(&state);
    let metrics = &raw["stats"]["usage_to_metrics"]["agent"];
    let (events, _) = read(&state);
    let costs: Vec<f64> = usage_events(&events).iter().map(|e| data(e)["cost"]["cost"].as_f64().unwrap()).collect();
    let raw_costs: Vec<f64> =
        metrics["costs"].as_array().unwrap().iter().map(|c| c["cost"].as_f64().unwrap()).collect();
    assert_eq!(costs, raw_costs);
    let totals: Vec<&Event> = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::AgentTotals)).collect();
    assert_eq!(totals.len(), 1);
    let totals = data(totals[0]);
    assert_eq!(totals["usage_to_metrics"]["agent"]["accumulated_cost"], metrics["accumulated_cost"]);
    assert!(totals["usage_to_metrics"]["agent"].get("token_usages").is_none(), "the lists are the usage events");
    assert_eq!(events.last().and_then(common::meta_type), Some(MetaType::AgentTotals), "the totals come last");
}

#[test]
fn a_resumed_conversation_is_one_session_with_both_prompts() {
    let dir = recorded("resume");
    let ledger = json(&dir.join("ledger.json"));
    let typed: Vec<&str> =
        ledger["meta"]["typed"].as_array().unwrap().iter().map(|t| t["text"].as_str().unwrap()).collect();
    let (events, _) = read(&state_file(&dir));
    let prompts: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) if m.role == Role::User && !e.injected => Some(m.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts, typed);
    let sessions: std::collections::BTreeSet<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
    assert_eq!(sessions.len(), 1);
}

#[test]
fn the_responses_reasoning_is_a_reasoning_event_before_its_answer() {
    let dir = recorded("reasoning");
    let entry = &served(&dir)[0];
    let (events, _) = read(&state_file(&dir));
    let at = |want: &str| {
        events.iter().position(|e| match &e.payload {
            Payload::Reasoning(r) => r.text == want,
            Payload::Message(m) => m.role == Role::Assistant && m.text == want,
            _ => false,
        })
    };
    let thinking = at(entry["response"]["thinking"].as_str().unwrap()).expect("a reasoning event");
    let answer = at(entry["response"]["text"].as_str().unwrap()).expect("the answer");
    assert!(thinking < answer);
    assert!(matches!(events[thinking].payload, Payload::Reasoning(_)));
}

#[test]
fn the_system_prompt_and_tools_are_a_request_shape() {
    let state = state_file(&recorded("tools"));
    let (events, _) = read(&state);
    let shapes: Vec<&Event> = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::RequestShape)).collect();
    assert_eq!(shapes.len(), 1);
    let shape = data(shapes[0]);
    let names: Vec<&str> = shape["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["terminal", "file_editor", "task_tracker", "task", "finish", "think"]);
    assert!(shape["system"][0]["text"].as_str().unwrap().starts_with("You are OpenHands agent"));
}

#[test]
fn failures_in_the_agent_are_failed_outputs_of_their_calls() {
    let (events, _) = read(&quirks());
    let output = |id: &str| {
        events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolOutput(o) if o.call_id.as_deref() == Some(id) => Some(o.clone()),
                _ => None,
            })
            .unwrap()
    };
    // `make` exited 2; the unknown tool's AgentErrorEvent; the call the user rejected.
    let make = output("toolu_01");
    assert_eq!((make.exit_code, make.failed, make.is_error), (Some(2), Some(true), Some(false)));
    let unknown = output("toolu_02");
    assert_eq!((unknown.failed, unknown.name.as_deref()), (Some(true), Some("no_such_tool")));
    assert!(unknown.text.starts_with("Tool 'no_such_tool' not found"));
    let rejected = output("toolu_03");
    assert_eq!(
        (rejected.failed, rejected.text.as_str()),
        (Some(true), "Action rejected: Do not delete the build folder")
    );
    // The unknown tool's arguments were not JSON: kept as text.
    let call = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ToolCall(c) if c.call_id.as_deref() == Some("toolu_02") => Some(c.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!((call.input, call.input_text.as_deref()), (None, Some("{not json")));
}

#[test]
fn a_damaged_event_file_is_one_diagnostic_naming_it_and_new_kinds_are_kept_whole() {
    let state = quirks();
    let (events, report) = read(&state);
    let files = event_files(&state) as u64;
    assert_eq!((report.lines, report.lines_mapped, report.lines_diagnosed), (1 + files, files, 1));
    let diagnostic = &report.diagnostics[0];
    assert!(diagnostic.to_string().contains("event-00012-"), "{diagnostic}");
    let unknown: Vec<&Event> = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Unknown)).collect();
    assert_eq!(unknown.len(), 1);
    assert_eq!(data(unknown[0])["payload"], serde_json::json!({ "x": 1 }));
    assert_eq!(unknown[0].source.record_type.as_deref(), Some("ShinyNewEvent"));
}

#[test]
fn usage_no_event_names_and_costs_that_do_not_pair() {
    let state = quirks();
    let raw = json(&state);
    let (events, _) = read(&state);
    let usages = usage_events(&events);
    let raw_usages: Vec<&Value> = raw["stats"]["usage_to_metrics"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|m| m["token_usages"].as_array().unwrap())
        .collect();
    assert_eq!(usages.len(), raw_usages.len());
    for raw in raw_usages {
        let id = raw["response_id"].as_str().unwrap();
        let event = usages.iter().find(|e| e.response_id.as_deref() == Some(id)).unwrap();
        let Payload::Meta(meta) = &event.payload else { unreachable!() };
        let u = meta.usage.as_ref().unwrap();
        let n = |k: &str| raw[k].as_u64().unwrap();
        // prompt_tokens holds the cache reads and writes
        let input = n("prompt_tokens") - n("cache_read_tokens") - n("cache_write_tokens");
        assert_eq!(u.input_tokens, Some(input), "{id}");
        assert_eq!(u.cache_write_tokens, Some(n("cache_write_tokens")), "{id}");
        assert_eq!(u.output_tokens, Some(n("completion_tokens")), "{id}");
        assert_eq!(u.reasoning_tokens, Some(n("reasoning_tokens")), "{id}");
        assert_eq!(u.model.as_deref(), raw["model"].as_str());
        // Two costs for three responses of the agent's LLM: none is placed; the condenser's one is.
        assert_eq!(data(event).get("cost").is_some(), id == "chatcmpl-summary-1", "{id}");
    }
}

#[test]
fn added_context_is_an_injected_message_and_images_are_parts() {
    let (events, _) = read(&quirks());
    let users: Vec<&Event> =
        events.iter().filter(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User)).collect();
    assert_eq!(users.len(), 2);
    assert!(!users[0].injected && users[1].injected);
    let Payload::Message(prompt) = &users[0].payload else { unreachable!() };
    assert_eq!(prompt.text, "Look at this screenshot and fix the build.");
    assert!(matches!(&prompt.parts[1], agentlog::model::Part::Image { media_type: Some(t), .. } if t == "image/png"));
    let Payload::Message(added) = &users[1].payload else { unreachable!() };
    assert_eq!(added.text, "<EXTRA_INFO>The repository uses make.</EXTRA_INFO>");
}

#[test]
fn compaction_interrupt_and_thinking_blocks() {
    let (events, _) = read(&quirks());
    let types: Vec<MetaType> = events.iter().filter_map(common::meta_type).collect();
    assert!(types.contains(&MetaType::Compaction) && types.contains(&MetaType::Interrupt));
    let reasoning: Vec<(String, bool, Option<String>)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Reasoning(r) => Some((r.text.clone(), r.encrypted, r.signature.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasoning,
        [
            ("The build is probably make.".to_owned(), false, Some("sig-abc".to_owned())),
            (String::new(), true, Some("ENCRYPTED".to_owned())),
        ]
    );
}

#[test]
fn an_event_file_named_alone_is_read_alone() {
    let state = state_file(&recorded("tools"));
    let events_dir = state.parent().unwrap().join("events");
    let file = std::fs::read_dir(&events_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("event-00005-"))
        .unwrap();
    let head = std::fs::read_to_string(&file).unwrap();
    let record: Value = serde_json::from_str(&head).unwrap();
    let name = file.display().to_string();
    let sniffed = agentlog::read::sniff(&agentlog::read::Head {
        name: &name,
        records: &agentlog::read::Records::from(vec![record]),
        first_line: &head,
        text: &head,
    });
    assert_eq!(sniffed.map(|r| r.name()), Some("openhands"));
    let (events, report) = read(&file);
    assert_eq!((report.lines, report.lines_mapped), (1, 1));
    assert_eq!(events.len(), 1);
    let Payload::ToolOutput(output) = &events[0].payload else { panic!("{:?}", events[0].payload) };
    assert_eq!(output.exit_code, Some(2));
    assert_eq!(events[0].session_id, state.parent().unwrap().file_name().unwrap().to_string_lossy());
    // The system prompt's file (29 KB), told by its text when its record is not given.
    let file = std::fs::read_dir(&events_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("event-00000-"))
        .unwrap();
    let head = std::fs::read_to_string(&file).unwrap();
    let name = file.display().to_string();
    let head = agentlog::read::Head {
        name: &name,
        records: &agentlog::read::Records::from(vec![]),
        first_line: &head,
        text: &head,
    };
    assert!(OpenHands.sniff(&head));
}

#[test]
fn discover_finds_the_conversations_where_the_cli_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let conv = dir.path().join("p/conversations/abc");
    std::fs::create_dir_all(conv.join("events")).unwrap();
    std::fs::write(conv.join("base_state.json"), "{}").unwrap();
    let root = dir.path().join("p").into_os_string();
    let env = |k: &str| (k == "OPENHANDS_PERSISTENCE_DIR").then(|| root.clone());
    assert_eq!(OpenHands.discover(&env), [conv.join("base_state.json")]);
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".openhands")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("p/conversations"), home.join(".openhands/conversations")).unwrap();
    let home = home.into_os_string();
    let env = |k: &str| (k == "HOME").then(|| home.clone());
    assert_eq!(OpenHands.discover(&env).len(), 1);
    assert!(
        OpenHands.accepts(Path::new("x/base_state.json"))
            && !OpenHands.accepts(Path::new("x/events/event-00001-a.json"))
    );
}

#[test]
fn usage_totals_equal_the_independent_script() {
    let mut files: Vec<PathBuf> =
        ["tools", "reasoning", "resume", "tools-anthropic"].iter().map(|s| state_file(&recorded(s))).collect();
    files.push(quirks());
    let Some(expected) = common::independent("openhands_usage.py", &files) else { return };
    for file in &files {
        let (events, _) = read(file);
        let usages: Vec<agentlog::model::Usage> = usage_events(&events)
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::Meta(m) => m.usage.clone(),
                _ => None,
            })
            .collect();
        let sum = |f: fn(&agentlog::model::Usage) -> Option<u64>| -> u64 { usages.iter().filter_map(f).sum() };
        let want = &expected[file.display().to_string()];
        let got = serde_json::json!({
            "input": sum(|u| u.input_tokens),
            "cached": sum(|u| u.cache_read_tokens),
            "cache_write": sum(|u| u.cache_write_tokens),
            "output": sum(|u| u.output_tokens),
            "reasoning": sum(|u| u.reasoning_tokens),
            "total": sum(|u| u.total_tokens),
            "calls": usages.len(),
        });
        for (key, value) in got.as_object().unwrap() {
            assert_eq!(&want[key], value, "{}: {key}", file.display());
        }
        // The agent's own accumulated cost, in the totals event.
        let totals = events.iter().find(|e| common::meta_type(e) == Some(MetaType::AgentTotals)).unwrap();
        let cost: f64 = data(totals)["usage_to_metrics"]
            .as_object()
            .unwrap()
            .values()
            .map(|m| m["accumulated_cost"].as_f64().unwrap())
            .sum();
        assert!((cost - want["cost"].as_f64().unwrap()).abs() < 1e-12, "{}", file.display());
    }
}
