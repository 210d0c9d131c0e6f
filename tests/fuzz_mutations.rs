//! A seeded mutation fuzzer over real corpus lines, driving the `agentlog` binary.
//!
//! Each case takes one to three session files of the corpus (the project's samples and, when
//! present, `../shared/corpus`), mutates some of their lines (byte flips, truncation, splices,
//! type changes of known fields, deep nesting, lone surrogates, huge numbers, byte-order marks,
//! CRLF, dropped and repeated lines), converts them to one output format on one to three
//! threads, and checks:
//!
//! - the exit code is one of the documented ones, and never 70 (a bug);
//! - every stdout line of unified output is JSON (strict: serde_json's limits);
//! - unified and interchange output validate against the published schemas;
//! - every non-empty input line is accounted for: an event's `source.line`, a line in an event's
//!   `extra.merged_lines`, or a diagnostic in the `--report`.
//!
//! By default it runs a bounded slice from seed 1 (`AGENTLOG_FUZZ_CASES`, 2000 cases, under a
//! minute); set `AGENTLOG_FUZZ_SECONDS=3600` to run for an hour and `AGENTLOG_FUZZ_SEED` to start
//! elsewhere.
//! A failing case is kept under `target/fuzz-failures/` with the command that fails.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;
use serde_json::Value;

/// A small, seeded generator (xorshift64*): the same seed gives the same cases on any machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values that break readers when they land in a known field.
const HOSTILE: [&str; 14] = [
    "1e400",
    "-1",
    "\"5\"",
    "{}",
    "[]",
    "null",
    "18446744073709551616",
    "9223372036854775807",
    "\"\\ud800\"",
    "\"\\udc00x\"",
    "true",
    "\"\"",
    "-0.5e-400",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
];

/// Keys of the records the readers map.
const KEYS: [&str; 16] = [
    "\"type\":",
    "\"payload\":",
    "\"message\":",
    "\"content\":",
    "\"usage\":",
    "\"input_tokens\":",
    "\"output_tokens\":",
    "\"total_token_usage\":",
    "\"info\":",
    "\"text\":",
    "\"id\":",
    "\"sessionId\":",
    "\"timestamp\":",
    "\"num_turns\":",
    "\"call_id\":",
    "\"arguments\":",
];

/// Mutates one line.
fn mutate_line(rng: &mut Rng, line: &[u8], other: &[u8]) -> Vec<u8> {
    let mut line = line.to_vec();
    match rng.below(10) {
        // A byte flipped.
        0 if !line.is_empty() => {
            let at = rng.below(line.len());
            line[at] ^= 1 << rng.below(8);
        }
        // Cut short.
        1 => line.truncate(rng.below(line.len() + 1)),
        // Spliced into another line.
        2 => {
            let cut = rng.below(line.len() + 1);
            line.truncate(cut);
            line.extend_from_slice(&other[rng.below(other.len() + 1)..]);
        }
        // A known field's value replaced.
        3..=5 => {
            let text = String::from_utf8_lossy(&line).into_owned();
            let key = rng.pick(&KEYS);
            if let Some(at) = text.find(key) {
                let start = at + key.len();
                let end = value_end(text.as_bytes(), start);
                return format!("{}{}{}", &text[..start], *rng.pick(&HOSTILE), &text[end..]).into_bytes();
            }
            line.extend_from_slice(b" ");
        }
        // Deep nesting around the whole record, inside a new field.
        6 => {
            let depth = [100, 127, 128, 129, 500, 3000][rng.below(6)];
            if line.ends_with(b"}") {
                line.pop();
                line.extend_from_slice(b",\"deep\":");
                line.extend(std::iter::repeat_n(b'[', depth));
                line.extend(std::iter::repeat_n(b']', depth));
                line.push(b'}');
            }
        }
        // A lone surrogate inside the first string.
        7 => {
            if let Some(at) = line.iter().position(|b| *b == b'"') {
                let half: &[u8] = if rng.below(2) == 0 { b"\\ud83d" } else { b"\\udfff" };
                line.splice(at + 1..at + 1, half.iter().copied());
            }
        }
        // A byte-order mark, or a carriage return.
        8 => {
            if rng.below(2) == 0 {
                line.splice(0..0, [0xEF, 0xBB, 0xBF]);
            } else {
                line.push(b'\r');
            }
        }
        // A huge number in place of the first number.
        _ => {
            if let Some(at) = line.iter().position(u8::is_ascii_digit)
                && at > 0
                && line[at - 1] == b':'
            {
                let end = at + line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
                const HUGE: [&str; 3] = ["1e400", "18446744073709551617", "99999999999999999999999"];
                let huge = rng.pick(&HUGE).as_bytes();
                line.splice(at..end, huge.iter().copied());
            }
        }
    }
    line
}

