//! `agentlog search` on real logs, checked against their raw lines: every session with a line
//! that holds the words (in what is searched) is found, and no other; ids and base64 give no
//! hits; the raw-byte prefilter skips nothing that matches.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![common::own_corpus()];
    inputs.extend(common::shared_corpus());
    inputs
}

/// The sessions `agentlog search QUERY` finds, by id, with `args` added.
fn found(query: &str, args: &[&str]) -> BTreeSet<String> {
    let sessions = sessions(query, args);
    sessions.iter().map(|s| s["session_id"].as_str().unwrap().to_owned()).collect()
}

/// The sessions `agentlog search QUERY` finds, as `--json` gives them, with `args` added.
fn sessions(query: &str, args: &[&str]) -> Vec<Value> {
    let out = cargo_bin_cmd!("agentlog")
        .args(["search", "-q", "--json", "--limit", "100000", "--tz", "UTC"])
        .args(args)
        .arg(query)
        .args(inputs())
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(doc["sessions_matched"].as_u64().unwrap() as usize, sessions.len());
    sessions.clone()
}

/// Every event of the inputs, as `convert` gives them.
fn events() -> Vec<Value> {
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-q"]).args(inputs()).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The session an event counts under, as search groups them: a subagent's parent.
fn root(e: &Value) -> String {
    match (e["parent_session_id"].as_str(), e["is_sidechain"].as_bool()) {
        (Some(parent), Some(true)) => parent.to_owned(),
        _ => e["session_id"].as_str().unwrap().to_owned(),
    }
}

/// Whether search looks at an event: prompts, answers, reasoning, tool calls and outputs.
fn searched(e: &Value) -> bool {
    if e["copied"] == true {
        return false;
    }
    match e["kind"].as_str().unwrap() {
        "message" => matches!(e["payload"]["role"].as_str(), Some("user" | "assistant")),
        "reasoning" | "tool_call" | "tool_output" => true,
        _ => false,
    }
}

#[test]
fn the_sessions_found_are_those_whose_raw_lines_hold_the_words() {
    let events = events();
    // The raw lines of the searched events, by file and line.
    let mut lines: BTreeMap<(String, u64), BTreeSet<String>> = BTreeMap::new();
    for e in events.iter().filter(|e| searched(e)) {
        let at = (e["source"]["file"].as_str().unwrap().to_owned(), e["source"]["line"].as_u64().unwrap());
        lines.entry(at).or_default().insert(root(e));
    }
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut least = 0;
    for (word, at_least) in [("pytest", 5), ("migration", 4), ("refactor", 4), ("typescript", 3)] {
        let pattern = regex::Regex::new(&format!(r"(?i)\b{word}\b")).unwrap();
        let mut raw = BTreeSet::new();
        for ((file, line), sessions) in &lines {
            let text = files.entry(file.clone()).or_insert_with(|| {
                std::fs::read_to_string(file).map(|t| t.lines().map(str::to_owned).collect()).unwrap_or_default()
            });
            let Some(text) = text.get(*line as usize - 1) else { continue };
            // A word in the line's JSON keys or ids is no word of its text: the value must
            // hold it, read as JSON.
            let Ok(value) = serde_json::from_str::<Value>(text) else { continue };
            if strings(&value).iter().any(|s| pattern.is_match(s) && !looks_like_an_id(s)) {
                raw.extend(sessions.iter().cloned());
            }
        }
        let found = found(word, &[]);
        least += at_least;
        assert_eq!(found, raw, "{word}: found by search, and held by the raw lines");
        if common::shared_corpus().is_some() {
            assert!(found.len() >= at_least, "{word}: {} sessions", found.len());
        }
    }
    assert!(least > 0);
}

/// The string values of a JSON document.
fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// A path or an identifier rather than text: no whitespace, and slashes or dashes between
/// the word and the rest.
fn looks_like_an_id(s: &str) -> bool {
    !s.contains(char::is_whitespace) && s.len() > 40
}

#[test]
fn ids_and_base64_give_no_hits() {
    let events = events();
    // The start of a session id, and a piece of an image's base64 data.
    let id = events.iter().map(|e| e["session_id"].as_str().unwrap()).find(|id| id.len() >= 36).unwrap();
    let prefix = &id[..8];
    assert!(found(prefix, &[]).is_empty(), "a session id's start {prefix} was found");
    let data = events
        .iter()
        .flat_map(|e| e["payload"]["parts"].as_array().into_iter().flatten())
        .find_map(|p| p["data"].as_str().filter(|d| d.len() > 200))
        .map(|d| d[100..112].to_owned());
    if let Some(piece) = data.filter(|p| p.chars().all(char::is_alphanumeric)) {
        assert!(found(&piece, &[]).is_empty(), "a piece of base64 {piece} was found");
    }
}

#[test]
fn restrictions_and_a_regular_expression_narrow_the_same_results() {
    // A word of many sessions: of the real corpora, or of the project's own samples alone.
    let word = if common::shared_corpus().is_some() { "pytest" } else { "echo" };
    let all = found(word, &[]);
    let prompts = found(word, &["--in", "prompt"]);
    let tool_calls = found(word, &["--kind", "tool_call"]);
    assert!(!all.is_empty());
    assert!(prompts.is_subset(&all) && tool_calls.is_subset(&all));
    assert!(prompts.len() < all.len() || tool_calls.len() < all.len(), "the restrictions kept everything");
    // The same word as a regular expression finds the same sessions; a regular expression is
    // not prefiltered.
    assert_eq!(found(&format!(r"\b{word}\b"), &["--regex"]), all);
    // Two words: the sessions holding both.
    let both = found(&format!("{word} hello"), &[]);
    assert!(both.is_subset(&all) && both.is_subset(&found("hello", &[])));
}

#[test]
fn skipping_the_lines_without_the_words_changes_no_result() {
    // A search for words leaves unparsed the tool outputs, answers and subagent progress whose
    // raw lines lack them; a regular expression reads every line. Both give the same sessions,
    // each with the same project, title, start, counts and hits.
    let words: &[&str] =
        if common::shared_corpus().is_some() { &["pytest", "migration", "error", "hook"] } else { &["echo", "hello"] };
    for word in words {
        let skimmed = sessions(word, &[]);
        let read = sessions(&format!(r"\b{word}\b"), &["--regex"]);
        assert!(!skimmed.is_empty(), "{word} found nothing");
        for (a, b) in skimmed.iter().zip(&read) {
            assert_eq!(a, b, "{word}: session {}", a["session_id"]);
        }
        assert_eq!(skimmed.len(), read.len(), "{word}");
    }
}
