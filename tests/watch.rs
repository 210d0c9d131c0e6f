//! `agentlog watch`: events come as the agents' files grow, once each, across restarts (the
//! state file), never from a half-written line, and a response's usage with its final counts.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// One round of `agentlog watch --once` over `dir` with the state in `state`: its events.
fn round(dir: &Path, state: &Path) -> (Vec<Value>, String) {
    let out = cargo_bin_cmd!("agentlog")
        .args(["watch", "--once", "--color", "never", "--state"])
        .arg(state)
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let events = std::str::from_utf8(&out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (events, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn is_usage(e: &Value) -> bool {
    e["kind"] == "meta" && e["payload"]["meta_type"] == "usage"
}

/// A temporary folder of Claude Code sessions: the folder, its project, a session file in it
/// (not written yet), and where the state goes.
fn workspace() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-work");
    std::fs::create_dir_all(&project).unwrap();
    let live = project.join("5e55-1.jsonl");
    let state = dir.path().join("watch.state");
    (dir, project, live, state)
}

/// Waits until files written now count as settled.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(1700));
}

#[test]
fn lines_come_once_as_they_are_written_and_a_restart_repeats_nothing() {
    let session = common::Growing::claude();
    let lines: Vec<&str> = session.lines.iter().map(String::as_str).collect();
    let (project, live, state) = (session.folder.clone(), session.live.clone(), session.path("watch.state"));

    // Ten lines and half of the eleventh: nothing of the eleventh yet.
    let half = lines[10].len() / 2;
    std::fs::write(&live, format!("{}\n{}", lines[..10].join("\n"), &lines[10][..half])).unwrap();
    let (first, stderr) = round(&project, &state);
    assert!(!first.is_empty());
    assert!(first.iter().all(|e| e["source"]["line"].as_u64().unwrap() <= 10), "an event of the incomplete line");
    assert!(!stderr.contains("line 11"), "the line being written is no problem: {stderr}");

    // The rest of the file.
    let mut f = std::fs::OpenOptions::new().append(true).open(&live).unwrap();
    writeln!(f, "{}", &lines[10][half..]).unwrap();
    for line in &lines[11..] {
        writeln!(f, "{line}").unwrap();
    }
    drop(f);
    let (second, _) = round(&project, &state);
    settle();
    let (third, _) = round(&project, &state);
    // A restart with the same state: nothing new, nothing again.
    let (fourth, _) = round(&project, &state);
    assert!(fourth.is_empty(), "{} events given again", fourth.len());

    let given: Vec<&Value> = first.iter().chain(&second).chain(&third).collect();
    let ids: BTreeSet<&str> = given.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), given.len(), "an event given twice");
    // The same events as converting the whole file at once; usage once per response, with the
    // same counts.
    let whole = cargo_bin_cmd!("agentlog").args(["convert"]).arg(&live).output().unwrap();
    let whole: Vec<Value> =
        std::str::from_utf8(&whole.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let not_usage = |events: &[&Value]| -> BTreeSet<String> {
        events.iter().filter(|e| !is_usage(e)).map(|e| e["id"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(not_usage(&given), not_usage(&whole.iter().collect::<Vec<_>>()));
    let usage = |events: &[&Value]| -> BTreeMap<String, Value> {
        events
            .iter()
            .filter(|e| is_usage(e))
            .map(|e| (e["response_id"].as_str().unwrap().to_owned(), e["payload"]["usage"].clone()))
            .collect()
    };
    let given_usage = usage(&given);
    assert_eq!(given_usage.len(), given.iter().filter(|e| is_usage(e)).count(), "a response's usage given twice");
    assert_eq!(given_usage, usage(&whole.iter().collect::<Vec<_>>()));
}

/// A Claude Code line of an assistant response's block, with the counts so far.
fn assistant(uuid: &str, parent: &str, text: &str, output: u64) -> String {
    in_session("5e55-1", "msg_1", uuid, parent, text, output)
}

/// [`assistant`], of session `session` and response `response`.
fn in_session(session: &str, response: &str, uuid: &str, parent: &str, text: &str, output: u64) -> String {
    serde_json::json!({
        "type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": session,
        "timestamp": "2026-11-27T10:00:01.000Z", "cwd": "/work", "version": "2.1.0", "isSidechain": false,
        "message": { "id": response, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{ "type": "text", "text": text }], "stop_reason": null,
            "usage": { "input_tokens": 100, "output_tokens": output } }
    })
    .to_string()
}

#[test]
fn a_response_written_over_several_lines_has_its_final_usage_given_once() {
    let (_dir, project, live, state) = workspace();
    let user = serde_json::json!({ "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "5e55-1",
        "timestamp": "2026-11-27T10:00:00.000Z", "cwd": "/work", "version": "2.1.0", "isSidechain": false,
        "message": { "role": "user", "content": "hello" } });
    std::fs::write(&live, format!("{user}\n{}\n", assistant("a1", "u1", "Hel", 5))).unwrap();
    let (first, _) = round(&project, &state);
    assert!(first.iter().any(|e| e["kind"] == "message"), "the lines come at once");
    assert!(!first.iter().any(is_usage), "the usage of a response still being written waits");

    let mut f = std::fs::OpenOptions::new().append(true).open(&live).unwrap();
    writeln!(f, "{}", assistant("a2", "a1", "lo there.", 50)).unwrap();
    drop(f);
    let (second, _) = round(&project, &state);
    assert!(!second.iter().any(is_usage));
    settle();
    let (third, _) = round(&project, &state);
    let usage: Vec<&Value> = first.iter().chain(&second).chain(&third).filter(|e| is_usage(e)).collect();
    assert_eq!(usage.len(), 1, "{usage:?}");
    assert_eq!(usage[0]["payload"]["usage"]["output_tokens"], 50);
    let (fourth, _) = round(&project, &state);
    assert!(fourth.is_empty());
}

#[test]
fn a_truncated_file_is_reported_and_read_again() {
    let (_dir, project, live, state) = workspace();
    let lines = [assistant("a1", "u0", "one", 5), assistant("a2", "a1", "two", 6)];
    std::fs::write(&live, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    let (first, _) = round(&project, &state);
    assert_eq!(first.iter().filter(|e| e["kind"] == "message").count(), 2);
    std::fs::write(&live, format!("{}\n", assistant("b1", "u0", "another start", 7))).unwrap();
    let (second, stderr) = round(&project, &state);
    assert!(stderr.contains("shorter than before"), "{stderr}");
    // Read again from its start: its one line now.
    let messages: Vec<&Value> = second.iter().filter(|e| e["kind"] == "message").collect();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["payload"]["text"], "another start");
}

#[test]
fn a_running_watch_writes_lines_as_they_come_and_new_skips_what_was_there() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-work");
    std::fs::create_dir_all(&project).unwrap();
    let live = project.join("5e55-1.jsonl");
    std::fs::write(&live, format!("{}\n", assistant("a1", "u0", "there before", 5))).unwrap();
    let (mut child, got) = spawn_watch(&["--new", "--interval", "50", "--color", "never"], &project);
    std::thread::sleep(std::time::Duration::from_millis(400));
    // A new file and a line added to the old one, while it runs.
    std::fs::write(
        project.join("5e55-2.jsonl"),
        format!("{}\n", in_session("5e55-2", "msg_2", "b1", "u0", "a new session", 5)),
    )
    .unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&live).unwrap();
    writeln!(f, "{}", assistant("a2", "a1", "added later", 6)).unwrap();
    drop(f);
    let mut texts = BTreeSet::new();
    let mut responses = BTreeSet::new();
    // Long enough for the usage of the last responses, which waits until the files settle.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
    while std::time::Instant::now() < deadline {
        if let Ok(line) = got.recv_timeout(std::time::Duration::from_millis(200)) {
            let e: Value = serde_json::from_str(&line).unwrap();
            if e["kind"] == "message" {
                texts.insert(e["payload"]["text"].as_str().unwrap().to_owned());
            }
            if is_usage(&e) {
                responses.insert(e["source"]["file"].as_str().unwrap().rsplit('/').next().unwrap().to_owned());
            }
        }
    }
    child.kill().unwrap();
    let _ = child.wait();
    let want: BTreeSet<String> = ["a new session", "added later"].map(str::to_owned).into();
    assert_eq!(texts, want, "what came while it ran, and not what was there before");
    // The usage of the new file's response; the old file's was taken in at the start.
    let files: BTreeSet<String> = ["5e55-2.jsonl"].map(str::to_owned).into();
    assert_eq!(responses, files);
}

