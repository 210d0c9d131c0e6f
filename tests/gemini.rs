//! The Gemini CLI reader on the sessions Gemini CLI 0.61.0 wrote against the test server
//! (`corpus/recorded/gemini/0.61.0/`). Expected values come from the files read as plain JSON
//! and from the server's script (`tests/agents/README.md`), never from agentlog itself.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use agentlog::model::{Event, Part, Payload, Role, ToolOutput};
use agentlog::read::gemini::Gemini;
use serde_json::Value;

/// The scenario folders of the recorded sessions.
const SCENARIOS: [&str; 8] =
    ["api-error", "compaction", "image", "reasoning", "resume", "resume-new-file", "subagent", "tools"];

/// The session files of one recorded scenario, in name order.
fn recorded(scenario: &str) -> Vec<PathBuf> {
    let dir = common::own_corpus().join("recorded/gemini/0.61.0").join(scenario);
    let files: Vec<PathBuf> = common::session_files(&dir).into_iter().map(|(path, _)| path).collect();
    assert!(!files.is_empty(), "{} holds no session", dir.display());
    files
}

/// The one main session file of a scenario (not a subagent's: those sit in a folder of their own).
fn main_file(scenario: &str) -> PathBuf {
    let files: Vec<PathBuf> = recorded(scenario)
        .into_iter()
        .filter(|p| p.parent().and_then(Path::file_name).is_some_and(|d| d == "chats"))
        .collect();
    assert_eq!(files.len(), 1, "{scenario}: {files:?}");
    files.into_iter().next().unwrap()
}

fn read(path: &Path) -> (Vec<Event>, agentlog::read::ReadReport) {
    common::read_file(&Gemini, path, &path.display().to_string())
}

/// Every message record of a file, read as plain JSON, with its line: the records of their own
/// and those of each `{"$set": {"messages": [...]}}`.
fn message_records(path: &Path) -> Vec<(u64, Value)> {
    let mut records = Vec::new();
    for (i, line) in common::text(path).lines().enumerate() {
        let Ok(record) = serde_json::from_str::<Value>(line) else { continue };
        let number = i as u64 + 1;
        if let Some(messages) = record["$set"]["messages"].as_array() {
            records.extend(messages.iter().map(|m| (number, m.clone())));
        } else if record.get("type").is_some() && record.get("id").is_some() {
            records.push((number, record));
        }
    }
    records
}

/// The text parts of a record's `content` (a string or a list of parts), joined.
fn content_text(record: &Value) -> String {
    match &record["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The events whose `record_id` is `id`.
fn of_record<'a>(events: &'a [Event], id: &str) -> Vec<&'a Event> {
    events.iter().filter(|e| e.record_id.as_deref() == Some(id)).collect()
}

/// The lines listed in an event's `extra.merged_lines`.
fn merged_lines(event: &Event) -> Vec<u64> {
    let extra = event.extra.as_ref().map(|x| x.to_value()).unwrap_or_default();
    extra["merged_lines"].as_array().into_iter().flatten().filter_map(|l| l["line"].as_u64()).collect()
}

fn output(event: &Event) -> Option<&ToolOutput> {
    match &event.payload {
        Payload::ToolOutput(o) => Some(o),
        _ => None,
    }
}

// Every non-empty line is an event's line or listed in another's `merged_lines`, and none is
// diagnosed: the tool results sent back (`functionResponse` records), which make no event of
// their own, are listed on their calls' outputs.
#[test]
fn every_line_of_the_recorded_sessions_is_accounted_for() {
    for scenario in SCENARIOS {
        for path in recorded(scenario) {
            let (events, report) = read(&path);
            assert!(report.diagnostics.is_empty(), "{}: {:?}", path.display(), report.diagnostics);
            assert_eq!(report.lines, common::non_empty_lines(&path), "{}", path.display());
            let mut seen: BTreeSet<u64> = events.iter().map(|e| e.source.line).collect();
            seen.extend(events.iter().flat_map(merged_lines));
            for (i, line) in common::text(&path).lines().enumerate() {
                let number = i as u64 + 1;
                assert!(line.trim().is_empty() || seen.contains(&number), "{}:{number} is lost", path.display());
            }
        }
    }
}

