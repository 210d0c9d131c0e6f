//! Readers: one per agent, each turning that agent's session files into [`Event`]s.
//!
//! A reader is a unit struct implementing [`Reader`], listed once in [`READERS`]; `--from`
//! values, format sniffing and the conformance tests all walk that list. Every reader goes
//! through the same line loop ([`read_lines`]), which guarantees the line accounting users rely
//! on: every non-empty input line is either mapped to events or reported as exactly one
//! [`InputDiagnostic`], and the reader moves on.

pub mod aider;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod crush;
pub mod cursor;
mod diagnostic;
pub mod droid;
pub mod gemini;
pub(crate) mod gemini_parts;
mod head;
pub mod interchange;
pub mod kilo;
pub mod kiro;
pub(crate) mod lenient;
mod lines;
mod literals;
mod object;
pub mod opencode;
pub mod openhands;
mod parse;
mod paths;
pub mod pi;
pub mod qwen;
mod settings;
mod shared;
pub mod side;
mod skim;
pub mod store;
pub mod unified;

use std::io::{self, BufRead};

use crate::model::{Agent, Event, EventKey, Payload, SCHEMA_VERSION, ToolFamily};

pub use diagnostic::{InputDiagnostic, Problem};
pub use head::{Head, Records};
pub use lenient::{Count, checked_sum};
pub use lines::read_lines;
pub(crate) use object::{Apart, Nested, Object, RawField, borrowed};
pub(crate) use parse::{file_object, parse_object, parse_time};
pub use paths::file_stem;
pub(crate) use paths::{file_name, files_under, home_dir};
pub use settings::{DEFAULT_MAX_LINE_BYTES, Settings, Wanted};
pub use shared::{InMemory, Shared};
pub use side::FileKind;

/// Every reader agentlog knows, in the order `--help` lists them.
pub const READERS: &[&dyn Reader] = &[
    &claude::Claude,
    // Before Codex, whose sniff takes any record with an `id` and a `timestamp` and no `type`
    // for an old rollout's header, as an OpenHands event file is.
    &openhands::OpenHands,
    &codex::Codex,
    &gemini::Gemini,
    &copilot::Copilot,
    &qwen::Qwen,
    &opencode::OpenCode,
    &kilo::Kilo,
    &crush::Crush,
    &pi::Pi,
    &aider::Aider,
    &cline::Cline,
    &droid::Droid,
    &cursor::Cursor,
    &kiro::Kiro,
    &unified::Unified,
    &interchange::Interchange,
];

/// Looks a reader up by the name users type (`claude`, `codex`).
pub fn reader(name: &str) -> Option<&'static dyn Reader> {
    READERS.iter().copied().find(|r| r.name() == name)
}

/// Finds the reader whose format the start of a file matches.
pub fn sniff(head: &Head<'_>) -> Option<&'static dyn Reader> {
    READERS.iter().copied().find(|r| r.sniff(head))
}

/// The reader whose agent keeps files where `path` lies ([`Reader::owns`]).
pub fn owner(path: &str) -> Option<&'static dyn Reader> {
    READERS.iter().copied().find(|r| r.owns(std::path::Path::new(path)))
}

/// What a follower does with an event read from a file still being written
/// ([`Reader::unfinished`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unfinished {
    /// The event is final as read.
    No,
    /// Held while it comes from the file's last line: the next line may complete it.
    UntilNextLine,
    /// Held until the file settles: a line written any time later may complete it.
    UntilSettled,
}

/// A reader of one agent's session files.
pub trait Reader: Send + Sync {
    /// The name users type after `--from`.
    fn name(&self) -> &'static str;

    /// The agent whose files this reader reads; `None` for agentlog's own formats, which hold
    /// events of any agent.
    fn agent(&self) -> Option<Agent>;

    /// One line for `--help`: the files and versions this reader handles.
    fn description(&self) -> &'static str;

