//! A conversion run on threads of its own, handing what it makes to the consumer over a
//! bounded channel: the consumer's pace bounds the memory in flight.

use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use agentlog::cli::Reading;
use agentlog::model::{Diagnostic, Event};
use agentlog::pipeline::{self, Built, Destination, Encoded, Outcome, Prepare};
use agentlog::write::arrow::{Batches, Table};
use agentlog::write::{EventSink, encode};
use arrow_array::RecordBatch;

/// Items made ahead of the consumer: a record batch holds at most 8192 rows or 16 MiB of text,
/// a run of lines about 1 MiB.
const AHEAD: usize = 2;

/// What a run makes.
pub enum Into {
    /// Record batches of a table.
    Table(Table),
    /// Unified JSON lines.
    Lines,
}

/// One thing a run hands over, in input order.
pub enum Item {
    /// A record batch of the table.
    Batch(RecordBatch),
    /// Unified JSON lines, each ending in a newline.
    Lines(Vec<u8>),
    /// A problem: a reported line, or an input that could not be read at all.
    Problem(Diagnostic),
    /// The run ended; with an error when it could not finish.
    End(Result<(), String>),
}

/// A run in progress: its items, and its thread, which ends soon after the receiver is dropped.
pub struct Running {
    /// The items, in order.
    pub items: Receiver<Item>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        // Closing the channel stops the run at its next item.
        let (_, closed) = sync_channel(0);
        drop(std::mem::replace(&mut self.items, closed));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts reading `reading` into `into` on a thread of its own.
pub fn start(reading: Reading, into: Into) -> Running {
    let (to, items) = sync_channel(AHEAD);
    let thread = std::thread::Builder::new().name("agentlog-python".into()).spawn(move || {
        let end = convert(&reading, into, &to).map_err(|e| e.to_string());
        let _ = to.send(Item::End(end));
    });
    match thread {
        Ok(thread) => Running { items, thread: Some(thread) },
        Err(e) => {
            let (to, items) = sync_channel(1);
            let _ = to.send(Item::End(Err(format!("cannot start a reading thread: {e}"))));
            Running { items, thread: None }
        }
    }
}

fn send(to: &SyncSender<Item>, item: Item) -> io::Result<()> {
    to.send(item).map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the consumer went away"))
}

/// Runs the conversion; a consumer that went away ends it quietly.
fn convert(reading: &Reading, into: Into, to: &SyncSender<Item>) -> io::Result<()> {
    for e in &reading.failed {
        send(to, Item::Problem(failed(e)))?;
    }
    let result = match into {
        Into::Table(table) => {
            let sink = Batches::new(table, |batch| send(to, Item::Batch(batch)));
            let mut dest = Dest { sink, to };
            let prepare = Prepare::for_sink(&mut dest.sink);
            pipeline::run(&reading.groups, &mut dest, &reading.settings, &prepare).and_then(|()| dest.sink.finish())
        }
        Into::Lines => {
            let mut dest = Dest { sink: Lines { to, bytes: Vec::new() }, to };
            pipeline::run(&reading.groups, &mut dest, &reading.settings, &Prepare::Encode(encode::event))
                .and_then(|()| dest.sink.finish())
        }
    };
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// An input that could not be read, as a diagnostic without a line.
fn failed(e: &agentlog::pipeline::InputError) -> Diagnostic {
    let problem = agentlog::cli::Problem::of(e);
    Diagnostic {
        code: problem.code.unwrap_or_else(|| "agentlog::input::failed".to_owned()),
        message: e.to_string(),
        file: e.path().to_owned(),
        line: None,
        column: None,
    }
}

/// Where the engine's events go: the sink, and the problems to the consumer.
struct Dest<'a, S> {
    sink: S,
    to: &'a SyncSender<Item>,
}

impl<S: EventSink + Encodes> Destination for Dest<'_, S> {
    fn begin(&mut self, name: &str) -> io::Result<()> {
        self.sink.begin_source(name)
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        self.sink.event(&event)
    }

    fn encoded(&mut self, encoded: Encoded) -> io::Result<()> {
        self.sink.encoded_bytes(encoded.bytes)
    }

    fn built(&mut self, built: Built) -> io::Result<()> {
        built.piece.map_or(Ok(()), |piece| self.sink.piece(piece))
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        match outcome.result {
            Ok(report) => {
                let records: Vec<Diagnostic> = report.diagnostics.iter().map(|d| d.to_record()).collect();
                self.sink.end_source(&outcome.name, report.lines, &records)?;
                records.into_iter().try_for_each(|d| send(self.to, Item::Problem(d)))
            }
            Err(e) => send(self.to, Item::Problem(failed(&e))),
        }
    }

    fn end_group(&mut self) -> io::Result<()> {
        self.sink.end_group()
    }
}

/// A sink that may take events the engine encoded on the reading threads.
trait Encodes {
    /// Takes encoded events.
    fn encoded_bytes(&mut self, _bytes: Vec<u8>) -> io::Result<()> {
        Err(io::Error::other("encoded events for a sink that takes events"))
    }
}

impl<F> Encodes for Batches<F> {}

/// Unified JSON lines, handed over in runs of about 1 MiB.
struct Lines<'a> {
    to: &'a SyncSender<Item>,
    bytes: Vec<u8>,
}

impl Lines<'_> {
    fn give(&mut self) -> io::Result<()> {
        if self.bytes.is_empty() {
            return Ok(());
        }
        send(self.to, Item::Lines(std::mem::take(&mut self.bytes)))
    }
}

impl Encodes for Lines<'_> {
    fn encoded_bytes(&mut self, bytes: Vec<u8>) -> io::Result<()> {
        self.give()?;
        send(self.to, Item::Lines(bytes))
    }
}

impl EventSink for Lines<'_> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        encode::event(event, &mut self.bytes);
        if self.bytes.len() >= 1 << 20 { self.give() } else { Ok(()) }
    }

    fn end_source(&mut self, _name: &str, _lines: u64, _diagnostics: &[Diagnostic]) -> io::Result<()> {
        // The input's problems follow its events.
        self.give()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.give()
    }
}
