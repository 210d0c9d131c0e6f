//! The `agentlog` binary: exit codes, stdout holding only data, diagnostics on stderr,
//! determinism and pipes; output formats told from extensions, binary output kept off
//! terminals, completions, the manual page, help examples and typo suggestions. Output is
//! checked with types declared here, not the writer's.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use assert_cmd::cargo::cargo_bin_cmd;
use serde::Deserialize;

/// The fields of a unified line these tests look at, declared independently of the model.
#[derive(Debug, Deserialize)]
struct Line {
    id: String,
    agent: String,
    session_id: String,
    kind: String,
    source: LineSource,
}

#[derive(Debug, Deserialize)]
struct LineSource {
    file: String,
    line: u64,
}

fn corpus(rel: &str) -> String {
    common::own_corpus().join(rel).display().to_string()
}

fn parse_lines(stdout: &[u8]) -> Vec<Line> {
    std::str::from_utf8(stdout)
        .expect("stdout is UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("stdout line is not an event ({e}): {l}")))
        .collect()
}

#[test]
fn converts_claude_and_codex_text_with_auto_detection() {
    let out = cargo_bin_cmd!("agentlog")
        .args([
            "convert",
            &corpus("claude/user-and-assistant-text.jsonl"),
            &corpus("codex/envelope-user-and-assistant-text.jsonl"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let lines = parse_lines(&out.stdout);
    let kinds: Vec<(&str, &str)> = lines.iter().map(|l| (l.agent.as_str(), l.kind.as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("claude-code", "message"),
            ("claude-code", "reasoning"),
            ("claude-code", "message"),
            ("claude-code", "tool_call"),
            ("claude-code", "tool_output"),
            ("claude-code", "message"),
            ("claude-code", "meta"),
            ("claude-code", "meta"),
            ("codex", "meta"),
            ("codex", "message"),
            ("codex", "message"),
        ]
    );
    assert_eq!(lines[0].session_id, "5d0c1a2e-7f3b-4c1d-9e8a-1b2c3d4e5f60");
    assert_eq!(lines[8].session_id, "019c8a4c-0000-7000-8000-00000000c0de");
}

#[test]
fn bad_lines_are_reported_with_line_numbers_and_the_rest_converts() {
    let file = corpus("claude/garbage-and-truncated-last-line.jsonl");
    let out = cargo_bin_cmd!("agentlog").args(["convert", &file]).env("NO_COLOR", "1").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "documented exit code for warnings");
    let lines = parse_lines(&out.stdout);
    let source_lines: Vec<u64> = lines.iter().map(|l| l.source.line).collect();
    assert_eq!(source_lines, [1, 2, 4, 4], "lines 3 and 5 are bad, the rest converts (line 4 also holds the usage)");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.matches("line 3: expected a JSON object, but found `this line is not JSON at`").count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("line 5: last line is cut short: invalid JSON: EOF while parsing a string").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains(&format!("{file}:3:1")), "{stderr}");
    assert!(stderr.contains(&format!("{file}:5:")), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "NO_COLOR: no escape codes: {stderr}");
    assert!(stderr.contains("agentlog: 1 files, 1 sessions, 4 events, 2 warnings, 0 errors"), "{stderr}");
}

#[test]
fn quiet_prints_nothing_for_warnings_but_keeps_the_exit_code() {
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "--quiet", &corpus("claude/garbage-and-truncated-last-line.jsonl")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn same_input_gives_byte_identical_output() {
    let run = || cargo_bin_cmd!("agentlog").args(["convert", "-q", &corpus("")]).output().unwrap().stdout;
    let first = run();
    assert!(!first.is_empty());
    assert_eq!(first, run());
}

#[test]
fn moving_the_input_keeps_every_event_id() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::own_corpus().join("claude/user-and-assistant-text.jsonl");
    let moved = dir.path().join("nested/folder/user-and-assistant-text.jsonl");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::copy(&src, &moved).unwrap();
    let ids = |path: &Path| {
        let out = cargo_bin_cmd!("agentlog").args(["convert", "-q"]).arg(path).output().unwrap();
        parse_lines(&out.stdout).into_iter().map(|l| l.id).collect::<Vec<_>>()
    };
    let (a, b) = (ids(&src), ids(&moved));
    assert_eq!(a.len(), 8);
    assert_eq!(a, b);
}

#[test]
fn standard_input_is_read_with_auto_detection() {
    let text = std::fs::read(corpus("codex/envelope-user-and-assistant-text.jsonl")).unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-"]).write_stdin(text).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines = parse_lines(&out.stdout);
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| l.agent == "codex" && l.source.file == "-"));
}

