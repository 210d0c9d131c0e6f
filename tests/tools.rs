//! `agentlog tools`: counts, failures and durations checked by hand against the samples, and
//! the `tool_kind` and `failed` fields on converted events.

mod common;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::{Value, json};

fn tools_json(args: &[&str]) -> Value {
    let out = cargo_bin_cmd!("agentlog").arg("tools").args(args).args(["--json", "-q"]).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn row<'a>(doc: &'a Value, tool: &str) -> &'a Value {
    doc["rows"].as_array().unwrap().iter().find(|r| r["tool"] == tool).unwrap_or_else(|| panic!("no row {tool}: {doc}"))
}

#[test]
fn codex_calls_failures_durations_and_errors_per_tool() {
    // corpus/codex/tool-outputs.jsonl: three exec_command calls (one never answered), one
    // running when its output was written and ended with code 0 after 1.0021 s, one exiting
    // with code 101 after 4.5 s; an apply_patch with exit code 0 in 0.2 s; an MCP search whose
    // end says Err after 0.87 s.
    let file = common::own_corpus().join("codex/tool-outputs.jsonl");
    let doc = tools_json(&[file.to_str().unwrap()]);
    let exec = row(&doc, "exec_command");
    assert_eq!(
        (&exec["family"], &exec["calls"], &exec["outputs"], &exec["errors"], &exec["failures_known"]),
        (&json!("shell"), &json!(3), &json!(2), &json!(1), &json!(2))
    );
    assert_eq!((&exec["error_rate"], &exec["median_ms"], &exec["p95_ms"]), (&json!(0.5), &json!(1002), &json!(4500)));
    assert_eq!(exec["top_errors"], json!([{"message": "test result: FAILED", "count": 1}]));
    let patch = row(&doc, "apply_patch");
    assert_eq!((&patch["family"], &patch["errors"], &patch["median_ms"]), (&json!("edit"), &json!(0), &json!(200)));
    let mcp = row(&doc, "mcp__docs__search");
    assert_eq!((&mcp["family"], &mcp["errors"], &mcp["median_ms"]), (&json!("mcp"), &json!(1), &json!(870)));
    assert_eq!((&doc["totals"]["calls"], &doc["totals"]["errors"]), (&json!(5), &json!(2)));
}

#[test]
fn claude_outputs_without_is_error_succeeded_and_families_compare_across_agents() {
    let doc = tools_json(&[common::own_corpus().to_str().unwrap(), "--by", "family,agent"]);
    let rows = doc["rows"].as_array().unwrap();
    let get = |family: &str, agent: &str| rows.iter().find(|r| r["family"] == family && r["agent"] == agent);
    // Claude Code leaves out is_error on success: every Claude shell output's failure is known.
    let claude_shell = get("shell", "claude-code").unwrap();
    assert_eq!(claude_shell["failures_known"], claude_shell["outputs"]);
    assert!(get("shell", "codex").is_some() && get("edit", "claude-code").is_some() && get("edit", "codex").is_some());
    // The result whose call is not in the file (orphan-call-and-result.jsonl) is an error of
    // an unknown tool.
    let unknown = rows.iter().find(|r| r["family"].is_null() && r["agent"] == "claude-code").unwrap();
    assert_eq!((&unknown["outputs"], &unknown["errors"]), (&json!(1), &json!(1)));
}

#[test]
fn converted_tool_events_carry_their_family_and_whether_they_failed() {
    let file = common::own_corpus().join("codex/tool-outputs.jsonl");
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-q"]).arg(&file).output().unwrap();
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let outputs: Vec<(&Value, &Value, &Value)> = events
        .iter()
        .filter(|e| e["kind"] == "tool_output")
        .map(|e| (&e["payload"]["name"], &e["payload"]["tool_kind"], &e["payload"]["failed"]))
        .collect();
    assert_eq!(
        outputs,
        [
            (&json!("exec_command"), &json!("shell"), &json!(false)),
            (&json!("exec_command"), &json!("shell"), &json!(true)),
            (&json!("apply_patch"), &json!("edit"), &json!(false)),
            (&json!("mcp__docs__search"), &json!("mcp"), &json!(true)),
        ]
    );
    let calls: Vec<&Value> =
        events.iter().filter(|e| e["kind"] == "tool_call").map(|e| &e["payload"]["tool_kind"]).collect();
    assert_eq!(calls, [&json!("shell"), &json!("shell"), &json!("edit"), &json!("mcp"), &json!("shell")]);
}

#[test]
fn tools_csv_has_the_family_and_the_commonest_error_of_each_tool() {
    let file = common::own_corpus().join("codex/tool-outputs.jsonl");
    let out = cargo_bin_cmd!("agentlog").args(["tools", "-q", "--csv"]).arg(&file).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "tool,family,calls,outputs,errors,failures_known,error_rate,durations_known,median_ms,p95_ms,top_error",
            "apply_patch,edit,1,1,0,1,0,1,200,200,",
            "exec_command,shell,3,2,1,2,0.5,2,1002,4500,test result: FAILED",
            // The message holds a comma: quoted.
            "mcp__docs__search,mcp,1,1,1,1,1,1,870,870,\"u64::div_ceil: Calculates the quotient, rounding up.\"",
        ]
    );
}

#[test]
fn redact_hides_secrets_in_the_error_messages_shown() {
    // The failing exec_command of corpus/codex/tool-outputs.jsonl, its output carrying a key.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rollout-2026-01-01T00-00-00-tools.jsonl");
    let text = common::text(&common::own_corpus().join("codex/tool-outputs.jsonl"));
    assert!(text.contains("test result: FAILED"));
    std::fs::write(&file, text.replace("test result: FAILED", "test result: FAILED api_key=Xk9mP2vQ7rT4wZ8nQ4"))
        .unwrap();
    let message = |args: &[&str]| {
        let doc = tools_json(&[&[file.to_str().unwrap()], args].concat());
        row(&doc, "exec_command")["top_errors"][0]["message"].as_str().unwrap().to_owned()
    };
    assert!(message(&[]).contains("Xk9mP2vQ7rT4wZ8nQ4"));
    let redacted = message(&["--redact"]);
    assert!(!redacted.contains("Xk9mP2vQ7rT4wZ8nQ4") && redacted.contains("[REDACTED:generic-secret]"), "{redacted}");
}
