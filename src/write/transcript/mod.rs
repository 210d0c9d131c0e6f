//! Transcripts: what a person reads of a session, shared by the Markdown and HTML writers.
//!
//! This module walks a session's events into sections; a [`Style`] says how each section looks.
//! Per session: a header (title, agent and version, models, directory, branch, start, end,
//! duration, prompts, tool calls, token usage), the user's prompts and the assistant's text,
//! each tool call together with its output (matched by call id), reasoning folded (or in full,
//! or left out), injected context folded and labelled, commands, compaction, interrupts and
//! rollbacks as one-line notes, and each subagent's sections folded under the call that
//! spawned it. Events copied from an earlier session (resume, fork) are not repeated, and a
//! session with nothing to show gets no section. Nothing here knows an agent.
//!
//! A session's sections are held ([`body`]) until it ends, in memory up to a few MiB and then
//! in a temporary file, because its header says what only its end knows; `-o DIR/` gives each
//! session a file and writes an index ([`dir`]).

mod body;
mod dir;
pub mod view;

use std::io::{self, BufWriter, Write};

use chrono::{DateTime, Utc};

use crate::model::{
    Agent, Event, MetaType, Payload, Relation, Role, SessionSummary, SessionTally, ToolCall, ToolOutput,
};
use crate::write::{AtomicFile, EventSink, Options, Target, WriteError, is_directory_target, unsupported};

use body::Body;
pub use body::Frame;
use dir::Dir;
pub use dir::Listed;
use view::{Attachment, Exchange, attachments, command_text, injected_label};

/// How reasoning appears in a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningShown {
    /// Folded, to be opened (the default).
    #[default]
    Folded,
    /// In full, as a section of its own.
    Full,
    /// Left out.
    Omitted,
}

/// How images and documents appear in a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImagesShown {
    /// A placeholder naming the type and size (the default).
    #[default]
    Placeholder,
    /// Inline images embedded as data (PNG, JPEG, GIF, WebP; others stay placeholders).
    Embedded,
}

/// What a transcript shows, and how much before it folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TranscriptOptions {
    /// How reasoning appears.
    pub reasoning: ReasoningShown,
    /// How images appear.
    pub images: ImagesShown,
    /// Tool outputs longer than this many lines are folded.
    pub fold_lines: usize,
    /// Tool outputs longer than this many bytes are folded.
    pub fold_bytes: usize,
}

impl Default for TranscriptOptions {
    fn default() -> Self {
        TranscriptOptions {
            reasoning: ReasoningShown::Folded,
            images: ImagesShown::Placeholder,
            fold_lines: 20,
            fold_bytes: 2000,
        }
    }
}

/// What a folded or plain section holds.
pub enum Content<'t> {
    /// Markdown from the log, kept as Markdown.
    Markdown(&'t str),
    /// Text shown as it is, in a code block with this info string (`json`, `diff`, or empty).
    Code(&'t str, &'t str),
}

/// What the header of a session says.
pub struct Header<'s> {
    /// The session's summary: title, times, models, usage.
    pub summary: &'s SessionSummary,
    /// Prompts the user typed.
    pub prompts: u64,
    /// Events copied from an earlier session and not repeated.
    pub copied: u64,
}