#[test]
fn output_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", &corpus("claude/user-and-assistant-text.jsonl"), "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "data goes to the file, not stdout");
    assert_eq!(parse_lines(&std::fs::read(&path).unwrap()).len(), 8);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers, [std::ffi::OsString::from("out.jsonl")], "no temporary file is left");
}

#[test]
fn a_dash_for_the_output_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = cargo_bin_cmd!("agentlog")
        .current_dir(dir.path())
        .args(["convert", "-q", &corpus("claude/user-and-assistant-text.jsonl"), "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(parse_lines(&out.stdout).len(), 8);
    let written: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(written.is_empty(), "no file is written: {written:?}");
}

#[test]
fn closed_stdout_pipe_ends_quietly() {
    // Enough output to overflow the pipe buffer after the reader has gone.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let line = std::fs::read_to_string(corpus("claude/user-and-assistant-text.jsonl")).unwrap();
    std::fs::write(&big, line.repeat(3000)).unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("agentlog"))
        .args(["convert"])
        .arg(&big)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

#[test]
fn missing_input_is_an_input_error() {
    let out = cargo_bin_cmd!("agentlog").args(["convert", "no/such/file.jsonl"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot find input no/such/file.jsonl"));
}

#[test]
fn unknown_format_is_an_input_error_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.jsonl");
    std::fs::write(&path, "{\"hello\":\"world\"}\n").unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["convert"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot tell which agent wrote"), "{stderr}");
    // The help lists every format, so where it wraps depends on how many there are.
    let words = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("pass --from NAME to read it anyway"), "{stderr}");
}

#[test]
fn a_pretty_printed_document_is_told_by_its_first_key() {
    let dir = tempfile::tempdir().unwrap();
    // Another tool's document (Kiro CLI's) is not taken for any agent's.
    let path = dir.path().join("conversation-1.json");
    std::fs::write(&path, "{\n  \"conversation_id\": \"c1\",\n  \"history\": []\n}\n").unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["convert"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot tell which agent wrote"));
    // Gemini CLI's document before 0.39 opens with its session id.
    let path = dir.path().join("session-1.json");
    std::fs::write(&path, "{\n  \"sessionId\": \"s1\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}\n").unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["convert"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"agent\":\"gemini-cli\""));
    // The TypeScript CLI's rollout document is still told as Codex.
    let rollout = corpus("codex/e0-typescript-cli");
    let out = cargo_bin_cmd!("agentlog").args(["convert", &rollout]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"agent\":\"codex\""));
}

#[test]
fn a_file_whose_first_line_is_longer_than_what_is_looked_at_is_told_by_its_first_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    // Fields in the order Claude Code writes them: the message comes after the record's type.
    let text = "x".repeat(17 << 20);
    let line = format!(
        r#"{{"parentUuid":null,"sessionId":"s1","type":"user","message":{{"role":"user","content":"{text}"}},"uuid":"u1","timestamp":"2026-01-01T00:00:00Z"}}"#
    );
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["convert"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<serde_json::Value> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["agent"], "claude-code");
    assert_eq!(events[0]["payload"]["text"].as_str().map(str::len), Some(17 << 20));
}

