//! `--to atif`: every document of both corpora passes the `atif` validator from PyPI and
//! Harbor's own trajectory models; token totals equal `agentlog usage`; subagents are
//! embedded and referenced from their call; orphans and copied context stay valid.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![common::own_corpus()];
    inputs.extend(common::shared_corpus());
    inputs
}

fn atif(inputs: &[PathBuf]) -> Vec<Value> {
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-q", "--to", "atif"]).args(inputs).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn sample(path: &str) -> Vec<Value> {
    atif(&[common::own_corpus().join(path)])
}

#[test]
fn every_document_of_both_corpora_passes_the_atif_package_and_harbor() {
    let Some(harbor) = std::env::var_os("HARBOR_PATH") else {
        assert!(std::env::var_os("CI").is_none(), "CI must set HARBOR_PATH to the unpacked harbor wheel (see .ci/run)");
        eprintln!("notice: HARBOR_PATH is not set; skipping the check with Harbor's models");
        return;
    };
    if !common::python_has("atif, pydantic") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all.atif.jsonl");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "--to", "atif", "-o"])
        .arg(&file)
        .args(inputs())
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    let documents = std::fs::read_to_string(&file).unwrap().lines().count();
    assert!(documents > 30, "{documents} documents");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/atif_check.py");
    let out = Command::new("python3").arg(script).arg(&file).env("HARBOR_PATH", harbor).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with(&format!("{documents} documents valid under atif")), "{stdout}");
}

/// Token totals of a document and its subagents: prompt, completion, cached, responses.
fn totals(document: &Value, into: &mut [u64; 4]) {
    let m = &document["final_metrics"];
    into[0] += m["total_prompt_tokens"].as_u64().unwrap();
    into[1] += m["total_completion_tokens"].as_u64().unwrap();
    into[2] += m["total_cached_tokens"].as_u64().unwrap();
    into[3] += m["extra"]["llm_call_count"].as_u64().unwrap();
    for sub in document["subagent_trajectories"].as_array().into_iter().flatten() {
        totals(sub, into);
    }
}

#[test]
fn token_totals_equal_agentlog_usage_for_every_session() {
    let inputs = inputs();
    let mut from_atif: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for document in atif(&inputs) {
        let session = document["session_id"].as_str().unwrap().to_owned();
        totals(&document, from_atif.entry(session).or_default());
    }
    let out =
        cargo_bin_cmd!("agentlog").args(["usage", "-q", "--json", "--by", "session"]).args(&inputs).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |row: &Value, key: &str| row[key].as_u64().unwrap();
    let mut from_usage: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for row in report["rows"].as_array().unwrap() {
        let prompt = n(row, "input_tokens") + n(row, "cache_read_tokens") + n(row, "cache_write_tokens");
        let counts = [prompt, n(row, "output_tokens"), n(row, "cache_read_tokens"), n(row, "responses")];
        from_usage.insert(row["session"].as_str().unwrap().to_owned(), counts);
    }
    // The own corpus holds 56 responses by itself.
    let least = common::at_least(1000, 50) as u64;
    assert!(from_usage.values().map(|c| c[3]).sum::<u64>() > least, "the corpora have responses");
    // Sessions without responses have documents with zero totals, and no usage row.
    from_atif.retain(|_, t| *t != [0; 4]);
    assert_eq!(from_atif, from_usage);
}

#[test]
fn subagents_are_embedded_and_named_by_the_result_of_the_call_that_spawned_them() {
    let documents = sample("claude/subagents-2.1");
    let root = documents.iter().find(|d| d["subagent_trajectories"].is_array()).expect("a session with a subagent");
    let session = root["session_id"].as_str().unwrap();
    let subagents = root["subagent_trajectories"].as_array().unwrap();
    assert_eq!(subagents.len(), 1);
    let sub = &subagents[0];
    let trajectory = sub["trajectory_id"].as_str().unwrap();
    assert!(trajectory.starts_with(&format!("{session}/")) && trajectory.len() > session.len() + 1);
    assert!(sub["steps"].as_array().unwrap().iter().any(|s| s["source"] == "agent"));
    let call = sub["extra"]["spawned_by_call_id"].as_str().unwrap();
    // The step that made the call holds the call and the result naming the trajectory.
    let step = root["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool_calls"].as_array().is_some_and(|c| c.iter().any(|c| c["tool_call_id"] == call)))
        .expect("the spawning call");
    let result =
        step["observation"]["results"].as_array().unwrap().iter().find(|r| r["source_call_id"] == call).unwrap();
    assert_eq!(result["subagent_trajectory_ref"][0]["trajectory_id"], trajectory);

    // A Codex subagent thread is a document of its own that names its parent.
    let codex = sample("codex/subagent-thread.jsonl");
    assert!(codex[0]["extra"]["parent_session_id"].is_string(), "{}", codex[0]);
}