impl Header<'_> {
    /// The session's title, or its id when it has none.
    pub fn title(&self) -> String {
        let s = self.summary;
        s.title.as_deref().map_or_else(|| format!("Session {}", s.session_id), |t| view::one_line(t, 100))
    }

    /// What the header lists, as (name, plain text) pairs in order; `code` values are names
    /// and paths, best shown as code.
    pub fn fields(&self) -> Vec<(&'static str, String, bool)> {
        let s = self.summary;
        let mut fields = vec![("session", s.session_id.clone(), true)];
        let versions =
            if s.agent_versions.is_empty() { String::new() } else { format!(" {}", s.agent_versions.join(", ")) };
        fields.push(("agent", format!("{}{versions}", s.agent.as_str()), false));
        if !s.models.is_empty() {
            fields.push(("model", s.models.join(", "), true));
        }
        for (name, value) in [("directory", &s.cwd), ("branch", &s.git_branch)] {
            if let Some(value) = value {
                fields.push((name, value.clone(), true));
            }
        }
        if let Some(parent) = &s.parent_session_id {
            let relation = match s.relation {
                Some(Relation::Subagent) => "subagent of",
                Some(Relation::Fork) => "forked from",
                Some(Relation::Resume) => "resumed from",
                None => "parent",
            };
            fields.push((relation, parent.clone(), true));
        }
        let time = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
        if let Some(started) = s.started_at {
            fields.push(("started", time(started), false));
        }
        if let (Some(started), Some(ended)) = (s.started_at, s.ended_at) {
            let minutes = (ended - started).num_minutes();
            let duration = if minutes >= 60 {
                format!("{} h {} min", minutes / 60, minutes % 60)
            } else {
                format!("{minutes} min")
            };
            fields.push(("ended", format!("{} ({duration})", time(ended)), false));
        }
        let activity = format!("{}, {}", counted(self.prompts, "prompt"), counted(s.counts.tool_calls, "tool call"));
        fields.push(("activity", activity, false));
        let u = &s.usage;
        fields.push((
            "tokens",
            format!(
                "{} input, {} cache read, {} cache write, {} output ({} responses)",
                thousands(u.input_tokens),
                thousands(u.cache_read_tokens),
                thousands(u.cache_write_tokens),
                thousands(u.output_tokens),
                thousands(u.responses)
            ),
            false,
        ));
        if self.copied > 0 {
            fields.push((
                "replayed",
                format!("{} events copied from an earlier session, not repeated", thousands(self.copied)),
                false,
            ));
        }
        fields
    }
}

/// `n` and `what`, plural but for one: `1 prompt`, `1,024 tool calls`.
pub fn counted(n: u64, what: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {what}{s}", thousands(n))
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How a transcript format writes each kind of section. Every string comes from the log and
/// must be made safe by the style.
pub trait Style: Frame + Send {
    /// The extension of the files written under `-o DIR/` (`md`, `html`).
    fn extension(&self) -> &'static str;

    /// Writes what comes before the sessions of a document (`title` names it).
    ///
    /// # Errors
    /// When writing fails (as for every method here).
    fn begin_document(&mut self, title: &str, out: &mut dyn Write) -> io::Result<()>;

    /// Writes what comes after the sessions of a document.
    fn end_document(&mut self, out: &mut dyn Write) -> io::Result<()>;

    /// Writes a session's header.
    fn header(&mut self, header: &Header, out: &mut dyn Write) -> io::Result<()>;

    /// Writes what ends a session.
    fn end_session(&mut self, out: &mut dyn Write) -> io::Result<()>;

    /// Writes a user's prompt and its images.
    fn prompt(&mut self, text: &str, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()>;

    /// Writes the assistant's text (Markdown) and its images.
    fn answer(&mut self, text: &str, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()>;

    /// Writes a labelled section, folded or open.
    fn section(&mut self, label: &str, content: Content, folded: bool, out: &mut dyn Write) -> io::Result<()>;

    /// Writes a one-line note between sections.
    fn note(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()>;

    /// Writes a command the user gave the agent (`/model opus`).
    fn command(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()>;

    /// Writes a tool call with its output; `fold` says whether the output is folded.
    fn exchange(&mut self, exchange: &Exchange, fold: bool, out: &mut dyn Write) -> io::Result<()>;

    /// Writes the index of a directory of transcripts; `empty` sessions had nothing to show.
    fn index(&mut self, sessions: &[Listed], empty: usize, out: &mut dyn Write) -> io::Result<()>;
}

/// Opens a transcript writer with `style` on `target`.
///
/// # Errors
/// [`WriteError::Unsupported`] for options transcripts do not take; I/O errors creating the
/// output.
pub fn open<'w, S: Style + 'static>(
    style: S,
    format: &str,
    target: Target<'w>,
    options: &Options,
) -> Result<Box<dyn EventSink + 'w>, WriteError> {
    if !options.partition_by.is_empty() {
        return Err(unsupported("--partition-by", format));
    }
    let to = match target {
        Target::Stream(out) => To::One(BufWriter::with_capacity(256 * 1024, Out::Stream(out)), false),
        Target::Path(path) if is_directory_target(&path) => To::Dir(Box::new(Dir::new(&path, style.extension()))),
        Target::Path(path) => {
            To::One(BufWriter::with_capacity(256 * 1024, Out::File(AtomicFile::create(&path)?)), false)
        }
    };
    Ok(Box::new(Transcript {
        style,
        options: options.transcript,
        to: Some(to),
        session: None,
        pending: Vec::new(),
        last_note: None,
    }))
}

/// Where a transcript goes.
enum Out<'w> {
    Stream(Box<dyn Write + Send + 'w>),
    File(AtomicFile),
}

impl Write for Out<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Out::Stream(w) => w.write(buf),
            Out::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::Stream(w) => w.flush(),
            Out::File(f) => f.flush(),
        }
    }
}

/// One document (and whether it is begun), or a file per session.
enum To<'w> {
    One(BufWriter<Out<'w>>, bool),
    Dir(Box<Dir>),
}

/// The session being rendered.
struct Session {
    agent: Agent,
    id: String,
    tally: SessionTally,
    body: Body,
    prompts: u64,
    copied: u64,
    /// Whether anything of it is worth showing.
    shown: bool,
}

/// Renders events as they come, one session after another.
struct Transcript<'w, S: Style> {
    style: S,
    options: TranscriptOptions,
    to: Option<To<'w>>,
    session: Option<Session>,
    /// Tool calls waiting for their output, with the subagent thread they belong to.
    pending: Vec<(Option<String>, ToolCall)>,
    /// The note last written, while nothing else followed it: a compaction is often several
    /// records, and encrypted reasoning comes with every response; each is shown once.
    last_note: Option<&'static str>,
}