#[test]
fn partitioning_needs_an_output_directory_and_parquet() {
    let input = corpus("codex/envelope-user-and-assistant-text.jsonl");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "--to", "parquet", "--partition-by", "agent", &input])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--partition-by needs an output directory"));
    let dir = tempfile::tempdir().unwrap();
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "--to", "unified", "--partition-by", "agent", &input, "-o"])
        .arg(dir.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--partition-by is not supported for --to unified"));
}

#[test]
fn output_extension_chooses_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let input = corpus("codex/envelope-user-and-assistant-text.jsonl");
    for (name, magic) in [("o.parquet", &b"PAR1"[..]), ("o.arrow", &b"ARROW1"[..])] {
        let path = dir.path().join(name);
        let out = cargo_bin_cmd!("agentlog").args(["convert", &input, "-o"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(std::fs::read(&path).unwrap().starts_with(magic), "{name}");
        let sessions = dir.path().join(name.replace("o.", "o.sessions."));
        assert!(sessions.is_file(), "{}", sessions.display());
    }
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let out = cargo_bin_cmd!("agentlog").args(["convert", "--frobnicate", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn schema_command_prints_the_checked_in_files_byte_for_byte() {
    for (name, file) in [("event", "schema/event.schema.json"), ("interchange", "schema/interchange.schema.json")] {
        let out = cargo_bin_cmd!("agentlog").args(["schema", name]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let on_disk = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        assert_eq!(out.stdout, on_disk, "{name}");
    }
}

#[test]
fn provenance_names_the_input_as_given() {
    let rel = "corpus/codex/envelope-user-and-assistant-text.jsonl";
    let out =
        cargo_bin_cmd!("agentlog").current_dir(env!("CARGO_MANIFEST_DIR")).args(["convert", rel]).output().unwrap();
    assert!(parse_lines(&out.stdout).iter().all(|l| l.source.file == rel));
}

#[test]
fn validate_accepts_what_convert_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    cargo_bin_cmd!("agentlog").args(["convert", "-q", &corpus(""), "-o"]).arg(&path).output().unwrap();
    let out = cargo_bin_cmd!("agentlog").arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert!(lines > 50);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!(": {lines} events, 0 invalid")));
}

#[test]
fn validate_rejects_each_broken_line_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.jsonl");
    cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", &corpus("codex/envelope-user-and-assistant-text.jsonl"), "-o"])
        .arg(&good)
        .output()
        .unwrap();
    let line: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&good).unwrap().lines().nth(1).unwrap()).unwrap();
    let mut wrong_type = line.clone();
    wrong_type["seq"] = "one".into();
    let mut missing = line.clone();
    missing.as_object_mut().unwrap().remove("session_id");
    let mut unknown_kind = line.clone();
    unknown_kind["kind"] = "telepathy".into();
    let text =
        [wrong_type.to_string(), missing.to_string(), unknown_kind.to_string(), "{\"id\": ".to_owned()].join("\n");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, text + "\n").unwrap();
    let out = cargo_bin_cmd!("agentlog").arg("validate").arg(&bad).env("NO_COLOR", "1").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("line 1: /seq: \"one\" is not of type \"integer\" (schema keyword `type`)"), "{stderr}");
    assert!(
        stderr.contains("line 2: /: \"session_id\" is a required property (schema keyword `required`)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "line 3: /kind: expected one of message, reasoning, tool_call, tool_output, meta, but found \"telepathy\""
        ),
        "{stderr}"
    );
    assert!(stderr.contains("line 4: invalid JSON: EOF while parsing a value"), "{stderr}");
    assert!(stderr.contains("4 events, 4 invalid"), "{stderr}");
}

#[test]
fn zstd_compressed_rollouts_are_read() {
    let out = cargo_bin_cmd!("agentlog").args(["convert", &corpus("codex/zstd-compressed")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = parse_lines(&out.stdout);
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| l.agent == "codex" && l.source.file.ends_with(".jsonl.zst")));
}

