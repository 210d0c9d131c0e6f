//! `agentlog usage`: costs checked by hand, time zones and filters, the cost on converted
//! events, and agreement with ccusage 20 on the real corpus.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// `corpus/claude/priced-responses.jsonl`: one claude-opus-4-6 response at 23:30 UTC on
/// 5 March 2026 (10 input, 1 000 cache read, 3 000 cache write of which 2 000 for one hour,
/// 500 output) and one of an unpriced model an hour later, on 6 March.
fn priced() -> PathBuf {
    common::own_corpus().join("claude/priced-responses.jsonl")
}

/// Runs `agentlog usage ARGS --json` and gives the document and stderr.
fn usage_json(args: &[&str]) -> (Value, String) {
    let out = cargo_bin_cmd!("agentlog").arg("usage").args(args).arg("--json").env("NO_COLOR", "1").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn rows(doc: &Value) -> Vec<Value> {
    doc["rows"].as_array().unwrap().clone()
}

#[test]
fn rows_by_day_and_model_carry_hand_checked_costs_and_unpriced_models_are_named() {
    let file = priced();
    let (doc, stderr) = usage_json(&[file.to_str().unwrap(), "--by", "day,model", "--tz", "UTC"]);
    let rows = rows(&doc);
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert_eq!((rows[0]["day"].as_str(), rows[0]["model"].as_str()), (Some("2026-03-05"), Some("claude-opus-4-6")));
    // $5/M × 10 + $0.50/M × 1 000 + $6.25/M × 1 000 + $10/M × 2 000 + $25/M × 500 = $0.0393
    let cost = rows[0]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.0393).abs() < 1e-12, "{cost}");
    assert_eq!(rows[0]["cache_write_1h_tokens"], 2000);
    assert_eq!(rows[0]["total_tokens"], 4510);
    assert_eq!((rows[1]["day"].as_str(), rows[1]["model"].as_str()), (Some("2026-03-06"), Some("claude-unreleased-9")));
    assert_eq!((&rows[1]["cost_usd"], &rows[1]["unpriced_responses"]), (&Value::Null, &Value::from(1)));
    assert_eq!(doc["totals"]["responses"], 2);
    assert_eq!(doc["totals"]["unpriced_responses"], 1);
    assert_eq!(doc["unpriced_models"], serde_json::json!(["claude-unreleased-9"]));
    assert!(stderr.contains("no price for model `claude-unreleased-9`"), "{stderr}");
    assert_eq!(doc["prices"]["source"]["package"], "litellm");
}

#[test]
fn days_are_counted_in_the_zone_given() {
    let file = priced();
    let days = |zone: &str| -> Vec<String> {
        let (doc, _) = usage_json(&[file.to_str().unwrap(), "--tz", zone, "-q"]);
        rows(&doc).iter().map(|r| r["day"].as_str().unwrap().to_owned()).collect()
    };
    // 23:30 and 00:30 UTC are 08:30 and 09:30 the next day in Tokyo, 18:30 and 19:30 the day
    // before in New York.
    assert_eq!(days("UTC"), ["2026-03-05", "2026-03-06"]);
    assert_eq!(days("Asia/Tokyo"), ["2026-03-06"]);
    assert_eq!(days("America/New_York"), ["2026-03-05"]);
    assert_eq!(days("+09:00"), ["2026-03-06"]);
}

