//! Running a conversion over many groups of inputs: converting groups in parallel, and handing
//! their events to the destination in input order, so that the output does not depend on the
//! number of threads.

use std::fs::File;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::model::{Agent, Event, Meta, MetaType, Payload};
use crate::read::{self, Input, ReadReport, Settings, Shared, StoredInput, store};
use crate::redact::{Redactor, Scope};
use crate::stats::filter::Gate;
use crate::write::{Build, Builders, Encoder, EventSink};

mod backlog;
mod building;
mod claims;
mod spill;

use building::Building;
pub use building::Built;

use claims::{Claims, Reach, waiting_bytes};
use spill::{AHEAD_BYTES, Budget, Shelf, Spill};

use super::detect::{Chosen, choose_reader, open};
use super::error::InputError;
use super::inputs::InputSpec;
use super::plan::{Group, Held};

/// What reading one input gave.
pub struct Outcome {
    /// The input's name.
    pub name: String,
    /// Its report, or why it could not be read.
    pub result: Result<ReadReport, InputError>,
}

/// Where events go while a group is read.
pub trait Destination {
    /// Before an input's events.
    fn begin(&mut self, name: &str) -> io::Result<()>;
    /// One event.
    fn event(&mut self, event: Event) -> io::Result<()>;
    /// A run of events already encoded for the writer, in place of their [`Destination::event`]s;
    /// only destinations that hand [`run`] an encoder take them.
    fn encoded(&mut self, _encoded: Encoded) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "this destination takes events, not encoded bytes"))
    }
    /// A piece the writer's builder made on a reading thread, or the sessions of events in a
    /// later one; only destinations that hand [`run`] builders take them.
    fn built(&mut self, _built: Built) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "this destination takes events, not pieces"))
    }
    /// Encoded events held back in a file: `len` bytes of `from` at offset `at`, and their
    /// sessions; moves `from`'s position.
    fn encoded_from(&mut self, from: &File, at: u64, len: u64, sessions: Vec<(Agent, String)>) -> io::Result<()> {
        let mut bytes = Vec::new();
        crate::write::read_range(from, at, len, &mut bytes)?;
        self.encoded(Encoded { bytes, sessions })
    }

    /// After an input, with what reading it gave.
    fn end(&mut self, outcome: Outcome) -> io::Result<()>;

    /// After the last input of a group: no later event belongs to a session met before.
    fn end_group(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads a group's inputs in order into `dest`; the files `held` holds are read from memory.
///
/// # Errors
/// When `dest` fails; problems with an input are outcomes, not errors.
pub fn read_group(group: &Group, held: &Held, dest: &mut dyn Destination, settings: &Settings) -> io::Result<()> {
    let mut shared = Shared::new(settings.clone(), held.in_memory(group));
    let mut gate = settings.filter().map(Gate::new);
    let redactor = settings.redactor();
    let mut scope = redactor.map(Redactor::scope).unwrap_or_default();
    for (i, item) in group.items.iter().enumerate() {
        let name = item.spec.name();
        if let InputSpec::Stored(stored) = &item.spec {
            // A session of a database: no bytes to tell a format from, its reader was told when
            // the database was listed.
            let db = match store::Db::open(&stored.path) {
                Ok(db) => db,
                Err(source) => {
                    dest.end(failed(name, InputError::Database { path: name.to_owned(), source: Box::new(source) }))?;
                    continue;
                }
            };
            let mut dest_error = None;
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let input = StoredInput { stored, db: &db, shared: &mut shared };
                dest.begin(name)?;
                let read = item.reader.read_stored(input, &mut |event| {
                    hand_on(event, settings, &mut gate, &mut scope, dest)
                        .inspect_err(|e| dest_error = Some(io::Error::new(e.kind(), e.to_string())))
                });
                Ok::<_, io::Error>(read)
            }));
            if let Some(e) = dest_error {
                return Err(e);
            }
            let result = match read {
                Ok(Ok(Ok(report))) => Ok(redacted(report, redactor)),
                Ok(Ok(Err(read::StoredError::Store(source)))) => {
                    Err(InputError::Database { path: name.to_owned(), source: Box::new(source) })
                }
                Ok(Ok(Err(read::StoredError::Io(source)))) => {
                    Err(InputError::Unreadable { path: name.to_owned(), source })
                }
                Ok(Err(e)) => return Err(e),
                Err(panic) => Err(InputError::Internal { path: name.to_owned(), message: panic_message(&*panic) }),
            };
            dest.end(Outcome { name: name.to_owned(), result })?;
            continue;
        }
        let given = item.told.then_some(item.reader);
        let (bytes, found) = match held.files.iter().find(|f| f.item == i) {
            Some(f) => (Ok(Box::new(&held.bytes[f.range.clone()]) as Box<dyn io::BufRead>), f.found.clone()),
            None => (open(&item.spec), None),
        };
        shared.found_at(found);
        let opened = bytes.and_then(|bytes| choose_reader(item.spec.name(), given, item.forced, bytes));
        let Chosen { bytes, reader, looks_like, first_line, new_kind } = match opened {
            Ok(Some(found)) => found,
            Ok(None) => {
                dest.end(failed(name, InputError::unknown_format(name)))?;
                continue;
            }
            Err(source) => {
                dest.end(failed(name, InputError::Unreadable { path: name.to_owned(), source }))?;
                continue;
            }
        };
        dest.begin(name)?;
        let mut dest_error = None;
        // A bug met in one input fails that input only: the others still convert.
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reader.read(Input { name, bytes, shared: &mut shared }, &mut |event| {
                hand_on(event, settings, &mut gate, &mut scope, dest)
                    .inspect_err(|e| dest_error = Some(io::Error::new(e.kind(), e.to_string())))
            })
        }));
        if let Some(e) = dest_error {
            return Err(e);
        }
        let result = match read {
            Ok(Ok(mut report)) => {
                if let Some(other) = looks_like.filter(|other| other.name() != reader.name()) {
                    let problem = read::Problem::reader_mismatch(reader.name(), other.name());
                    report.diagnostics.push(read::InputDiagnostic::new(name, 1, &first_line, problem).kept());
                }
                if let Some(kind) = item.new_kind.as_deref().or(new_kind.as_deref()) {
                    let problem = read::Problem::new_kind_in_place(reader.name(), kind);
                    report.diagnostics.insert(0, read::InputDiagnostic::new(name, 1, &first_line, problem).kept());
                }
                Ok(redacted(report, redactor))
            }
            Ok(Err(source)) => Err(InputError::Unreadable { path: name.to_owned(), source }),
            Err(panic) => Err(InputError::Internal { path: name.to_owned(), message: panic_message(&*panic) }),
        };
        dest.end(Outcome { name: name.to_owned(), result })?;
    }
    Ok(())
}