/// Starts `agentlog watch` with `args` on `dir`; its stdout lines arrive on the receiver.
fn spawn_watch(args: &[&str], dir: &Path) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("agentlog"))
        .arg("watch")
        .args(args)
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, got) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    (child, got)
}

#[test]
fn a_notification_wakes_a_watch_long_before_its_interval() {
    let (dir, _, live, _) = workspace();
    std::fs::write(&live, format!("{}\n", assistant("a1", "u0", "there before", 5))).unwrap();
    // Polling every 60 s, looking at everything every 10 s: only a notification brings the new
    // line within the test's wait, from a file there before, two folders down.
    let (mut child, got) = spawn_watch(&["--new", "--interval", "60000"], &dir.path().join("projects"));
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let mut f = std::fs::OpenOptions::new().append(true).open(&live).unwrap();
    writeln!(f, "{}", assistant("a2", "a1", "added later", 6)).unwrap();
    drop(f);
    let line = got.recv_timeout(std::time::Duration::from_secs(5));
    child.kill().unwrap();
    let _ = child.wait();
    let e: Value = serde_json::from_str(&line.expect("no event within 5 s")).unwrap();
    assert_eq!(e["payload"]["text"], "added later");
}

#[test]
fn a_directory_of_transcripts_is_kept_current_and_its_index_lists_every_session() {
    let (dir, project, live, state) = workspace();
    let out = dir.path().join("out/");
    std::fs::write(&live, format!("{}\n", assistant("a1", "u0", "first answer", 5))).unwrap();
    let other = project.join("5e55-2.jsonl");
    std::fs::write(&other, format!("{}\n", in_session("5e55-2", "msg_2", "b1", "u0", "the other session", 5))).unwrap();
    let watch = || {
        let out = cargo_bin_cmd!("agentlog")
            .args(["watch", "--once", "--to", "markdown", "-o"])
            .arg(&out)
            .arg("--state")
            .arg(&state)
            .arg(&project)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stdout.is_empty(), "-o DIR/ takes the events off stdout");
    };
    watch();
    let transcript = out.join("claude-code/claude-code-5e55-1.md");
    assert!(common::text(&transcript).contains("first answer"));
    // The session grows; a later run (a restart) writes its transcript again.
    let mut f = std::fs::OpenOptions::new().append(true).open(&live).unwrap();
    writeln!(f, "{}", assistant("a2", "a1", "second answer", 6)).unwrap();
    drop(f);
    watch();
    let text = common::text(&transcript);
    assert!(text.contains("first answer") && text.contains("second answer"), "{text}");
    let index = common::text(&out.join("index.md"));
    for session in ["5e55-1", "5e55-2"] {
        assert!(index.contains(&format!("claude-code-{session}.md")), "{session} not in the index:\n{index}");
    }
}

