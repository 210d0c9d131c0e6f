//! `-o DIR/`: one transcript per session, `DIR/<agent>/<agent>-<session id>.<ext>`, and
//! `DIR/index.<ext>` listing them by project, newest first.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::model::{Agent, SessionSummary};
use crate::write::{AtomicFile, Pending, session_file_name};

use super::Style;

/// A session as an index lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Its summary (without diagnostics or file lists).
    pub summary: SessionSummary,
    /// Prompts the user typed.
    pub prompts: u64,
    /// Its file, relative to the index.
    pub path: String,
}

impl Listed {
    /// Minutes from the first event to the last.
    pub fn minutes(&self) -> Option<i64> {
        Some((self.summary.ended_at? - self.summary.started_at?).num_minutes())
    }
}

/// The sessions an index lists across runs into one directory (`agentlog watch -o DIR/`, which
/// writes only the sessions that changed each time): each run's are added, replacing earlier
/// entries of the same session, and the index lists them all.
pub type Listing = std::sync::Arc<std::sync::Mutex<HashMap<(Agent, String), Listed>>>;

/// The session files of a run, and what its index lists.
pub struct Dir {
    /// The sessions listed by earlier runs, when the index lists them too.
    listing: Option<Listing>,
    root: PathBuf,
    extension: &'static str,
    current: Option<(BufWriter<AtomicFile>, String)>,
    done: Vec<Pending>,
    listed: Vec<Listed>,
    /// File names given so far: a session met again after others continues in a file of its
    /// own (`…-2.md`).
    used: HashSet<String>,
    /// Sessions given a file, and sessions met with nothing to show (only metadata, or only
    /// events copied from another): those never given a file are counted in the index.
    shown: HashSet<(Agent, String)>,
    empty: HashSet<(Agent, String)>,
    /// The file of each session written so far, relative to the root.
    paths: HashMap<(Agent, String), String>,
}

impl Dir {
    /// An empty directory output under `root`, of files ending in `.extension`.
    pub fn new(root: &Path, extension: &'static str, listing: Option<Listing>) -> Self {
        Dir {
            listing,
            root: root.to_owned(),
            extension,
            current: None,
            done: Vec::new(),
            listed: Vec::new(),
            used: HashSet::new(),
            shown: HashSet::new(),
            empty: HashSet::new(),
            paths: HashMap::new(),
        }
    }

    /// Starts the file of a session; gives the writer to write it with.
    pub fn begin(&mut self, summary: &SessionSummary) -> io::Result<&mut dyn Write> {
        let (agent, id) = (summary.agent, &summary.session_id);
        self.shown.insert((agent, id.clone()));
        let name = session_file_name(agent, id, self.extension, &mut self.used);
        let relative = format!("{}/{name}", agent.as_str());
        self.paths.entry((agent, id.clone())).or_insert_with(|| relative.clone());
        let file = AtomicFile::create(&self.root.join(&relative))?;
        let (writer, _) = self.current.insert((BufWriter::with_capacity(256 * 1024, file), relative));
        Ok(writer)
    }

    /// Where the file of session `id` of `agent`, if one was written, is from the folder of
    /// `from`'s files.
    pub fn link(&self, from: Agent, agent: Agent, id: &str) -> Option<String> {
        let path = self.paths.get(&(agent, id.to_owned()))?;
        Some(if from == agent { path.rsplit('/').next().unwrap_or(path).to_owned() } else { format!("../{path}") })
    }

    /// Ends the file begun last and lists its session in the index.
    pub fn end(&mut self, mut summary: SessionSummary, prompts: u64) -> io::Result<()> {
        let (writer, path) = self.current.take().expect("a session was begun");
        let file = writer.into_inner().map_err(io::IntoInnerError::into_error)?;
        self.done.push(file.close()?);
        summary.diagnostics = Vec::new();
        summary.files = Vec::new();
        summary.orphan_calls = Vec::new();
        summary.orphan_outputs = Vec::new();
        self.listed.push(Listed { summary, prompts, path });
        Ok(())
    }

    /// Notes a session met with nothing to show.
    pub fn nothing_to_show(&mut self, agent: Agent, session_id: &str) {
        self.empty.insert((agent, session_id.to_owned()));
    }

    /// Writes the index, sorted by project (working directory), newest first in each; every
    /// file gets its final name.
    pub fn finish(mut self, style: &mut dyn Style) -> io::Result<()> {
        if let Some(listing) = &self.listing {
            let mut listing = listing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for listed in self.listed.drain(..) {
                listing.insert((listed.summary.agent, listed.summary.session_id.clone()), listed);
            }
            self.listed = listing.values().cloned().collect();
        }
        let project = |l: &Listed| l.summary.cwd.clone().unwrap_or_default();
        self.listed.sort_by(|a, b| {
            project(a)
                .cmp(&project(b))
                .then_with(|| b.summary.started_at.cmp(&a.summary.started_at))
                .then_with(|| a.path.cmp(&b.path))
        });
        let empty = self.empty.difference(&self.shown).count();
        let mut index = BufWriter::new(AtomicFile::create(&self.root.join(format!("index.{}", self.extension)))?);
        style.begin_document("Sessions", &mut index)?;
        style.index(&self.listed, empty, &mut index)?;
        style.end_document(&mut index)?;
        let index = index.into_inner().map_err(io::IntoInnerError::into_error)?;
        self.done.push(index.close()?);
        Pending::rename_all(self.done)
    }
}
