//! `--to otel`: OTLP/JSON that the official protobuf definitions parse, a span tree per
//! session (invoke_agent, chat per response, execute_tool per call, subagents nested under
//! their call), token totals equal to `agentlog usage`, and ids that a re-export repeats.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![common::own_corpus()];
    inputs.extend(common::shared_corpus());
    inputs
}

fn run(args: &[&str], inputs: &[PathBuf]) -> Vec<u8> {
    let out = cargo_bin_cmd!("agentlog").arg("convert").arg("-q").args(args).args(inputs).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The spans of a request, with their attributes as a map of plain values.
fn spans(request: &Value) -> Vec<(Value, HashMap<String, Value>)> {
    let mut spans = Vec::new();
    for resource in request["resourceSpans"].as_array().unwrap() {
        for scope in resource["scopeSpans"].as_array().unwrap() {
            for span in scope["spans"].as_array().unwrap() {
                let attributes = span["attributes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        let value = a["value"].as_object().unwrap().values().next().unwrap().clone();
                        (a["key"].as_str().unwrap().to_owned(), value)
                    })
                    .collect();
                spans.push((span.clone(), attributes));
            }
        }
    }
    spans
}

fn operation(attributes: &HashMap<String, Value>) -> &str {
    attributes["gen_ai.operation.name"].as_str().unwrap()
}

#[test]
fn every_request_of_both_corpora_parses_with_the_official_protobuf_definitions() {
    if !common::python_has("opentelemetry.proto, google.protobuf") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("traces.jsonl");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "--to", "otel", "-o"])
        .arg(&file)
        .args(inputs())
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/otel_check.py");
    let out = Command::new("python3").arg(script).arg(&file).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    // As many chat spans as responses and tool spans as calls, over both corpora.
    let events = lines(&run(&[], &inputs()));
    let own = |e: &&Value| e["copied"] == false;
    let responses = events.iter().filter(own).filter(|e| e["payload"]["meta_type"] == "usage").count();
    let calls = events.iter().filter(own).filter(|e| e["kind"] == "tool_call").count();
    // The own corpus holds 144 responses and 60 calls by itself.
    let (least_responses, least_calls) = (common::at_least(1000, 100), common::at_least(1000, 40));
    assert!(responses > least_responses && calls > least_calls, "{responses} responses, {calls} calls");
    assert!(stdout.contains(&format!(" {responses} chat, {calls} execute_tool,")), "{stdout}");
}

/// Checks one session's span tree against its events: one root, a chat span per response, an
/// execute_tool span per call, every parent in the trace; returns the spans by id.
fn check_tree(request: &Value, events: &[Value]) -> HashMap<String, (Value, HashMap<String, Value>)> {
    let spans = spans(request);
    let own: Vec<&Value> = events.iter().filter(|e| e["copied"] == false).collect();
    let responses = own.iter().filter(|e| e["payload"]["meta_type"] == "usage").count();
    let calls = own.iter().filter(|e| e["kind"] == "tool_call").count();
    let count = |op: &str| spans.iter().filter(|(_, a)| operation(a) == op).count();
    assert_eq!(count("chat"), responses);
    assert_eq!(count("execute_tool"), calls);
    let roots: Vec<_> = spans.iter().filter(|(s, _)| s["parentSpanId"].is_null()).collect();
    assert_eq!(roots.len(), 1);
    let (root, attributes) = roots[0];
    assert_eq!(operation(attributes), "invoke_agent");
    assert_eq!(attributes["gen_ai.conversation.id"], events[0]["session_id"]);
    let by_id: HashMap<String, _> =
        spans.iter().map(|(s, a)| (s["spanId"].as_str().unwrap().to_owned(), (s.clone(), a.clone()))).collect();
    let time = |s: &Value, k: &str| s[k].as_str().unwrap().parse::<u128>().unwrap();
    for (span, _) in &spans {
        if let Some(parent) = span["parentSpanId"].as_str() {
            assert!(by_id.contains_key(parent), "{span}");
        }
        assert!(time(root, "startTimeUnixNano") <= time(span, "startTimeUnixNano"));
        assert!(time(span, "endTimeUnixNano") <= time(root, "endTimeUnixNano"));
    }
    by_id
}