#[test]
fn a_codex_item_written_over_two_lines_is_given_as_the_finished_file_has_it() {
    // A real Codex 0.169.0 rollout, read while it is written: after line 10 (an answer's
    // item_completed, written before its response_item), lines 13 to 15 (a usage record, then
    // two other lines before its token_count on line 16), then whole.
    let mut rollout = common::Growing::new(
        "recorded/codex/0.169.0/tools.jsonl",
        "sessions",
        "rollout-2026-01-01T00-00-00-019c0000-0000-7000-8000-000000000000.jsonl",
    );
    let (sessions, state) = (rollout.folder.clone(), rollout.path("watch.state"));
    let mut given = Vec::new();
    for upto in [10, 13, 14, 15, rollout.lines.len()] {
        rollout.write_to(upto);
        given.extend(round(&sessions, &state).0);
    }
    settle();
    given.extend(round(&sessions, &state).0);
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-q"]).arg(&sessions).output().unwrap();
    let converted: BTreeMap<String, Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|e| (e["id"].as_str().unwrap().to_owned(), e))
        .collect();
    let ids: Vec<&str> = given.iter().map(|e| e["id"].as_str().unwrap()).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "an event given twice");
    let extra: Vec<&Value> = given.iter().filter(|e| !converted.contains_key(e["id"].as_str().unwrap())).collect();
    assert!(extra.is_empty(), "events the finished file does not give: {extra:#?}");
    assert_eq!(unique, converted.keys().map(String::as_str).collect());
    // Each as the finished file gives it (a typed prompt is not injected context, say).
    for e in &given {
        let c = &converted[e["id"].as_str().unwrap()];
        for field in ["kind", "payload", "injected", "role", "timestamp"] {
            assert_eq!(e[field], c[field], "{field} of {}", e["id"]);
        }
    }
}
