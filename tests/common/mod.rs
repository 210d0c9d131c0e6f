//! Helpers shared by the integration tests: corpus locations and reading files through the
//! library.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agentlog::model::Event;
use agentlog::pipeline::InputSpec;
use agentlog::read::{Input, ReadReport, Reader, Shared};

/// The project's own samples.
pub fn own_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// A folder of the shared material beside the project (`../shared/<name>`), if present.
///
/// `AGENTLOG_SHARED` names another place for that material; `AGENTLOG_SHARED=off` puts it out
/// of reach, as on a clone alone, and CI runs the suite so once more. When the material is
/// absent a notice is printed; under `CI` that is a failure, unless `off` asked for it.
fn shared(name: &str) -> Option<PathBuf> {
    let root = match std::env::var_os("AGENTLOG_SHARED") {
        Some(value) if value == "off" => {
            eprintln!("notice: AGENTLOG_SHARED=off; skipping the part of this test that reads ../shared/{name}");
            return None;
        }
        Some(value) => PathBuf::from(value),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    };
    let path = root.join(name);
    if path.is_dir() {
        return Some(path);
    }
    assert!(std::env::var_os("CI").is_none(), "CI must have {} (or set AGENTLOG_SHARED=off)", path.display());
    eprintln!("notice: {} is absent; skipping the part of this test that reads it", path.display());
    None
}

/// The third-party corpus beside the project (`../shared/corpus`), if present; see [`shared`].
pub fn shared_corpus() -> Option<PathBuf> {
    shared("corpus")
}

/// The least count a test over both corpora must reach: `with_shared` when the shared corpus is
/// within reach, else `own_alone`, what the project's own `corpus/` holds by itself (so that a
/// clone alone passes, and a test still fails if its check finds nothing to check).
pub fn at_least(with_shared: usize, own_alone: usize) -> usize {
    if shared_corpus().is_some() { with_shared } else { own_alone }
}

/// The folders of the corpora that hold one agent's files, with the reader that must tell them:
/// the own corpus's `corpus/<reader>/` and `corpus/recorded/<reader>/`, and the samples' folders
/// of `../shared/other-agents/`. A file under none of them is Codex's (the shared corpus's
/// Codex sessions sit in dated folders).
pub const FOLDERS: &[(&str, &str)] = &[
    ("claude", "claude"),
    ("codex", "codex"),
    ("gemini", "gemini"),
    ("copilot", "copilot"),
    ("opencode", "opencode"),
    ("kilo", "kilo"),
    ("crush", "crush"),
    ("qwen", "qwen"),
    ("pi", "pi"),
    ("aider", "aider"),
    ("cline", "cline"),
    ("droid", "droid"),
    ("factory-droid", "droid"),
    ("cursor", "cursor"),
    ("kiro", "kiro"),
    ("openhands", "openhands"),
];

/// Every input under `dir` as `convert` finds it (files, and sessions inside databases), each
/// with the reader its first lines or its place choose; that reader must be the one its folder
/// names ([`FOLDERS`]). The flag tells a session inside a database.
pub fn told_inputs(dir: &Path) -> Vec<(PathBuf, &'static dyn Reader, bool)> {
    let (inputs, errors) = agentlog::pipeline::expand(&[dir.display().to_string()]);
    assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
    let (groups, errors) = agentlog::pipeline::plan(&inputs, None, &|_| None, &Default::default());
    assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
    let mut told = Vec::new();
    for item in groups.iter().flat_map(|g| &g.items) {
        let path = PathBuf::from(item.spec.name());
        let folder = FOLDERS
            .iter()
            .find(|(folder, _)| path.components().any(|c| c.as_os_str() == *folder))
            .map_or("codex", |(_, reader)| reader);
        assert_eq!(item.reader.name(), folder, "{}: told as the wrong format", path.display());
        told.push((path, item.reader, matches!(item.spec, InputSpec::Stored(_))));
    }
    told
}

/// Session files under `dir` as `convert` finds them, each with its reader (see
/// [`told_inputs`]), but for the sessions inside databases, and the sessions of one file per
/// record of OpenCode and OpenHands, which are not files to read line by line:
/// `tests/opencode.rs`, `tests/openhands.rs` and the other database readers' tests read them.
pub fn session_files(dir: &Path) -> Vec<(PathBuf, &'static dyn Reader)> {
    told_inputs(dir)
        .into_iter()
        .filter(|(_, reader, stored)| !stored && !["opencode", "kilo", "openhands"].contains(&reader.name()))
        .map(|(path, reader, _)| (path, reader))
        .collect()
}

/// The real samples of other agents beside the project (`../shared/other-agents`), if
/// present; see [`shared`].
pub fn other_agents() -> Option<PathBuf> {
    shared("other-agents")
}

/// Every file of the own corpus and, when present, the shared one and the other agents'
/// samples.
pub fn all_session_files() -> Vec<(PathBuf, &'static dyn Reader)> {
    let mut files = session_files(&own_corpus());
    if let Some(shared) = shared_corpus() {
        files.extend(session_files(&shared));
    }
    if let Some(other) = other_agents() {
        let mut folders: Vec<PathBuf> =
            std::fs::read_dir(other).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
        folders.sort();
        for folder in folders {
            files.extend(session_files(&folder));
        }
    }
    files
}

/// The first record of a JSON Lines file whose `type` is `record_type`, read as plain JSON.
pub fn first_record(path: &Path, record_type: &str) -> serde_json::Value {
    text(path)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|r| r["type"] == record_type)
        .unwrap_or_else(|| panic!("{} has a {record_type} record", path.display()))
}