/// Hands an event read on: priced when it is a response's usage, through the filters, redacted.
fn hand_on(
    mut event: Event,
    settings: &Settings,
    gate: &mut Option<Gate<'_>>,
    scope: &mut Scope,
    dest: &mut dyn Destination,
) -> io::Result<()> {
    if let Payload::Meta(Meta { meta_type: MetaType::Usage, usage: Some(usage), .. }) = &mut event.payload {
        settings.prices().price(usage);
    }
    let redactor = settings.redactor();
    let mut hand_on = |mut event: Event| {
        if let Some(redactor) = redactor {
            redactor.event(&mut event, scope);
        }
        dest.event(event)
    };
    match gate {
        Some(gate) => gate.pass(event, &mut hand_on),
        None => hand_on(event),
    }
}

/// A report whose diagnostics are redacted: a diagnostic shows part of its line, which may hold
/// a secret too.
fn redacted(mut report: ReadReport, redactor: Option<&Redactor>) -> ReadReport {
    if let Some(redactor) = redactor {
        for diagnostic in &mut report.diagnostics {
            diagnostic.redact(|text| redactor.text(text));
        }
    }
    report
}

/// The message a panic carried.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_owned(),
        (_, Some(s)) => s.clone(),
        _ => "a panic without a message".to_owned(),
    }
}

fn failed(name: &str, error: InputError) -> Outcome {
    Outcome { name: name.to_owned(), result: Err(error) }
}

/// A run of events encoded on a reading thread by the writer's [`Encoder`].
pub struct Encoded {
    /// The events' bytes, as the writer writes them.
    pub bytes: Vec<u8>,
    /// The sessions of the events, each run of events of one session named once.
    pub sessions: Vec<(Agent, String)>,
}

/// What a reading thread sends the writing thread, in order.
enum Message {
    Begin(String),
    Events(Vec<Event>),
    Encoded(Encoded),
    Built(Built),
    End(Outcome),
    /// Messages held back in a temporary file while the writer was busy with earlier groups.
    Spilled(Spill),
    /// Messages kept in memory while the group's channel was full, in order.
    Kept(Vec<Message>),
}

