//! `agentlog archive`: a run, a source session deleted and a new one added, another run; the
//! archive keeps what was deleted, adds what is new, duplicates nothing, recovers sessions
//! known only from the prompt history, never touches the agents' files and keeps out a
//! second run while one works.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// A Claude Code transcript added to the synthetic home, and one added later.
const SHOP: &str = "5d0c1a2e-7f3b-4c1d-9e8a-1b2c3d4e5f60";
const PRICED: &str = "9c000000-0000-4000-8000-00000000c057";
const S1: &str = "7a1e0c55-3b2d-4f60-9a11-0000000000a1";
const S2: &str = "7a1e0c55-3b2d-4f60-9a11-0000000000b2";
const T2: &str = "019c9000-0000-7000-8000-0000000000d2";

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    /// The synthetic homes of both agents, with one more Claude Code project.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let own = common::own_corpus();
        common::copy_tree(&own.join("claude/home"), &root.join("claude"));
        common::copy_tree(&own.join("codex/home"), &root.join("codex"));
        let shop = root.join("claude/projects/-home-dev-shop");
        std::fs::create_dir_all(&shop).unwrap();
        std::fs::copy(own.join("claude/user-and-assistant-text.jsonl"), shop.join(format!("{SHOP}.jsonl"))).unwrap();
        Home { _dir: dir, root }
    }

    fn archive(&self) -> PathBuf {
        self.root.join("archive")
    }

    fn agentlog(&self, args: &[&str]) -> Output {
        cargo_bin_cmd!("agentlog")
            .args(args)
            .env("CLAUDE_CONFIG_DIR", self.root.join("claude"))
            .env("CODEX_HOME", self.root.join("codex"))
            .env("HOME", self.root.join("nobody"))
            .output()
            .unwrap()
    }

    fn run(&self) -> Output {
        let out = self.agentlog(&["archive", &self.archive().display().to_string()]);
        assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// `ls` of the archive: status by (agent, session).
    fn listed(&self) -> BTreeMap<(String, String), String> {
        let out = self.agentlog(&["ls", "--json", &self.archive().display().to_string()]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| ((s(&r["agent"]), s(&r["session"])), s(&r["status"])))
            .collect()
    }
}

fn s(v: &Value) -> String {
    v.as_str().unwrap().to_owned()
}

/// Every file under `dir` and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().strip_prefix(dir).unwrap().to_owned(), std::fs::read(e.path()).unwrap()))
        .collect()
}

