//! Helpers shared by the integration tests: corpus locations and reading files through the
//! library.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agentlog::model::Event;
use agentlog::read::{Input, ReadReport, Reader, Shared};

/// The project's own samples.
pub fn own_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The third-party corpus beside the project, if present; prints a notice when it is not, and
/// fails under `CI`, which must have it.
pub fn shared_corpus() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if path.is_dir() {
        Some(path)
    } else {
        assert!(std::env::var_os("CI").is_none(), "CI must have the shared corpus at {}", path.display());
        eprintln!("notice: {} is absent; skipping the real-corpus part of this test", path.display());
        None
    }
}

/// Session files under `dir`, sorted, with the reader their folder names (`claude/`, `codex/`).
pub fn session_files(dir: &Path) -> Vec<(PathBuf, &'static dyn Reader)> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.expect("corpus is readable");
        let name = entry.file_name().to_string_lossy();
        if !entry.file_type().is_file()
            || !(name.ends_with(".jsonl") || name.ends_with(".json") && name.starts_with("rollout-"))
        {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap().to_string_lossy().to_string();
        let reader: &'static dyn Reader = if rel.starts_with("claude") || rel.contains("/claude/") {
            &agentlog::read::claude::Claude
        } else {
            &agentlog::read::codex::Codex
        };
        files.push((entry.path().to_path_buf(), reader));
    }
    files
}

/// Every file of the own corpus and, when present, the shared one.
pub fn all_session_files() -> Vec<(PathBuf, &'static dyn Reader)> {
    let mut files = session_files(&own_corpus());
    if let Some(shared) = shared_corpus() {
        files.extend(session_files(&shared));
    }
    files
}

/// Reads one file with `reader`, naming it `name`, with no state from other files.
pub fn read_file(reader: &dyn Reader, path: &Path, name: &str) -> (Vec<Event>, ReadReport) {
    read_file_with(reader, path, name, &mut Shared::default())
}

/// Reads one file with `reader`, naming it `name`, with the state of the files read before.
pub fn read_file_with(reader: &dyn Reader, path: &Path, name: &str, shared: &mut Shared) -> (Vec<Event>, ReadReport) {
    let file = std::fs::File::open(path).expect("corpus file opens");
    let mut events = Vec::new();
    let report = reader
        .read(Input { name, bytes: Box::new(std::io::BufReader::new(file)), shared }, &mut |e| {
            events.push(e);
            Ok(())
        })
        .expect("reading from a file and into a Vec does not fail");
    (events, report)
}

/// Counts the non-empty lines of a file, independently of the readers.
pub fn non_empty_lines(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    bytes.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)).count() as u64
}

/// Reads every session file under `dir` in walk order with one shared state, as a run does.
pub fn read_tree(reader: &dyn Reader, dir: &Path) -> (Vec<Event>, Vec<(PathBuf, ReadReport)>) {
    let mut shared = Shared::default();
    let mut events = Vec::new();
    let mut reports = Vec::new();
    for (path, _) in session_files(dir) {
        let name = path.display().to_string();
        let (mut e, report) = read_file_with(reader, &path, &name, &mut shared);
        events.append(&mut e);
        reports.push((path, report));
    }
    (events, reports)
}

/// Session summaries of `events`, by session id.
pub fn summaries(events: &[Event]) -> std::collections::BTreeMap<String, agentlog::model::SessionSummary> {
    let mut tallies: std::collections::BTreeMap<String, agentlog::model::SessionTally> = Default::default();
    for e in events {
        tallies
            .entry(e.session_id.clone())
            .or_insert_with(|| agentlog::model::SessionTally::new(e.agent, &e.session_id))
            .observe(e);
    }
    tallies.into_iter().map(|(id, t)| (id, t.finish())).collect()
}

/// Whether `python3` can import `modules` (comma-separated). CI must have them; elsewhere the
/// caller skips, and this prints a notice.
pub fn python_has(modules: &str) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {modules}")])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "CI must install the Python modules {modules} (see .ci/run)");
        eprintln!("notice: python3 with {modules} is not installed; skipping the independent check");
    }
    ok
}