/// The error of a reading thread whose writer has gone.
fn stopped<E>(_: E) -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the writer stopped")
}

/// Hands one message to `dest`.
fn deliver(message: Message, dest: &mut dyn Destination) -> io::Result<()> {
    match message {
        Message::Begin(name) => dest.begin(&name),
        Message::Events(events) => events.into_iter().try_for_each(|event| dest.event(event)),
        Message::Encoded(encoded) => dest.encoded(encoded),
        Message::Built(built) => dest.built(built),
        Message::End(outcome) => dest.end(outcome),
        Message::Spilled(spill) => spill.deliver(dest),
        Message::Kept(messages) => messages.into_iter().try_for_each(|message| deliver(message, dest)),
    }
}

/// Events sent to the writing thread at a time.
const CHUNK_EVENTS: usize = 256;

/// Bytes of encoded events sent to the writing thread at a time.
const ENCODED_CHUNK_BYTES: usize = 256 * 1024;

/// Messages a group's reading thread may run ahead of the writer; bounds memory.
const MESSAGES_AHEAD: usize = 16;

/// The same when the messages are pieces built for the writer (each up to a record batch).
const PIECES_AHEAD: usize = 4;

/// Forwards a group's events to the writing thread in chunks; encoded, when the writer has an
/// encoder and the pool is busy with other inputs, so that encoding runs in parallel and events
/// are freed on the thread that made them.
///
/// Given an encoder, it does not wait while the writer is busy with earlier groups: it encodes
/// every event and holds its messages back in a temporary file ([`Spill`]) until the writer can
/// take them, up to [`SPILL_BYTES`] for all of them. It does so too once the groups read ahead
/// keep [`AHEAD_BYTES`] waiting in memory.
struct Forward {
    to: SyncSender<Message>,
    /// The group's index, to tell whether it is the one being written.
    group: usize,
    chunk: Vec<Event>,
    encoder: Option<Encoder>,
    encoded: Encoded,
    spill: Option<Spill>,
    /// The reading thread's file for held-back messages, kept from group to group.
    shelf: Option<Shelf>,
    /// What is held back or kept at the end of the group, when the channel is full.
    last: Arc<Mutex<Option<Message>>>,
    /// With builders: messages kept while the channel is full ([`backlog`]); `None` otherwise.
    backlog: Option<backlog::Backlog>,
    budget: Arc<Budget>,
    settings: Settings,
}

impl Forward {
    fn send(&mut self, message: Message) -> io::Result<()> {
        if self.backlog.is_some() {
            return self.send_in_order(message);
        }
        if let Some(spill) = self.spill.take() {
            if spill.is_full() {
                self.to.send(Message::Spilled(spill)).map_err(stopped)?;
                return self.put(message);
            }
            match self.to.try_send(Message::Spilled(spill)) {
                Ok(()) => {}
                Err(TrySendError::Full(Message::Spilled(spill))) => {
                    self.hold(spill, message);
                    return Ok(());
                }
                Err(e) => return Err(stopped(e)),
            }
        }
        match self.try_put(message) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(message)) => {
                let budget = &self.budget;
                match self.encoder.filter(|_| !budget.spent()).and_then(|_| Spill::new(budget, &mut self.shelf)) {
                    Some(spill) => {
                        self.hold(spill, message);
                        Ok(())
                    }
                    None => self.put(message),
                }
            }
            Err(e @ TrySendError::Disconnected(_)) => Err(stopped(e)),
        }
    }

    /// Sends `message` if the channel has room for it, and, for a group read ahead of the
    /// writer, if the encoded events waiting in memory are under [`AHEAD_BYTES`].
    fn try_put(&self, message: Message) -> Result<(), TrySendError<Message>> {
        let waiting = waiting_bytes(&message);
        if waiting > 0
            && self.budget.writing.load(Ordering::Relaxed) != self.group
            && self.budget.waiting.load(Ordering::Relaxed) >= AHEAD_BYTES
        {
            return Err(TrySendError::Full(message));
        }
        self.budget.waiting.fetch_add(waiting, Ordering::Relaxed);
        self.to.try_send(message).inspect_err(|_| {
            self.budget.waiting.fetch_sub(waiting, Ordering::Relaxed);
        })
    }

    /// Sends `message`, waiting for the writer if need be.
    fn put(&self, message: Message) -> io::Result<()> {
        let waiting = waiting_bytes(&message);
        self.budget.waiting.fetch_add(waiting, Ordering::Relaxed);
        self.to.send(message).map_err(|e| {
            self.budget.waiting.fetch_sub(waiting, Ordering::Relaxed);
            stopped(e)
        })
    }

    /// Holds `message` back in `spill`, which then holds this group's messages.
    fn hold(&mut self, mut spill: Spill, message: Message) {
        spill.hold(message);
        self.spill = Some(spill);
    }

    /// Hands over what is held back: through the channel if it has room, else into `last`,
    /// which the writer looks in once the channel is closed. A group read ahead of the writer
    /// thus never waits for it at its end.
    fn finish(&mut self) -> io::Result<()> {
        if self.backlog.is_some() {
            return self.finish_backlog();
        }
        let Some(spill) = self.spill.take() else { return Ok(()) };
        match self.to.try_send(Message::Spilled(spill)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(spilled)) => {
                *self.last.lock().map_err(|_| io::Error::other("the writer panicked"))? = Some(spilled);
                Ok(())
            }
            Err(e) => Err(stopped(e)),
        }
    }

    /// Sends what is gathered; at most one of events and encoded events is.
    fn flush(&mut self) -> io::Result<()> {
        if !self.encoded.bytes.is_empty() {
            let fresh = Encoded { bytes: Vec::with_capacity(ENCODED_CHUNK_BYTES + 64 * 1024), sessions: Vec::new() };
            let encoded = std::mem::replace(&mut self.encoded, fresh);
            self.send(Message::Encoded(encoded))?;
        }
        if !self.chunk.is_empty() {
            let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK_EVENTS));
            self.send(Message::Events(chunk))?;
        }
        Ok(())
    }
}