    /// Whether a file starting like `head` is in this reader's format.
    fn sniff(&self, head: &Head<'_>) -> bool;

    /// Whether `event`, read from a file still being written, may change or go once more lines
    /// are written: the agent writes some items over two lines (Codex: an answer's
    /// `item_completed` before its `response_item`, a typed prompt before its `item_completed`),
    /// or counts a response on a later line (Codex: a `token_usage_record` sent on its own at the
    /// end of the file, whose `token_count` may come a few lines later). A follower holds such an
    /// event back until the file grows or settles ([`Unfinished`]).
    fn unfinished(&self, _event: &crate::model::Event) -> Unfinished {
        Unfinished::No
    }

    /// Where [`Reader::discover`] looks, for `--help` (`$CODEX_HOME or ~/.codex`); `None` for
    /// formats without a home.
    fn home(&self) -> Option<&'static str> {
        None
    }

    /// The session files this reader's agent keeps in its default places, in name order; empty
    /// for formats without a home. `env` looks up environment variables (`HOME` and the
    /// agent's own).
    fn discover(&self, _env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// Whether a file at this path, found while walking a directory, is one of this reader's
    /// files. Files no reader accepts are not read from directories (they may be read when
    /// named).
    fn accepts(&self, _path: &std::path::Path) -> bool {
        false
    }

    /// Whether `path` lies in this agent's own layout (its session folders), so that a file
    /// there whose first lines match no known format is still read as this agent's: its new
    /// records kept as `unknown`, with one warning naming the new kind.
    fn owns(&self, _path: &std::path::Path) -> bool {
        false
    }

    /// What a file of this reader at `path`, starting with `head`, holds: a transcript, or one
    /// of the agent's side files (prompt history, memory, …).
    fn file_kind(&self, _path: &str, _head: &[u8]) -> FileKind {
        FileKind::Session
    }

    /// The key of the group of inputs a file belongs to: files of one group share reader state
    /// ([`Shared`]) and are read in order on one thread. `None`, the default, reads each file
    /// on its own.
    fn group(&self, _path: &std::path::Path) -> Option<String> {
        None
    }

    /// The session a file holds as its path says, for files whose records do not say (memory
    /// files, todo lists); `None` by default.
    fn session_of(&self, _path: &str) -> Option<String> {
        None
    }

    /// The session id and agent version one of a file's first records names, for listing.
    fn peek(&self, _record: &serde_json::Value) -> Peek {
        Peek::default()
    }

    /// The family of a tool this reader's agent names `name`, so that tool use compares across
    /// agents; [`ToolFamily::of`] knows the names of Claude Code and Codex.
    fn tool_family(&self, name: &str) -> ToolFamily {
        ToolFamily::of(name)
    }

    /// For an agent that keeps its sessions in an SQLite database: the sessions `db` holds when
    /// it is this agent's database (told by its tables and its file name), each read on its
    /// own with [`Reader::read_stored`]; `None`, the default, when it is not.
    fn stored_sessions(&self, _db: &store::Db) -> Option<Result<Vec<store::Stored>, store::StoreError>> {
        None
    }

    /// Converts one session of a database, as [`Reader::read`] converts a file: each row read
    /// counts as a line, and becomes events or one diagnostic.
    ///
    /// # Errors
    /// When the session cannot be read (the database is locked or damaged), or `out` fails.
    fn read_stored(
        &self,
        input: StoredInput<'_>,
        _out: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Result<ReadReport, StoredError> {
        Err(StoredError::Io(io::Error::other(format!("{}: {} reads no databases", input.stored.name, self.name()))))
    }

    /// Converts one input, passing each event to `out` in order.
    ///
    /// # Errors
    /// Only I/O errors: reading the input, or `out` failing to take an event. Problems with the
    /// content are reported in the returned [`ReadReport`], never as errors.
    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport>;
}

/// What a file's first records say about it, for listing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Peek {
    /// The session the file holds.
    pub session: Option<String>,
    /// The version of the agent that wrote it.
    pub version: Option<String>,
    /// The agent, as the records name it, for formats that hold any agent's events.
    pub agent: Option<String>,
    /// What the file holds, from its name and first line.
    pub kind: FileKind,
}

/// Whether a file name ends like a JSON Lines file, plain or zstd-compressed.
pub fn is_jsonl_name(file_name: &str) -> bool {
    file_name.ends_with(".jsonl") || file_name.ends_with(".jsonl.zst")
}

/// Whether a file starts like a pretty-printed JSON document: a lone `{` on its first line.
pub(crate) fn is_pretty_document(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(256)]);
    text.trim_start().lines().next().is_some_and(|first| first.trim() == "{")
}

