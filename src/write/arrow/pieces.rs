//! Building the events table's record batches, and the summaries of their sessions, on the
//! threads that read ([`Build`]), for the writers of one table (Parquet, Arrow IPC).

use std::any::Any;
use std::io::{self, Read, Write};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;

use super::columns::EventColumns;
use super::io_error;
use crate::model::{Diagnostic, Event, SessionSummary};
use crate::write::{Build, Builders, Piece, Sessions, Storage};

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
    /// Whether its batches may wait in a temporary file ([`Piece::storable`]).
    storable: bool,
}

impl EventBuilder {
    /// A builder of batches with the agent column or not (`with_agent`; see
    /// [`super::event_schema`]), or with `events` false, of the sessions only.
    fn new(with_agent: bool, events: bool) -> Self {
        let columns = events.then(|| EventColumns::new(with_agent, false));
        EventBuilder { columns, sessions: Sessions::default(), storable: false }
    }

    /// Builders made by [`EventBuilder::new`], whose batches may wait in a temporary file when
    /// `storable`.
    pub(super) fn builders(with_agent: bool, events: bool, storable: bool) -> Builders {
        Arc::new(move || Box::new(EventBuilder { storable, ..EventBuilder::new(with_agent, events) }))
    }

    fn batch(&mut self) -> io::Result<Option<RecordBatch>> {
        match &mut self.columns {
            Some(columns) if columns.rows() > 0 => columns.finish().map(Some).map_err(io_error),
            _ => Ok(None),
        }
    }
}

impl EventBuilder {
    /// A part as a piece, sized by the memory its batch holds.
    fn piece(&self, part: Part) -> Piece {
        let bytes = part.batch.as_ref().map_or(0, RecordBatch::get_array_memory_size);
        if self.storable { Piece::storable(part, bytes, &PART_STORAGE) } else { Piece::new(part, bytes) }
    }
}

/// A part written as an Arrow IPC stream of its batch; a part with sessions, the last of its
/// group, stays in memory.
static PART_STORAGE: Storage = Storage { store: store_part, load: load_part };

fn store_part(part: &(dyn Any + Send), out: &mut dyn Write) -> io::Result<bool> {
    let Some(Part { batch: Some(batch), sessions: None }) = part.downcast_ref::<Part>() else { return Ok(false) };
    let mut writer = StreamWriter::try_new(out, &batch.schema()).map_err(io_error)?;
    writer.write(batch).map_err(io_error)?;
    writer.finish().map_err(io_error)?;
    Ok(true)
}

fn load_part(bytes: &mut dyn Read) -> io::Result<Box<dyn Any + Send>> {
    let mut reader = StreamReader::try_new(bytes, None).map_err(io_error)?;
    let batch = reader.next().transpose().map_err(io_error)?;
    let batch = batch.ok_or_else(|| io::Error::other("a stored batch is missing"))?;
    Ok(Box::new(Part { batch: Some(batch), sessions: None }))
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
            let batch = self.batch()?;
            return Ok(Some(self.piece(Part { batch, sessions: None })));
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
        Ok(Some(self.piece(Part { batch, sessions: Some(sessions) })))
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
    /// Whether the builders' batches may wait in temporary files.
    storable: bool,
}

impl Gathered {
    /// Nothing yet, for batches with the agent column or not; with `events` false, sessions only.
    pub(super) fn new(with_agent: bool, events: bool) -> Self {
        Gathered { here: EventBuilder::new(with_agent, events), with_agent, events, built: false, storable: false }
    }

    /// The same, for a sink that writes a file whatever the pace of its reader: batches built
    /// far ahead of the one being written may wait in temporary files instead of memory, so
    /// that the threads that read are not held back by a long input before theirs.
    pub(super) fn stored_ahead(self) -> Self {
        Gathered { storable: true, ..self }
    }

    /// Builders of pieces for this sink; see [`crate::write::EventSink::builders`].
    pub(super) fn builders(&mut self) -> Builders {
        self.built = true;
        EventBuilder::builders(self.with_agent, self.events, self.storable)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{self, Input, Shared};

    /// The events of a file of the project's corpus.
    fn events(file: &str) -> Vec<Event> {
        let path = format!("{}/corpus/{file}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap();
        let reader = read::reader(file.split('/').next().unwrap()).unwrap();
        let mut events = Vec::new();
        let input = Input { name: &path, bytes: Box::new(bytes.as_slice()), shared: &mut Shared::default() };
        reader
            .read(input, &mut |e| {
                events.push(e);
                Ok(())
            })
            .unwrap();
        events
    }

    #[test]
    fn a_batch_read_back_from_its_bytes_is_the_batch_that_was_stored() {
        let mut builder = EventBuilder { storable: true, ..EventBuilder::new(true, true) };
        let mut rows = 0;
        for file in ["claude/hostile-text.jsonl", "claude/inline-sidechain.jsonl", "codex/tool-outputs.jsonl"] {
            for event in events(file) {
                builder.event(&event).unwrap();
                rows += 1;
            }
        }
        let batch = builder.batch().unwrap().expect("rows");
        assert_eq!(batch.num_rows(), rows);
        let piece = builder.piece(Part { batch: Some(batch.clone()), sessions: None });
        let mut bytes = Vec::new();
        assert!(piece.store(&mut bytes).unwrap(), "a batch alone may be stored");
        let Part { batch: back, sessions } = *load_part(&mut bytes.as_slice()).unwrap().downcast::<Part>().unwrap();
        let back = back.expect("a batch");
        assert!(sessions.is_none());
        assert_eq!(back, batch);
        // Row groups are cut by these sizes: they must not change on the way.
        for (a, b) in back.columns().iter().zip(batch.columns()) {
            assert_eq!(a.to_data().get_slice_memory_size().unwrap(), b.to_data().get_slice_memory_size().unwrap());
        }
    }

    #[test]
    fn the_last_part_of_a_group_and_pieces_of_unstorable_builders_stay_in_memory() {
        let mut builder = EventBuilder { storable: true, ..EventBuilder::new(true, true) };
        for event in events("codex/tool-outputs.jsonl") {
            builder.event(&event).unwrap();
        }
        let last = builder.end_group().unwrap().expect("rows and sessions");
        let mut bytes = Vec::new();
        assert!(!last.store(&mut bytes).unwrap(), "it holds the group's sessions");
        assert!(bytes.is_empty());
        let mut plain = EventBuilder::new(true, true);
        for event in events("codex/tool-outputs.jsonl") {
            plain.event(&event).unwrap();
        }
        let batch = plain.batch().unwrap();
        assert!(!plain.piece(Part { batch, sessions: None }).is_storable());
    }
}