// The first user message of every session is the environment the CLI sends
// (`<session_context>`), which nobody typed; the prompts (each starts with `[<scenario>]`)
// stay typed.
#[test]
fn the_session_context_is_injected_and_the_prompts_are_typed() {
    let mut contexts = 0;
    for scenario in SCENARIOS {
        for path in recorded(scenario) {
            let (events, _) = read(&path);
            for (line, record) in message_records(&path) {
                if record["type"] != "user" {
                    continue;
                }
                let id = record["id"].as_str().unwrap();
                let text = content_text(&record);
                let events = of_record(&events, id);
                if text.starts_with("<session_context>") {
                    contexts += 1;
                    assert!(!events.is_empty(), "{scenario}:{line}: no event of the session context");
                    assert!(
                        events.iter().all(|e| e.injected),
                        "{scenario}:{line}: the session context is not injected"
                    );
                } else if text.starts_with(&format!("[{}]", scenario.trim_end_matches("-new-file"))) {
                    assert!(!events.is_empty(), "{scenario}:{line}: no event of the prompt");
                    assert!(events.iter().all(|e| !e.injected), "{scenario}:{line}: the prompt {text:?} is injected");
                }
            }
        }
    }
    // Each session has one; a resumed one writes it again, in its header's `$set` and in the
    // history that follows.
    assert!(contexts >= SCENARIOS.len(), "{contexts}");
}

// A `user` record of `functionResponse` parts is the tool's result sent back to the model, the
// same result as the call's `result` in the `gemini` message: it is no user message, and its
// line is listed on the output of its call.
#[test]
fn tool_results_sent_back_are_not_user_messages_but_merged_into_their_outputs() {
    let mut sent = 0;
    for scenario in SCENARIOS {
        for path in recorded(scenario) {
            let (events, _) = read(&path);
            for (line, record) in message_records(&path) {
                let Some(parts) = record["content"].as_array() else { continue };
                if record["type"] != "user" || !parts.iter().all(|p| p.get("functionResponse").is_some()) {
                    continue;
                }
                sent += 1;
                let id = record["id"].as_str().unwrap();
                let messages: Vec<_> = of_record(&events, id)
                    .into_iter()
                    .filter(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User))
                    .collect();
                assert!(messages.is_empty(), "{}:{line}: a tool result became a user message", path.display());
                for part in parts {
                    let call = part["functionResponse"]["id"].as_str().unwrap();
                    let listed = events.iter().any(|e| {
                        output(e).is_some_and(|o| o.call_id.as_deref() == Some(call)) && merged_lines(e).contains(&line)
                    });
                    assert!(listed, "{}:{line}: not listed on the output of {call}", path.display());
                }
            }
            // No user message is left empty, as those records were.
            let empty = events.iter().any(|e| {
                matches!(&e.payload, Payload::Message(m) if m.role == Role::User && m.text.is_empty() && m.parts.is_empty())
            });
            assert!(!empty, "{}: an empty user message", path.display());
        }
    }
    // tools: 2; resume: 1, then 2 in the rewritten history; resume-new-file: 1 and 2; subagent: 1 + 1.
    assert_eq!(sent, 10);
}

// `@red-square.png` in the prompt: `content` holds the prompt, the CLI's wrapper text and the
// PNG as `inlineData`; `displayContent` holds what was typed.
#[test]
fn an_image_prompt_is_what_was_typed_with_the_image_as_a_part() {
    let path = main_file("image");
    let (events, _) = read(&path);
    let (_, record) = message_records(&path)
        .into_iter()
        .find(|(_, r)| r["displayContent"].is_array())
        .expect("the prompt has displayContent");
    let typed = record["displayContent"][0]["text"].as_str().unwrap();
    let inline =
        record["content"].as_array().unwrap().iter().find_map(|p| p.get("inlineData")).expect("the PNG is inlineData");
    let prompt = of_record(&events, record["id"].as_str().unwrap());
    assert_eq!(prompt.len(), 1);
    let Payload::Message(message) = &prompt[0].payload else { panic!("{:?}", prompt[0].payload) };
    assert_eq!((message.role, message.text.as_str()), (Role::User, typed));
    assert!(!prompt[0].injected);
    let image = Part::Image {
        media_type: Some(inline["mimeType"].as_str().unwrap().to_owned()),
        data: Some(inline["data"].as_str().unwrap().to_owned()),
        url: None,
    };
    assert_eq!(message.parts, [Part::Text { text: typed.to_owned() }, image]);
    // What was sent besides, the wrapper text around the file's content, is kept.
    let extra = prompt[0].extra.as_ref().unwrap().to_value();
    assert_eq!(extra["content_text"], content_text(&record));
}

