//! The prompt history (`.aider.input.history`, prompt_toolkit's file history): entries of a
//! `# <local time>` line and the typed lines, each with a leading `+`.
//!
//! An entry is a user message with `prompt_history` set, placed in the run of the chat history
//! beside it (`.aider.chat.history.md` in the same directory) that started last before it, and
//! looked up among that run's prompts. Entries before every run, or without a chat history
//! beside them, are placed in one session per day. Aider also writes there the commands it runs
//! for the user (`/run <command>`), so not every entry is a prompt of the transcript.

use std::io;
use std::path::Path;

use chrono::{DateTime, Utc};

use super::{CHAT_FILE, RUN_HEADER, command, parse_local, session_id};
use crate::model::{Event, Json, Message, Meta, MetaType, Part, Payload, Role};
use crate::read::side::{TranscriptPrompts, history_flag};
use crate::read::{Emitter, Line, LineMapper, LineParser, Problem};

/// One line of the prompt history.
#[derive(Debug)]
pub(super) enum Entry {
    /// `# <time>`: an entry starts.
    Start { number: u64, offset: u64, time: String },
    /// `+<text>`: a line of the entry, and its line number.
    Text(u64, String),
}

/// Parses prompt history lines; any other line is reported.
#[derive(Clone)]
pub(super) struct Entries;

impl LineParser for Entries {
    type Parsed = Entry;

    fn parse(&self, line: Line<'_>) -> Result<Entry, Problem> {
        if let Some(text) = line.text.strip_prefix('+') {
            return Ok(Entry::Text(line.number, text.to_owned()));
        }
        if let Some(time) = line.text.strip_prefix("# ") {
            return Ok(Entry::Start { number: line.number, offset: line.offset, time: time.trim().to_owned() });
        }
        Err(Problem {
            code: "agentlog::input::unexpected_line",
            message: "expected a `# <time>` line or a `+<text>` line of the prompt history".into(),
            column: 0,
            help: Some("the line was skipped"),
            is_error: false,
        })
    }
}

/// An entry being read: where it starts, its time and its lines.
struct Open {
    number: u64,
    offset: u64,
    time: Option<DateTime<Utc>>,
    lines: Vec<String>,
    /// The line numbers of the lines.
    numbers: Vec<u64>,
}

/// One run of the chat history beside the prompt history: its start and its prompts.
struct TranscriptRun {
    started: DateTime<Utc>,
    session: String,
    prompts: TranscriptPrompts,
}

/// Maps prompt history entries to user messages.
pub(super) struct History {
    /// The runs of the chat history beside the file, read when the first entry ends; `None`
    /// when there is no chat history there.
    runs: Option<Option<Vec<TranscriptRun>>>,
    chat: std::path::PathBuf,
    open: Option<Open>,
}

impl History {
    pub(super) fn new(name: &str) -> Self {
        let dir = Path::new(name).parent().map(Path::to_path_buf).unwrap_or_default();
        History { runs: None, chat: dir.join(CHAT_FILE), open: None }
    }

    fn emit(&mut self, out: &mut Emitter<'_>) -> io::Result<()> {
        let Some(open) = self.open.take() else { return Ok(()) };
        let text = open.lines.join("\n");
        let chat = &self.chat;
        let runs = self.runs.get_or_insert_with(|| read_runs(chat)).as_ref();
        let run = open.time.and_then(|t| runs?.iter().rev().find(|r| r.started <= t));
        let found = run.map(|r| r.prompts.holds(&text));
        let session = match run {
            Some(run) => run.session.clone(),
            None => {
                format!("prompt-history-{}", open.time.map(|t| t.format("%Y-%m-%d").to_string()).unwrap_or_default())
            }
        };
        let flag = history_flag(found);
        let payload = match command(&text) {
            // A command, typed or run by Aider for the user (`/run <command>` when the user lets it
            // run a command the model suggested): a command event, as in the chat history.
            Some((name, args)) => {
                let data = serde_json::json!({
                    "text": text, "command": format!("/{name}"), "args": args, "prompt_history": flag,
                });
                Payload::Meta(Meta { meta_type: MetaType::Command, data: Some(Json::from_value(&data)), usage: None })
            }
            None => {
                let mut message = Message::from_parts(Role::User, vec![Part::Text { text }]);
                message.prompt_history = Some(flag);
                Payload::Message(message)
            }
        };
        let mut event = Event::new(session, payload);
        event.timestamp = open.time;
        event.source.line = open.number;
        event.source.byte_offset = open.offset;
        event.source.record_type = Some("prompt_history".into());
        event.extra = Some(Json::from_value(&serde_json::json!({ "merged_lines": open.numbers })));
        // The id does not depend on the chat history beside the file.
        out.emit_keyed(event, 0, "prompt-history")
    }
}

impl LineMapper<Entry> for History {
    fn map(&mut self, entry: Entry, out: &mut Emitter<'_>) -> io::Result<()> {
        match entry {
            Entry::Start { number, offset, time } => {
                self.emit(out)?;
                let (lines, numbers) = (Vec::new(), Vec::new());
                self.open = Some(Open { number, offset, time: parse_local(&time), lines, numbers });
            }
            Entry::Text(number, text) => match &mut self.open {
                Some(open) => {
                    open.lines.push(text);
                    open.numbers.push(number);
                }
                // Lines before any `# <time>` line: an entry of its own, without a time.
                None => {
                    let (lines, numbers) = (vec![text], Vec::new());
                    self.open = Some(Open { number, offset: 0, time: None, lines, numbers });
                }
            },
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> io::Result<()> {
        self.emit(out)
    }
}

/// The runs of the chat history at `path`, with their prompts; `None` when it cannot be read.
fn read_runs(path: &Path) -> Option<Vec<TranscriptRun>> {
    let text = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&text);
    let mut runs: Vec<TranscriptRun> = Vec::new();
    let mut prompt: Option<(u64, String)> = None;
    let close = |prompt: &mut Option<(u64, String)>, runs: &mut Vec<TranscriptRun>| {
        if let (Some((_, text)), Some(run)) = (prompt.take(), runs.last_mut()) {
            run.prompts.add(&text);
        }
    };
    for (i, line) in text.lines().enumerate() {
        let number = i as u64 + 1;
        if let Some(time) = line.strip_prefix(RUN_HEADER) {
            close(&mut prompt, &mut runs);
            if let Some(started) = parse_local(time) {
                runs.push(TranscriptRun {
                    started,
                    session: session_id(time.trim(), number),
                    prompts: TranscriptPrompts::default(),
                });
            }
            continue;
        }
        let Some(typed) = line.strip_prefix("####") else {
            close(&mut prompt, &mut runs);
            continue;
        };
        let typed = typed.strip_suffix("  ").unwrap_or(typed);
        let typed = typed.strip_prefix(' ').unwrap_or(typed);
        match &mut prompt {
            Some((last, text)) if *last + 1 == number => {
                text.push('\n');
                text.push_str(typed);
                *last = number;
            }
            _ => {
                close(&mut prompt, &mut runs);
                prompt = Some((number, typed.to_owned()));
            }
        }
    }
    close(&mut prompt, &mut runs);
    Some(runs)
}