#[test]
fn a_claude_session_with_a_subagent_and_a_codex_session_make_the_span_trees_their_events_say() {
    let sample = common::own_corpus().join("claude/subagents-2.1");
    let events = lines(&run(&[], std::slice::from_ref(&sample)));
    let requests = lines(&run(&["--to", "otel"], &[sample]));
    let request = requests.iter().find(|r| spans(r).iter().any(|(_, a)| a.contains_key("gen_ai.agent.id"))).unwrap();
    let session = spans(request)[0].1["gen_ai.conversation.id"].clone();
    let session_events: Vec<Value> = events.into_iter().filter(|e| e["session_id"] == session).collect();
    let by_id = check_tree(request, &session_events);
    // The subagent's invoke_agent span hangs under the execute_tool span of the call that
    // spawned it, and its chat spans under it.
    let (sub, attributes) = by_id.values().find(|(_, a)| a.contains_key("gen_ai.agent.id")).unwrap();
    let parent = &by_id[sub["parentSpanId"].as_str().unwrap()];
    assert_eq!(operation(&parent.1), "execute_tool");
    let spawner = session_events.iter().find(|e| e["agent_id"] == attributes["gen_ai.agent.id"]).unwrap();
    assert_eq!(parent.1["gen_ai.tool.call.id"], spawner["parent_call_id"]);
    assert!(by_id.values().any(|(s, a)| operation(a) == "chat" && s["parentSpanId"] == sub["spanId"]));

    let codex = common::own_corpus().join("codex/tool-outputs.jsonl");
    let events = lines(&run(&[], std::slice::from_ref(&codex)));
    let requests = lines(&run(&["--to", "otel"], &[codex]));
    assert_eq!(requests.len(), 1);
    let by_id = check_tree(&requests[0], &events);
    // A failed call is an error span with error.type.
    let failed = events.iter().filter(|e| e["kind"] == "tool_output" && e["payload"]["failed"] == true).count();
    let errors = by_id.values().filter(|(s, a)| a.contains_key("error.type") && s["status"]["code"] == 2).count();
    assert_eq!(errors, failed);
    assert!(failed > 0);
    // A Codex session with responses: a chat span each, from OpenAI, with its model.
    let codex = common::own_corpus().join("codex/token-accounting.jsonl");
    let events = lines(&run(&[], std::slice::from_ref(&codex)));
    let requests = lines(&run(&["--to", "otel"], &[codex]));
    let by_id = check_tree(&requests[0], &events);
    let chats: Vec<_> = by_id.values().filter(|(_, a)| operation(a) == "chat").collect();
    assert!(chats.len() >= 2);
    assert!(chats.iter().all(|(_, a)| a["gen_ai.provider.name"] == "openai"));
    assert!(chats.iter().any(|(_, a)| a.contains_key("gen_ai.request.model")));
}

#[test]
fn token_totals_of_the_chat_spans_equal_agentlog_usage_for_every_session() {
    let inputs = inputs();
    // `usage --by session` counts a subagent thread that has a session of its own (Codex) under
    // the session that spawned it; its trace is its own, so its spans are summed there too.
    let mut root: HashMap<String, String> = HashMap::new();
    for event in lines(&run(&["--to", "unified"], &inputs)) {
        if event["is_sidechain"] == true
            && let Some(parent) = event["parent_session_id"].as_str()
        {
            root.insert(event["session_id"].as_str().unwrap().to_owned(), parent.to_owned());
        }
    }
    let mut from_spans: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for request in lines(&run(&["--to", "otel"], &inputs)) {
        for (_, a) in spans(&request).iter().filter(|(_, a)| operation(a) == "chat") {
            let n = |k: &str| a[k].as_str().unwrap().parse::<u64>().unwrap();
            let conversation = a["gen_ai.conversation.id"].as_str().unwrap();
            let session = root.get(conversation).map_or(conversation, String::as_str);
            let totals = from_spans.entry(session.to_owned()).or_default();
            // Held at 2^63 - 1, as agentlog's session totals are.
            let keys = [
                "gen_ai.usage.input_tokens",
                "gen_ai.usage.output_tokens",
                "gen_ai.usage.cache_read.input_tokens",
                "gen_ai.usage.cache_creation.input_tokens",
            ];
            for (total, key) in totals.iter_mut().zip(keys) {
                *total = total.saturating_add(n(key)).min(i64::MAX as u64);
            }
        }
    }
    let out =
        cargo_bin_cmd!("agentlog").args(["usage", "-q", "--json", "--by", "session"]).args(&inputs).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let from_usage: BTreeMap<String, [u64; 4]> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            let prompt =
                n("input_tokens").saturating_add(n("cache_read_tokens")).saturating_add(n("cache_write_tokens"));
            let counts =
                [prompt.min(i64::MAX as u64), n("output_tokens"), n("cache_read_tokens"), n("cache_write_tokens")];
            (r["session"].as_str().unwrap().to_owned(), counts)
        })
        .collect();
    assert_eq!(from_spans, from_usage);
}

