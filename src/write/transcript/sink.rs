//! The transcript sink: events in, sessions out, each written whole when its group of inputs
//! ends (or at the end of the run, for a caller that does not say where groups end).

use std::collections::{HashMap, HashSet};
use std::io::{self, BufWriter, Write};

use crate::model::{Agent, Event, MetaType, Payload, PromptHistory, Role, SessionTally, ToolCall, ToolOutput};
use crate::write::{AtomicFile, EventSink};

use super::body::{Body, GATHERED, Spool};
use super::dir::Dir;
use super::images::ImageFiles;
use super::view::{self, Exchange, attachments, command_text, injected_label};
use super::{Content, Header, ReasoningShown, Style, TranscriptOptions};

/// Where a transcript goes.
pub enum Out<'w> {
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
pub enum To<'w> {
    One(BufWriter<Out<'w>>, bool),
    Dir(Box<Dir>),
}

/// A session being rendered.
struct Session {
    agent: Agent,
    id: String,
    tally: SessionTally,
    body: Body,
    prompts: u64,
    copied: u64,
    /// Whether anything of it is worth showing.
    shown: bool,
    /// Tool calls waiting for their output, with the subagent thread they belong to.
    pending: Vec<(Option<String>, ToolCall)>,
    /// The note last written, while nothing else followed it: a compaction is often several
    /// records, and encrypted reasoning comes with every response; each is shown once.
    last_note: Option<&'static str>,
    /// The model of the main thread's last message, to note when it changes.
    model: Option<String>,
    /// Whether the events shown last belong to turns a later rollback removed.
    rolled_back: bool,
}

/// Renders events as they come; writes the sessions of a group when it ends.
pub struct Transcript<'w, S: Style> {
    style: S,
    options: TranscriptOptions,
    to: Option<To<'w>>,
    spool: Spool,
    /// The sessions of the group, in the order they began.
    open: Vec<Session>,
    index: HashMap<(Agent, String), usize>,
    /// The session of the last event, in `open`.
    current: usize,
    /// Where images go with `--images files`.
    images: Option<ImageFiles>,
    /// Sessions written so far, which a later one may link to.
    written: HashSet<(Agent, String)>,
}

/// The subagent thread an event belongs to; `None` for the session's main thread. A thread
/// that is a session of its own, spawned by another (Codex), is its session's main thread.
fn thread_of(e: &Event) -> Option<&str> {
    if !e.is_sidechain || e.parent_session_id.as_deref().is_some_and(|p| p != e.session_id) {
        return None;
    }
    Some(e.agent_id.as_deref().unwrap_or("sidechain"))
}

/// What an event needs to render into its session.
struct Render<'a, S> {
    session: &'a mut Session,
    spool: &'a mut Spool,
    style: &'a mut S,
    options: &'a TranscriptOptions,
    images: &'a mut Option<ImageFiles>,
}

