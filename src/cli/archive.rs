//! `agentlog archive DIR`: a copy of every session that outlives the agent's own clean-up.
//!
//! ```text
//! DIR/
//!   sessions/<agent>/<agent>-<id>.jsonl   one file per session, unified JSONL
//!   sessions/.agentlog-manifest.json      what each input held when last converted
//!   history/<agent>.jsonl                 prompt history and thread names, every entry ever seen
//!   .agentlog-archive.json                the files spanning sessions, as last read
//!   .agentlog-archive.lock                held while a run works
//!   .agentlog-index.sqlite                the full-text index for `search` (with --index)
//! ```
//!
//! Files that hold one session (transcripts, subagents, memory, registry entries, todo lists)
//! go through `convert --incremental` into `sessions/`: unchanged inputs are skipped, changed
//! ones redo their sessions, and a session whose inputs are gone keeps its file. Files that
//! span sessions (prompt histories, thread names) change with every prompt; they are converted
//! whole when they changed and merged into `history/<agent>.jsonl`, which keeps every entry
//! it ever held: an entry is the same entry when its session, time and text are. A session
//! whose transcript was never archived but whose prompts are in the history is recovered from
//! there; `agentlog ls DIR` says which sessions exist only in the archive. With `--index`, the
//! archive keeps a full-text index of everything in it ([`crate::stats::search::index`]),
//! brought up to date by every later run: files changed since are indexed again, others kept.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::pipeline::{self, InputSpec};
use crate::read::Settings;
use crate::stats::search::index;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::CliError;
use super::exit::Exit;
use super::incremental;
use super::report::Reporter;

/// The archive's own manifest, in DIR.
const MANIFEST: &str = ".agentlog-archive.json";

/// The lock file, in DIR.
const LOCK: &str = ".agentlog-archive.lock";

/// What the archive holds, as `ls` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A source file of the session still exists.
    Live,
    /// Every source file of the session is gone: only the archive has it.
    ArchivedOnly,
    /// No transcript of the session was ever archived; its prompts come from the prompt history.
    Recovered,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::ArchivedOnly => "archived-only",
            Status::Recovered => "recovered",
        }
    }
}

/// The files spanning sessions, as they were when last read.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    /// By path: size and modification time in nanoseconds.
    spanning: BTreeMap<String, (u64, u128)>,
}

/// Whether `dir` is an archive.
pub fn is_archive(dir: &Path) -> bool {
    dir.join(MANIFEST).is_file()
}

/// What an archive run needs besides the directory.
pub struct Run<'a> {
    /// The inputs: as given, or the agents' default places.
    pub inputs: Vec<InputSpec>,
    /// The reader for every input; `None` tells each input's format from its content.
    pub reader: Option<&'static dyn crate::read::Reader>,
    /// Reading threads.
    pub jobs: usize,
    /// The longest input line read.
    pub max_line_bytes: usize,
    /// Whether to make a full-text index when there is none (one there is always updated).
    pub index: bool,
    /// Where diagnostics and the summary go.
    pub reporter: &'a Reporter,
}

