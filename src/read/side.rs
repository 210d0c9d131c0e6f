//! What the agents keep beside their transcripts: the prompt history, memory files, the
//! registry of running sessions, todo lists and thread names.
//!
//! Each agent's reader reads its own side files (`claude/side.rs`, `codex/side.rs`); this
//! module holds what they share: the kinds of file, telling whether a prompt from the prompt
//! history is also in its session's transcript, and reading a whole small document as one event.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::io::{self, BufRead, Read};
use std::path::Path;

use super::{Emitter, InputDiagnostic, Problem, ReadReport};
use crate::model::{Event, Payload};

/// What an agent's file holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A session transcript (the agent's session or rollout file, or agentlog's own output).
    #[default]
    Session,
    /// The prompts typed, across sessions (`history.jsonl`).
    PromptHistory,
    /// Thread names, across sessions (Codex `session_index.jsonl`).
    ThreadNames,
    /// A memory file of a project (Claude Code `memory/*.md`).
    Memory,
    /// An entry of the registry of running sessions (Claude Code `sessions/<pid>.json`).
    SessionRegistry,
    /// One agent's todo list (Claude Code `todos/<session>-agent-<agent>.json`).
    TodoList,
}

impl FileKind {
    /// The name `ls` shows (`session`, `prompt-history`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Session => "session",
            FileKind::PromptHistory => "prompt-history",
            FileKind::ThreadNames => "thread-names",
            FileKind::Memory => "memory",
            FileKind::SessionRegistry => "session-registry",
            FileKind::TodoList => "todo-list",
        }
    }

    /// Whether one file of this kind holds records of many sessions, so that it changes
    /// whenever any of them does.
    pub fn spans_sessions(self) -> bool {
        matches!(self, FileKind::PromptHistory | FileKind::ThreadNames)
    }
}

/// The first line of `head` as a JSON object, parsed only when one of `keys` is in it: the
/// many transcripts are told from side files by a key search, not a parse.
pub(crate) fn first_record(head: &[u8], keys: &[&str]) -> Option<serde_json::Map<String, serde_json::Value>> {
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let wanted = keys.iter().any(|k| memchr::memmem::find(line, format!("\"{k}\"").as_bytes()).is_some());
    wanted.then(|| serde_json::from_slice(line).ok()).flatten()
}

/// The name of the directory holding `path`, if any.
pub(crate) fn parent_name(path: &Path) -> Option<&str> {
    path.parent()?.file_name()?.to_str()
}

/// A prompt reduced for comparison: whitespace runs made one space, ends trimmed.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Characters of a prompt's start kept to match prompts whose history entry shortened pasted
/// text to a placeholder.
const START_CHARS: usize = 200;

/// The typed prompts of one session's transcript.
#[derive(Debug, Default)]
pub(crate) struct TranscriptPrompts {
    whole: HashSet<u64>,
    starts: Vec<String>,
}

impl TranscriptPrompts {
    /// The prompts of transcript `files`: of each line containing `needle`, what `prompt`
    /// finds typed in it.
    pub(crate) fn of_files(files: &[std::path::PathBuf], needle: &str, prompt: fn(&str) -> Option<String>) -> Self {
        let mut prompts = TranscriptPrompts::default();
        for file in files {
            lines_with(file, needle, |line| {
                if let Some(text) = prompt(line) {
                    prompts.add(&text);
                }
            });
        }
        prompts
    }

    /// Adds a prompt of the transcript.
    pub(crate) fn add(&mut self, text: &str) {
        let text = normalize(text);
        if text.is_empty() {
            return;
        }
        if self.whole.insert(hash(&text)) {
            self.starts.push(text.chars().take(START_CHARS).collect());
        }
    }

    /// Whether the transcript holds a prompt the history recorded as `display`. Agents shorten
    /// pasted text and images in the history to placeholders (`[Pasted text #1 +20 lines]`,
    /// `[Image #1]`): such a prompt matches a transcript prompt that starts with the text
    /// before the first placeholder.
    pub(crate) fn holds(&self, display: &str) -> bool {
        let text = normalize(display);
        if self.whole.contains(&hash(&text)) {
            return true;
        }
        let placeholder = ["[Pasted text #", "[Image #", "[Pasted image #"].iter().filter_map(|p| text.find(p)).min();
        let Some(at) = placeholder else { return false };
        let before: String = text[..at].trim_end().chars().take(START_CHARS).collect();
        self.starts.iter().any(|start| start.starts_with(&before) || before.starts_with(start.as_str()))
    }
}