impl Destination for Forward {
    fn begin(&mut self, name: &str) -> io::Result<()> {
        self.send(Message::Begin(name.to_owned()))
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        // While this input's lines are parsed on the pool, this thread is the one that maps
        // them, and the writing thread would otherwise wait: it encodes. While every thread
        // reads an input of its own, each encodes its own events.
        let encoder = self.encoder.filter(|_| self.spill.is_some() || !self.settings.parse_on_pool());
        let Some(encode) = encoder else {
            if !self.encoded.bytes.is_empty() {
                self.flush()?;
            }
            self.chunk.push(event);
            if self.chunk.len() >= CHUNK_EVENTS {
                self.flush()?;
            }
            return Ok(());
        };
        if !self.chunk.is_empty() {
            self.flush()?;
        }
        encode(&event, &mut self.encoded.bytes);
        let sessions = &mut self.encoded.sessions;
        if sessions.last().is_none_or(|(agent, id)| *agent != event.agent || *id != event.session_id) {
            sessions.push((event.agent, event.session_id));
        }
        if self.encoded.bytes.len() >= ENCODED_CHUNK_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn built(&mut self, built: Built) -> io::Result<()> {
        self.send(Message::Built(built))
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        self.flush()?;
        self.send(Message::End(outcome))
    }
}

/// What the reading threads prepare for the writer besides reading its events.
#[derive(Clone, Default)]
pub enum Prepare {
    /// Nothing: the destination takes events.
    #[default]
    Nothing,
    /// Events encoded with the writer's encoder while the pool is busy with other inputs; the
    /// destination takes those ([`Destination::encoded`]) besides events.
    Encode(Encoder),
    /// Every event handed to a builder of the writer's; the destination takes what they build
    /// ([`Destination::built`]) and no event.
    Build(Builders),
}

impl Prepare {
    /// What the reading threads can prepare for `sink`: its builders if it has them, else its
    /// encoder if it takes encoded events, else nothing.
    pub fn for_sink(sink: &mut dyn EventSink) -> Self {
        match sink.builders() {
            Some(builders) => Prepare::Build(builders),
            None => sink.encoded().map_or(Prepare::Nothing, |sink| Prepare::Encode(sink.encoder())),
        }
    }

    fn encoder(&self) -> Option<Encoder> {
        match self {
            Prepare::Encode(encoder) => Some(*encoder),
            _ => None,
        }
    }

