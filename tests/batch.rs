//! Batch runs: discovery in a fake home, output independent of the thread count, sharding,
//! the per-file report, progress only on a terminal, and refusing to write into an input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;

fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![common::own_corpus()];
    inputs.extend(common::shared_corpus());
    inputs
}

#[test]
fn discovery_finds_every_session_and_subagent_file_and_nothing_else() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let own = common::own_corpus();
    // Two Claude Code config roots (a comma-separated CLAUDE_CONFIG_DIR), in the real layout.
    common::copy_tree(&own.join("claude/subagents-2.1"), &h.join("work/claude-a/projects/-home-dev-retry"));
    common::copy_tree(&own.join("claude/subagents-2.0"), &h.join("work/claude-b/projects/-home-dev-sql"));
    std::fs::write(h.join("work/claude-b/projects/-home-dev-sql/sessions-index.json"), "{}").unwrap();
    std::fs::write(
        h.join("work/claude-b/history.jsonl"),
        "{\"display\":\"hi\",\"timestamp\":1,\"project\":\"/home/dev/sql\"}\n",
    )
    .unwrap();
    // Side files beside them; other files of a config root are not read.
    std::fs::create_dir_all(h.join("work/claude-b/projects/-home-dev-sql/memory")).unwrap();
    std::fs::write(h.join("work/claude-b/projects/-home-dev-sql/memory/MEMORY.md"), "# Memory\n").unwrap();
    std::fs::create_dir_all(h.join("work/claude-b/plans")).unwrap();
    std::fs::write(h.join("work/claude-b/plans/quiet-fox.md"), "# Plan\n").unwrap();
    std::fs::create_dir_all(h.join("work/claude-a/todos")).unwrap();
    std::fs::write(h.join("work/claude-a/todos/8c-agent-8c.json"), "[]").unwrap();
    // Codex: dated sessions, an archived copy of an active rollout, an archived-only rollout.
    let rollout = "rollout-2026-03-05T12-00-00-0a0e0000-0000-7000-8000-000000000e06.jsonl";
    let codex = h.join(".codex");
    std::fs::create_dir_all(codex.join("sessions/2026/03/05")).unwrap();
    std::fs::create_dir_all(codex.join("archived_sessions")).unwrap();
    std::fs::copy(own.join("codex/tool-outputs.jsonl"), codex.join("sessions/2026/03/05").join(rollout)).unwrap();
    std::fs::copy(own.join("codex/tool-outputs.jsonl"), codex.join("archived_sessions").join(rollout)).unwrap();
    let archived = "rollout-2026-03-04T08-00-00-0a0e0000-0000-7000-8000-000000000e05.jsonl";
    std::fs::copy(own.join("codex/injected-context-and-twins.jsonl"), codex.join("archived_sessions").join(archived))
        .unwrap();
    std::fs::write(codex.join("history.jsonl"), "{\"session_id\":\"x\",\"ts\":1,\"text\":\"hi\"}\n").unwrap();
    std::fs::write(codex.join("session_index.jsonl"), "{\"id\":\"x\",\"thread_name\":\"t\"}\n").unwrap();
    std::fs::write(codex.join("config.toml"), "model = \"o3\"\n").unwrap();

    let out = cargo_bin_cmd!("agentlog")
        .arg("ls")
        .env("HOME", h)
        .env(
            "CLAUDE_CONFIG_DIR",
            format!("{},{}", h.join("work/claude-a").display(), h.join("work/claude-b").display()),
        )
        .env_remove("CODEX_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols[0].to_owned(), cols[4].strip_prefix(&format!("{}/", h.display())).unwrap().to_owned())
        })
        .collect();
    let expected = [
        ("claude-code", "work/claude-a/projects/-home-dev-retry/8c000000-0000-4000-8000-00000000000a.jsonl"),
        (
            "claude-code",
            "work/claude-a/projects/-home-dev-retry/8c000000-0000-4000-8000-00000000000a/subagents/agent-a0123456789abcdef.jsonl",
        ),
        ("claude-code", "work/claude-b/projects/-home-dev-sql/8b000000-0000-4000-8000-000000000009.jsonl"),
        ("claude-code", "work/claude-b/projects/-home-dev-sql/agent-a1b2c3d.jsonl"),
        ("codex", &format!(".codex/sessions/2026/03/05/{rollout}")),
        ("codex", &format!(".codex/archived_sessions/{archived}")),
        ("claude-code", "work/claude-b/history.jsonl"),
        ("claude-code", "work/claude-b/projects/-home-dev-sql/memory/MEMORY.md"),
        ("claude-code", "work/claude-a/todos/8c-agent-8c.json"),
        ("codex", ".codex/history.jsonl"),
        ("codex", ".codex/session_index.jsonl"),
    ];
    let mut listed_sorted = listed.clone();
    listed_sorted.sort();
    let mut expected: Vec<(String, String)> =
        expected.iter().map(|(a, p)| ((*a).to_owned(), (*p).to_owned())).collect();
    expected.sort();
    assert_eq!(listed_sorted, expected);

    // convert with no INPUT reads the same files.
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q"])
        .env("HOME", h)
        .env(
            "CLAUDE_CONFIG_DIR",
            format!("{},{}", h.join("work/claude-a").display(), h.join("work/claude-b").display()),
        )
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let files: std::collections::BTreeSet<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["source"]["file"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(files.len(), 11);
}