/// Regression: `-o /dev/null` once replaced the device with a regular file (temporary file and
/// rename). A named pipe stands in for the device here.
#[test]
fn an_output_that_is_not_a_regular_file_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", &corpus("codex/envelope-user-and-assistant-text.jsonl"), "-o"])
        .arg(&fifo)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(parse_lines(&reader.join().unwrap()).len(), 3);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "still a pipe");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs agentlog with a terminal as standard output, in an empty home; gives what it wrote
/// on the terminal too.
fn on_terminal(args: &[&str]) -> Output {
    on_terminal_screen(args).0
}

fn on_terminal_screen(args: &[&str]) -> (Output, String) {
    use std::io::Read;
    let (mut leader, follower) = common::terminal();
    let home = tempfile::tempdir().unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin!("agentlog"))
        .args(args)
        .env("HOME", home.path())
        .env("CLAUDE_CONFIG_DIR", home.path().join("claude"))
        .env("CODEX_HOME", home.path().join("codex"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(follower)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The terminal is read while the child writes; it ends (EIO) once the child closed it.
    let screen = std::thread::spawn(move || {
        let mut screen = Vec::new();
        let _ = leader.read_to_end(&mut screen);
        screen
    });
    let out = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&screen.join().unwrap()).replace("\r\n", "\n");
    (out, screen)
}

#[test]
fn an_extension_no_format_owns_is_a_usage_error_naming_the_formats() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.csv");
    let out = cargo_bin_cmd!("agentlog").args(["convert", &corpus("codex")]).arg("-o").arg(&out_path).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    for named in ["out.csv", "--to", "unified (.jsonl, .ndjson)", "parquet (.parquet)", "interchange (.json)"] {
        assert!(stderr(&out).contains(named), "{named} not in: {}", stderr(&out));
    }
    assert!(!out_path.exists(), "nothing is written");
}

#[test]
fn extensions_choose_formats_in_any_case_and_a_bare_name_is_unified() {
    let dir = tempfile::tempdir().unwrap();
    for (name, first_bytes) in
        [("a.NDJSON", &b"{\"schema_version\""[..]), ("b", b"{\"schema_version\""), ("c.Parquet", b"PAR1")]
    {
        let path = dir.path().join(name);
        let out = cargo_bin_cmd!("agentlog")
            .args(["convert", "-q", &corpus("claude")])
            .arg("-o")
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{name}: {}", stderr(&out));
        let written = std::fs::read(&path).unwrap();
        assert!(written.starts_with(first_bytes), "{name} starts with {:?}", &written[..8]);
    }
}

#[test]
fn binary_output_is_refused_on_a_terminal_and_allowed_in_a_pipe() {
    for format in ["parquet", "arrow"] {
        let out = on_terminal(&["convert", &corpus("codex"), "--to", format]);
        assert_eq!(out.status.code(), Some(2), "{format}: {}", stderr(&out));
        assert!(stderr(&out).contains("refusing to write") && stderr(&out).contains("-o FILE"), "{}", stderr(&out));
        let piped =
            cargo_bin_cmd!("agentlog").args(["convert", "-q", &corpus("codex"), "--to", format]).output().unwrap();
        assert!(piped.status.code().is_some_and(|c| c <= 1), "{format}: {}", stderr(&piped));
        assert!(!piped.stdout.is_empty());
    }
}

#[test]
fn a_bare_convert_on_a_terminal_says_where_the_json_goes() {
    let out = on_terminal(&["convert"]);
    assert!(stderr(&out).contains("to the terminal") && stderr(&out).contains("-o FILE"), "{}", stderr(&out));
    // Not with a file, not when quiet, not in a pipe.
    let quiet = on_terminal(&["convert", "-q"]);
    assert!(!stderr(&quiet).contains("to the terminal"), "{}", stderr(&quiet));
    let home = tempfile::tempdir().unwrap();
    let piped = cargo_bin_cmd!("agentlog").arg("convert").env("HOME", home.path()).output().unwrap();
    assert!(!stderr(&piped).contains("to the terminal"), "{}", stderr(&piped));
}