fn hash(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The flag of a prompt from the prompt history, from looking it up in its session's
/// transcript: found or not, or no transcript (`None`).
pub(crate) fn history_flag(found: Option<bool>) -> crate::model::PromptHistory {
    use crate::model::PromptHistory;
    match found {
        Some(true) => PromptHistory::InTranscript,
        Some(false) => PromptHistory::NotInTranscript,
        None => PromptHistory::NoTranscript,
    }
}

/// Sessions whose transcript prompts are kept at once; prompt histories list a session's
/// prompts together, so a few suffice.
const CACHED_SESSIONS: usize = 32;

/// The prompts of recently asked sessions' transcripts, loaded on first ask.
#[derive(Default)]
pub(crate) struct PromptCache {
    sessions: HashMap<String, Option<TranscriptPrompts>>,
    order: VecDeque<String>,
}

impl PromptCache {
    /// The prompts of `session`'s transcript, loaded by `load` (`None`: no transcript found).
    pub(crate) fn get(
        &mut self,
        session: &str,
        load: impl FnOnce() -> Option<TranscriptPrompts>,
    ) -> Option<&TranscriptPrompts> {
        if !self.sessions.contains_key(session) {
            if self.order.len() >= CACHED_SESSIONS
                && let Some(oldest) = self.order.pop_front()
            {
                self.sessions.remove(&oldest);
            }
            self.sessions.insert(session.to_owned(), load());
            self.order.push_back(session.to_owned());
        }
        self.sessions.get(session).and_then(Option::as_ref)
    }
}

/// Calls `each` with every line of the file at `path` (plain or zstd-compressed) that contains
/// `needle`; unreadable files give nothing.
pub(crate) fn lines_with(path: &Path, needle: &str, mut each: impl FnMut(&str)) {
    let Ok(file) = std::fs::File::open(path) else { return };
    let bytes: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "zst") {
        match zstd::stream::read::Decoder::new(file) {
            Ok(decoder) => Box::new(io::BufReader::new(decoder)),
            Err(_) => return,
        }
    } else {
        Box::new(io::BufReader::new(file))
    };
    for line in bytes.split(b'\n').map_while(Result::ok) {
        if memchr::memmem::find(&line, needle.as_bytes()).is_some()
            && let Ok(text) = std::str::from_utf8(&line)
        {
            each(text);
        }
    }
}

/// Parses lines that each hold one small JSON object (prompt histories, thread names), keeping
/// the line's number and offset.
#[derive(Clone, Copy)]
pub(crate) struct ObjectLines {
    /// Whether the lines may hold token usage: false for side files, which hold none.
    pub usage: bool,
}

impl super::LineParser for ObjectLines {
    type Parsed = (super::Line<'static>, serde_json::Map<String, serde_json::Value>);

    fn parse(&self, line: super::Line<'_>) -> Result<Self::Parsed, Problem> {
        let record = super::parse_object(line.text)?;
        Ok((super::Line { number: line.number, offset: line.offset, text: "" }, record))
    }

    fn may_matter_to_usage(&self, _line: &[u8]) -> bool {
        self.usage
    }
}

/// A whole small document (a memory file, a registry entry, a todo list) read at once.
pub(crate) struct Document {
    /// The document's text.
    pub text: String,
    /// Its non-empty lines.
    pub lines: u64,
}

impl Document {
    /// Reads the rest of `bytes`.
    ///
    /// # Errors
    /// When reading fails.
    pub(crate) fn read(mut bytes: Box<dyn BufRead + '_>) -> io::Result<Result<Document, Vec<u8>>> {
        let mut raw = Vec::new();
        bytes.read_to_end(&mut raw)?;
        Ok(match String::from_utf8(raw) {
            Ok(text) => {
                let text = text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text);
                let lines = crate::read::lines::counted_lines(&text);
                Ok(Document { text, lines })
            }
            Err(e) => Err(e.into_bytes()),
        })
    }

    /// The report of a document whose lines all went into `events` events, with `diagnostics`
    /// about values of it.
    pub(crate) fn report(&self, name: &str, events: u64, diagnostics: Vec<InputDiagnostic>) -> ReadReport {
        let mut report = ReadReport { lines: self.lines, lines_mapped: self.lines, events, ..ReadReport::default() };
        report.note_repairs_in_document(name, &self.text);
        for d in diagnostics {
            report.push(|| d);
        }
        report
    }
}

/// The report of a document that could not be read as one: its first line carries the
/// diagnostic shown, and every non-empty line is counted as not mapped, with a diagnostic
/// counted for each.
pub(crate) fn unreadable(name: &str, text: &[u8], problem: Problem) -> ReadReport {
    let text = String::from_utf8_lossy(text);
    let lines = crate::read::lines::counted_lines(&text).max(1);
    let first = text.lines().find(|l| !crate::read::lines::is_blank(l)).unwrap_or_default();
    let mut report = ReadReport { lines, lines_diagnosed: lines, ..ReadReport::default() };
    report.push(|| InputDiagnostic::new(name, 1, first, problem));
    // One diagnostic shown for the document; its other lines are counted with it.
    report.more_diagnostics += lines - 1;
    report
}

/// Emits one event of a document, at its first line.
///
/// # Errors
/// When the caller fails to take the event.
pub(crate) fn emit_document(out: &mut Emitter<'_>, mut event: Event, record_type: &str) -> io::Result<()> {
    event.source.line = 1;
    event.source.record_type = Some(record_type.to_owned());
    out.emit(event, 0)
}

/// A meta event of `session` with `data`.
pub(crate) fn meta(session: String, meta_type: crate::model::MetaType, data: crate::model::Json) -> Event {
    Event::new(session, Payload::Meta(crate::model::Meta { meta_type, data: Some(data), usage: None }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_prompts_match_their_transcript_copies() {
        let mut prompts = TranscriptPrompts::default();
        prompts.add("fix the  failing\ntest please");
        prompts.add("summarise this:\nline one\nline two");
        assert!(prompts.holds("fix the failing test please"));
        assert!(prompts.holds("summarise this: [Pasted text #1 +2 lines]"));
        assert!(!prompts.holds("fix the other test"));
        assert!(!prompts.holds("explain this: [Pasted text #1 +2 lines]"));
    }
}
