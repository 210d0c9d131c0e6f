//! `agentlog report`: the page's figures equal those of `agentlog usage`, `agentlog tools` and
//! `agentlog sessions` on the same inputs, its links lead to the transcripts written beside it,
//! and a real browser draws it (light, dark, phone width) without running a script.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

/// The inputs: the shared corpus of real logs when it is there, else the project's samples.
fn inputs() -> PathBuf {
    common::shared_corpus().unwrap_or_else(common::own_corpus)
}

fn json_of(args: &[&str]) -> Value {
    let out = cargo_bin_cmd!("agentlog").args(args).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes the report of `input` into `dir`; gives the page and its data block.
fn report(input: &Path, dir: &Path, extra: &[&str]) -> (String, Value) {
    let page = dir.join("report.html");
    let out = cargo_bin_cmd!("agentlog")
        .args(["report", "-q", "--tz", "UTC", "-o"])
        .arg(&page)
        .arg(input)
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "the page goes to its file, nothing to stdout");
    let html = std::fs::read_to_string(&page).unwrap();
    let start = html.find(r#"<script type="application/json" id="agentlog-report">"#).expect("a data block");
    let data = &html[start..];
    let data = &data[data.find('>').unwrap() + 1..data.find("</script>").unwrap()];
    (html.clone(), serde_json::from_str(&data.replace("<\\/", "</")).unwrap())
}

fn close(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(1.0),
        _ => a == b,
    }
}

#[test]
fn the_report_counts_what_usage_tools_and_sessions_count() {
    let input = inputs();
    let dir = tempfile::tempdir().unwrap();
    let (html, data) = report(&input, dir.path(), &["--no-transcripts"]);
    let input = input.display().to_string();

    let usage = json_of(&["usage", "--tz", "UTC", "--by", "day,model,agent", "--json", &input]);
    let rows = usage["rows"].as_array().unwrap();
    let ours = data["usage"]["rows"].as_array().unwrap();
    assert_eq!(ours.len(), rows.len());
    assert!(rows.len() > 3, "the inputs have usage on several days");
    for (mine, theirs) in ours.iter().zip(rows) {
        for key in ["day", "model", "agent"] {
            assert_eq!(mine[key], theirs[key]);
        }
        for (name, value) in mine["totals"].as_object().unwrap() {
            assert!(close(value, &theirs[name]), "{name}: {value} against {} in {theirs}", theirs[name]);
        }
    }
    for (name, value) in data["usage"]["totals"].as_object().unwrap() {
        assert!(close(value, &usage["totals"][name]), "total {name}: {value} against {}", usage["totals"][name]);
    }

    let tools = json_of(&["tools", "--by", "family", "--json", &input]);
    let rows = tools["rows"].as_array().unwrap();
    let ours = data["tools"]["rows"].as_array().unwrap();
    assert_eq!(ours.len(), rows.len());
    for (mine, theirs) in ours.iter().zip(rows) {
        assert_eq!(mine["family"], theirs["family"]);
        for (name, value) in mine["figures"].as_object().unwrap() {
            assert!(close(value, &theirs[name]), "{name}: {value} against {}", theirs[name]);
        }
    }
    assert!(close(&data["tools"]["totals"]["calls"], &tools["totals"]["calls"]));

    let sessions = json_of(&["sessions", "--json", &input]);
    assert_eq!(data["sessions"], sessions["sessions_total"]);

    // What the page shows is the same: the cards hold the exact counts.
    let card =
        |value: &dyn std::fmt::Display, name: &str| format!(r#"<div class="value">{value}</div><div>{name}</div>"#);
    for (value, name) in [
        (&data["sessions"], "sessions"),
        (&data["prompts"], "prompts"),
        (&usage["totals"]["responses"], "model responses"),
        (&tools["totals"]["calls"], "tool calls"),
    ] {
        assert!(html.contains(&card(value, name)), "the page shows {value} {name}");
    }
    let cost = usage["totals"]["cost_usd"].as_f64().unwrap();
    assert!(html.contains(&card(&format!("${cost:.2}"), "cost")), "the page shows the cost ${cost:.2}");
}

/// The page on the inputs, with the transcripts of the sessions it lists beside it, loaded in
/// headless Chromium: nothing runs, nothing is fetched, the charts are drawn, every link opens
/// a transcript, the phone width fits. Screenshots go to `target/report-screenshots/`. Needs
/// Debian's chromium and chromium-driver and Python's selenium (CI installs them).
#[test]
fn the_report_reads_in_a_real_browser_and_links_to_its_transcripts() {
    let dir = tempfile::tempdir().unwrap();
    let (html, _) = report(&inputs(), dir.path(), &["--top", "5"]);
    let links: Vec<&str> = html.split("<a href=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
    assert!(links.len() >= 5, "the longest and costliest sessions link to their transcripts");
    for link in &links {
        assert!(link.starts_with("report.sessions/"), "{link}");
        assert!(dir.path().join(link).is_file(), "{link} was written beside the page");
    }
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromedriver"].iter().all(|p| Path::new(p).exists());
    if !chromium || !common::python_has("selenium") {
        let excused = std::env::var_os("AGENTLOG_NO_BROWSER").is_some();
        assert!(std::env::var_os("CI").is_none() || excused, "CI must install chromium, chromium-driver and selenium");
        eprintln!("notice: chromium, chromedriver or selenium is missing; skipping the browser check");
        return;
    }
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-screenshots");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/report_browser.py");
    let out = Command::new("python3").arg(script).arg(&shots).arg(dir.path().join("report.html")).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("report browser checks passed"), "{stdout}");
}

#[test]
fn a_report_is_not_written_over_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("session.jsonl");
    std::fs::copy(common::own_corpus().join("claude/user-and-assistant-text.jsonl"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["report", "-q", "-o"]).arg(&input).arg(&input).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&input).unwrap(), before);
}