/// Whether a file starts like a pretty-printed JSON document whose first key is `key`.
pub(crate) fn document_opens_with(head: &Head<'_>, key: &str) -> bool {
    if head.first_line.trim() != "{" {
        return false;
    }
    let mut lines = head.text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines.nth(1).is_some_and(|second| {
        second.strip_prefix('"').and_then(|s| s.strip_prefix(key)).is_some_and(|s| s.starts_with('"'))
    })
}

/// Reads a whole JSON document of a format rewritten whole on every change (so small): `map`
/// turns its text into events and says whether it was a valid document. `None` when it was
/// not, or is not UTF-8; the caller then reads its lines one by one, each with its own verdict.
///
/// # Errors
/// When `out` fails.
pub(crate) fn read_document(
    agent: Agent,
    name: &str,
    text: &[u8],
    out: &mut dyn FnMut(Event) -> io::Result<()>,
    map: impl FnOnce(&str, &mut Emitter<'_>) -> io::Result<bool>,
) -> io::Result<Option<ReadReport>> {
    let Ok(text) = std::str::from_utf8(text) else { return Ok(None) };
    crate::model::take_repairs();
    let mut emitter = Emitter::new(agent, name, out);
    if !map(text, &mut emitter)? {
        return Ok(None);
    }
    let lines = lines::counted_lines(text);
    let mut report = ReadReport { lines, lines_mapped: lines, events: emitter.count(), ..ReadReport::default() };
    report.note_repairs_in_document(name, text);
    Ok(Some(report))
}

/// The string at `key` of a JSON object, if it is one.
fn string_at(value: &serde_json::Value, key: &str) -> Option<String> {
    value.get(key).and_then(serde_json::Value::as_str).map(str::to_owned)
}

/// One input to read.
pub struct Input<'a> {
    /// The input's name as given on the command line (`-` for standard input).
    pub name: &'a str,
    /// The input's bytes.
    pub bytes: Box<dyn BufRead + 'a>,
    /// State readers keep across the inputs of one run, such as the records already seen
    /// (resumed sessions copy earlier records into new files).
    pub shared: &'a mut Shared,
}

/// One session of a database to read ([`Reader::read_stored`]).
pub struct StoredInput<'a> {
    /// The session, as the database listing gave it.
    pub stored: &'a store::Stored,
    /// The database, open read-only.
    pub db: &'a store::Db,
    /// State kept across the inputs of the group, and the run's settings.
    pub shared: &'a mut Shared,
}

/// Why reading a session of a database stopped.
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    /// The database could not be read.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// Handing an event on failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// What reading one input found.
#[derive(Debug, Default)]
pub struct ReadReport {
    /// Non-empty lines read.
    pub lines: u64,
    /// Lines that became events.
    pub lines_mapped: u64,
    /// Lines that could not be mapped: each has one diagnostic (kept in `diagnostics`, or only
    /// counted in `more_diagnostics`).
    pub lines_diagnosed: u64,
    /// Events produced.
    pub events: u64,
    /// The first [`MAX_DIAGNOSTICS`] diagnostics: one per line that could not be mapped, and
    /// one per value changed in a line that was (see [`InputDiagnostic::skipped`]).
    pub diagnostics: Vec<InputDiagnostic>,
    /// Diagnostics beyond those in `diagnostics`, only counted.
    pub more_diagnostics: u64,
}

