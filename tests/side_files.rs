//! The agents' side files: prompt history, memory, the session registry, todo lists and thread
//! names, read from the synthetic homes `corpus/claude/home` and `corpus/codex/home`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

const S1: &str = "7a1e0c55-3b2d-4f60-9a11-0000000000a1";
const S2: &str = "7a1e0c55-3b2d-4f60-9a11-0000000000b2";
const T1: &str = "019c9000-0000-7000-8000-0000000000d1";
const T2: &str = "019c9000-0000-7000-8000-0000000000d2";

fn home(agent: &str) -> PathBuf {
    common::own_corpus().join(agent).join("home")
}

fn agentlog(args: &[&str]) -> Output {
    cargo_bin_cmd!("agentlog").args(args).env_remove("CLAUDE_CONFIG_DIR").env_remove("CODEX_HOME").output().unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn convert(input: &Path) -> (Vec<Value>, String) {
    let out = agentlog(&["convert", &input.display().to_string()]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    (lines(&out), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The session summaries of an interchange document of `input`, by session id.
fn summaries(input: &Path) -> std::collections::BTreeMap<String, Value> {
    let out = agentlog(&["convert", "-q", "--to", "interchange", &input.display().to_string()]);
    let document: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sessions = document["sessions"].as_array().unwrap();
    sessions.iter().map(|s| (s["session"]["session_id"].as_str().unwrap().to_owned(), s["session"].clone())).collect()
}

fn from_file<'a>(events: &'a [Value], file: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["source"]["file"].as_str().unwrap().ends_with(file)).collect()
}

#[test]
fn claude_prompt_history_lines_are_prompts_of_their_sessions() {
    let (events, stderr) = convert(&home("claude"));
    let history = from_file(&events, "/history.jsonl");
    // Seven lines map; the eighth is cut off and reported at its line.
    assert_eq!(history.len(), 7);
    assert!(stderr.contains("history.jsonl:8:"), "{stderr}");
    for e in &history {
        assert_eq!(e["kind"], "message");
        assert_eq!(e["payload"]["role"], "user");
        assert_eq!(e["source"]["record_type"], "prompt_history");
        assert_eq!(e["context"]["cwd"], "/home/dev/notes");
    }
    let flag = |i: usize| history[i]["payload"]["prompt_history"].as_str().unwrap();
    let session = |i: usize| history[i]["session_id"].as_str().unwrap();
    // Typed as is, with pasted text shortened, a slash command, and a line that names no
    // session but falls within the transcript's time: all four are in S1's transcript.
    for i in 0..4 {
        assert_eq!((session(i), flag(i)), (S1, "in_transcript"), "line {}", i + 1);
    }
    assert_eq!(history[1]["extra"]["pastedContents"]["1"]["type"], "text");
    // S2's transcript is gone.
    assert_eq!((session(4), flag(4)), (S2, "no_transcript"));
    assert_eq!((session(5), flag(5)), (S2, "no_transcript"));
    // No session named, no transcript at that time: a session of its own, a UUID.
    assert_eq!(flag(6), "no_transcript");
    assert!(![S1, S2].contains(&session(6)) && uuid::Uuid::parse_str(session(6)).is_ok());
    assert_eq!(history[6]["timestamp"], "2026-01-20T15:00:00.000Z");
}

#[test]
fn claude_memory_files_keep_front_matter_and_body_and_a_bad_front_matter_is_reported() {
    let (events, stderr) = convert(&home("claude"));
    let memory: Vec<&Value> = events.iter().filter(|e| e["payload"]["meta_type"] == "memory").collect();
    assert_eq!(memory.len(), 3);
    for e in &memory {
        assert_eq!(e["session_id"], "memory--home-dev-notes");
        assert_eq!(e["payload"]["data"]["project"], "-home-dev-notes");
    }
    let data = |file: &str| {
        &memory.iter().find(|e| e["source"]["file"].as_str().unwrap().ends_with(file)).unwrap()["payload"]["data"]
    };
    let feedback = data("feedback_testing.md");
    assert_eq!(feedback["name"], "Testing feedback");
    assert_eq!(feedback["type"], "feedback");
    assert_eq!(feedback["description"], "run the whole suite before committing");
    assert_eq!(feedback["body"], "The user wants `make test` run in full before every commit, not a subset.\n");
    let index = data("MEMORY.md");
    assert!(index["type"].is_null() && index["body"].as_str().unwrap().starts_with("# Memory index"));
    // The bad front matter is a diagnostic at its line; the file is still there, whole.
    let layout = data("project_layout.md");
    assert!(layout["name"].is_null());
    assert!(layout["front_matter_text"].as_str().unwrap().contains("description: [where notes"));
    assert!(layout["body"].as_str().unwrap().starts_with("Notes are under"));
    assert!(stderr.contains("invalid YAML front matter") && stderr.contains("project_layout.md:4:"), "{stderr}");
}

#[test]
fn claude_registry_entries_and_todo_lists_belong_to_their_sessions() {
    let (events, _) = convert(&home("claude"));
    let registry = from_file(&events, "/sessions/48211.json");
    assert_eq!(registry.len(), 1);
    assert_eq!(registry[0]["payload"]["meta_type"], "session_registry");
    assert_eq!(registry[0]["session_id"], S1);
    assert_eq!(registry[0]["timestamp"], "2026-03-02T09:59:40.000Z");
    assert_eq!(registry[0]["payload"]["data"]["entrypoint"], "cli");
    let todos: Vec<&Value> = events.iter().filter(|e| e["payload"]["meta_type"] == "todo_list").collect();
    assert_eq!(todos.len(), 2);
    let main = todos.iter().find(|e| e["agent_id"].is_null()).unwrap();
    assert_eq!(main["session_id"], S1);
    assert_eq!(main["payload"]["data"]["todos"][1]["status"], "in_progress");
    let sub = todos.iter().find(|e| e["agent_id"] == "a7f3c21").unwrap();
    assert_eq!((&sub["session_id"], &sub["is_sidechain"]), (&Value::from(S1), &Value::from(true)));
    assert_eq!(sub["payload"]["data"]["todos"], serde_json::json!([]));

    let summaries = summaries(&home("claude"));
    assert_eq!(summaries[S1]["entrypoint"], "cli");
}

#[test]
fn prompts_in_both_history_and_transcript_are_counted_and_shown_once() {
    let summaries = summaries(&home("claude"));
    // The transcript's three prompts and one answer; the four history copies are not counted.
    assert_eq!(summaries[S1]["counts"]["messages"], 4);
    assert_eq!(summaries[S1]["prompts_only"], false);
    assert_eq!(summaries[S2]["counts"]["messages"], 2);
    assert_eq!(summaries[S2]["prompts_only"], true);
    assert_eq!(summaries[S2]["title"], "Which notes have no title?");

    for format in ["markdown", "html"] {
        let out = agentlog(&["convert", "-q", "--to", format, &home("claude").display().to_string()]);
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.matches("Now tag every note about traits.").count(), 1, "{format}");
        assert_eq!(text.matches("Summarise this").count(), 1, "{format}");
        assert_eq!(text.matches("Add a title to each of them.").count(), 1, "{format}");
        assert_eq!(text.matches("no transcript of this session was found").count(), 2, "{format}");
        assert!(text.contains("Testing feedback (feedback)"), "{format}");
    }
    let out = agentlog(&["convert", "-q", "--to", "markdown", &home("codex").display().to_string()]);
    let text = String::from_utf8(out.stdout).unwrap();
    // The thread with a rollout is shown once, from it: the slash command only the history
    // holds is in the data, not in a second section of the thread.
    assert_eq!(text.matches("- session: `019c9000-0000-7000-8000-0000000000d1`").count(), 1);
    assert_eq!(text.matches("no transcript of this session was found").count(), 1);
    // Once as the prompt (the transcript's title, from the same prompt, is the other line).
    assert_eq!(text.lines().filter(|l| *l == "Why is the build slow?").count(), 1);
    assert!(text.contains("Rename the config module."));
}

#[test]
fn codex_prompt_history_and_thread_names_map_into_their_threads() {
    let (events, stderr) = convert(&home("codex"));
    assert!(!stderr.contains('⚠'), "{stderr}");
    let history = from_file(&events, "/history.jsonl");
    let got: Vec<(&str, &str, &str)> = history
        .iter()
        .map(|e| {
            let p = &e["payload"];
            (e["session_id"].as_str().unwrap(), p["text"].as_str().unwrap(), p["prompt_history"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        got,
        [
            (T1, "Why is the build slow?", "in_transcript"),
            // Codex does not write slash commands into the rollout.
            (T1, "/compact", "not_in_transcript"),
            (T2, "Rename the config module.", "no_transcript"),
            (T2, "Run the tests again.", "no_transcript"),
        ]
    );
    assert_eq!(history[0]["timestamp"], "2026-03-01T10:00:04.000Z");
    let titles = from_file(&events, "/session_index.jsonl");
    assert_eq!(titles.len(), 3);
    assert!(titles.iter().all(|e| e["payload"]["meta_type"] == "title"));

    let summaries = summaries(&home("codex"));
    // The last name of a thread wins.
    assert_eq!(summaries[T1]["title"], "Slow build: LTO in dev");
    assert_eq!(summaries[T2]["title"], "Config rename");
    assert_eq!(
        (&summaries[T1]["prompts_only"], &summaries[T2]["prompts_only"]),
        (&Value::from(false), &Value::from(true))
    );
}

#[test]
fn side_files_are_told_by_their_content_under_any_name() {
    let dir = tempfile::tempdir().unwrap();
    let copies = [
        (home("claude").join("history.jsonl"), "prompts-backup.jsonl", "prompt-history"),
        (home("claude").join("sessions/48211.json"), "entry.json", "session-registry"),
        (home("codex").join("history.jsonl"), "codex-prompts.jsonl", "prompt-history"),
        (home("codex").join("session_index.jsonl"), "names.jsonl", "thread-names"),
    ];
    for (from, name, _) in &copies {
        std::fs::copy(from, dir.path().join(name)).unwrap();
    }
    for (from, name, kind) in copies {
        let copy = dir.path().join(name).display().to_string();
        let out = agentlog(&["ls", "--json", &copy]);
        let row = &lines(&out)[0];
        assert_eq!(row["kind"], kind, "{name}");
        // The same events as from the file in its place, but for the file's name.
        let (here, _) = convert(&from);
        let (there, _) = convert(Path::new(&copy));
        let strip = |events: Vec<Value>| -> Vec<(Value, Value)> {
            events.into_iter().map(|e| (e["payload"]["meta_type"].clone(), e["payload"]["text"].clone())).collect()
        };
        assert_eq!(strip(here), strip(there), "{name}");
    }
    // From standard input too.
    let history = std::fs::read(home("codex").join("session_index.jsonl")).unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-q", "-"]).write_stdin(history).output().unwrap();
    assert!(lines(&out).iter().all(|e| e["payload"]["meta_type"] == "title" && e["agent"] == "codex"));
}

#[test]
fn default_places_list_side_files_with_their_kind() {
    let out = cargo_bin_cmd!("agentlog")
        .args(["ls", "--json"])
        .env("CLAUDE_CONFIG_DIR", home("claude"))
        .env("CODEX_HOME", home("codex"))
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut kinds: Vec<(String, String)> = lines(&out)
        .iter()
        .map(|r| (r["agent"].as_str().unwrap().to_owned(), r["kind"].as_str().unwrap().to_owned()))
        .collect();
    kinds.sort();
    kinds.dedup();
    let expected = [
        ("claude-code", "memory"),
        ("claude-code", "prompt-history"),
        ("claude-code", "session"),
        ("claude-code", "session-registry"),
        ("claude-code", "todo-list"),
        ("codex", "prompt-history"),
        ("codex", "session"),
        ("codex", "thread-names"),
    ];
    assert_eq!(kinds, expected.map(|(a, k)| (a.to_owned(), k.to_owned())));
}