/// The end of the JSON value starting at `start`, roughly: enough to replace scalars and
/// balanced containers in well-formed lines.
fn value_end(text: &[u8], start: usize) -> usize {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut i = start;
    while i < text.len() {
        match (in_string, text[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') => {
                in_string = false;
                if depth == 0 {
                    return i + 1;
                }
            }
            (false, b'"') => in_string = true,
            (false, b'{' | b'[') => depth += 1,
            (false, b'}' | b']') if depth == 0 => return i,
            (false, b'}' | b']') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            (false, b',') if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// One mutated copy of `source`: most lines kept, some mutated, dropped or repeated.
fn mutate_file(rng: &mut Rng, source: &[u8]) -> Vec<u8> {
    let lines: Vec<&[u8]> = source.split(|b| *b == b'\n').collect();
    let rate = [2, 5, 20, 100][rng.below(4)];
    let mut out = Vec::with_capacity(source.len() + 1024);
    for (i, line) in lines.iter().enumerate() {
        match rng.below(rate) {
            0 => {
                let other = lines[rng.below(lines.len())];
                out.extend(mutate_line(rng, line, other));
            }
            1 if rng.below(4) == 0 => continue,
            2 if rng.below(4) == 0 => {
                out.extend_from_slice(line);
                out.push(b'\n');
                out.extend_from_slice(line);
            }
            _ => out.extend_from_slice(line),
        }
        if i + 1 < lines.len() {
            out.extend_from_slice(if rng.below(50) == 0 { b"\r\n" } else { b"\n" });
        }
    }
    out
}

/// Session files to mutate, small enough to run many cases.
fn sources() -> Vec<PathBuf> {
    common::all_session_files()
        .into_iter()
        .map(|(path, _)| path)
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < 400_000))
        .collect()
}

/// The exit codes the guide documents for `convert` (docs/src/promises.md).
const EXIT_CODES: [i32; 6] = [0, 1, 2, 3, 4, 70];

/// Runs one case; the description of what went wrong, if anything did.
fn run_case(rng: &mut Rng, sources: &[PathBuf], dir: &Path) -> Result<(), String> {
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    for n in 0..1 + rng.below(3) {
        let source = rng.pick(sources);
        let bytes = std::fs::read(source).map_err(|e| e.to_string())?;
        let name = source.file_name().unwrap().to_string_lossy().into_owned();
        // Codex files keep their rollout name (its id); each input gets a folder of its own.
        let path = inputs.join(format!("p{n}")).join(name);
        std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
        std::fs::write(&path, mutate_file(rng, &bytes)).map_err(|e| e.to_string())?;
        written.push(path);
    }
    let format = *rng.pick(&["unified", "unified", "interchange", "parquet", "arrow"]);
    let jobs = (1 + rng.below(3)).to_string();
    let output = match format {
        "unified" => "out.jsonl",
        "interchange" => "out.json",
        "parquet" => "out.parquet",
        _ => "out.arrow",
    };
    let args = ["convert", "-q", "in", "--to", format, "-j", &jobs, "-o", output, "--report", "report.json"];
    let out = std::process::Command::new(cargo_bin!("agentlog"))
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| e.to_string())?;
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !EXIT_CODES.contains(&code) || code == 70 {
        return Err(format!("exit {code} from agentlog {}: {stderr}", args.join(" ")));
    }
    // An input whose first lines were mutated past recognition is an input error (exit 3, the
    // file named); nothing else may fail.
    let unrecognised = stderr.matches("agentlog::input::unknown_format").count();
    let failures = stderr.matches("  × ").count();
    if code > 3 || (code == 3 && failures != unrecognised) {
        return Err(format!("exit {code} (an input or output failed) from agentlog {}: {stderr}", args.join(" ")));
    }
    let report: Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).map_err(|e| e.to_string())?)
        .map_err(|e| format!("report: {e}"))?;
    let validator = agentlog::validate::Validator::new();
    match format {
        "unified" => {
            let text = std::fs::read_to_string(dir.join(output)).map_err(|e| e.to_string())?;
            let mut accounted: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
            for (i, line) in text.lines().enumerate() {
                let event: Value = serde_json::from_str(line).map_err(|e| format!("output line {}: {e}", i + 1))?;
                let file = event["source"]["file"].as_str().unwrap_or_default().to_owned();
                let lines = accounted.entry(file).or_default();
                lines.extend(event["source"]["line"].as_u64());
                if let Some(merged) = event["extra"]["merged_lines"].as_array() {
                    lines.extend(merged.iter().filter_map(|m| m["line"].as_u64()));
                }
            }
            let checked = validator.check("out.jsonl", text.as_bytes()).map_err(|e| e.to_string())?;
            if checked.invalid > 0 {
                return Err(format!("{} invalid events: {:?}", checked.invalid, checked.findings.first()));
            }
            for file in report["files"].as_array().into_iter().flatten() {
                let name = file["file"].as_str().unwrap_or_default();
                if file["status"] == "error" {
                    return Err(format!("{name} failed: {}", file["error"]));
                }
                let lines = accounted.entry(name.to_owned()).or_default();
                lines.extend(file["diagnostics"].as_array().into_iter().flatten().filter_map(|d| d["line"].as_u64()));
                if file["more_diagnostics"].as_u64().unwrap_or(0) > 0 {
                    continue; // diagnostics past the kept ones are only counted
                }
                let input = std::fs::read(dir.join(name)).map_err(|e| e.to_string())?;
                for (i, line) in input.split(|b| *b == b'\n').enumerate() {
                    if !line.iter().all(u8::is_ascii_whitespace) && !lines.contains(&(i as u64 + 1)) {
                        return Err(format!("{name}:{} is lost: {}", i + 1, String::from_utf8_lossy(line)));
                    }
                }
            }
        }
        "interchange" => {
            let file = std::fs::File::open(dir.join(output)).map_err(|e| e.to_string())?;
            let checked = validator.check("out.json", std::io::BufReader::new(file));
            let checked = checked.map_err(|e| e.to_string())?;
            if checked.invalid > 0 {
                return Err(format!("{} invalid events: {:?}", checked.invalid, checked.findings.first()));
            }
        }
        _ => {
            if !dir.join(output).is_file() {
                return Err(format!("no {output} written"));
            }
        }
    }
    Ok(())
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn mutated_corpus_lines_keep_every_promise() {
    let sources = sources();
    assert!(!sources.is_empty());
    let seed = env_number("AGENTLOG_FUZZ_SEED").unwrap_or(1);
    let cases = env_number("AGENTLOG_FUZZ_CASES").unwrap_or(2000);
    let deadline = env_number("AGENTLOG_FUZZ_SECONDS").map(|s| Instant::now() + Duration::from_secs(s));
    let mut run = 0u64;
    loop {
        let done = match deadline {
            Some(deadline) => Instant::now() >= deadline,
            None => run >= cases,
        };
        if done {
            break;
        }
        let case_seed = seed.wrapping_add(run).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut rng = Rng(case_seed);
        let dir = tempfile::tempdir().unwrap();
        if let Err(problem) = run_case(&mut rng, &sources, dir.path()) {
            let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures").join(case_seed.to_string());
            let _ = std::fs::remove_dir_all(&keep);
            let _ = std::fs::create_dir_all(keep.parent().unwrap());
            let _ = std::process::Command::new("cp").arg("-r").arg(dir.path()).arg(&keep).status();
            panic!("case {run} (seed {case_seed}, kept in {}): {problem}", keep.display());
        }
        run += 1;
    }
    eprintln!("fuzz: {run} cases from seed {seed}, no findings");
}
