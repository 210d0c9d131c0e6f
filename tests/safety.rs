//! Hostile inputs and unlucky users: outputs that would destroy or re-read an input, inputs that
//! are not plain files, resources that run out. Each test names the failure it guards against.

mod common;

use std::path::Path;
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;

fn sample(rel: &str) -> std::path::PathBuf {
    common::own_corpus().join(rel)
}

/// Runs `agentlog` in `dir` with `args`.
fn agentlog(dir: &Path, args: &[&str]) -> Output {
    cargo_bin_cmd!("agentlog").current_dir(dir).env("NO_COLOR", "1").args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A directory holding `v.jsonl` (a Codex sample), `link.jsonl` (a symbolic link to it) and
/// `logs/a.jsonl`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(sample("codex/tool-outputs.jsonl")).unwrap();
    std::fs::write(dir.path().join("v.jsonl"), &text).unwrap();
    std::os::unix::fs::symlink("v.jsonl", dir.path().join("link.jsonl")).unwrap();
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    std::fs::write(dir.path().join("logs/a.jsonl"), &text).unwrap();
    dir
}

// Issue 19, item 1: `convert v.jsonl -o v.jsonl` (or --report v.jsonl) replaced the input.
#[test]
fn an_output_that_is_an_input_is_refused_however_either_is_named() {
    let dir = workspace();
    let before = std::fs::read(dir.path().join("v.jsonl")).unwrap();
    let cases: [&[&str]; 7] = [
        &["convert", "v.jsonl", "-o", "v.jsonl"],
        &["convert", "v.jsonl", "--to", "parquet", "-o", "v.jsonl"],
        &["convert", "v.jsonl", "--to", "arrow", "-o", "v.jsonl"],
        &["convert", "v.jsonl", "-o", "out.jsonl", "--report", "v.jsonl"],
        &["convert", "link.jsonl", "-o", "./v.jsonl", "--force"],
        &["convert", "v.jsonl", "-o", "link.jsonl"],
        &["convert", "*.jsonl", "-o", "v.jsonl", "--force"],
    ];
    for args in cases {
        let out = agentlog(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("is also an input"), "{args:?}: {}", stderr(&out));
        assert_eq!(std::fs::read(dir.path().join("v.jsonl")).unwrap(), before, "{args:?} changed the input");
    }
    assert!(!dir.path().join("out.jsonl").exists(), "nothing is written when an output is refused");
}

// Issue 19, item 1: the sessions table beside a Parquet file may not replace an input either.
#[test]
fn a_sessions_file_beside_the_output_may_not_replace_an_input() {
    let dir = workspace();
    std::fs::rename(dir.path().join("v.jsonl"), dir.path().join("out.sessions.parquet")).unwrap();
    let out = agentlog(dir.path(), &["convert", "--from", "codex", "out.sessions.parquet", "-o", "out.parquet"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("out.sessions.parquet is also an input"), "{}", stderr(&out));
}

// Issue 19, item 1: with a quoted glob, an output inside the matched directory was read back by
// every later run (16 → 32 → 48 events).
#[test]
fn an_output_a_later_run_would_read_back_is_refused() {
    let dir = workspace();
    for args in [
        &["convert", "logs/*.jsonl", "-o", "logs/out.jsonl"][..],
        &["convert", "logs", "-o", "logs/out.jsonl"],
        &["convert", "logs", "-o", "logs/sub/"],
        &["convert", "logs/", "--to", "parquet", "-o", "logs/ds", "--partition-by", "agent"],
    ] {
        let out = agentlog(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("the next run would read it back"), "{args:?}: {}", stderr(&out));
    }
    assert!(!dir.path().join("logs/out.jsonl").exists());
    // --force is the user saying they know.
    let out = agentlog(dir.path(), &["convert", "logs/*.jsonl", "-o", "logs/out.jsonl", "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

// Issue 19, item 1: one file per session written into a directory that holds an input could
// replace it.
#[test]
fn an_output_directory_holding_an_input_is_refused() {
    let dir = workspace();
    let out = agentlog(dir.path(), &["convert", "logs/a.jsonl", "-o", "./"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is inside the output directory"), "{}", stderr(&out));
}

// Issue 19, item 12: `--to parquet -o /dev/null` created a regular file `/dev/null.sessions`,
// and `--to parquet -o DIR/` failed with "Not a directory (os error 20)" and exit 4.
#[test]
fn columnar_outputs_to_a_device_or_a_directory_do_what_users_expect() {
    let dir = workspace();
    let out = agentlog(dir.path(), &["convert", "v.jsonl", "--to", "parquet", "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!Path::new("/dev/null.sessions").exists(), "no side file beside a device");
    for format in ["parquet", "arrow"] {
        let out = agentlog(dir.path(), &["convert", "v.jsonl", "--to", format, "-o", "outdir/"]);
        assert_eq!(out.status.code(), Some(2), "{format}: {}", stderr(&out));
        assert!(stderr(&out).contains("name a file"), "{format}: {}", stderr(&out));
    }
}