#[test]
fn completions_for_every_shell_name_the_commands() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = cargo_bin_cmd!("agentlog").args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = String::from_utf8(out.stdout).unwrap();
        for word in ["agentlog", "convert", "validate", "--partition-by"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let out = cargo_bin_cmd!("agentlog").args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_manual_page_is_roff_for_section_one() {
    let out = cargo_bin_cmd!("agentlog").arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH agentlog 1"), "{}", &page[..200]);
    for word in ["convert", "validate", "completions"] {
        assert!(page.contains(word), "the manual lacks {word}");
    }
}

#[test]
fn help_ends_with_examples() {
    let out = cargo_bin_cmd!("agentlog").arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let examples = help.find("Examples:").expect("an Examples section");
    assert!(help[examples..].contains("agentlog convert -o sessions.parquet"), "{help}");
}

#[test]
fn typos_are_not_answered_with_the_old_name_of_ls_which_still_works() {
    let out = cargo_bin_cmd!("agentlog").arg("discove").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!stderr(&out).contains("'discover'"), "{}", stderr(&out));
    let ls = cargo_bin_cmd!("agentlog").args(["ls", &corpus("codex")]).output().unwrap();
    let discover = cargo_bin_cmd!("agentlog").args(["-q", "discover", &corpus("codex")]).output().unwrap();
    assert_eq!(discover.status.code(), ls.status.code());
    assert!(!ls.stdout.is_empty());
    assert_eq!(discover.stdout, ls.stdout);
}

/// Every codex file of both corpora, and the project's Claude Code files.
fn listed_files() -> Vec<String> {
    let mut roots = vec![common::own_corpus().join("codex"), common::own_corpus().join("claude")];
    roots.extend(common::shared_corpus().map(|c| c.join("codex")));
    roots.iter().map(|r| r.display().to_string()).collect()
}

