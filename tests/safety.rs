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

/// Runs `agentlog convert` over the samples of values that are JSON syntax but not valid data.
fn convert_invalid_data(dir: &Path, args: &[&str]) -> Output {
    let codex = sample("codex/invalid-json-data.jsonl");
    let claude = sample("claude/invalid-json-data.jsonl");
    let mut all = vec!["convert", codex.to_str().unwrap(), claude.to_str().unwrap()];
    all.extend_from_slice(args);
    agentlog(dir, &all)
}

// Issue 19, items 5 and 6: values nested 127 deep, lone surrogates, `1e400` and bare CRs in
// values kept raw panicked (exit 70, nothing written) or were copied into output that
// `agentlog validate`, Python's json, DuckDB and Polars reject.
#[test]
fn values_that_are_not_valid_json_data_are_repaired_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let out = convert_invalid_data(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "warnings, not a failure: {}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 11, "every record kept");
    for line in text.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(value.is_object());
    }
    assert!(text.contains(r#""\ufffd lone high half""#) && text.contains(r#""limit":"1e400""#), "{text}");
    assert!(text.contains(r#""pair":"\ud83d\ude00""#), "a valid pair is kept as it was");
    let errors = stderr(&out);
    assert_eq!(errors.matches("agentlog::input::repaired_value").count(), 10, "{errors}");
    // The column of a repair is where the value is in the line.
    let claude = std::fs::read_to_string(sample("claude/invalid-json-data.jsonl")).unwrap();
    let column = claude.lines().nth(2).unwrap().find(r"\ud800").unwrap() + 1;
    assert!(errors.contains(&format!("invalid-json-data.jsonl:3:{column}]")), "{errors}");
    std::fs::write(dir.path().join("out.jsonl"), &text).unwrap();
    let check = agentlog(dir.path(), &["validate", "out.jsonl"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}

// Issue 19, item 6: `--to interchange` failed the whole document with exit 4.
#[test]
fn every_output_format_takes_repaired_values() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["-o", "out.json"][..],
        &["-o", "sessions/", "--to", "interchange"],
        &["-o", "out.parquet"],
        &["-o", "out.arrow"],
        &["-o", "ds", "--to", "parquet", "--partition-by", "agent,date"],
    ] {
        let out = convert_invalid_data(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
    }
    let check = agentlog(dir.path(), &["validate", "out.json"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(document["sessions"].as_array().unwrap().len(), 2);
}

/// The 1-based column of the first `needle` in line `n` (1-based) of a sample, found
/// independently of agentlog.
fn column_of(rel: &str, n: usize, needle: &str) -> usize {
    let text = std::fs::read_to_string(sample(rel)).unwrap();
    text.lines().nth(n - 1).unwrap().find(needle).unwrap() + 1
}

// Issue 19, item 7: a byte-order mark dropped the first record; `1e400`, `-1`, `"5"` or `{}` as
// a token count dropped the assistant's text with it; a lone surrogate in typed text dropped the
// record with a column at the start of `message`.
#[test]
fn one_bad_field_is_reported_and_the_rest_of_the_record_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample("claude/invalid-fields.jsonl");
    let out = agentlog(dir.path(), &["convert", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    for said in ["Summarise the log.", "Answer 0.", "Answer 1.", "Answer 2.", "Answer 3.", "a lone \u{fffd} half"] {
        assert!(text.contains(&format!("\"text\":\"{said}\"")), "{said} is lost");
    }
    let errors = stderr(&out);
    let rel = "claude/invalid-fields.jsonl";
    for (line, found) in [(2, "1e400"), (3, "-1"), (4, "\"5\""), (5, "{}")] {
        let column = column_of(rel, line, &format!("\"input_tokens\":{found}")) + "\"input_tokens\":".len();
        let message = format!(
            "line {line}: expected a token count (a whole number from 0 to 9223372036854775807) at message.usage.input_tokens, but found `{found}`"
        );
        assert!(errors.contains(&message), "{message}\n{errors}");
        assert!(
            errors.contains(&format!("invalid-fields.jsonl:{line}:{column}]")),
            "line {line} column {column}\n{errors}"
        );
    }
    let column = column_of(rel, 6, r"\ud800");
    assert!(errors.contains(&format!("invalid-fields.jsonl:6:{column}]")), "{errors}");
    assert!(errors.contains("line 6: invalid JSON data at message.content"), "{errors}");
    // Every line is accounted: nine records, nothing skipped.
    assert!(!errors.contains("was skipped"), "{errors}");
}

// Issue 19, item 7: a byte-order mark before a Codex `session_meta` hid the session header and
// the format; a token count of the wrong kind dropped the whole `token_count` row silently.
#[test]
fn a_byte_order_mark_and_bad_token_counts_lose_no_usage() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample("codex/invalid-token-counts.jsonl");
    let out = agentlog(dir.path(), &["convert", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out.stdout.clone()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.iter().all(|l| l["session_id"] == "0a0e0000-0000-7000-8000-000000000e0d"), "the header was read");
    assert_eq!(lines[0]["payload"]["meta_type"], "session_start");
    let totals: Vec<u64> = lines
        .iter()
        .filter(|l| l["payload"]["meta_type"] == "usage")
        .map(|l| l["payload"]["usage"]["total_tokens"].as_u64().unwrap())
        .collect();
    // Rows 6 and 7 hold a bad counter and count nothing; row 8's delta covers them: the totals
    // add up to the last cumulative total, 440.
    assert_eq!(totals, [110, 330]);
    let errors = stderr(&out);
    assert_eq!(errors.matches("agentlog::input::invalid_field").count(), 2, "{errors}");
    assert!(errors.contains("at payload.info.total_token_usage.input_tokens, but found `\"250\"`"), "{errors}");
    assert!(errors.contains("at payload.info.total_token_usage.cached_input_tokens, but found `1e400`"), "{errors}");
}

// Issue 19, item 8: counts near 2^63/2^64 wrapped in `total_tokens` and in session totals.
#[test]
fn token_counts_never_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample("claude/invalid-fields.jsonl");
    let out = agentlog(dir.path(), &["convert", file.to_str().unwrap(), "--to", "interchange"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let document: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = &document["sessions"][0];
    let usage = &session["session"]["usage"];
    let max = i64::MAX as u64;
    assert_eq!(usage["input_tokens"].as_u64(), Some(max), "held at the largest count: {usage}");
    assert_eq!(usage["total_tokens"].as_u64(), Some(7 * 4 + 3), "the huge response has no total: {usage}");
    let diagnostics = session["session"]["diagnostics"].to_string();
    assert!(diagnostics.contains("agentlog::usage::total_overflow"), "{diagnostics}");
    for event in session["events"].as_array().unwrap() {
        if let Some(total) = event["payload"]["usage"]["total_tokens"].as_u64() {
            assert!(total <= max, "{event}");
        }
    }
    let errors = stderr(&out);
    assert!(
        errors.contains("line 7: expected token counts that add up to at most 9223372036854775807 at message.usage"),
        "{errors}"
    );
}

// Issue 19, item 9: `convert /dev/stdin` and `convert <(cat f)` gave 0 events (the input was
// opened once to tell its format and again to read it); a named pipe hung.
#[test]
fn inputs_that_can_be_read_once_are_read_once() {
    let file = sample("codex/tool-outputs.jsonl");
    let text = std::fs::read(&file).unwrap();
    let expected = agentlog(Path::new("."), &["convert", file.to_str().unwrap()]).stdout;
    assert!(!expected.is_empty());
    let out = cargo_bin_cmd!("agentlog").args(["convert", "/dev/stdin"]).write_stdin(text.clone()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        String::from_utf8_lossy(&expected).lines().count()
    );
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("rollout.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", fifo.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        String::from_utf8_lossy(&expected).lines().count()
    );
}

// Issue 19, item 14: `--jobs 100000` started a pool of 100000 threads.
#[test]
fn more_jobs_than_cores_are_not_started() {
    let file = sample("codex/tool-outputs.jsonl");
    let one = agentlog(Path::new("."), &["convert", "-j", "1", file.to_str().unwrap()]);
    let many = cargo_bin_cmd!("agentlog")
        .args(["convert", "--jobs", "100000", file.to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(many.status.code(), Some(0), "{}", stderr(&many));
    assert_eq!(many.stdout, one.stdout);
}

// Issue 19, item 15: `ls /no/such/path` exited 0, and `convert EMPTYDIR` blamed the default
// places.
#[test]
fn a_missing_input_fails_ls_and_an_empty_directory_is_named() {
    let out = agentlog(Path::new("."), &["ls", "/no/such/path"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let dir = tempfile::tempdir().unwrap();
    let out = agentlog(dir.path(), &["convert", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("no session files found in ."), "{}", stderr(&out));
    assert!(!stderr(&out).contains("default places"), "{}", stderr(&out));
}

// Issue 19, item 16: `--from claude` on Codex rollouts turned every event into `meta/unknown`
// with no warning, and `--incremental` kept the result after the reader changed.
#[test]
fn a_forced_reader_that_does_not_fit_is_reported_and_redone_when_it_changes() {
    let dir = workspace();
    let out = agentlog(dir.path(), &["convert", "--from", "claude", "v.jsonl"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let errors = stderr(&out);
    assert_eq!(errors.matches("agentlog::input::reader_mismatch").count(), 1, "once per file: {errors}");
    assert!(errors.contains("expected claude records (--from claude), but the file looks like codex"), "{errors}");
    let run = |from: &str| agentlog(dir.path(), &["convert", "--from", from, "--incremental", "v.jsonl", "-o", "out/"]);
    assert_eq!(run("claude").status.code(), Some(1));
    let written = |dir: &Path| -> String {
        walkdir::WalkDir::new(dir.join("out"))
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .collect()
    };
    assert!(written(dir.path()).contains("\"claude-code\""));
    let out = run("codex");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = written(dir.path());
    assert!(after.contains("\"agent\":\"codex\""), "redone with the codex reader: {after}");
}

// Issue 19, item 4: a partitioned dataset that failed part-way (a full disk) left complete part
// files under their final names, so a reader of `DIR/events/**` got part of the run.
#[test]
fn no_part_of_a_failed_output_has_a_final_name() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join("ds")).unwrap();
    // The sessions table cannot be written: `ds/sessions` is a file.
    std::fs::write(dir.path().join("ds/sessions"), "").unwrap();
    let out =
        agentlog(dir.path(), &["convert", "v.jsonl", "--to", "parquet", "-o", "ds", "--partition-by", "agent,date"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let left: Vec<_> = walkdir::WalkDir::new(dir.path().join("ds"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path() != dir.path().join("ds/sessions"))
        .map(|e| e.path().display().to_string())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // The same for one Parquet file and the sessions table beside it.
    std::fs::create_dir(dir.path().join("one.sessions.parquet")).unwrap();
    let out = agentlog(dir.path(), &["convert", "v.jsonl", "-o", "one.parquet"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(!dir.path().join("one.parquet").exists());
}

// Issue 19, item 11: `--to interchange -o DIR/` held one open file per session and failed at
// about 1,030 sessions under `ulimit -n 1024`.
#[test]
fn one_document_per_session_holds_one_file_open_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    let template = std::fs::read_to_string(sample("codex/envelope-user-and-assistant-text.jsonl")).unwrap();
    let id = "019c8a4c-0000-7000-8000-00000000c0de";
    assert!(template.contains(id));
    for n in 0..150 {
        let session = format!("019c8a4c-0000-7000-8000-{n:012}");
        std::fs::write(inputs.join(format!("rollout-{n:03}.jsonl")), template.replace(id, &session)).unwrap();
    }
    let bin = assert_cmd::cargo::cargo_bin!("agentlog");
    let script = format!("ulimit -n 64 && exec {} convert -q in --to interchange -o out/", bin.display());
    let out = std::process::Command::new("sh").arg("-c").arg(script).current_dir(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(dir.path().join("out/codex")).unwrap().count(), 150);
}

// Issue 19, item 12: `--to arrow` to a closed pipe exited 4 while the other formats exited 0.
#[test]
fn every_format_ends_quietly_on_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let text = std::fs::read_to_string(sample("claude/user-and-assistant-text.jsonl")).unwrap();
    std::fs::write(&big, text.repeat(3000)).unwrap();
    for format in ["unified", "arrow", "parquet", "interchange"] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("agentlog"))
            .args(["convert", "--to", format])
            .arg(&big)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(&out));
        assert!(!stderr(&out).contains("Broken pipe"), "{format}: {}", stderr(&out));
    }
}

// Issue 19, item 10: one line of 1 GiB (from a 33 KB `.zst`) was held whole, and more: memory
// past 4 GB. A line longer than `--max-line-bytes` is reported and skipped as it is read.
#[test]
fn a_line_past_the_limit_is_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(sample("codex/envelope-user-and-assistant-text.jsonl")).unwrap();
    let long = format!(
        r#"{{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{{"type":"note","blob":"{}"}}}}"#,
        "x".repeat(3 << 20)
    );
    let at = text.find('\n').unwrap() + 1;
    text.insert_str(at, &(long + "\n"));
    std::fs::write(dir.path().join("long.jsonl"), &text).unwrap();
    let out = agentlog(dir.path(), &["convert", "long.jsonl", "--max-line-bytes", "1000000"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 2: expected a line of at most 1000000 bytes, but found one of 3145819 bytes"),
        "{}",
        stderr(&out)
    );
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "the lines around it convert");
    // Under the default limit the same line is read.
    let out = agentlog(dir.path(), &["convert", "long.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A file whose first record is long is still told apart by its fields.
    let prompt = claude_prompt(
        "5e550000-0000-4000-8000-000000000002",
        "c0000000-0000-4000-8000-000000000001",
        &"y".repeat(200_000),
    );
    std::fs::write(dir.path().join("first.jsonl"), prompt).unwrap();
    let out = agentlog(dir.path(), &["convert", "first.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"agent\":\"claude-code\""));
}

/// Temporary files under `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.path().display().to_string())
        .filter(|p| p.contains(".agentlog-tmp-"))
        .collect()
}

// Issue 19, item 13: after SIGINT or SIGTERM, `*.agentlog-tmp-<pid>` files stayed behind for
// ever, and nothing removed those of killed runs. Issue 41: the exit status is the shell's
// 128 + the signal's number, 143 for SIGTERM and 130 for SIGINT.
#[test]
fn temporary_files_do_not_outlive_their_run() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(sample("claude/user-and-assistant-text.jsonl")).unwrap();
    std::fs::write(dir.path().join("big.jsonl"), text.repeat(40_000)).unwrap();
    for (signal, output, code) in [("TERM", "out/", 143), ("INT", "out.parquet", 130)] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("agentlog"))
            .args(["convert", "-q", "big.jsonl", "-o", output])
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while temporaries(dir.path()).is_empty() && started.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!temporaries(dir.path()).is_empty(), "{signal}: the run wrote no temporary file");
        let killed = std::process::Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
        assert!(killed.unwrap().success());
        let status = child.wait().unwrap();
        if status.code() == Some(0) {
            continue; // finished before the signal arrived: nothing to clean up
        }
        assert_eq!(status.code(), Some(code), "{signal}");
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "{signal}");
    }
    // A temporary file of a process that no longer runs is removed by the next run there.
    let dead = (100_000..4_000_000).find(|pid| !Path::new(&format!("/proc/{pid}")).exists()).unwrap();
    let stale = dir.path().join(format!("old.jsonl.agentlog-tmp-{dead}"));
    std::fs::write(&stale, "partial").unwrap();
    let live = dir.path().join(format!("other.jsonl.agentlog-tmp-{}", std::process::id()));
    std::fs::write(&live, "being written").unwrap();
    let out = agentlog(dir.path(), &["convert", "-q", "big.jsonl", "-o", "new.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stale.exists(), "the stale temporary file is removed");
    assert!(live.exists(), "a running process's temporary file is left alone");
}

/// Every event line under `dir`, by session id, counted.
fn events_by_session(dir: &Path) -> std::collections::BTreeMap<String, usize> {
    let mut sessions = std::collections::BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).into_iter().filter_map(Result::ok) {
        if entry.path().extension().is_some_and(|e| e == "jsonl") {
            for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
                let event: serde_json::Value = serde_json::from_str(line).unwrap();
                *sessions.entry(event["session_id"].as_str().unwrap().to_owned()).or_insert(0) += 1;
            }
        }
    }
    sessions
}

/// A one-prompt Claude Code session file line, with the session id and record uuid given.
fn claude_prompt(session: &str, uuid: &str, text: &str) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"{session}","version":"2.1.114","type":"user","message":{{"role":"user","content":"{text}"}},"uuid":"{uuid}","timestamp":"2026-01-11T08:00:00.000Z"}}"#
    ) + "\n"
}

// Issue 19, item 2: `--incremental` rewrote a session's output from the redone group only when
// the session was in two groups (two Claude Code project directories), or when two ids reduced
// to the same file name; the other group's events vanished.
#[test]
fn an_incremental_run_keeps_every_event_of_every_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for project in ["projects/a", "projects/b"] {
        std::fs::create_dir_all(p.join(project)).unwrap();
    }
    let s = "5e550000-0000-4000-8000-000000000001";
    std::fs::write(p.join("projects/a/one.jsonl"), claude_prompt(s, "a0000000-0000-4000-8000-000000000001", "first"))
        .unwrap();
    std::fs::write(p.join("projects/b/two.jsonl"), claude_prompt(s, "b0000000-0000-4000-8000-000000000001", "second"))
        .unwrap();
    let codex = std::fs::read_to_string(sample("codex/envelope-user-and-assistant-text.jsonl")).unwrap();
    let id = "019c8a4c-0000-7000-8000-00000000c0de";
    std::fs::create_dir_all(p.join("codex")).unwrap();
    std::fs::write(p.join("codex/rollout-1.jsonl"), codex.replace(id, "x/y")).unwrap();
    std::fs::write(p.join("codex/rollout-2.jsonl"), codex.replace(id, "x:y")).unwrap();
    let run = || {
        let out = agentlog(p, &["convert", "-q", "projects", "codex", "-o", "out/", "--incremental"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        events_by_session(&p.join("out"))
    };
    let first = run();
    assert_eq!(first.get(s), Some(&2), "{first:?}");
    assert_eq!(first.len(), 3, "{first:?}");
    // Change one input of each pair, as an agent appending to a session does.
    let mut one = std::fs::OpenOptions::new().append(true).open(p.join("projects/a/one.jsonl")).unwrap();
    std::io::Write::write_all(&mut one, claude_prompt(s, "a0000000-0000-4000-8000-000000000002", "more").as_bytes())
        .unwrap();
    drop(one);
    std::fs::write(p.join("codex/rollout-2.jsonl"), codex.replace(id, "x:y") + "\n").unwrap();
    let second = run();
    assert_eq!(second.get(s), Some(&3), "both project directories' events: {second:?}");
    assert_eq!(second.get("x/y"), first.get("x/y"), "{second:?}");
    assert_eq!(second.get("x:y"), first.get("x:y"), "{second:?}");
}
