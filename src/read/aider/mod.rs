//! Reader for Aider's history files, which Aider keeps in the project directory: the chat
//! history (`.aider.chat.history.md`) and the prompt history (`.aider.input.history`).
//!
//! The chat history is Markdown appended by Aider 0.1 to 0.86 in one form: each run of `aider`
//! opens with `# aider chat started at <local time>` and is one session here. Within a run,
//! `#### ` lines are what the user typed, `> ` lines are Aider's own notices (files added, edits
//! applied, commits, shell commands, warnings, errors, and `> Tokens: … Cost: …`, the only place
//! token usage is written), and the plain Markdown between them is the model's answer, edit
//! blocks included. Blank lines only separate these blocks; a notice of several lines continues
//! on the lines right below it, without the `> `. Aider ends every prompt and notice line with
//! two spaces (a Markdown line break): in a file that keeps them, a `#### ` or `> ` line without
//! them inside an answer is the answer's own heading or quote.
//!
//! Usage is one `usage` event per `> Tokens:` line, with the figures as written: Aider rounds
//! counts of 1,000 and more (`2.4k` is between 2,350 and 2,449; `12k` between 11,500 and 12,499),
//! so the event's `data` keeps the line and says whether a figure is rounded. Streamed responses
//! (Aider's default) are counted by Aider with the model's tokenizer, not by the provider.
//!
//! Neither file names its directory, its sessions or a time zone: session ids are made of a
//! run's start time and line, and the local times Aider writes are read as UTC. Aider's raw
//! request log (`.aider.llm.history`, written only with `--llm-history-file`) is not read.

mod chat;
mod input;
mod status;

use std::io::{self, BufRead};

use crate::model::{Agent, Event, ToolFamily};
use crate::read::{FileKind, Head, Input, ReadReport, Reader, file_name, read_lines};

/// The chat history's default file name.
const CHAT_FILE: &str = ".aider.chat.history.md";

/// The prompt history's default file name.
const INPUT_FILE: &str = ".aider.input.history";

/// The line that opens each run in the chat history.
const RUN_HEADER: &str = "# aider chat started at ";

/// The Aider reader.
pub struct Aider;

impl Reader for Aider {
    fn name(&self) -> &'static str {
        "aider"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Aider)
    }

    fn description(&self) -> &'static str {
        "Aider chat and prompt histories (.aider.chat.history.md, .aider.input.history in a project)"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        let name = file_name(head.name);
        name == CHAT_FILE || name == INPUT_FILE || head.first_line.starts_with(RUN_HEADER)
    }

    fn accepts(&self, path: &std::path::Path) -> bool {
        path.file_name().is_some_and(|n| n == CHAT_FILE || n == INPUT_FILE)
    }

    fn file_kind(&self, path: &str, head: &[u8]) -> FileKind {
        kind(path, head)
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        family(name)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, mut bytes, shared } = input;
        let settings = shared.settings().clone();
        if kind(name, bytes.fill_buf()?) == FileKind::PromptHistory {
            let mut mapper = input::History::new(name);
            return read_lines(Agent::Aider, name, bytes, &settings, &input::Entries, &mut mapper, out);
        }
        let mut mapper = chat::Mapper::default();
        read_lines(Agent::Aider, name, bytes, &settings, &chat::Lines, &mut mapper, out)
    }
}

/// What an Aider file holds: the prompt history by its name, or by its first line (`# <time>`,
/// where the chat history opens with `# aider chat started at`); else the chat history.
fn kind(path: &str, head: &[u8]) -> FileKind {
    if file_name(path) == INPUT_FILE {
        return FileKind::PromptHistory;
    }
    let text = String::from_utf8_lossy(&head[..head.len().min(256)]);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    let dated = first.strip_prefix("# ").is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    if dated { FileKind::PromptHistory } else { FileKind::Session }
}

/// The family of the actions Aider's notices record: `edit` (an edit applied to a file) and
/// `shell` (a command run).
pub fn family(name: &str) -> ToolFamily {
    match name {
        "edit" => ToolFamily::Edit,
        "shell" => ToolFamily::Shell,
        other => ToolFamily::of(other),
    }
}

/// The command of a typed line that is a command (`/add src/app.py` gives `add` and
/// `src/app.py`), but for those that send their text to the model as a prompt in one of Aider's
/// chat modes (`/ask`, `/code`, `/architect`, `/context`): those are prompts.
fn command(typed: &str) -> Option<(&str, &str)> {
    let command = typed.strip_prefix('/').filter(|c| c.starts_with(|ch: char| ch.is_ascii_alphabetic()))?;
    let (name, args) = command.split_once(char::is_whitespace).unwrap_or((command, ""));
    let chat_mode = ["ask", "code", "architect", "context"].contains(&name) && !args.trim().is_empty();
    (!chat_mode).then_some((name, args.trim()))
}

/// A local time as Aider writes it (`2025-12-03 14:43:45`, the prompt history with
/// microseconds), read as UTC (the files do not say the time zone) and to the millisecond, as
/// event times are written.
fn parse_local(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    use chrono::SubsecRound;
    ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S"]
        .iter()
        .find_map(|format| chrono::NaiveDateTime::parse_from_str(text.trim(), format).ok())
        .map(|t| t.and_utc().trunc_subsecs(3))
}

/// The session id of the run whose header, at `line`, gives the start time `time` as written.
fn session_id(time: &str, line: u64) -> String {
    format!("{}-L{line}", time.trim().replace(' ', "T"))
}

#[cfg(test)]
mod tests;