/// Diagnostics a reader keeps per input; the rest are counted, so that memory stays bounded for
/// a corrupt file.
pub const MAX_DIAGNOSTICS: usize = 1000;

impl ReadReport {
    /// Lines that could not be mapped.
    pub fn diagnosed(&self) -> u64 {
        self.lines_diagnosed
    }

    /// Every diagnostic, kept or only counted: skipped lines and changed values.
    pub fn warnings(&self) -> u64 {
        self.diagnostics.len() as u64 + self.more_diagnostics
    }

    /// Keeps a diagnostic for each value repaired on this thread while the whole document
    /// `text` of input `name` was read, at its line and column.
    pub(crate) fn note_repairs_in_document(&mut self, name: &str, text: &str) {
        let start = text.as_ptr() as usize;
        for noted in crate::model::take_repairs() {
            let at = noted.at.checked_sub(start).filter(|at| *at < text.len()).unwrap_or(0);
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
            let number = text[..at].matches('\n').count() as u64 + 1;
            let path = diagnostic::json_path_at(text, at);
            let problem = Problem::repaired(&path, noted.repair.describe(), at - line_start);
            self.push(|| InputDiagnostic::new(name, number, &text[line_start..line_end], problem).kept());
        }
    }

    /// Keeps a diagnostic, or counts it once [`MAX_DIAGNOSTICS`] are kept.
    pub(crate) fn push(&mut self, make: impl FnOnce() -> InputDiagnostic) {
        if self.diagnostics.len() >= MAX_DIAGNOSTICS {
            self.more_diagnostics += 1;
        } else {
            self.diagnostics.push(make());
        }
    }
}

/// One line of an input, without its line ending.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// Byte offset of the line's start.
    pub offset: u64,
    /// The line's text.
    pub text: &'a str,
}

/// The stateless half of reading a line format: turns one line into owned results. It runs on
/// any thread, ahead of the lines before it, so that one large file is parsed on every core.
pub trait LineParser: Clone + Send + 'static {
    /// What one line gives the [`LineMapper`].
    type Parsed: Send + 'static;

    /// Parses one line.
    ///
    /// # Errors
    /// The [`Problem`] that makes the line unusable: it becomes the line's diagnostic, and the
    /// mapper never sees the line.
    fn parse(&self, line: Line<'_>) -> Result<Self::Parsed, Problem>;

    /// Whether a line, other than the first, may matter to token usage: its records, or state
    /// that usage events depend on (session, model, counters). Runs that count only usage
    /// ([`Settings::usage_only`]) skip the other lines unparsed. Every line by default.
    fn may_matter_to_usage(&self, _line: &[u8]) -> bool {
        true
    }

    /// Whether a line, other than the first, holds only bulk text that no other line's events
    /// depend on (a tool's output, say): a run looking for some text
    /// ([`Settings::looking_for`]) skips such a line unparsed when its raw bytes lack the text,
    /// and the events of the other lines are then those of a full run. No line by default.
    fn is_bulk_text(&self, _line: &[u8]) -> bool {
        false
    }

    /// What a run looking for some text takes from a line, other than the first, that lacks
    /// it and is not bulk text: only what other lines' events take from it (the names of the
    /// tools it calls), read from its raw bytes, without its own events, which lack the text.
    /// `None` when the line is to be parsed whole; always by default.
    fn skim(&self, _line: &[u8]) -> Option<Self::Parsed> {
        None
    }
}

/// The stateful half: takes the parsed lines of one input in order and emits their events,
/// keeping what spans lines (responses spread over several lines, cumulative counters).
pub trait LineMapper<P> {
    /// Emits the events of one parsed line.
    ///
    /// # Errors
    /// When `out` failed.
    fn map(&mut self, parsed: P, out: &mut Emitter<'_>) -> io::Result<()>;

    /// Emits what the mapper held back until the end of the input.
    ///
    /// # Errors
    /// When `out` failed.
    fn finish(&mut self, _out: &mut Emitter<'_>) -> io::Result<()> {
        Ok(())
    }
}

impl From<serde_json::Error> for Problem {
    fn from(e: serde_json::Error) -> Self {
        Problem::from_json(&e)
    }
}

/// Hands events to the caller, giving each its id, `seq` and source file.
pub struct Emitter<'a> {
    out: &'a mut dyn FnMut(Event) -> io::Result<()>,
    agent: Agent,
    file: &'a str,
    file_name: &'a str,
    seq: u64,
}