#[test]
fn one_agent_step_per_response_with_its_reasoning_calls_results_and_metrics() {
    let documents = sample("claude/user-and-assistant-text.jsonl");
    let steps = documents[0]["steps"].as_array().unwrap();
    assert_eq!(steps[0]["source"], "user");
    assert_eq!(steps[0]["message"], "Add a health check endpoint.");
    // The three lines of the first response (thinking, text, tool_use) are one step.
    let agent = &steps[1];
    assert_eq!(agent["source"], "agent");
    assert_eq!(agent["llm_call_count"], 1);
    assert_eq!(agent["reasoning_content"], "A GET /health route returning 200 is enough.");
    let call = &agent["tool_calls"][0];
    assert_eq!(agent["observation"]["results"][0]["source_call_id"], call["tool_call_id"]);
    let metrics = &agent["metrics"];
    // The sample's first response: 10 fresh input tokens, 2000 written to the cache, none read.
    assert_eq!(metrics["prompt_tokens"], 10 + 2000);
    assert_eq!(metrics["extra"]["cache_creation_input_tokens"], 2000);
    assert_eq!(metrics["cached_tokens"], 0);
    let ids: Vec<u64> = steps.iter().map(|s| s["step_id"].as_u64().unwrap()).collect();
    assert_eq!(ids, (1..=steps.len() as u64).collect::<Vec<_>>());
}

#[test]
fn orphan_outputs_calls_without_output_and_copied_context_keep_documents_valid() {
    let documents = sample("claude/orphan-call-and-result.jsonl");
    let steps = documents[0]["steps"].as_array().unwrap();
    // The output whose call is missing: a result of no call on a system step of its own.
    let orphan = steps
        .iter()
        .find(|s| {
            s["observation"]["results"].as_array().is_some_and(|r| r.iter().any(|r| r["extra"]["orphan"] == true))
        })
        .expect("the orphan output");
    assert_eq!(orphan["source"], "system");
    assert!(orphan["observation"]["results"][0]["source_call_id"].is_null());
    // The call that never got its output is a call without a result.
    let unanswered = steps.iter().flat_map(|s| s["tool_calls"].as_array().into_iter().flatten()).find(|c| {
        let id = &c["tool_call_id"];
        !steps.iter().any(|s| {
            s["observation"]["results"].as_array().is_some_and(|r| r.iter().any(|r| &r["source_call_id"] == id))
        })
    });
    assert!(unanswered.is_some());

    // A resumed session's copy of the earlier records is marked as copied context.
    let resumed = sample("claude/resumed-session");
    let copied: usize =
        resumed.iter().flat_map(|d| d["steps"].as_array().unwrap()).filter(|s| s["is_copied_context"] == true).count();
    assert!(copied >= 1);
}

#[test]
fn a_directory_gets_one_file_per_session() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = format!("{}/", dir.path().join("atif").display());
    let input = common::own_corpus().join("claude/subagents-2.1");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "--to", "atif", "-o", &out_dir])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let files: Vec<PathBuf> = walkdir::WalkDir::new(dir.path().join("atif"))
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .collect();
    assert_eq!(files.len(), sample("claude/subagents-2.1").len());
    for file in files {
        let document: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let session = document["session_id"].as_str().unwrap();
        assert!(file.ends_with(format!("claude-code/claude-code-{session}.json")), "{}", file.display());
    }
}

#[test]
fn a_codex_subagent_thread_is_embedded_in_the_document_of_the_thread_that_spawned_it() {
    let dir = tempfile::tempdir().unwrap();
    let own = common::own_corpus();
    std::fs::copy(own.join("codex/subagent-thread.jsonl"), dir.path().join("child.jsonl")).unwrap();
    // The parent: a thread of its own, with the id the child names.
    let parent = std::fs::read_to_string(own.join("codex/envelope-user-and-assistant-text.jsonl"))
        .unwrap()
        .replace("019c8a4c-0000-7000-8000-00000000c0de", "0a0e0000-0000-7000-8000-0000000000bb");
    std::fs::write(dir.path().join("parent.jsonl"), parent).unwrap();
    for order in [["child.jsonl", "parent.jsonl"], ["parent.jsonl", "child.jsonl"]] {
        let documents = atif(&order.map(|f| dir.path().join(f)));
        assert_eq!(documents.len(), 1, "{order:?}");
        let root = &documents[0];
        assert_eq!(root["session_id"], "0a0e0000-0000-7000-8000-0000000000bb");
        let child = &root["subagent_trajectories"][0];
        assert_eq!(child["trajectory_id"], "0a0e0000-0000-7000-8000-000000000e04");
        assert_eq!(child["extra"]["parent_session_id"], root["session_id"]);
        assert_eq!(root["extra"]["subagent_trajectory_refs"][0]["trajectory_id"], child["trajectory_id"]);
    }
}

// Issue 42: the system prompt and tool definitions Claude Code 2.1.328 records
// (`api-request-shape`): a system step, and ATIF's `agent.tool_definitions`.
#[test]
fn the_request_shape_gives_a_system_step_and_the_agents_tool_definitions() {
    let path = common::own_corpus().join("recorded/claude/2.1.328/tools.jsonl");
    let source = common::first_record(&path, "api-request-shape");
    let document = atif(&[path]).remove(0);
    let tools = document["agent"]["tool_definitions"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Agent", "Bash"]);
    assert!(tools.iter().all(|t| t["type"] == "function"));
    assert_eq!(tools[1]["function"]["parameters"], source["shape"]["tools"][1]["input_schema"]);
    let system: Vec<&Value> =
        document["steps"].as_array().unwrap().iter().filter(|s| s["extra"]["system_prompt"] == true).collect();
    assert_eq!(system.len(), 1, "one shape, one system step");
    let texts: Vec<&str> =
        source["shape"]["system"].as_array().unwrap().iter().map(|b| b["text"].as_str().unwrap()).collect();
    assert_eq!(system[0]["message"], texts.join("\n\n"));
    assert_eq!(system[0]["source"], "system");
}