    fn builder(&self) -> Option<Box<dyn Build>> {
        match self {
            Prepare::Build(builders) => Some(builders()),
            _ => None,
        }
    }
}

/// Reads one group into `dest`, through `builder` when there is one, and ends the group.
fn read_and_end(
    group: &Group,
    dest: &mut dyn Destination,
    builder: Option<&mut Box<dyn Build>>,
    settings: &Settings,
) -> io::Result<()> {
    match builder {
        Some(builder) => {
            let mut building = Building::new(dest, builder.as_mut());
            read_group(group, &Held::default(), &mut building, settings)?;
            building.end_group()
        }
        None => read_group(group, &Held::default(), dest, settings).and_then(|()| dest.end_group()),
    }
}

/// Runs every group into `dest` in group order. With more than one of `settings`' threads, as
/// many reading threads read groups (claimed in order, a bounded number of chunks ahead of the writer) while this
/// thread writes, so that parsing and writing overlap and memory stays bounded. What they
/// `prepare` for the writer besides: see [`Prepare`]. Builders run on every thread count, so
/// that what they build does not depend on it.
///
/// # Errors
/// When `dest` fails; the readers then stop.
pub fn run(groups: &[Group], dest: &mut dyn Destination, settings: &Settings, prepare: &Prepare) -> io::Result<()> {
    let readers = settings.threads();
    if readers <= 1 {
        let mut builder = prepare.builder();
        return groups.iter().try_for_each(|group| read_and_end(group, dest, builder.as_mut(), settings));
    }
    let encoder = prepare.encoder();
    // Pieces are large: fewer of them wait per group.
    let building = matches!(prepare, Prepare::Build(_));
    let messages_ahead = if building { PIECES_AHEAD } else { MESSAGES_AHEAD };
    let (senders, receivers): (Vec<_>, Vec<_>) = groups
        .iter()
        .map(|_| {
            let (to, from) = mpsc::sync_channel(messages_ahead);
            (Some(to), from)
        })
        .unzip();
    let senders = Mutex::new(senders);
    let lasts: Vec<Arc<Mutex<Option<Message>>>> = groups.iter().map(|_| Arc::default()).collect();
    let budget = Arc::new(Budget::default());
    let reach = match prepare {
        Prepare::Nothing => Reach::Near,
        Prepare::Encode(_) => Reach::WhileHeldBack,
        // Pieces read ahead wait for room in memory.
        Prepare::Build(_) => Reach::Built,
    };
    let claims = Claims::new(groups.len(), readers, Arc::clone(&budget), reach, settings.clone());
    thread::scope(|scope| {
        for _ in 0..readers.min(groups.len()) {
            let reader = thread::Builder::new().name("agentlog-read".into());
            reader.spawn_scoped(scope, || {
                let mut shelf = None;
                let mut builder = prepare.builder();
                while let Some(i) = claims.claim() {
                    let Some(to) = senders.lock().ok().and_then(|mut s| s.get_mut(i).and_then(Option::take)) else {
                        break; // every group is claimed
                    };
                    let encoded = Encoded { bytes: Vec::new(), sessions: Vec::new() };
                    let budget = Arc::clone(&budget);
                    let last = Arc::clone(&lasts[i]);
                    let mut forward = Forward {
                        to,
                        group: i,
                        chunk: Vec::new(),
                        encoder,
                        encoded,
                        spill: None,
                        shelf,
                        last,
                        backlog: building.then(Default::default),
                        budget,
                        settings: settings.clone(),
                    };
                    let read = read_and_end(&groups[i], &mut forward, builder.as_mut(), settings);
                    if read.and_then(|()| forward.finish()).is_err() {
                        break; // the writer stopped
                    }
                    shelf = forward.shelf.take();
                }
            })?;
        }
        let written = receivers.iter().enumerate().try_for_each(|(i, messages)| {
            claims.writing(i);
            // Delivers a message and releases the bytes it kept waiting, for the groups read
            // ahead that wait for room.
            let mut hand_over = |message: Message| {
                let waiting = waiting_bytes(&message);
                let delivered = deliver(message, dest);
                budget.waiting.fetch_sub(waiting, Ordering::Relaxed);
                if building && waiting > 0 {
                    budget.made_room();
                }
                delivered
            };
            messages.iter().try_for_each(&mut hand_over)?;
            // The channel is closed: the group's reader is done with it.
            let last = lasts[i].lock().map_err(|_| io::Error::other("a reading thread panicked"))?.take();
            last.map_or(Ok(()), hand_over)?;
            dest.end_group()
        });
        // Stopping the claims and dropping the receivers stops the readers, also on error.
        claims.update(|s| s.stopped = true);
        drop(receivers);
        written
    })
}

#[cfg(test)]
mod tests;
