//! Running the writer's builders on the reading threads: events in, pieces out.

use std::io;

use crate::model::{Agent, Event};
use crate::write::{Build, Piece};

use super::{Destination, Outcome};

/// What a builder made on a reading thread, and the sessions of the events in it: each run of
/// events of one session named once. Sessions are handed over at the end of every input even
/// when no piece is complete yet (`piece` is then `None`), so that the writer knows each input's
/// sessions when it ends.
pub struct Built {
    /// The piece, if one was complete.
    pub piece: Option<Piece>,
    /// The sessions of the events since the last [`Built`].
    pub sessions: Vec<(Agent, String)>,
}

/// A destination that hands each event to the writer's builder and what it builds to `dest`.
pub(super) struct Building<'a> {
    pub(super) dest: &'a mut dyn Destination,
    pub(super) builder: &'a mut dyn Build,
    pub(super) sessions: Vec<(Agent, String)>,
}

impl<'a> Building<'a> {
    pub(super) fn new(dest: &'a mut dyn Destination, builder: &'a mut dyn Build) -> Self {
        Building { dest, builder, sessions: Vec::new() }
    }

    fn hand_over(&mut self, piece: Option<Piece>) -> io::Result<()> {
        if piece.is_none() && self.sessions.is_empty() {
            return Ok(());
        }
        let sessions = std::mem::take(&mut self.sessions);
        self.dest.built(Built { piece, sessions })
    }
}

impl Destination for Building<'_> {
    fn begin(&mut self, name: &str) -> io::Result<()> {
        self.builder.begin_source();
        self.dest.begin(name)
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        let sessions = &mut self.sessions;
        if sessions.last().is_none_or(|(agent, id)| *agent != event.agent || *id != event.session_id) {
            sessions.push((event.agent, event.session_id.clone()));
        }
        match self.builder.event(&event)? {
            Some(piece) => self.hand_over(Some(piece)),
            None => Ok(()),
        }
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        if let Ok(report) = &outcome.result {
            let records: Vec<_> = report.diagnostics.iter().map(|d| d.to_record()).collect();
            self.builder.end_source(report.lines, &records);
        }
        self.hand_over(None)?;
        self.dest.end(outcome)
    }

    fn end_group(&mut self) -> io::Result<()> {
        let rest = self.builder.end_group()?;
        self.hand_over(rest)?;
        self.dest.end_group()
    }
}