#[test]
fn filters_keep_responses_by_model_time_project_agent_and_session() {
    let file = priced();
    let f = file.to_str().unwrap();
    let models = |extra: &[&str]| -> Vec<String> {
        let (doc, _) = usage_json(&[&[f, "--by", "model", "--tz", "UTC", "-q"], extra].concat());
        rows(&doc).iter().map(|r| r["model"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(models(&["--model", "opus"]), ["claude-opus-4-6"]);
    assert_eq!(models(&["--model", "claude-*-9"]), ["claude-unreleased-9"]);
    assert_eq!(models(&["--since", "2026-03-06"]), ["claude-unreleased-9"]);
    assert_eq!(models(&["--until", "2026-03-05"]), ["claude-opus-4-6"]);
    assert_eq!(
        models(&["--since", "2026-03-06T00:30:00Z", "--until", "2026-03-06T00:30:00Z"]),
        ["claude-unreleased-9"]
    );
    assert_eq!(models(&["--project", "shop"]).len(), 2);
    assert!(models(&["--project", "/elsewhere/*"]).is_empty());
    assert!(models(&["--agent", "codex"]).is_empty());
    assert_eq!(models(&["--session", "9c000000"]).len(), 2);
    assert!(models(&["--session", "9c000001"]).is_empty());
}

#[test]
fn bad_dates_zones_and_price_files_are_usage_and_input_errors() {
    let file = priced();
    let f = file.to_str().unwrap();
    let run = |args: &[&str]| {
        cargo_bin_cmd!("agentlog").arg("usage").arg(f).args(args).env("NO_COLOR", "1").output().unwrap()
    };
    let out = run(&["--since", "last tuesday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--since: `last tuesday` is not a date"));
    let out = run(&["--tz", "Mars/Olympus"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["--prices", f]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a price file"));
}

#[test]
fn a_price_file_prices_a_model_the_embedded_table_lacks() {
    let file = priced();
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"claude-unreleased-9": {"input_cost_per_token": 1e-5, "output_cost_per_token": 5e-5}}"#,
    )
    .unwrap();
    let (doc, stderr) = usage_json(&[file.to_str().unwrap(), "--by", "model", "--prices", prices.to_str().unwrap()]);
    // 100 × $10/M + 20 × $50/M = $0.002
    let cost = rows(&doc)[1]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.002).abs() < 1e-12, "{cost}");
    assert!(!stderr.contains("no price"), "{stderr}");
    assert_eq!(doc["prices"]["files"], serde_json::json!([prices.to_str().unwrap()]));
}

#[test]
fn prices_info_names_the_source_its_sha256_and_the_models() {
    let out = cargo_bin_cmd!("agentlog").args(["usage", "--prices-info"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let source: Value =
        serde_json::from_str::<Value>(include_str!("../src/cost/prices.json")).unwrap()["source"].clone();
    assert!(text.contains(&format!("litellm {}", source["version"].as_str().unwrap())), "{text}");
    assert!(text.contains(source["sha256"].as_str().unwrap()), "{text}");
    assert!(text.lines().any(|l| l.trim() == "claude-opus-4-6"), "{text}");
}

#[test]
fn converted_usage_events_and_session_totals_carry_the_cost() {
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-q"]).arg(priced()).output().unwrap();
    let costs: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["payload"]["meta_type"] == "usage")
        .map(|e| e["payload"]["usage"]["cost_usd"].clone())
        .collect();
    assert_eq!(costs.len(), 2);
    assert!((costs[0].as_f64().unwrap() - 0.0393).abs() < 1e-12, "{costs:?}");
    assert_eq!(costs[1], Value::Null);
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("out.json");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "--to", "interchange"])
        .arg(priced())
        .arg("-o")
        .arg(&doc)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&doc).unwrap()).unwrap();
    let usage = &doc["sessions"][0]["session"]["usage"];
    assert!((usage["cost_usd"].as_f64().unwrap() - 0.0393).abs() < 1e-12, "{usage}");
    assert_eq!(usage["unpriced_responses"], 1);
}

/// ccusage 20's command, if it can be run: `$CCUSAGE`, else `ccusage` on the path. Under CI a
/// missing ccusage fails the test unless CI could not install it (`AGENTLOG_NO_CCUSAGE`).
fn ccusage() -> Option<PathBuf> {
    let found = std::env::var_os("CCUSAGE").map(PathBuf::from).or_else(|| {
        std::env::var_os("PATH")
            .and_then(|p| std::env::split_paths(&p).map(|d| d.join("ccusage")).find(|c| c.is_file()))
    });
    if found.is_none() {
        let excused = std::env::var_os("AGENTLOG_NO_CCUSAGE").is_some();
        assert!(std::env::var_os("CI").is_none() || excused, "CI must have ccusage (set CCUSAGE)");
        eprintln!("notice: ccusage is not installed; skipping the comparison with it");
    }
    found
}