/// Brings the archive in `dir` up to date with the inputs.
pub fn run(dir: &Path, run: &Run<'_>) -> Exit {
    let reporter = run.reporter;
    if let Err(e) = fs::create_dir_all(dir) {
        reporter.error(&CliError::output(&Some(dir.to_owned()), e));
        return Exit::Output;
    }
    let lock = match lock(dir) {
        Ok(lock) => lock,
        Err(e) => {
            reporter.error(&e);
            return Exit::Usage;
        }
    };
    let settings = Settings::new(run.jobs, run.max_line_bytes).unwrap_or_default();
    // Inputs unchanged since the last run keep the reader they had, unopened.
    let manifest = incremental::Manifest::load(&dir.join("sessions"));
    let unchanged = |spec: &InputSpec| crate::read::reader(manifest.unchanged(spec)?);
    let (groups, errors) = pipeline::plan(&run.inputs, run.reader, &unchanged, &settings);
    for e in &errors {
        reporter.error(e);
    }
    let (mut spanning, mut single) = (Vec::new(), Vec::new());
    for item in groups.iter().flat_map(|g| &g.items) {
        match pipeline::file_kind(item).spans_sessions() {
            true => spanning.push(item.spec.clone()),
            false => single.push(item.spec.clone()),
        }
    }
    let mut exit = if errors.is_empty() { Exit::Success } else { Exit::Input };
    let plan = |inputs: Vec<InputSpec>, output: PathBuf, incremental: bool| super::convert::Plan {
        inputs,
        reader: run.reader,
        writer: crate::write::writer("unified").expect("the unified writer is registered"),
        output: Some(output),
        options: crate::write::Options { threads: run.jobs, ..Default::default() },
        jobs: run.jobs,
        max_line_bytes: run.max_line_bytes,
        shard: None,
        report: None,
        incremental,
        filter: Default::default(),
    };
    let sessions = dir.join("sessions/");
    exit = exit.max(super::convert::run(&plan(single, sessions, true), None, reporter));

    let mut manifest: Manifest =
        fs::read(dir.join(MANIFEST)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let now: BTreeMap<String, (u64, u128)> =
        spanning.iter().filter_map(|s| Some((s.name().to_owned(), stat(Path::new(s.name()))?))).collect();
    let changed = spanning.iter().any(|s| manifest.spanning.get(s.name()) != now.get(s.name()));
    if changed {
        if let Err(e) = fs::create_dir_all(dir.join("history")) {
            reporter.error(&CliError::output(&Some(dir.join("history")), e));
            return Exit::Output;
        }
        let fresh = dir.join("history/.incoming.jsonl");
        exit = exit.max(super::convert::run(&plan(spanning, fresh.clone(), false), None, reporter));
        let merged = merge(&fresh, &dir.join("history"));
        let _ = fs::remove_file(&fresh);
        if let Err(e) = merged {
            reporter.error(&CliError::output(&Some(dir.join("history")), e));
            return Exit::Output;
        }
    }
    manifest.spanning.extend(now);
    let saved = crate::write::AtomicFile::create(&dir.join(MANIFEST)).and_then(|mut file| {
        serde_json::to_writer_pretty(&mut file, &manifest)?;
        file.write_all(b"\n")?;
        file.commit()
    });
    if let Err(e) = saved {
        reporter.error(&CliError::output(&Some(dir.join(MANIFEST)), e));
        return Exit::Output;
    }
    if run.index || index::path(dir).is_file() {
        exit = exit.max(update_index(dir, &settings, reporter));
    }
    drop(lock);
    exit
}

/// Brings the archive's full-text index up to date, making it when there is none.
fn update_index(dir: &Path, settings: &Settings, reporter: &Reporter) -> Exit {
    let started = std::time::Instant::now();
    let updated = index::Index::create(dir).and_then(|mut i| i.update(dir, settings));
    match updated {
        Ok(u) => {
            reporter.info(&format!(
                "index: {} files indexed ({}, {} events), {} unchanged, {} removed, in {:.1} s",
                u.indexed,
                super::report::human_size(u.bytes),
                u.events,
                u.unchanged,
                u.removed,
                started.elapsed().as_secs_f64()
            ));
            Exit::Success
        }
        Err(e) => {
            reporter.error(&CliError::output(&Some(index::path(dir)), e));
            Exit::Output
        }
    }
}

/// Takes the archive's lock, held until the returned file is dropped; a run already holding it
/// is an error, not a wait, so that a scheduler's overlapping runs simply skip.
fn lock(dir: &Path) -> Result<File, CliError> {
    let path = dir.join(LOCK);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| CliError::output(&Some(path.clone()), e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(CliError::Usage {
            message: format!(
                "another agentlog archive run is writing {} (it holds {LOCK}); try again when it ends",
                dir.display()
            ),
        }),
        Err(fs::TryLockError::Error(e)) => Err(CliError::output(&Some(path), e)),
    }
}

fn stat(path: &Path) -> Option<(u64, u128)> {
    let meta = fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    Some((meta.len(), modified))
}

/// What makes two entries of a prompt history or thread-name file the same entry, whichever
/// line of whichever copy of the file they were read from.
fn entry_key(event: &Value) -> String {
    let payload = &event["payload"];
    let what = if event["kind"] == "message" { &payload["text"] } else { &payload["data"] };
    serde_json::to_string(&(&event["agent"], &event["session_id"], &event["timestamp"], &event["kind"], what))
        .unwrap_or_default()
}

/// Appends the events of `fresh` that `history/<agent>.jsonl` does not hold yet to it.
fn merge(fresh: &Path, history: &Path) -> io::Result<()> {
    // Each fresh line with its entry key, by agent: every line is parsed once.
    let mut by_agent: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in BufReader::new(File::open(fresh)?).lines() {
        let line = line?;
        let event: Value = serde_json::from_str(&line).map_err(io::Error::other)?;
        let agent = event["agent"].as_str().unwrap_or("unknown").to_owned();
        by_agent.entry(agent).or_default().push((entry_key(&event), line));
    }
    fs::create_dir_all(history)?;
    for (agent, lines) in by_agent {
        let path = history.join(format!("{agent}.jsonl"));
        let mut seen = HashSet::new();
        let mut old = Vec::new();
        if let Ok(file) = File::open(&path) {
            for line in BufReader::new(file).lines() {
                let line = line?;
                if let Ok(event) = serde_json::from_str::<Value>(&line) {
                    seen.insert(entry_key(&event));
                }
                old.push(line);
            }
        }
        let new: Vec<String> = lines.into_iter().filter(|(key, _)| seen.insert(key.clone())).map(|(_, l)| l).collect();
        if new.is_empty() {
            continue;
        }
        let mut file = crate::write::AtomicFile::create(&path)?;
        for line in old.iter().chain(&new) {
            file.write_all(line.as_bytes())?;
            file.write_all(b"\n")?;
        }
        file.commit()?;
    }
    Ok(())
}

/// One session of an archive, as `ls` lists it.
#[derive(Debug, Serialize)]
pub struct Listed {
    /// The agent.
    pub agent: String,
    /// The session id.
    pub session: String,
    /// Whether its sources still exist.
    pub status: Status,
    /// The archive file holding it.
    pub file: String,
}

/// The sessions of the archive in `dir`, by agent and id.
pub fn sessions(dir: &Path) -> Vec<Listed> {
    let manifest = incremental::Manifest::load(&dir.join("sessions"));
    let mut sources: BTreeMap<(String, String), bool> = BTreeMap::new();
    for (path, entry) in &manifest.files {
        let exists = Path::new(path).exists();
        for [agent, session] in &entry.sessions {
            *sources.entry((agent.clone(), session.clone())).or_default() |= exists;
        }
    }
    let mut listed = Vec::new();
    let mut names = HashSet::new();
    for ((agent, session), live) in &sources {
        let Some(agent_value) = crate::model::Agent::from_name(agent) else { continue };
        let name = crate::write::session_file_name(agent_value, session, "jsonl", &mut names);
        let file = dir.join("sessions").join(agent).join(name);
        let status = if *live { Status::Live } else { Status::ArchivedOnly };
        listed.push(Listed {
            agent: agent.clone(),
            session: session.clone(),
            status,
            file: file.display().to_string(),
        });
    }
    let mut recovered: BTreeSet<(String, String)> = BTreeSet::new();
    for entry in fs::read_dir(dir.join("history")).into_iter().flatten().flatten() {
        let Ok(file) = File::open(entry.path()) else { continue };
        for line in BufReader::new(file).lines().map_while(Result::ok) {
            let Ok(event) = serde_json::from_str::<Value>(&line) else { continue };
            let key = (
                event["agent"].as_str().unwrap_or_default().to_owned(),
                event["session_id"].as_str().unwrap_or_default().to_owned(),
            );
            if event["kind"] == "message" && !sources.contains_key(&key) && recovered.insert(key.clone()) {
                let file = entry.path().display().to_string();
                listed.push(Listed { agent: key.0, session: key.1, status: Status::Recovered, file });
            }
        }
    }
    listed.sort_by(|a, b| (&a.agent, &a.session).cmp(&(&b.agent, &b.session)));
    listed
}

/// Writes the sessions of an archive: tab-separated, a table, or JSON lines.
pub fn write_sessions(listed: &[Listed], style: super::ls::Style, out: &mut impl Write) -> io::Result<()> {
    match style {
        super::ls::Style::Json => {
            for row in listed {
                serde_json::to_writer(&mut *out, row)?;
                out.write_all(b"\n")?;
            }
        }
        super::ls::Style::Tabs => {
            for r in listed {
                writeln!(out, "{}\t{}\t{}\t{}", r.agent, r.session, r.status.as_str(), r.file)?;
            }
        }
        super::ls::Style::Table => {
            let width =
                |f: &dyn Fn(&Listed) -> usize, header: &str| listed.iter().map(f).max().unwrap_or(0).max(header.len());
            let (a, s, t) = (
                width(&|r| r.agent.len(), "AGENT"),
                width(&|r| r.session.chars().count(), "SESSION"),
                width(&|r| r.status.as_str().len(), "STATUS"),
            );
            writeln!(out, "{:<a$}  {:<s$}  {:<t$}  FILE", "AGENT", "SESSION", "STATUS")?;
            for r in listed {
                writeln!(out, "{:<a$}  {:<s$}  {:<t$}  {}", r.agent, r.session, r.status.as_str(), r.file)?;
            }
        }
    }
    out.flush()
}