impl<'a> Emitter<'a> {
    /// An emitter for events of one input.
    pub fn new(agent: Agent, file: &'a str, out: &'a mut dyn FnMut(Event) -> io::Result<()>) -> Self {
        Emitter { out, agent, file, file_name: file_name(file), seq: 0 }
    }

    /// Emits an event; `slot` tells apart the events of one line (see [`EventKey`]).
    ///
    /// # Errors
    /// When the caller fails to take the event.
    pub fn emit(&mut self, event: Event, slot: u32) -> io::Result<()> {
        let session = event.session_id.clone();
        self.emit_keyed(event, slot, &session)
    }

    /// Emits an event whose id is made with `key_session` in place of its session id: for
    /// events placed in a session by looking at other files, whose id must not depend on them.
    ///
    /// # Errors
    /// When the caller fails to take the event.
    pub fn emit_keyed(&mut self, event: Event, slot: u32, key_session: &str) -> io::Result<()> {
        let line = event.source.line;
        let file_name = self.file_name;
        self.emit_with(event, EventKey { agent: self.agent, session_id: key_session, file_name, line, slot })
    }

    /// Emits an event of a record that has an id of its own, unique in its session (a row of an
    /// agent's database): its id is made from that id in place of the file and line, so that
    /// it stays the same whichever form the session is read from (the database, an export of
    /// it) and whatever the row's place.
    ///
    /// # Errors
    /// When the caller fails to take the event.
    pub fn emit_record(&mut self, event: Event, record: &str, slot: u32) -> io::Result<()> {
        let session = event.session_id.clone();
        self.emit_with(event, EventKey { agent: self.agent, session_id: &session, file_name: record, line: 0, slot })
    }

    fn emit_with(&mut self, mut event: Event, key: EventKey<'_>) -> io::Result<()> {
        event.id = key.id();
        event.schema_version = SCHEMA_VERSION.into();
        event.agent = self.agent;
        derive_tool_fields(&mut event, true);
        event.seq = self.seq;
        event.source.file.clear();
        event.source.file.push_str(self.file);
        self.seq += 1;
        (self.out)(event)
    }

    /// Hands on an event that already has its id and position (agentlog's own formats).
    ///
    /// # Errors
    /// When the caller fails to take the event.
    pub fn pass(&mut self, mut event: Event) -> io::Result<()> {
        derive_tool_fields(&mut event, false);
        self.seq += 1;
        (self.out)(event)
    }

    /// Events emitted so far.
    pub fn count(&self) -> u64 {
        self.seq
    }
}

/// Sets what agentlog derives on tool calls and outputs: `tool_kind` from the tool's name, and
/// `failed` by [`crate::model::failed`]. With `again` false, only where the event lacks them
/// (agentlog's own output of an earlier version, read back).
fn derive_tool_fields(event: &mut Event, again: bool) {
    let family = |name: &str| match READERS.iter().find(|r| r.agent() == Some(event.agent)) {
        Some(reader) => reader.tool_family(name),
        None => ToolFamily::of(name),
    };
    match &mut event.payload {
        Payload::ToolCall(call) if again || call.tool_kind.is_none() => {
            call.tool_kind = Some(family(&call.name));
        }
        Payload::ToolOutput(output) => {
            if again || output.tool_kind.is_none() {
                output.tool_kind = output.name.as_deref().map(family);
            }
            if again || output.failed.is_none() {
                output.failed = crate::model::failed(event.agent, output.is_error, output.exit_code);
            }
        }
        _ => {}
    }
}