/// The subagent thread an event belongs to; `None` for the session's main thread.
fn thread_of(e: &Event) -> Option<&str> {
    if !e.is_sidechain {
        return None;
    }
    Some(e.agent_id.as_deref().unwrap_or("sidechain"))
}

impl<S: Style> Transcript<'_, S> {
    /// Writes a call and its output into the thread the call belongs to.
    fn exchange(
        &mut self,
        thread: Option<&str>,
        call: Option<&ToolCall>,
        output: Option<&ToolOutput>,
    ) -> io::Result<()> {
        let session = self.session.as_mut().expect("an event began it");
        session.body.thread(thread, None);
        let exchange = Exchange::new(call, output);
        let fold = output.is_some_and(|o| {
            o.text.len() > self.options.fold_bytes || o.text.lines().count() > self.options.fold_lines
        });
        self.style.exchange(&exchange, fold, &mut session.body)?;
        if exchange.subagent
            && thread.is_none()
            && let Some(id) = call.and_then(|c| c.call_id.as_deref())
        {
            session.body.spawn(id, exchange.key.as_deref());
        }
        Ok(())
    }

    /// Writes the waiting calls of `thread` (all of them for `None` at the session's end).
    fn flush_pending(&mut self, thread: Option<Option<&str>>) -> io::Result<()> {
        let (waiting, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.pending).into_iter().partition(|(t, _)| thread.is_none_or(|x| t.as_deref() == x));
        self.pending = kept;
        for (t, call) in waiting {
            self.exchange(t.as_deref(), Some(&call), None)?;
        }
        Ok(())
    }

    /// Ends the current session: its waiting calls, then its header and sections.
    fn end_session(&mut self) -> io::Result<()> {
        self.last_note = None;
        if self.session.as_ref().is_none_or(|s| !s.shown) {
            self.pending.clear();
            if let (Some(session), Some(To::Dir(dir))) = (self.session.take(), self.to.as_mut()) {
                let summary = session.tally.finish();
                dir.nothing_to_show(summary.agent, &summary.session_id);
            }
            return Ok(());
        }
        self.flush_pending(None)?;
        let session = self.session.take().expect("checked above");
        let summary = session.tally.finish();
        let header = Header { summary: &summary, prompts: session.prompts, copied: session.copied };
        match self.to.as_mut().expect("no event after finish") {
            To::One(out, begun) => {
                if !*begun {
                    *begun = true;
                    self.style.begin_document("Sessions", out)?;
                }
                self.style.header(&header, out)?;
                session.body.copy_to(&mut self.style, out)?;
                self.style.end_session(out)
            }
            To::Dir(dir) => {
                let out = dir.begin(&summary)?;
                let title = summary.title.clone().unwrap_or_else(|| format!("Session {}", summary.session_id));
                self.style.begin_document(&title, out)?;
                self.style.header(&header, out)?;
                session.body.copy_to(&mut self.style, out)?;
                self.style.end_session(out)?;
                self.style.end_document(out)?;
                dir.end(summary, session.prompts)
            }
        }
    }

    /// Writes one event of the current session's own (not copied).
    fn show(&mut self, e: &Event) -> io::Result<()> {
        let thread = thread_of(e);
        let session = self.session.as_mut().expect("begun by the caller");
        let note = match &e.payload {
            Payload::Meta(m) => match m.meta_type {
                MetaType::Compaction => Some("context compacted"),
                MetaType::Interrupt => Some("interrupted by the user"),
                MetaType::Rollback => Some("turns rolled back"),
                MetaType::Command => None,
                _ => return Ok(()),
            },
            Payload::Reasoning(r) if r.text.trim().is_empty() || self.options.reasoning == ReasoningShown::Omitted => {
                match r.encrypted && self.options.reasoning != ReasoningShown::Omitted {
                    true => Some("reasoning encrypted, not shown"),
                    false => return Ok(()),
                }
            }
            _ => None,
        };
        session.shown = true;
        session.body.thread(thread, e.parent_call_id.as_deref());
        let out = &mut session.body;
        if let Some(text) = note {
            if self.last_note == Some(text) {
                return Ok(());
            }
            self.last_note = Some(text);
            return self.style.note(text, out);
        }
        self.last_note = None;
        match &e.payload {
            Payload::Message(m) if m.role == Role::User && !e.injected => {
                if thread.is_none() {
                    session.prompts += 1;
                }
                self.flush_pending(Some(thread))?;
                let session = self.session.as_mut().expect("begun by the caller");
                session.body.thread(thread, None);
                self.style.prompt(&m.text, &attachments(&m.parts), &mut session.body)
            }
            Payload::Message(m) if m.role == Role::Assistant && !e.injected => {
                self.style.answer(&m.text, &attachments(&m.parts), out)
            }
            Payload::Message(m) => {
                let label = injected_label(m.role, &m.text);
                self.style.section(&label, Content::Code(&m.text, ""), true, out)
            }
            Payload::Reasoning(r) => {
                let folded = self.options.reasoning == ReasoningShown::Folded;
                self.style.section("reasoning", Content::Markdown(&r.text), folded, out)
            }
            Payload::ToolCall(c) if c.call_id.is_some() => {
                self.pending.push((thread.map(str::to_owned), c.clone()));
                Ok(())
            }
            Payload::ToolCall(c) => self.exchange(thread, Some(c), None),
            Payload::ToolOutput(o) => {
                let at = self.pending.iter().position(|(_, c)| c.call_id.is_some() && c.call_id == o.call_id);
                let (call_thread, call) = match at.map(|i| self.pending.remove(i)) {
                    Some((t, call)) => (t, Some(call)),
                    None => (thread.map(str::to_owned), None),
                };
                self.exchange(call_thread.as_deref(), call.as_ref(), Some(o))
            }
            Payload::Meta(m) => {
                let data = m.data.as_ref().and_then(|d| serde_json::from_str::<serde_json::Value>(d.get()).ok());
                let field = |k: &str| data.as_ref().and_then(|d| d.get(k)).and_then(serde_json::Value::as_str);
                let text = field("text").or_else(|| field("content")).map(command_text).unwrap_or_default();
                match field("command") {
                    Some(command) => {
                        let args = field("args").unwrap_or_default();
                        self.style.command(format!("{command} {args}").trim_end(), out)
                    }
                    None if text.starts_with('/') => self.style.command(&view::one_line(&text, 200), out),
                    None if text.is_empty() => Ok(()),
                    None => self.style.section("command output", Content::Code(&text, ""), true, out),
                }
            }
        }
    }
}

impl<S: Style> EventSink for Transcript<'_, S> {
    fn event(&mut self, e: &Event) -> io::Result<()> {
        let same = self.session.as_ref().is_some_and(|s| s.agent == e.agent && s.id == e.session_id);
        if !same {
            self.end_session()?;
            self.session = Some(Session {
                agent: e.agent,
                id: e.session_id.clone(),
                tally: SessionTally::new(e.agent, &e.session_id),
                body: Body::new(),
                prompts: 0,
                copied: 0,
                shown: false,
            });
        }
        let session = self.session.as_mut().expect("begun above");
        session.tally.observe(e);
        if e.copied {
            session.copied += 1;
            return Ok(());
        }
        self.show(e)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_session()?;
        match self.to.take().expect("finish is called once") {
            To::One(mut out, begun) => {
                if !begun {
                    self.style.begin_document("Sessions", &mut out)?;
                }
                self.style.end_document(&mut out)?;
                match out.into_inner().map_err(io::IntoInnerError::into_error)? {
                    Out::Stream(mut w) => w.flush(),
                    Out::File(f) => f.commit(),
                }
            }
            To::Dir(dir) => dir.finish(&mut self.style),
        }
    }
}