fn convert(args: &[&str]) -> Vec<u8> {
    let out = cargo_bin_cmd!("agentlog").arg("convert").arg("-q").args(inputs()).args(args).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn one_thread_and_four_threads_write_the_same_bytes() {
    let one = convert(&["--jobs", "1"]);
    let four = convert(&["--jobs", "4"]);
    assert!(one.len() > 1000);
    assert!(one == four, "unified output differs between --jobs 1 and --jobs 4");
    let dir = tempfile::tempdir().unwrap();
    let parquet = |jobs: &str| {
        let path = dir.path().join(format!("{jobs}.parquet"));
        convert(&["--jobs", jobs, "-o", path.to_str().unwrap()]);
        let sessions = dir.path().join(format!("{jobs}.sessions.parquet"));
        (std::fs::read(&path).unwrap(), std::fs::read(sessions).unwrap())
    };
    let one = parquet("1");
    assert!(one == parquet("2"), "Parquet differs between --jobs 1 and --jobs 2");
    assert!(one == parquet("4"), "Parquet differs between --jobs 1 and --jobs 4");
    // A partitioned dataset: the same files with the same bytes.
    let dataset = |jobs: &str| {
        let root = dir.path().join(format!("dataset-{jobs}"));
        convert(&[
            "--jobs",
            jobs,
            "--to",
            "parquet",
            "--partition-by",
            "agent,date",
            "-o",
            &format!("{}/", root.display()),
        ]);
        let mut files = std::collections::BTreeMap::new();
        let mut dirs = vec![root.clone()];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    files.insert(path.strip_prefix(&root).unwrap().to_owned(), std::fs::read(&path).unwrap());
                }
            }
        }
        files
    };
    let one = dataset("1");
    assert!(one.len() > 10, "{} files", one.len());
    assert!(one == dataset("4"), "the partitioned dataset differs between --jobs 1 and --jobs 4");
}

#[test]
fn the_shards_together_are_the_whole_output() {
    let whole = String::from_utf8(convert(&[])).unwrap();
    let mut union: Vec<String> = Vec::new();
    let mut per_shard = Vec::new();
    for k in 1..=3 {
        let shard = String::from_utf8(convert(&["--shard", &format!("{k}/3")])).unwrap();
        per_shard.push(shard.lines().count());
        union.extend(shard.lines().map(str::to_owned));
    }
    assert!(per_shard.iter().filter(|n| **n > 0).count() >= 2, "sessions spread over shards: {per_shard:?}");
    let mut whole: Vec<String> = whole.lines().map(str::to_owned).collect();
    whole.sort();
    union.sort();
    assert_eq!(union.len(), whole.len(), "every event in exactly one shard");
    assert!(union == whole);
}

#[test]
fn the_report_lists_every_input_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "-o"])
        .arg(dir.path().join("out.jsonl"))
        .arg("--report")
        .arg(&report)
        .arg(common::own_corpus().join("claude"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), common::session_files(&common::own_corpus().join("claude")).len());
    let bad =
        files.iter().find(|f| f["file"].as_str().unwrap().ends_with("garbage-and-truncated-last-line.jsonl")).unwrap();
    assert_eq!(bad["status"], "warnings");
    assert_eq!(
        bad["diagnostics"].as_array().unwrap().iter().map(|d| d["line"].as_u64().unwrap()).collect::<Vec<_>>(),
        [3, 5]
    );
    assert!(files.iter().filter(|f| f["status"] == "ok").count() > 10);
}