#[test]
fn ls_names_agents_as_the_data_does_and_sessions_as_convert_does() {
    let out = cargo_bin_cmd!("agentlog").arg("ls").args(listed_files()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut eras = 0;
    for row in text.lines() {
        let [agent, session, size, _version, path, kind] = row.split('\t').collect::<Vec<_>>()[..] else {
            panic!("not six tab-separated fields: {row}")
        };
        let expected_kind = match path.rsplit('/').next().unwrap() {
            "history.jsonl" => "prompt-history",
            "session_index.jsonl" => "thread-names",
            name if name.ends_with(".md") => "memory",
            name if name.contains("-agent-") && name.ends_with(".json") => "todo-list",
            name if path.contains("/home/sessions/") && name.ends_with(".json") => "session-registry",
            _ => "session",
        };
        assert_eq!(kind, expected_kind, "{row}");
        assert!(agent == "claude-code" || agent == "codex", "{row}");
        assert!(size.parse::<u64>().is_ok(), "{row}");
        let converted = cargo_bin_cmd!("agentlog").args(["convert", "-q", path]).output().unwrap();
        let Some(first) = parse_lines(&converted.stdout).into_iter().next() else { continue };
        assert_eq!(first.agent, agent, "{path}");
        // Files that hold one session: the one convert gives their first event. Prompt
        // histories and thread names hold many.
        if kind == "thread-names" || kind == "prompt-history" {
            assert_eq!(session, "-", "{row}");
        } else if !path.contains("/claude/") {
            assert_eq!(session, first.session_id, "{path}");
        }
        eras += usize::from(path.contains("e0-") || path.contains("e1-") || path.ends_with("example.jsonl"));
    }
    assert!(eras >= 2, "the TypeScript-era and bare-header files are listed");
}

#[test]
fn ls_json_gives_one_object_per_file() {
    let plain = cargo_bin_cmd!("agentlog").args(["ls", &corpus("codex")]).output().unwrap();
    let json = cargo_bin_cmd!("agentlog").args(["ls", "--json", &corpus("codex")]).output().unwrap();
    assert_eq!(json.status.code(), Some(0));
    let rows: Vec<serde_json::Value> =
        String::from_utf8(json.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let plain = String::from_utf8(plain.stdout).unwrap();
    assert_eq!(rows.len(), plain.lines().count());
    for (row, line) in rows.iter().zip(plain.lines()) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(row["agent"], fields[0]);
        assert_eq!(row["format"], "codex");
        assert_eq!(row["session"], fields[1]);
        assert_eq!(row["size"].as_u64().unwrap().to_string(), fields[2]);
        assert_eq!(row["version"].as_str().unwrap_or("-"), fields[3]);
        assert_eq!(row["path"], fields[4]);
    }
}

#[test]
fn ls_on_a_terminal_has_a_header_aligned_columns_and_sizes_for_people() {
    let (out, screen) = on_terminal_screen(&["ls", &corpus("claude")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut lines = screen.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("AGENT") && header.contains("SESSION") && header.ends_with("PATH"), "{screen}");
    let path_column = header.find("PATH").unwrap();
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() > 5, "{screen}");
    for row in &rows {
        assert!(row.starts_with("claude-code"), "{row}");
        assert!(row[path_column..].starts_with(&corpus("claude")), "aligned: {row}");
        assert!(!row.contains('\t'), "{row}");
    }
    assert!(rows.iter().any(|r| r.contains(" kB ")), "sizes in kB: {screen}");
}

#[test]
fn color_is_chosen_by_flag_over_terminal_and_no_color() {
    let file = corpus("claude/garbage-and-truncated-last-line.jsonl");
    let run = |color: Option<&str>, no_color: bool| {
        let mut cmd = cargo_bin_cmd!("agentlog");
        cmd.arg("convert").arg(&file);
        if let Some(color) = color {
            cmd.args(["--color", color]);
        }
        if no_color {
            cmd.env("NO_COLOR", "1");
        } else {
            cmd.env_remove("NO_COLOR");
        }
        stderr(&cmd.output().unwrap()).contains('\u{1b}')
    };
    // stderr is a pipe here: auto means no colour.
    assert!(!run(None, false));
    assert!(!run(Some("auto"), false));
    assert!(run(Some("always"), false));
    assert!(run(Some("always"), true), "the flag wins over NO_COLOR");
    assert!(!run(Some("never"), false));
    let bad = cargo_bin_cmd!("agentlog").args(["--color", "sometimes", "ls"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn the_summary_names_the_file_written_and_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.parquet");
    let out = cargo_bin_cmd!("agentlog").args(["convert", &corpus("claude")]).arg("-o").arg(&path).output().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let expected = format!("; wrote {} ({:.1} kB)", path.display(), size as f64 / 1000.0);
    assert!(stderr(&out).trim_end().ends_with(&expected), "{expected} not at the end of: {}", stderr(&out));
    let piped = cargo_bin_cmd!("agentlog").args(["convert", &corpus("claude")]).output().unwrap();
    assert!(!stderr(&piped).contains("; wrote"), "{}", stderr(&piped));
}

#[test]
fn the_version_names_the_commit_and_the_schema() {
    let out = cargo_bin_cmd!("agentlog").arg("--version").output().unwrap();
    assert!(out.status.success());
    let said = String::from_utf8(out.stdout).unwrap();
    let head =
        Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok().filter(|o| o.status.success());
    // Outside a git checkout (a packaged crate) the commit is unknown.
    let commit = head.map_or("unknown".to_owned(), |o| String::from_utf8(o.stdout).unwrap().trim().to_owned());
    let schema =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/event.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
    let schema = schema["x-agentlog-schema-version"].as_str().unwrap();
    assert_eq!(said.trim(), format!("agentlog {} (commit {commit}, schema {schema})", env!("CARGO_PKG_VERSION")));
}