#[test]
fn a_re_export_gives_the_same_ids_and_content_only_when_asked() {
    let sample = vec![common::own_corpus().join("claude/user-and-assistant-text.jsonl")];
    let first = run(&["--to", "otel", "--jobs", "1"], &sample);
    assert_eq!(first, run(&["--to", "otel", "--jobs", "2"], &sample));
    let plain = String::from_utf8(first).unwrap();
    assert!(!plain.contains("gen_ai.input.messages") && !plain.contains("Add a health check endpoint."));
    let with_content = String::from_utf8(run(&["--to", "otel", "--otel-content"], &sample)).unwrap();
    let request = &lines(with_content.as_bytes())[0];
    let chat = spans(request).into_iter().find(|(_, a)| operation(a) == "chat").unwrap().1;
    let input: Value = serde_json::from_str(chat["gen_ai.input.messages"].as_str().unwrap()).unwrap();
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[0]["parts"][0]["content"], "Add a health check endpoint.");
    let output: Value = serde_json::from_str(chat["gen_ai.output.messages"].as_str().unwrap()).unwrap();
    assert_eq!(output[0]["role"], "assistant");
    assert!(["stop", "tool_call"].contains(&output[0]["finish_reason"].as_str().unwrap()));
    // The same ids with and without content.
    let ids = |text: &str| {
        lines(text.as_bytes()).iter().flat_map(spans).map(|(s, _)| s["spanId"].clone()).collect::<Vec<_>>()
    };
    assert_eq!(ids(&plain), ids(&with_content));
}

// Issue 42: the system prompt and tool definitions Claude Code 2.1.328 records
// (`api-request-shape`) go where the GenAI conventions put them, with content only.
#[test]
fn chat_spans_carry_the_system_prompt_and_tool_definitions_with_content_only() {
    let path = common::own_corpus().join("recorded/claude/2.1.328/tools.jsonl");
    let source = common::first_record(&path, "api-request-shape");
    let chats = |args: &[&str]| -> Vec<HashMap<String, Value>> {
        let request = lines(&run(args, std::slice::from_ref(&path))).remove(0);
        spans(&request).into_iter().map(|(_, a)| a).filter(|a| operation(a) == "chat").collect()
    };
    let with = chats(&["--to", "otel", "--otel-content"]);
    assert_eq!(with.len(), 3, "three responses");
    for chat in &with {
        let system: Value = serde_json::from_str(chat["gen_ai.system_instructions"].as_str().unwrap()).unwrap();
        let texts: Vec<&Value> = source["shape"]["system"].as_array().unwrap().iter().map(|b| &b["text"]).collect();
        let parts: Vec<&Value> = system.as_array().unwrap().iter().map(|p| &p["content"]).collect();
        assert_eq!(parts, texts);
        let tools: Value = serde_json::from_str(chat["gen_ai.tool.definitions"].as_str().unwrap()).unwrap();
        let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Agent", "Bash"]);
        assert_eq!(tools[1]["parameters"], source["shape"]["tools"][1]["input_schema"]);
    }
    let without = chats(&["--to", "otel"]);
    assert!(
        without
            .iter()
            .all(|a| !a.contains_key("gen_ai.system_instructions") && !a.contains_key("gen_ai.tool.definitions"))
    );
}
