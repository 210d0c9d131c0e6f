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
//! The sessions of a group of inputs (files that share reader state, among them every file of
//! a session) are rendered side by side ([`sink`]) and written when the group ends, each whole:
//! its header says what only its end knows, and a subagent read from a file of its own goes
//! under the call that spawned it. Their sections wait in one spool ([`body`]), in memory up to
//! a few MiB and then in a temporary file. `-o DIR/` gives each session a file and writes an
//! index ([`dir`]).

mod body;
mod dir;
mod images;
mod sink;
pub mod view;

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::model::{Relation, SessionSummary};
use crate::write::{AtomicFile, EventSink, Options, Target, WriteError, is_directory_target, unsupported};

pub use body::Frame;
use dir::Dir;
pub use dir::{Listed, Listing};
use images::ImageFiles;
use sink::{Out, To, Transcript};
use view::{Attachment, Exchange};

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
    /// Inline images (the same types) written once each to a folder beside the transcript
    /// (`out.files/` beside `out.md`, `DIR/files/` for `-o DIR/`) and linked.
    Files,
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
    /// Where the parent session's transcript is, relative to this one, when it is written
    /// beside it.
    pub parent_link: Option<String>,
}

/// How a header's value is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Plain text.
    Text,
    /// A name or path, best shown as code.
    Code,
    /// A name linking to another transcript at this relative address.
    Link(String),
}

impl Header<'_> {
    /// The session's title, or its id when it has none.
    pub fn title(&self) -> String {
        let s = self.summary;
        s.title.as_deref().map_or_else(|| format!("Session {}", s.session_id), |t| view::one_line(t, 100))
    }

    /// What the header lists, as (name, plain text, how to show it) in order.
    pub fn fields(&self) -> Vec<(&'static str, String, Value)> {
        let s = self.summary;
        let mut fields = vec![("session", s.session_id.clone(), Value::Code)];
        let versions =
            if s.agent_versions.is_empty() { String::new() } else { format!(" {}", s.agent_versions.join(", ")) };
        fields.push(("agent", format!("{}{versions}", s.agent.as_str()), Value::Text));
        if !s.models.is_empty() {
            fields.push(("model", s.models.join(", "), Value::Code));
        }
        for (name, value) in [("directory", &s.cwd), ("branch", &s.git_branch), ("entrypoint", &s.entrypoint)] {
            if let Some(value) = value {
                fields.push((name, value.clone(), Value::Code));
            }
        }
        if let Some(parent) = &s.parent_session_id {
            let relation = match s.relation {
                Some(Relation::Subagent) => "subagent of",
                Some(Relation::Fork) => "forked from",
                Some(Relation::Resume) => "resumed from",
                None => "parent",
            };
            let shown = self.parent_link.clone().map_or(Value::Code, Value::Link);
            fields.push((relation, parent.clone(), shown));
        }
        let time = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
        if let Some(started) = s.started_at {
            fields.push(("started", time(started), Value::Text));
        }
        if let (Some(started), Some(ended)) = (s.started_at, s.ended_at) {
            let minutes = (ended - started).num_minutes();
            let duration = if minutes >= 60 {
                format!("{} h {} min", minutes / 60, minutes % 60)
            } else {
                format!("{minutes} min")
            };
            fields.push(("ended", format!("{} ({duration})", time(ended)), Value::Text));
        }
        let activity = format!("{}, {}", counted(self.prompts, "prompt"), counted(s.counts.tool_calls, "tool call"));
        fields.push(("activity", activity, Value::Text));
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
            Value::Text,
        ));
        if let Some(cost) = u.cost_usd {
            let unpriced = match u.unpriced_responses {
                0 => String::new(),
                n => format!(" ({} without a price left out)", counted(n, "response")),
            };
            fields.push(("cost", format!("${cost:.2} at list prices{unpriced}"), Value::Text));
        }
        if s.prompts_only {
            fields.push((
                "recovered",
                "from the prompt history: no transcript of this session was found, so only the prompts typed are shown"
                    .into(),
                Value::Text,
            ));
        }
        if self.copied > 0 {
            fields.push((
                "replayed",
                format!("{} events copied from an earlier session, not repeated", thousands(self.copied)),
                Value::Text,
            ));
        }
        fields
    }
}

/// The id of a session's section in a page of several: `session-<agent>-<id>`, the id reduced
/// to ASCII letters, digits, `-` and `_`.
pub fn anchor(agent: crate::model::Agent, session_id: &str) -> String {
    let id: String = session_id.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')).collect();
    format!("session-{}-{id}", agent.as_str())
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

    /// Whether a page of several sessions can link to one of them ([`anchor`]).
    fn anchors(&self) -> bool {
        false
    }

    /// Writes the index of a directory of transcripts; `empty` sessions had nothing to show.
    fn index(&mut self, sessions: &[Listed], empty: usize, out: &mut dyn Write) -> io::Result<()>;
}

/// Files a transcript writes beside the output `path`: the image folder of `--images files`.
pub fn side_files(path: &Path, options: &Options) -> Vec<PathBuf> {
    match options.transcript.images == ImagesShown::Files && !is_directory_target(path) {
        true => vec![ImageFiles::beside(path).dir().to_owned()],
        false => Vec::new(),
    }
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
    let files = options.transcript.images == ImagesShown::Files;
    let (to, images) = match target {
        Target::Stream(_) if files => {
            return Err(WriteError::Unsupported {
                message: "--images files writes images beside the transcript: add -o FILE or -o DIR/".into(),
            });
        }
        Target::Stream(out) => (To::One(BufWriter::with_capacity(256 * 1024, Out::Stream(out)), false), None),
        Target::Path(path) if is_directory_target(&path) => {
            let images = files.then(|| ImageFiles::new(path.join("files"), "../files/".into()));
            (To::Dir(Box::new(Dir::new(&path, style.extension(), options.listing.clone()))), images)
        }
        Target::Path(path) => {
            let images = files.then(|| ImageFiles::beside(&path));
            (To::One(BufWriter::with_capacity(256 * 1024, Out::File(AtomicFile::create(&path)?)), false), images)
        }
    };
    Ok(Box::new(Transcript::new(style, options.transcript, to, images)))
}