/// Runs `ccusage AGENT daily --json --offline -z UTC` over `dir` laid out as the agent's home.
fn ccusage_daily(ccusage: &Path, agent: &str, home: &Path) -> Value {
    let (variable, flags): (&str, &[&str]) = match agent {
        "claude" => ("CLAUDE_CONFIG_DIR", &["--breakdown"]),
        _ => ("CODEX_HOME", &[]),
    };
    let out = Command::new(ccusage)
        .args([agent, "daily", "--json", "--offline", "-z", "UTC"])
        .args(flags)
        .env(variable, home)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "ccusage {agent}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A home for `agent` whose session folder is a link to `sessions`.
fn home_linking(agent: &str, sessions: &Path, dir: &Path) -> PathBuf {
    let home = dir.join(agent);
    std::fs::create_dir_all(&home).unwrap();
    let folder = if agent == "claude" { "projects" } else { "sessions" };
    std::os::unix::fs::symlink(sessions, home.join(folder)).unwrap();
    home
}

#[test]
fn tokens_and_costs_per_day_and_model_agree_with_ccusage_on_the_shared_corpus() {
    let (Some(shared), Some(ccusage)) = (common::shared_corpus(), ccusage()) else { return };
    let dir = tempfile::tempdir().unwrap();
    let (ours, _) = usage_json(&[shared.to_str().unwrap(), "--by", "day,model", "--tz", "UTC", "-q"]);
    let ours: std::collections::BTreeMap<(String, String), Value> = rows(&ours)
        .into_iter()
        .filter(|r| !r["day"].is_null())
        .map(|r| ((r["day"].as_str().unwrap().to_owned(), r["model"].as_str().unwrap_or("").to_owned()), r))
        .collect();
    let mut compared = 0;
    let claude = ccusage_daily(&ccusage, "claude", &home_linking("claude", &shared.join("claude"), dir.path()));
    for day in claude["daily"].as_array().unwrap() {
        for m in day["modelBreakdowns"].as_array().unwrap() {
            let key = (day["date"].as_str().unwrap().to_owned(), m["modelName"].as_str().unwrap().to_owned());
            let row = ours.get(&key).unwrap_or_else(|| panic!("agentlog has no row for {key:?}"));
            let theirs = [&m["inputTokens"], &m["cacheReadTokens"], &m["cacheCreationTokens"], &m["outputTokens"]];
            let mine =
                [&row["input_tokens"], &row["cache_read_tokens"], &row["cache_write_tokens"], &row["output_tokens"]];
            assert_eq!(mine, theirs, "{key:?}: input, cache read, cache write, output");
            let (a, b) = (row["cost_usd"].as_f64().unwrap(), m["cost"].as_f64().unwrap());
            assert!((a - b).abs() <= 0.01, "{key:?}: ${a} against ccusage's ${b}");
            compared += 1;
        }
    }
    let codex = ccusage_daily(&ccusage, "codex", &home_linking("codex", &shared.join("codex"), dir.path()));
    for day in codex["daily"].as_array().unwrap() {
        let date = day["date"].as_str().unwrap().to_owned();
        let mut cost = 0.0;
        for (model, m) in day["models"].as_object().unwrap() {
            let row = ours.get(&(date.clone(), model.clone())).unwrap_or_else(|| panic!("no row for {date} {model}"));
            let theirs = [&m["inputTokens"], &m["cacheReadTokens"], &m["outputTokens"], &m["reasoningOutputTokens"]];
            let mine =
                [&row["input_tokens"], &row["cache_read_tokens"], &row["output_tokens"], &row["reasoning_tokens"]];
            assert_eq!(mine, theirs, "{date} {model}: input, cache read, output, reasoning");
            cost += row["cost_usd"].as_f64().unwrap();
            compared += 1;
        }
        let theirs = day["costUSD"].as_f64().unwrap();
        assert!((cost - theirs).abs() <= 0.01, "{date}: ${cost} against ccusage's ${theirs}");
    }
    // Every row of agentlog's with a day is one of ccusage's (the rows without a time, which
    // ccusage leaves out, were filtered above).
    assert_eq!(compared, ours.len(), "rows only agentlog has");
    assert!(compared >= 30, "{compared} rows compared");
}

#[test]
fn a_forked_codex_session_is_counted_once_where_ccusage_counts_the_parent_again() {
    let Some(ccusage) = ccusage() else { return };
    let dir = tempfile::tempdir().unwrap();
    let day = dir.path().join("sessions/2026/03/02");
    std::fs::create_dir_all(&day).unwrap();
    let rollout = day.join("rollout-2026-03-02T10-00-00-0a0e0000-0000-7000-8000-000000000e03.jsonl");
    std::fs::copy(common::own_corpus().join("codex/fork-replays-parent.jsonl"), &rollout).unwrap();
    let theirs = ccusage_daily(&ccusage, "codex", dir.path());
    let (ours, _) = usage_json(&[rollout.to_str().unwrap(), "--tz", "UTC", "-q"]);
    // The fork replays its parent's token counters (6 000 fresh input, 2 000 cached, 600
    // output) before its own response (1 000 fresh input, 4 000 cached, 200 output):
    // ccusage adds the replayed counters as if the fork had used them.
    let theirs = &theirs["daily"][0];
    assert_eq!(
        (&theirs["inputTokens"], &theirs["cacheReadTokens"], &theirs["outputTokens"]),
        (&7000.into(), &6000.into(), &800.into())
    );
    let ours = &rows(&ours)[0];
    assert_eq!(
        (&ours["input_tokens"], &ours["cache_read_tokens"], &ours["output_tokens"]),
        (&1000.into(), &4000.into(), &200.into())
    );
    assert_eq!(ours["responses"], 1);
}

/// Every `usage` event of `dir`'s files, read with `settings`, in input order.
fn usage_events(dir: &Path, settings: &agentlog::read::Settings) -> Vec<agentlog::model::Event> {
    use agentlog::model::{Event, MetaType, Payload};
    use agentlog::pipeline::{Destination, Outcome};
    struct Keep(Vec<Event>);
    impl Destination for Keep {
        fn begin(&mut self, _: &str) -> std::io::Result<()> {
            Ok(())
        }
        fn event(&mut self, event: Event) -> std::io::Result<()> {
            if matches!(&event.payload, Payload::Meta(m) if m.meta_type == MetaType::Usage) {
                self.0.push(event);
            }
            Ok(())
        }
        fn end(&mut self, _: Outcome) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (inputs, errors) = agentlog::pipeline::expand(&[dir.display().to_string()]);
    assert!(errors.is_empty(), "{errors:?}");
    let (groups, _) = agentlog::pipeline::plan(&inputs, None, &|_| None, settings);
    let kept =
        agentlog::stats::fold(&groups, settings, &|_, _| agentlog::pipeline::Look::Read, || Keep(Vec::new())).unwrap();
    kept.into_iter().flat_map(|k| k.0).collect()
}

#[test]
fn counting_only_usage_skips_lines_but_gives_the_same_usage_events() {
    let mut dirs = vec![common::own_corpus()];
    dirs.extend(common::shared_corpus());
    for dir in dirs {
        for threads in [1, 2] {
            let full = agentlog::read::Settings::new(threads, agentlog::read::DEFAULT_MAX_LINE_BYTES).unwrap();
            let only = full.clone().only_usage();
            let (all, fast) = (usage_events(&dir, &full), usage_events(&dir, &only));
            assert!(all.len() > 20, "{}: {} usage events", dir.display(), all.len());
            assert_eq!(fast.len(), all.len(), "{}, {threads} threads", dir.display());
            // The same events, ids and all, but for `seq`: the skipped lines have no events.
            for (a, b) in all.iter().zip(&fast) {
                let b = agentlog::model::Event { seq: a.seq, ..b.clone() };
                assert_eq!(a, &b, "{}, {threads} threads", dir.display());
            }
        }
    }
}

/// `agentlog convert ARGS` as unified events.
fn converted(args: &[&str]) -> Vec<Value> {
    let out = cargo_bin_cmd!("agentlog").arg("convert").args(args).arg("-q").output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn convert_writes_only_the_sessions_and_times_the_filters_keep() {
    let corpus = common::own_corpus();
    let all = corpus.to_str().unwrap();
    let priced = priced();
    // The session of priced-responses.jsonl: 4 lines, 6 events (2 prompts, 2 answers, 2 usage).
    let one = converted(&[all, "--session", "9c000000"]);
    assert_eq!(one.len(), 6);
    assert!(one.iter().all(|e| e["session_id"] == "9c000000-0000-4000-8000-00000000c057"));
    // --model selects whole sessions by the model of their first response: this one, with its
    // prompts (which name no model) and its later answer from claude-unreleased-9.
    let by_model = converted(&[all, "--model", "opus-4-6"]);
    assert_eq!(by_model.iter().filter(|e| e["session_id"] == "9c000000-0000-4000-8000-00000000c057").count(), 6);
    assert!(by_model.iter().all(|e| e["session_id"] != "7e000000-0000-4000-8000-000000000005"), "opus-4-5");
    assert!(converted(&[all, "--model", "unreleased"]).is_empty());
    // --since keeps the events from 00:00 UTC on 6 March: line 3 (a prompt) and line 4 (an
    // answer and its usage).
    let late = converted(&[priced.to_str().unwrap(), "--since", "2026-03-06", "--tz", "UTC"]);
    let lines: Vec<u64> = late.iter().map(|e| e["source"]["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [3, 4, 4]);
    // Ids do not depend on the filter.
    let whole = converted(&[priced.to_str().unwrap()]);
    let ids = |events: &[Value]| -> std::collections::BTreeSet<String> {
        events.iter().filter(|e| e["source"]["line"].as_u64() >= Some(3)).map(|e| e["id"].to_string()).collect()
    };
    assert_eq!(ids(&late), ids(&whole));
    // A Codex subagent thread (subagent-thread.jsonl, 3 events) goes with its own id and with
    // its parent's.
    for id in ["0a0e0000-0000-7000-8000-000000000e04", "0a0e0000-0000-7000-8000-0000000000bb"] {
        let thread = converted(&[all, "--session", id]);
        assert_eq!(thread.len(), 3, "{id}");
        assert!(thread.iter().all(|e| e["source"]["file"].as_str().unwrap().ends_with("subagent-thread.jsonl")));
    }
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", all, "--session", "9c", "--incremental", "-o"])
        .arg(tempfile::tempdir().unwrap().path().join("out/"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn csv_has_a_line_per_row_and_the_table_a_totals_row_and_a_footnote() {
    let file = priced();
    let run = |format: &[&str]| {
        let out = cargo_bin_cmd!("agentlog")
            .args(["usage", "-q", "--by", "model", "--tz", "UTC"])
            .arg(&file)
            .args(format)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let csv = run(&["--csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("model,input_tokens,cache_read_tokens,cache_write_tokens,cache_write_1h_tokens,"));
    assert!(lines[0].ends_with(",cost_usd,unpriced_responses"));
    assert_eq!(lines[1], "claude-opus-4-6,10,1000,3000,2000,500,0,4510,1,0.0393,0");
    assert_eq!(lines[2], "claude-unreleased-9,100,0,0,0,20,0,120,1,,1");
    let table = run(&[]);
    let total = table.lines().find(|l| l.starts_with("Total")).unwrap();
    assert_eq!(
        total.split_whitespace().collect::<Vec<_>>(),
        ["Total", "110", "1,000", "3,000", "520", "0", "4,630", "2", "$0.04*"]
    );
    assert!(table.ends_with("* leaves out 1 response of models without a price\n"), "{table}");
}

// Issue 42: Claude Code (2.1.328 and later) writes its own session totals, `cost-state`; where
// the price table knows the model, agentlog's cost of the same responses must be the same.
#[test]
fn cost_equals_the_cost_claude_code_computed_for_its_sessions() {
    let dir = common::own_corpus().join("recorded/claude/2.1.328");
    for file in ["tools.jsonl", "resume.jsonl", "reasoning.jsonl", "api-error.jsonl"] {
        let path = dir.join(file);
        // The last `cost-state` holds the session's totals (each run writes one, cumulative).
        let claude_code = common::text(&path)
            .lines()
            .rev()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|r| r["type"] == "cost-state")
            .unwrap_or_else(|| panic!("{file} has a cost-state"))["totalCostUSD"]
            .as_f64()
            .unwrap();
        let (doc, _) = usage_json(&["--by", "session", path.to_str().unwrap()]);
        let rows = rows(&doc);
        assert_eq!(rows.len(), 1, "{file}");
        let ours = rows[0]["cost_usd"].as_f64().unwrap();
        assert!((ours - claude_code).abs() < 1e-9, "{file}: agentlog {ours}, Claude Code {claude_code}");
    }
}