// `ls /nonexistent` exits 2 (the script's `expect_exit_code`); Gemini CLI records the call
// with `status: "success"` and the code only in the output text. `echo hello` exits 0, which
// 0.61 does not write.
#[test]
fn a_shell_command_that_exits_non_zero_failed() {
    let path = main_file("tools");
    let (events, _) = read(&path);
    let mut checked = 0;
    for (_, record) in message_records(&path) {
        for call in record["toolCalls"].as_array().into_iter().flatten() {
            assert_eq!((call["name"].as_str(), call["status"].as_str()), (Some("run_shell_command"), Some("success")));
            let id = call["id"].as_str().unwrap();
            let outputs: Vec<&ToolOutput> =
                events.iter().filter_map(output).filter(|o| o.call_id.as_deref() == Some(id)).collect();
            assert_eq!(outputs.len(), 1, "{id}");
            let o = outputs[0];
            let expected = match call["args"]["command"].as_str().unwrap() {
                "ls /nonexistent" => (Some(2), Some(true)),
                "echo hello" => (None, Some(false)),
                other => panic!("a command the script does not run: {other}"),
            };
            assert_eq!((o.exit_code, o.failed), expected, "{id}");
            assert_eq!(o.is_error, Some(false), "the tool itself reported success");
            checked += 1;
        }
    }
    // Each call's message is written twice, without and with `toolCalls`.
    assert_eq!(checked, 2);
}

// Another tool's output is read as before, even when it holds such a line.
#[test]
fn only_the_shell_tools_output_gives_an_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let result = |name: &str| {
        serde_json::json!([{ "functionResponse": { "id": format!("{name}-1"), "name": name,
            "response": { "output": "Output: x\nExit Code: 3\nProcess Group PGID: 1" } } }])
    };
    let calls = serde_json::json!([
        { "id": "read_file-1", "name": "read_file", "args": {}, "status": "success", "result": result("read_file") },
        { "id": "run_shell_command-1", "name": "run_shell_command", "args": {}, "status": "success",
          "result": result("run_shell_command") },
    ]);
    let lines = [
        serde_json::json!({ "sessionId": "s1", "projectHash": "h", "startTime": "2026-11-27T10:00:00.000Z" }),
        serde_json::json!({ "id": "g1", "timestamp": "2026-11-27T10:00:01.000Z", "type": "gemini", "content": "",
            "toolCalls": calls }),
    ];
    std::fs::write(&path, lines.map(|l| l.to_string()).join("\n") + "\n").unwrap();
    let (events, _) = common::read_file(&Gemini, &path, "session.jsonl");
    let codes: Vec<(Option<&str>, Option<i64>, Option<bool>)> =
        events.iter().filter_map(output).map(|o| (o.name.as_deref(), o.exit_code, o.failed)).collect();
    assert_eq!(codes, [(Some("read_file"), None, Some(false)), (Some("run_shell_command"), Some(3), Some(true))]);
}

// A result sent back whose call no `gemini` message holds is still a tool output, at its line.
#[test]
fn a_tool_result_without_its_call_is_a_tool_output_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let lines = [
        serde_json::json!({ "sessionId": "s1", "projectHash": "h", "startTime": "2026-11-27T10:00:00.000Z" }),
        serde_json::json!({ "id": "u1", "timestamp": "2026-11-27T10:00:01.000Z", "type": "user", "content": [
            { "functionResponse": { "id": "c1", "name": "run_shell_command",
              "response": { "output": "Output: no\nExit Code: 1" } } }] }),
    ];
    std::fs::write(&path, lines.map(|l| l.to_string()).join("\n") + "\n").unwrap();
    let (events, report) = common::read_file(&Gemini, &path, "session.jsonl");
    assert_eq!((report.lines, report.lines_diagnosed), (2, 0));
    let outputs: Vec<&Event> = events.iter().filter(|e| output(e).is_some()).collect();
    assert_eq!(outputs.len(), 1);
    assert_eq!((outputs[0].source.line, outputs[0].record_id.as_deref()), (2, Some("u1")));
    let o = output(outputs[0]).unwrap();
    assert_eq!((o.call_id.as_deref(), o.exit_code, o.failed), (Some("c1"), Some(1), Some(true)));
    assert!(!events.iter().any(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User)));
}