/// Each `usage` event with its usage.
pub fn usages(events: &[Event]) -> Vec<(&Event, &agentlog::model::Usage)> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            agentlog::model::Payload::Meta(m) if m.meta_type == agentlog::model::MetaType::Usage => {
                Some((e, m.usage.as_ref().unwrap()))
            }
            _ => None,
        })
        .collect()
}

/// The type of a meta event; `None` for other events.
pub fn meta_type(e: &Event) -> Option<agentlog::model::MetaType> {
    match &e.payload {
        agentlog::model::Payload::Meta(m) => Some(m.meta_type),
        _ => None,
    }
}

/// Reads one file with `reader`, naming it `name`, with no state from other files.
pub fn read_file(reader: &dyn Reader, path: &Path, name: &str) -> (Vec<Event>, ReadReport) {
    read_file_with(reader, path, name, &mut Shared::default())
}

/// Reads one file with `reader`, naming it `name`, with the state of the files read before.
pub fn read_file_with(reader: &dyn Reader, path: &Path, name: &str, shared: &mut Shared) -> (Vec<Event>, ReadReport) {
    let bytes = agentlog::pipeline::open(&InputSpec::File(path.display().to_string())).expect("corpus file opens");
    let mut events = Vec::new();
    let report = reader
        .read(Input { name, bytes, shared }, &mut |e| {
            events.push(e);
            Ok(())
        })
        .expect("reading from a file and into a Vec does not fail");
    (events, report)
}

/// A session file's bytes, decompressed for `*.zst`, read without the library.
pub fn bytes(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "zst") { zstd::decode_all(bytes.as_slice()).unwrap() } else { bytes }
}

/// A session file's text, decompressed for `*.zst`, read without the library.
pub fn text(path: &Path) -> String {
    String::from_utf8_lossy(&bytes(path)).into_owned()
}

/// Counts the non-empty lines of a file (decompressed, for `*.zst`), independently of the
/// readers.
pub fn non_empty_lines(path: &Path) -> u64 {
    let bytes = bytes(path);
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

/// A pseudo-terminal: its leader end, and its follower end to give a child as standard output,
/// where `isatty` is true. Nothing reads the leader, so a child must not write much there.
pub fn terminal() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain POSIX calls on a descriptor this function owns; the name buffer is large
    // enough for any pty path and NUL-terminated by ptsname_r on success.
    unsafe {
        let leader = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(leader >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let leader_file = std::fs::File::from_raw_fd(leader);
        assert_eq!(libc::grantpt(leader), 0, "grantpt");
        assert_eq!(libc::unlockpt(leader), 0, "unlockpt");
        let mut name = [0 as libc::c_char; 256];
        assert_eq!(libc::ptsname_r(leader, name.as_mut_ptr(), name.len()), 0, "ptsname_r");
        let path = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap().to_owned();
        let follower = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
        (leader_file, follower)
    }
}

/// Renders events as a Markdown transcript with the default options.
pub fn markdown(events: &[Event]) -> String {
    use agentlog::write::{Options, Target, writer};
    let mut out = Vec::new();
    let mut sink = writer("markdown").unwrap().open(Target::Stream(Box::new(&mut out)), &Options::default()).unwrap();
    for e in events {
        sink.event(e).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    String::from_utf8(out).unwrap()
}

/// Copies the directory tree `from` to `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// What the independent script `tests/independent/<script>` says of `files` (a JSON value, by
/// file); `None` when python3 cannot be run, which under `CI` is a failure.
pub fn independent<P: AsRef<std::ffi::OsStr>>(script: &str, files: &[P]) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent").join(script);
    let Ok(out) = std::process::Command::new("python3").arg(script).args(files).output() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3");
        return None;
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// A recorded session file being written again, line by line, into a temporary agent store:
/// for tests that follow files as they grow (`watch`).
pub struct Growing {
    /// The temporary folder; `state` and other files of the test go here.
    pub dir: tempfile::TempDir,
    /// The folder the live file is in (a Claude Code project, a Codex sessions folder).
    pub folder: PathBuf,
    /// The file being written.
    pub live: PathBuf,
    /// The recorded file's lines.
    pub lines: Vec<String>,
    written: usize,
}

impl Growing {
    /// The recorded file `recorded` (under the project's corpus), to be written as `name` in
    /// `folder` (relative to a new temporary folder); nothing written yet.
    pub fn new(recorded: &str, folder: &str, name: &str) -> Growing {
        let text = text(&own_corpus().join(recorded));
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(folder);
        std::fs::create_dir_all(&folder).unwrap();
        let live = folder.join(name);
        Growing { dir, folder, live, lines: text.lines().map(str::to_owned).collect(), written: 0 }
    }

    /// A Claude Code session recorded at 2.1.328 (`tools`), in a project folder.
    pub fn claude() -> Growing {
        Growing::new("recorded/claude/2.1.328/tools.jsonl", "projects/-work", "tools.jsonl")
    }

    /// Appends the recorded lines up to line `upto` (counted from 1), each with its newline.
    pub fn write_to(&mut self, upto: usize) {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&self.live).unwrap();
        for line in &self.lines[self.written..upto] {
            writeln!(f, "{line}").unwrap();
        }
        self.written = upto;
    }

    /// Appends the rest.
    pub fn finish(&mut self) {
        self.write_to(self.lines.len());
    }

    /// A path in the temporary folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}
