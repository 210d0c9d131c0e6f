//! Markdown transcripts (`--to markdown`): what a person reads of a session.
//!
//! Per session: a header (agent, version, model, directory, branch, start), the user's prompts
//! and the assistant's text as sections, each tool call together with its output (matched by
//! call id), reasoning folded, injected context folded and labelled, compaction as a visible
//! boundary, and a closing line with duration, tool calls and token usage. Events copied from
//! an earlier session (resume, fork) are not repeated, and a session with nothing to show
//! (only metadata, or only such copies) gets no section. Everything comes from the unified
//! model: nothing here knows an agent.
//!
//! The output is CommonMark/GFM whatever the content: text from tools sits in code fences
//! longer than any backtick run inside it, and a message that leaves a fence open has it closed.
//! Memory: the tool calls waiting for their output, which are written at the latest when the
//! next prompt or the session's end comes.
//!
//! `-o DIR/` gives each session a file and writes an index of them ([`files`]).

mod files;
mod render;

use std::io::{self, BufWriter, Write};

use crate::model::{Event, MetaType, Payload, Role};
use crate::write::{AtomicFile, EventSink, Options, Target, WriteError, Writer, is_directory_target, unsupported};

use files::Dir;
use render::{Pending, Session};

/// The Markdown writer.
pub struct Markdown;

impl Writer for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["md"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["md", "markdown"]
    }

    fn description(&self) -> &'static str {
        "Markdown transcripts: prompts, answers, tool calls with their outputs; -o DIR/ for one per session and an index"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        if !options.partition_by.is_empty() {
            return Err(unsupported("--partition-by", self.name()));
        }
        let to = match target {
            Target::Stream(out) => To::One(BufWriter::with_capacity(256 * 1024, Out::Stream(out))),
            Target::Path(path) if is_directory_target(&path) => To::Dir(Box::new(Dir::new(&path))),
            Target::Path(path) => To::One(BufWriter::with_capacity(256 * 1024, Out::File(AtomicFile::create(&path)?))),
        };
        Ok(Box::new(Transcript { to: Some(to), session: None, pending: Pending::default(), last_note: None }))
    }
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

/// One document, or a file per session.
enum To<'w> {
    One(BufWriter<Out<'w>>),
    Dir(Box<Dir>),
}

/// Renders events as they come, one session after another.
struct Transcript<'w> {
    to: Option<To<'w>>,
    session: Option<Session>,
    pending: Pending,
    /// The note last written, while nothing else followed it: a compaction is often several
    /// records, and is shown once.
    last_note: Option<MetaType>,
}

impl<'w> To<'w> {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            To::One(out) => out,
            To::Dir(dir) => dir.writer(),
        }
    }
}

impl Transcript<'_> {
    /// Ends the current session: its waiting calls, then its closing line.
    fn end_session(&mut self) -> io::Result<()> {
        self.last_note = None;
        let Some(session) = self.session.take() else { return Ok(()) };
        let to = self.to.as_mut().expect("no event after finish");
        if !session.opened {
            if let To::Dir(dir) = to {
                dir.nothing_to_show(session.agent(), session.id());
            }
            return Ok(());
        }
        self.pending.flush(to.writer())?;
        let closed = session.close(to.writer())?;
        if let To::Dir(dir) = to {
            dir.closed(closed);
        }
        Ok(())
    }
}

impl EventSink for Transcript<'_> {
    fn event(&mut self, e: &Event) -> io::Result<()> {
        let same = self.session.as_ref().is_some_and(|s| s.is(e));
        if !same {
            self.end_session()?;
            self.session = Some(Session::new(e));
        }
        let session = self.session.as_mut().expect("begun above");
        if e.copied {
            session.copied += 1;
            return Ok(());
        }
        session.observe(e);
        let note = match &e.payload {
            Payload::Meta(m) => match m.meta_type {
                MetaType::Compaction => Some((m.meta_type, "context compacted")),
                MetaType::Interrupt => Some((m.meta_type, "interrupted by the user")),
                MetaType::Rollback => Some((m.meta_type, "turns rolled back")),
                _ => return Ok(()),
            },
            _ => None,
        };
        // Something to show: the session's file and header come first.
        let to = self.to.as_mut().expect("no event after finish");
        if !session.opened {
            if let To::Dir(dir) = to {
                dir.begin(e.agent, &e.session_id)?;
            }
            session.open(e, to.writer())?;
        }
        let out = to.writer();
        session.note_copies(out)?;
        if let Some((meta_type, text)) = note {
            if self.last_note == Some(meta_type) {
                return Ok(());
            }
            self.last_note = Some(meta_type);
            return render::note(text, out);
        }
        self.last_note = None;
        match &e.payload {
            Payload::Message(m) if m.role == Role::User && !e.injected => {
                self.pending.flush(out)?;
                render::prompt(&m.text, out)
            }
            Payload::Message(m) if e.injected => render::injected(m.role, &m.text, out),
            Payload::Message(m) if m.role == Role::Assistant => render::answer(&m.text, out),
            Payload::Message(m) => render::injected(m.role, &m.text, out),
            Payload::Reasoning(r) => render::reasoning(r, out),
            Payload::ToolCall(c) => self.pending.call(c, out),
            Payload::ToolOutput(o) => self.pending.output(o, out),
            Payload::Meta(_) => Ok(()),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_session()?;
        match self.to.take().expect("finish is called once") {
            To::One(out) => match out.into_inner().map_err(io::IntoInnerError::into_error)? {
                Out::Stream(mut w) => w.flush(),
                Out::File(f) => f.commit(),
            },
            To::Dir(dir) => dir.finish(),
        }
    }
}
