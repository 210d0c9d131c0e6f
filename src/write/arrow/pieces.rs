//! Building the events table's record batches, and the summaries of their sessions, on the
//! threads that read ([`Build`]), for the writers of one table (Parquet, Arrow IPC).

use std::io;
use std::sync::Arc;

use arrow_array::RecordBatch;

use super::columns::EventColumns;
use super::io_error;
use crate::model::{Diagnostic, Event, SessionSummary};
use crate::write::{Build, Builders, Piece, Sessions};

/// What an [`EventBuilder`] makes: a batch of events, and at the end of a group, the summaries
/// of the group's sessions.
pub(super) struct Part {
    /// Rows of the events table.
    pub(super) batch: Option<RecordBatch>,
    /// The group's sessions, in the last part of a group.
    pub(super) sessions: Option<Sessions>,
}

/// Builds a group's events into batches of at most 8192 rows or 16 MiB of text
/// ([`EventColumns::is_full`]), the last one cut at the group's end, and summarises its sessions.
pub(super) struct EventBuilder {
    /// `None` when only the sessions are wanted.
    columns: Option<EventColumns>,
    sessions: Sessions,
}

impl EventBuilder {
    /// A builder of batches with the agent column or not (`with_agent`; see
    /// [`super::event_schema`]), or with `events` false, of the sessions only.
    fn new(with_agent: bool, events: bool) -> Self {
        let columns = events.then(|| EventColumns::new(with_agent, false));
        EventBuilder { columns, sessions: Sessions::default() }
    }

    /// Builders made by [`EventBuilder::new`].
    pub(super) fn builders(with_agent: bool, events: bool) -> Builders {
        Arc::new(move || Box::new(EventBuilder::new(with_agent, events)))
    }

    fn batch(&mut self) -> io::Result<Option<RecordBatch>> {
        match &mut self.columns {
            Some(columns) if columns.rows() > 0 => columns.finish().map(Some).map_err(io_error),
            _ => Ok(None),
        }
    }
}

/// A part as a piece, sized by the memory its batch holds.
fn piece(part: Part) -> Piece {
    let bytes = part.batch.as_ref().map_or(0, RecordBatch::get_array_memory_size);
    Piece::new(part, bytes)
}

impl Build for EventBuilder {
    fn begin_source(&mut self) {
        self.sessions.begin_source();
    }

    fn event(&mut self, event: &Event) -> io::Result<Option<Piece>> {
        self.sessions.observe(event);
        let Some(columns) = &mut self.columns else { return Ok(None) };
        columns.append(event);
        if columns.is_full() {
            return Ok(Some(piece(Part { batch: self.batch()?, sessions: None })));
        }
        Ok(None)
    }

    fn end_source(&mut self, lines: u64, diagnostics: &[Diagnostic]) {
        self.sessions.end_source(lines, diagnostics);
    }

    fn end_group(&mut self) -> io::Result<Option<Piece>> {
        let batch = self.batch()?;
        let sessions = std::mem::take(&mut self.sessions);
        if batch.is_none() && sessions.is_empty() {
            return Ok(None);
        }
        Ok(Some(piece(Part { batch, sessions: Some(sessions) })))
    }
}

/// What a sink of one events table gathers: the rows of its next batch and the summaries of its
/// sessions, from events given to it (built here by an [`EventBuilder`] of its own), or, once it
/// has handed out builders, from their pieces.
pub(super) struct Gathered {
    here: EventBuilder,
    with_agent: bool,
    /// Whether rows are wanted, besides the sessions.
    events: bool,
    /// Whether builders were handed out: events and sessions then come in pieces.
    built: bool,
}

impl Gathered {
    /// Nothing yet, for batches with the agent column or not; with `events` false, sessions only.
    pub(super) fn new(with_agent: bool, events: bool) -> Self {
        Gathered { here: EventBuilder::new(with_agent, events), with_agent, events, built: false }
    }

    /// Builders of pieces for this sink; see [`crate::write::EventSink::builders`].
    pub(super) fn builders(&mut self) -> Builders {
        self.built = true;
        EventBuilder::builders(self.with_agent, self.events)
    }

    pub(super) fn begin_source(&mut self) {
        if !self.built {
            self.here.begin_source();
        }
    }

    /// Takes an event; gives a batch once one is full.
    pub(super) fn event(&mut self, event: &Event) -> io::Result<Option<RecordBatch>> {
        match self.here.event(event)? {
            Some(piece) => self.piece(piece),
            None => Ok(None),
        }
    }

    /// Takes a piece of a builder of [`Gathered::builders`]; gives its batch.
    pub(super) fn piece(&mut self, piece: Piece) -> io::Result<Option<RecordBatch>> {
        let Part { batch, sessions } = piece.open()?;
        if let Some(sessions) = sessions {
            self.here.sessions.absorb(sessions);
        }
        Ok(batch)
    }

    pub(super) fn end_source(&mut self, lines: u64, diagnostics: &[Diagnostic]) {
        if !self.built {
            self.here.end_source(lines, diagnostics);
        }
    }

    /// The rows gathered since the last batch, if any.
    pub(super) fn rest(&mut self) -> io::Result<Option<RecordBatch>> {
        self.here.batch()
    }

    /// The summaries of every session gathered.
    pub(super) fn sessions(&mut self) -> Vec<SessionSummary> {
        std::mem::take(&mut self.here.sessions).finish()
    }
}