#[test]
fn progress_is_drawn_on_a_terminal_and_not_into_a_pipe() {
    let bin = assert_cmd::cargo::cargo_bin!("agentlog");
    let corpus = common::own_corpus();
    let args = format!("{} convert {} -o /dev/null", bin.display(), corpus.display());
    // Piped: stderr holds the summary and the diagnostics, never a progress bar.
    let piped = Command::new(bin).args(["convert"]).arg(&corpus).args(["-o", "/dev/null"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(stderr.contains("agentlog:") && !stderr.contains("ETA"), "{stderr}");
    // Under a pseudo-terminal (util-linux `script`): the bar is drawn.
    let Ok(out) = Command::new("script").args(["-qefc", &args, "/dev/null"]).env("TERM", "xterm").output() else {
        eprintln!("notice: `script` is not available; skipping the terminal half");
        return;
    };
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert!(terminal.contains("ETA"), "no progress bar on a terminal: {terminal}");
    // --quiet keeps it off even there.
    let quiet = Command::new("script")
        .args(["-qefc", &format!("{args} -q"), "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&quiet.stdout).contains("ETA"));
}

#[test]
fn output_inside_an_input_directory_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&common::own_corpus().join("codex/e1-bare-jsonl"), dir.path());
    let out = dir.path().join("out.jsonl");
    let refused = cargo_bin_cmd!("agentlog").arg("convert").arg(dir.path()).arg("-o").arg(&out).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is inside the input"));
    assert!(!out.exists());
    let forced =
        cargo_bin_cmd!("agentlog").arg("convert").arg(dir.path()).arg("-o").arg(&out).arg("--force").output().unwrap();
    assert_eq!(forced.status.code(), Some(0), "{}", String::from_utf8_lossy(&forced.stderr));
    assert!(out.is_file());
}

#[test]
fn incremental_runs_skip_unchanged_inputs_and_redo_a_touched_one() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("codex/sessions/2026/03/01");
    std::fs::create_dir_all(&sessions).unwrap();
    let template = std::fs::read_to_string(common::own_corpus().join("codex/token-accounting.jsonl")).unwrap();
    for i in 0..1000 {
        let id = format!("0a0e0000-0000-7000-8000-{i:012}");
        let text = template.replace("0a0e0000-0000-7000-8000-000000000e02", &id);
        std::fs::write(sessions.join(format!("rollout-2026-03-01T09-00-00-{id}.jsonl")), text).unwrap();
    }
    let out = dir.path().join("out");
    let run = || {
        let report = dir.path().join("report.json");
        let o = cargo_bin_cmd!("agentlog")
            .arg("convert")
            .arg(dir.path().join("codex"))
            .args(["--incremental", "-o"])
            .arg(format!("{}/", out.display()))
            .arg("--report")
            .arg(&report)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        let files = report["files"].as_array().unwrap().iter().map(|f| f["file"].as_str().unwrap().to_owned());
        (files.collect::<Vec<_>>(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (first, summary) = run();
    assert_eq!(first.len(), 1000);
    assert!(summary.contains("1000 files (0 unchanged, skipped)") && summary.contains("; output in "), "{summary}");
    let outputs = out.join("codex");
    assert_eq!(std::fs::read_dir(&outputs).unwrap().count(), 1000);
    let (second, summary) = run();
    assert!(second.is_empty(), "a second run over unchanged inputs reads nothing");
    assert!(summary.contains("agentlog: 0 files (1000 unchanged, skipped), 0 sessions"), "{summary}");
    // Touch one input: exactly its session is redone, the other outputs stay as they were.
    let touched = sessions.join("rollout-2026-03-01T09-00-00-0a0e0000-0000-7000-8000-000000000007.jsonl");
    let before = std::fs::metadata(outputs.join("codex-0a0e0000-0000-7000-8000-000000000008.jsonl"))
        .unwrap()
        .modified()
        .unwrap();
    let file = std::fs::OpenOptions::new().append(true).open(&touched).unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
    drop(file);
    let (redone, _) = run();
    assert_eq!(redone, [touched.display().to_string()]);
    let after = std::fs::metadata(outputs.join("codex-0a0e0000-0000-7000-8000-000000000008.jsonl"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "an untouched session's output is left alone");
    let text = std::fs::read_to_string(outputs.join("codex-0a0e0000-0000-7000-8000-000000000007.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 11, "the redone session's output is whole");
}

/// A file of about 2.5 MB built from `corpus/` samples: several parsing chunks, with bad lines
/// spread through it.
fn large_file(dir: &Path, agent: &str, samples: &[&str]) -> PathBuf {
    let mut text = String::new();
    let mut round = 0;
    while text.len() < 2_500_000 {
        for sample in samples {
            text.push_str(&std::fs::read_to_string(common::own_corpus().join(agent).join(sample)).unwrap());
        }
        round += 1;
        if round % 50 == 0 {
            text.push_str("this line is not JSON\n");
        }
    }
    text.push_str("{\"type\":\"user\",\"message\":{\"ro");
    let path = dir.join(format!("{agent}-large.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_file_of_many_chunks_reads_the_same_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        large_file(dir.path(), "claude", &["streamed-response-usage.jsonl", "inline-sidechain.jsonl", "titles.jsonl"]),
        large_file(dir.path(), "codex", &["injected-context-and-twins.jsonl", "compacted-and-rolled-back.jsonl"]),
    ];
    for file in &files {
        let run = |jobs: &str| cargo_bin_cmd!("agentlog").args(["convert", "--jobs", jobs]).arg(file).output().unwrap();
        let (one, two) = (run("1"), run("2"));
        assert_eq!(one.status.code(), Some(1), "bad lines are warnings: {}", String::from_utf8_lossy(&one.stderr));
        assert!(one.stdout.len() > 2_500_000);
        assert!(one.stdout == two.stdout, "{}: events differ between --jobs 1 and --jobs 2", file.display());
        let warnings = |out: &std::process::Output| {
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .filter(|l| l.contains("line "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        // The same lines are reported, in the same order: 10 bad lines and the cut-off last one.
        assert_eq!(warnings(&one), warnings(&two));
        assert!(warnings(&one).len() >= 11, "{:?}", warnings(&one));
    }
}