impl<S: Style> Render<'_, S> {
    /// Writes a call and its output into the thread the call belongs to.
    fn exchange(
        &mut self,
        thread: Option<&str>,
        call: Option<&ToolCall>,
        output: Option<&ToolOutput>,
    ) -> io::Result<()> {
        let body = &mut self.session.body;
        body.thread(thread, None);
        let mut exchange = Exchange::new(call, output);
        if let Some(images) = self.images {
            images.link(&mut exchange.attachments)?;
        }
        let fold = output.is_some_and(|o| o.text.len() > self.options.fold_bytes)
            || exchange.output_lines > self.options.fold_lines;
        self.style.exchange(&exchange, fold, &mut body.writer(self.spool))?;
        if exchange.subagent
            && thread.is_none()
            && let Some(id) = call.and_then(|c| c.call_id.as_deref())
        {
            body.spawn(self.spool, id, exchange.key.as_deref())?;
        }
        Ok(())
    }

    /// Writes the waiting calls of `thread` (all of them for `None`).
    fn flush_pending(&mut self, thread: Option<Option<&str>>) -> io::Result<()> {
        let (waiting, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.session.pending)
            .into_iter()
            .partition(|(t, _)| thread.is_none_or(|x| t.as_deref() == x));
        self.session.pending = kept;
        for (t, call) in waiting {
            self.exchange(t.as_deref(), Some(&call), None)?;
        }
        Ok(())
    }

    /// Notes, before `e`, that the main thread's model changed, and where turns a later
    /// rollback removed begin and end.
    fn context_notes(&mut self, e: &Event, thread: Option<&str>) -> io::Result<()> {
        let session = &mut *self.session;
        let out = &mut session.body.writer(self.spool);
        if e.rolled_back != session.rolled_back {
            session.rolled_back = e.rolled_back;
            let rollback = matches!(&e.payload, Payload::Meta(m) if m.meta_type == MetaType::Rollback);
            match e.rolled_back {
                true => self.style.note("rolled back: what follows was removed from the conversation", out)?,
                // The rollback's own note ends them.
                false if rollback => {}
                false => self.style.note("end of the rolled-back turns", out)?,
            }
        }
        if let (None, Payload::Message(m), Some(model)) = (thread, &e.payload, &e.context.model)
            && m.role == Role::Assistant
            && session.model.as_ref() != Some(model)
        {
            if session.model.is_some() {
                self.style.note(&format!("model changed to {model}"), out)?;
            }
            session.model = Some(model.clone());
        }
        Ok(())
    }

    /// Writes one event of the session's own (not copied).
    fn show(&mut self, e: &Event) -> io::Result<()> {
        let thread = thread_of(e);
        let reasoning = self.options.reasoning;
        let note = match &e.payload {
            Payload::Meta(m) => match m.meta_type {
                MetaType::Compaction => Some("context compacted"),
                MetaType::Interrupt => Some("interrupted by the user"),
                MetaType::Rollback => Some("turns rolled back"),
                MetaType::Command | MetaType::Memory => None,
                _ => return Ok(()),
            },
            Payload::Reasoning(r) if r.text.trim().is_empty() || reasoning == ReasoningShown::Omitted => {
                match r.encrypted && reasoning != ReasoningShown::Omitted {
                    true => Some("reasoning encrypted, not shown"),
                    false => return Ok(()),
                }
            }
            _ => None,
        };
        let session = &mut *self.session;
        session.shown = true;
        session.body.thread(thread, e.parent_call_id.as_deref());
        self.context_notes(e, thread)?;
        let session = &mut *self.session;
        if let Some(text) = note {
            if session.last_note == Some(text) {
                return Ok(());
            }
            session.last_note = Some(text);
            return self.style.note(text, &mut session.body.writer(self.spool));
        }
        session.last_note = None;
        match &e.payload {
            Payload::Message(m) if m.role == Role::User && !e.injected => {
                if thread.is_none() {
                    session.prompts += 1;
                }
                self.flush_pending(Some(thread))?;
                let mut list = attachments(&m.parts);
                if let Some(images) = self.images {
                    images.link(&mut list)?;
                }
                let body = &mut self.session.body;
                body.thread(thread, None);
                self.style.prompt(&m.text, &list, &mut body.writer(self.spool))
            }
            Payload::Message(m) if m.role == Role::Assistant && !e.injected => {
                let mut list = attachments(&m.parts);
                if let Some(images) = self.images {
                    images.link(&mut list)?;
                }
                self.style.answer(&m.text, &list, &mut session.body.writer(self.spool))
            }
            Payload::Message(m) => {
                let label = injected_label(m.role, &m.text);
                self.style.section(&label, Content::Code(&m.text, ""), true, &mut session.body.writer(self.spool))
            }
            Payload::Reasoning(r) => {
                let folded = reasoning == ReasoningShown::Folded;
                let out = &mut session.body.writer(self.spool);
                self.style.section("reasoning", Content::Markdown(&r.text), folded, out)
            }
            Payload::ToolCall(c) if c.call_id.is_some() => {
                session.pending.push((thread.map(str::to_owned), c.clone()));
                Ok(())
            }
            Payload::ToolCall(c) => self.exchange(thread, Some(c), None),
            Payload::ToolOutput(o) => {
                let pending = &mut session.pending;
                let at = pending.iter().position(|(_, c)| c.call_id.is_some() && c.call_id == o.call_id);
                let (call_thread, call) = match at.map(|i| pending.remove(i)) {
                    Some((t, call)) => (t, Some(call)),
                    None => (thread.map(str::to_owned), None),
                };
                self.exchange(call_thread.as_deref(), call.as_ref(), Some(o))
            }
            Payload::Meta(m) => {
                let out = &mut session.body.writer(self.spool);
                let data = m.data.as_ref().and_then(|d| serde_json::from_str::<serde_json::Value>(d.get()).ok());
                let field = |k: &str| data.as_ref().and_then(|d| d.get(k)).and_then(serde_json::Value::as_str);
                if m.meta_type == MetaType::Memory {
                    return self.style.section(
                        &view::memory_label(data.as_ref()),
                        Content::Markdown(field("body").unwrap_or_default()),
                        false,
                        out,
                    );
                }
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

impl<'w, S: Style> Transcript<'w, S> {
    /// A sink writing to `to`.
    pub fn new(style: S, options: TranscriptOptions, to: To<'w>, images: Option<ImageFiles>) -> Self {
        Transcript {
            style,
            options,
            to: Some(to),
            spool: Spool::new(),
            open: Vec::new(),
            index: HashMap::new(),
            current: 0,
            images,
            written: HashSet::new(),
        }
    }

    /// The session of `e`, begun if new.
    fn session_of(&mut self, e: &Event) -> usize {
        if self.open.get(self.current).is_some_and(|s| s.agent == e.agent && s.id == e.session_id) {
            return self.current;
        }
        let key = (e.agent, e.session_id.clone());
        let open = &mut self.open;
        self.current = *self.index.entry(key).or_insert_with(|| {
            open.push(Session {
                agent: e.agent,
                id: e.session_id.clone(),
                tally: SessionTally::without_orphans(e.agent, &e.session_id),
                body: Body::default(),
                prompts: 0,
                copied: 0,
                shown: false,
                pending: Vec::new(),
                last_note: None,
                model: None,
                rolled_back: false,
            });
            open.len() - 1
        });
        self.current
    }

    /// Writes every session of the group, each whole, in the order they began.
    fn write_sessions(&mut self) -> io::Result<()> {
        self.index.clear();
        self.current = 0;
        for mut session in std::mem::take(&mut self.open) {
            let to = self.to.as_mut().expect("no event after finish");
            if !session.shown {
                if let To::Dir(dir) = to {
                    dir.nothing_to_show(session.agent, &session.id);
                }
                continue;
            }
            let mut render = Render {
                session: &mut session,
                spool: &mut self.spool,
                style: &mut self.style,
                options: &self.options,
                images: &mut self.images,
            };
            render.flush_pending(None)?;
            let summary = session.tally.finish();
            let parent = summary.parent_session_id.as_deref();
            let parent_link = parent.and_then(|p| match self.to.as_ref().expect("checked above") {
                To::Dir(dir) => dir.link(summary.agent, summary.agent, p),
                To::One(..) => (self.style.anchors() && self.written.contains(&(summary.agent, p.to_owned())))
                    .then(|| format!("#{}", super::anchor(summary.agent, p))),
            });
            self.written.insert((summary.agent, summary.session_id.clone()));
            let header = Header { summary: &summary, prompts: session.prompts, copied: session.copied, parent_link };
            match self.to.as_mut().expect("checked above") {
                To::One(out, begun) => {
                    if !*begun {
                        *begun = true;
                        self.style.begin_document("Sessions", out)?;
                    }
                    self.style.header(&header, out)?;
                    session.body.copy_to(&mut self.spool, &mut self.style, out)?;
                    self.style.end_session(out)?;
                }
                To::Dir(dir) => {
                    let out = dir.begin(&summary)?;
                    self.style.begin_document(&header.title(), out)?;
                    self.style.header(&header, out)?;
                    session.body.copy_to(&mut self.spool, &mut self.style, out)?;
                    self.style.end_session(out)?;
                    self.style.end_document(out)?;
                    dir.end(summary, session.prompts)?;
                }
            }
        }
        self.spool.clear();
        Ok(())
    }
}

impl<S: Style> EventSink for Transcript<'_, S> {
    fn event(&mut self, e: &Event) -> io::Result<()> {
        if let Payload::Message(m) = &e.payload
            && m.prompt_history.is_some_and(|h| h != PromptHistory::NoTranscript)
        {
            // The session's transcript is shown from its own file, with its prompts where
            // they were typed; the prompt history shows only sessions that have none.
            return Ok(());
        }
        let i = self.session_of(e);
        let session = &mut self.open[i];
        session.tally.observe(e);
        if e.copied {
            session.copied += 1;
            return Ok(());
        }
        let images = &mut self.images;
        Render { session, spool: &mut self.spool, style: &mut self.style, options: &self.options, images }.show(e)?;
        if self.spool.gathered() > GATHERED {
            for session in &mut self.open {
                session.body.hand_over(&mut self.spool)?;
            }
        }
        Ok(())
    }

    fn end_group(&mut self) -> io::Result<()> {
        self.write_sessions()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.write_sessions()?;
        if let Some(images) = self.images.take() {
            images.finish()?;
        }
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
