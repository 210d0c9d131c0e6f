//! `-o DIR/`: one transcript per session, `DIR/<agent>/<agent>-<session id>.md`, and
//! `DIR/index.md` listing them by project, newest first.

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::model::Agent;
use crate::write::{AtomicFile, Pending, session_file_name};

use super::render::{Closed, escape_line};

/// The session files of a run, and what its index lists.
pub struct Dir {
    root: PathBuf,
    current: Option<(BufWriter<AtomicFile>, String)>,
    done: Vec<Pending>,
    closed: Vec<(Closed, String)>,
    /// File names given so far: a session met again after others continues in a file of its
    /// own (`…-2.md`).
    used: HashSet<String>,
    /// Sessions given a file, and sessions met with nothing to show (only metadata, or only
    /// events copied from another): those never given a file are counted in the index.
    shown: HashSet<(Agent, String)>,
    empty: HashSet<(Agent, String)>,
}

impl Dir {
    /// An empty directory output under `root`.
    pub fn new(root: &Path) -> Self {
        Dir {
            root: root.to_owned(),
            current: None,
            done: Vec::new(),
            closed: Vec::new(),
            used: HashSet::new(),
            shown: HashSet::new(),
            empty: HashSet::new(),
        }
    }

    /// Starts the file of a session.
    pub fn begin(&mut self, agent: Agent, session_id: &str) -> io::Result<()> {
        self.close_current()?;
        self.shown.insert((agent, session_id.to_owned()));
        let relative = format!("{}/{}", agent.as_str(), session_file_name(agent, session_id, "md", &mut self.used));
        let file = AtomicFile::create(&self.root.join(&relative))?;
        self.current = Some((BufWriter::with_capacity(256 * 1024, file), relative));
        Ok(())
    }

    /// The file being written.
    pub fn writer(&mut self) -> &mut dyn Write {
        &mut self.current.as_mut().expect("a session was begun").0
    }

    /// Lists a finished session in the index.
    pub fn closed(&mut self, session: Closed) {
        let path = self.current.as_ref().map(|(_, p)| p.clone()).unwrap_or_default();
        self.closed.push((session, path));
    }

    /// Notes a session met with nothing to show.
    pub fn nothing_to_show(&mut self, agent: Agent, session_id: &str) {
        self.empty.insert((agent, session_id.to_owned()));
    }

    fn close_current(&mut self) -> io::Result<()> {
        if let Some((writer, _)) = self.current.take() {
            let file = writer.into_inner().map_err(io::IntoInnerError::into_error)?;
            self.done.push(file.close()?);
        }
        Ok(())
    }

    /// Writes the index; every file gets its final name.
    pub fn finish(mut self) -> io::Result<()> {
        self.close_current()?;
        let mut index = BufWriter::new(AtomicFile::create(&self.root.join("index.md"))?);
        write_index(&mut self.closed, &mut index)?;
        let empty = self.empty.difference(&self.shown).count();
        if empty > 0 {
            let what = if empty == 1 { "session has" } else { "sessions have" };
            writeln!(
                index,
                "*{empty} more {what} nothing to show (only metadata, or only events replayed from another session) and no file.*"
            )?;
        }
        let index = index.into_inner().map_err(io::IntoInnerError::into_error)?;
        self.done.push(index.close()?);
        Pending::rename_all(self.done)
    }
}

/// The index: sessions grouped by project (working directory), newest first in each.
fn write_index(sessions: &mut [(Closed, String)], out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "# Sessions\n")?;
    let mut by_project: BTreeMap<&str, Vec<&(Closed, String)>> = BTreeMap::new();
    for s in sessions.iter() {
        by_project.entry(s.0.cwd.as_deref().unwrap_or("(no directory)")).or_default().push(s);
    }
    for (project, mut sessions) in by_project {
        sessions.sort_by(|a, b| b.0.started.cmp(&a.0.started).then_with(|| a.1.cmp(&b.1)));
        writeln!(out, "## {}\n", escape_line(project))?;
        writeln!(out, "| started | session | agent | minutes | prompts | tool calls | output tokens |")?;
        writeln!(out, "|---|---|---|--:|--:|--:|--:|")?;
        for (s, path) in sessions {
            let started = s.started.map_or_else(|| "-".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string());
            let minutes = s.minutes().map_or_else(|| "-".to_owned(), |m| m.to_string());
            let link = format!("[{}](<{}>)", escape_line(&s.id).replace('|', "\\|"), path.replace('>', "%3E"));
            writeln!(
                out,
                "| {started} | {link} | {} | {minutes} | {} | {} | {} |",
                s.agent.as_str(),
                s.prompts,
                s.tool_calls,
                s.output_tokens
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}