/// The unified events of every archive file, with the file they are in.
fn archived_events(archive: &Path) -> Vec<(PathBuf, Value)> {
    snapshot(archive)
        .into_iter()
        .filter(|(path, _)| path.extension().is_some_and(|e| e == "jsonl"))
        .flat_map(|(path, bytes)| {
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|l| (path.clone(), serde_json::from_str(l).unwrap()))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn key(agent: &str, session: &str) -> (String, String) {
    (agent.to_owned(), session.to_owned())
}

#[test]
fn an_archive_keeps_deleted_sessions_adds_new_ones_and_recovers_prompt_only_ones() {
    let home = Home::new();
    let agents_before = snapshot(&home.root.join("claude"));
    home.run();
    let first = home.listed();
    assert_eq!(first[&key("claude-code", SHOP)], "live");
    assert_eq!(first[&key("claude-code", S1)], "live");
    assert_eq!(first[&key("claude-code", "memory--home-dev-notes")], "live");
    // Transcripts deleted before the first run: recovered from the prompt history.
    assert_eq!(first[&key("claude-code", S2)], "recovered");
    assert_eq!(first[&key("codex", T2)], "recovered");
    let shop_file = home.archive().join(format!("sessions/claude-code/claude-code-{SHOP}.jsonl"));
    let shop_archived = std::fs::read(&shop_file).unwrap();

    // A session's transcript is deleted, a new session is added, prompts are typed in both.
    let shop_source = home.root.join(format!("claude/projects/-home-dev-shop/{SHOP}.jsonl"));
    std::fs::remove_file(&shop_source).unwrap();
    let priced = home.root.join(format!("claude/projects/-home-dev-shop/{PRICED}.jsonl"));
    std::fs::copy(common::own_corpus().join("claude/priced-responses.jsonl"), &priced).unwrap();
    let history = home.root.join("claude/history.jsonl");
    let mut text = std::fs::read_to_string(&history).unwrap();
    text.push_str(&format!(
        "{{\"display\":\"Summarise the open pull requests.\",\"pastedContents\":{{}},\"timestamp\":1772000000000,\"project\":\"/home/dev/shop\",\"sessionId\":\"{PRICED}\"}}\n"
    ));
    std::fs::write(&history, text).unwrap();
    home.run();
    let second = home.listed();
    assert_eq!(second[&key("claude-code", SHOP)], "archived-only");
    assert_eq!(second[&key("claude-code", PRICED)], "live");
    assert_eq!(second[&key("claude-code", S2)], "recovered");
    assert_eq!(second.len(), first.len() + 1);
    // The deleted session's file is as the first run wrote it.
    assert_eq!(std::fs::read(&shop_file).unwrap(), shop_archived);

    // Nothing is duplicated: every event once, every history entry once.
    let events = archived_events(&home.archive());
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (_, e) in &events {
        *ids.entry(e["id"].as_str().unwrap()).or_default() += 1;
    }
    assert!(ids.values().all(|n| *n == 1), "{:?}", ids.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>());
    let history_lines = std::fs::read_to_string(home.archive().join("history/claude-code.jsonl")).unwrap();
    assert_eq!(history_lines.lines().count(), 8);
    let new_prompt: Vec<&Value> = events
        .iter()
        .filter(|(_, e)| e["session_id"] == PRICED && e["source"]["record_type"] == "prompt_history")
        .map(|(_, e)| e)
        .collect();
    assert_eq!(new_prompt.len(), 1);
    assert_eq!(new_prompt[0]["payload"]["prompt_history"], "in_transcript");

    // A run with nothing new changes nothing.
    let before = snapshot(&home.archive());
    home.run();
    let after = snapshot(&home.archive());
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>());
    assert!(before == after, "a run with nothing new changed the archive");

    // The agents' own files are as they were, but for the two changes above.
    let mut agents_after = snapshot(&home.root.join("claude"));
    agents_after.remove(Path::new(&format!("projects/-home-dev-shop/{PRICED}.jsonl")));
    let mut expected = agents_before;
    expected.remove(Path::new(&format!("projects/-home-dev-shop/{SHOP}.jsonl")));
    expected.remove(Path::new("history.jsonl"));
    agents_after.remove(Path::new("history.jsonl"));
    assert!(agents_after == expected, "the archive changed the agent's files");
}

#[test]
fn an_archive_reads_as_transcripts_with_recovered_sessions_and_memory() {
    let home = Home::new();
    home.run();
    std::fs::remove_file(home.root.join(format!("claude/projects/-home-dev-shop/{SHOP}.jsonl"))).unwrap();
    home.run();
    let out = home.agentlog(&["convert", "-q", "--to", "markdown", &home.archive().display().to_string()]);
    let text = String::from_utf8(out.stdout).unwrap();
    // The deleted session is whole; each prompt shows once; recovered sessions say so.
    assert!(text.contains("Add a health check endpoint."));
    assert_eq!(text.lines().filter(|l| *l == "Now tag every note about traits.").count(), 1);
    assert_eq!(text.matches("no transcript of this session was found").count(), 3, "{text}");
    assert!(text.contains("Testing feedback (feedback)"));
    // Usage is counted once, as in the source before the deletion.
    let usage_row = |input: &Path| -> Value {
        let usage = home.agentlog(&["usage", "--json", "--by", "session", &input.display().to_string()]);
        let report: Value = serde_json::from_slice(&usage.stdout).unwrap();
        report["rows"].as_array().unwrap().iter().find(|r| r["session"] == SHOP).expect("the session's usage").clone()
    };
    let source = usage_row(&common::own_corpus().join("claude/user-and-assistant-text.jsonl"));
    assert!(source["responses"].as_u64().unwrap() > 0);
    assert_eq!(usage_row(&home.archive()), source);
}

#[test]
fn a_second_run_while_one_works_stops_without_touching_the_archive() {
    let home = Home::new();
    home.run();
    let before = snapshot(&home.archive());
    let lock = std::fs::File::options().write(true).open(home.archive().join(".agentlog-archive.lock")).unwrap();
    lock.try_lock().unwrap();
    std::fs::copy(
        common::own_corpus().join("claude/priced-responses.jsonl"),
        home.root.join(format!("claude/projects/-home-dev-shop/{PRICED}.jsonl")),
    )
    .unwrap();
    let out = home.agentlog(&["archive", &home.archive().display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("another agentlog archive run"));
    assert!(snapshot(&home.archive()) == before);
    drop(lock);
    home.run();
    assert_eq!(home.listed()[&key("claude-code", PRICED)], "live");
}
