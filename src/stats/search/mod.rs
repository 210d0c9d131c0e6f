//! `agentlog search`: the sessions whose prompts, answers, reasoning, tool inputs or tool
//! outputs match a query, ranked, each with its best matches.
//!
//! A query is words and "quoted phrases", matched case-insensitively on word boundaries (so a
//! word inside an id or a base64 blob does not count), or one regular expression. A session
//! matches when every term matches some event of it; sessions are ranked by how often each term
//! matches (`1 + ln n` per term, summed), then by their last match, newest first. Only the text
//! of messages, reasoning, tool inputs (their string values, not their keys) and tool outputs is
//! searched: never ids, paths of the log, or metadata.
//!
//! Before a group of files is read, its raw bytes are looked through for every term's literal
//! text ([`Query::may_match`]): a group without one of them cannot hold a matching session and
//! is not parsed. An archive may also keep a full-text index of its sessions ([`index`]), which
//! finds the events that may match without reading the rest.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use regex::Regex;
use serde::Serialize;

use super::filter::{Filter, root_session};
use crate::model::{Agent, Event, Payload, Role};

pub mod index;

/// What part of a session an event's text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// A message the user typed (or the agent was given).
    Prompt,
    /// The agent's answer.
    Answer,
    /// Reasoning.
    Reasoning,
    /// A tool call's input.
    ToolInput,
    /// A tool's output.
    ToolOutput,
}

impl Field {
    /// The name users type after `--in`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Prompt => "prompt",
            Field::Answer => "answer",
            Field::Reasoning => "reasoning",
            Field::ToolInput => "tool-input",
            Field::ToolOutput => "tool-output",
        }
    }

    /// Every field, in the order `--in` lists them.
    pub const ALL: [Field; 5] = [Field::Prompt, Field::Answer, Field::Reasoning, Field::ToolInput, Field::ToolOutput];
}

/// One term of a query.
#[derive(Debug, Clone)]
struct Term {
    regex: Regex,
    /// The words of a word or phrase term, as typed; empty for a regular expression.
    words: Vec<String>,
    /// Literal texts the raw log must hold for the term to match (ASCII, lower case); empty
    /// when none is known (a regular expression, text beyond ASCII that JSON may escape).
    literals: Vec<String>,
}

/// A parsed query and what it is restricted to.
#[derive(Debug, Clone)]
pub struct Query {
    terms: Vec<Term>,
    /// The fields searched; all when empty.
    pub fields: Vec<Field>,
    /// Tool names (parts or glob patterns) whose calls and outputs are searched; all when empty.
    pub tools: Vec<super::filter::NamePattern>,
    /// The events looked at.
    pub filter: Filter,
    /// Literal prefilter over the raw bytes of a group: a matcher per literal (ASCII,
    /// case-insensitive), which the regex engine runs on SIMD literal search as `rg` does.
    prefilter: Option<Vec<regex::bytes::Regex>>,
    /// The most bytes a literal's match takes, the bytes around it included.
    longest: usize,
    /// The number of distinct literals the prefilter must all see.
    literal_count: usize,
}

impl Query {
    /// Parses `text`: words and "quoted phrases", or, with `regex`, one regular expression
    /// (case-insensitive unless it says otherwise).
    ///
    /// # Errors
    /// An empty query, or a regular expression that does not compile.
    pub fn parse(text: &str, regex: bool) -> Result<Query, String> {
        let terms = if regex {
            let compiled = regex::RegexBuilder::new(text)
                .case_insensitive(true)
                .size_limit(1 << 24)
                .build()
                .map_err(|e| format!("not a regular expression: {e}"))?;
            vec![Term { regex: compiled, words: Vec::new(), literals: Vec::new() }]
        } else {
            split(text).iter().map(|words| term(words)).collect::<Result<Vec<_>, _>>()?
        };
        if terms.is_empty() {
            return Err("nothing to search for: give a word, a \"phrase\" or --regex PATTERN".into());
        }
        let mut literals: Vec<String> = terms.iter().flat_map(|t| t.literals.iter().cloned()).collect();
        literals.sort();
        literals.dedup();
        // Every term needs its literals; a term without one (a regular expression) cannot be
        // looked for in the raw bytes, and then nothing is skipped.
        let prefilter = (terms.iter().all(|t| !t.literals.is_empty())).then(|| {
            let matcher = |literal: &String| {
                regex::bytes::RegexBuilder::new(&regex::escape(literal))
                    .case_insensitive(true)
                    .unicode(false)
                    .build()
                    .expect("an escaped ASCII literal builds")
            };
            literals.iter().map(matcher).collect()
        });
        Ok(Query {
            terms,
            fields: Vec::new(),
            tools: Vec::new(),
            filter: Filter::default(),
            prefilter,
            // With the bytes around it: an escape before, a byte after.
            longest: literals.iter().map(|l| l.len() + 7).max().unwrap_or(0),
            literal_count: literals.len(),
        })
    }

    /// A query every session matches: for a listing of sessions.
    pub fn all() -> Query {
        Query {
            terms: Vec::new(),
            fields: Vec::new(),
            tools: Vec::new(),
            filter: Filter::default(),
            prefilter: None,
            longest: 0,
            literal_count: 0,
        }
    }

    /// Whether raw bytes may hold a session that matches: they hold every literal of every
    /// term. Always true for a query without literals.
    pub fn may_match(&self, bytes: &[u8]) -> bool {
        self.scan().feed(bytes)
    }

    /// A look through raw bytes, fed in pieces, for the literals of the query.
    pub fn scan(&self) -> Scan<'_> {
        Scan { query: self, seen: vec![false; self.literal_count], left: self.literal_count, tail: Vec::new() }
    }

    /// The words of each term, for a query of words and phrases; `None` for a regular
    /// expression, or a query of no terms.
    pub fn words(&self) -> Option<Vec<&[String]>> {
        let words: Vec<&[String]> = self.terms.iter().map(|t| t.words.as_slice()).collect();
        (!words.is_empty() && words.iter().all(|w| !w.is_empty())).then_some(words)
    }

    /// The field and searchable text of an event, within `--in` and `--tool`; `None` for events
    /// not searched.
    fn text<'e>(&self, event: &'e Event) -> Option<(Field, std::borrow::Cow<'e, str>)> {
        let (field, text) = searchable(event)?;
        let tool_kept = || {
            let name = match &event.payload {
                Payload::ToolCall(c) => Some(c.name.as_str()),
                Payload::ToolOutput(o) => o.name.as_deref(),
                _ => return true,
            };
            self.tools.is_empty() || name.is_some_and(|n| self.tools.iter().any(|t| t.matches(n)))
        };
        let kept = (self.fields.is_empty() || self.fields.contains(&field)) && tool_kept();
        kept.then_some((field, text))
    }
}

/// The field and searchable text of an event: a prompt, an answer, reasoning, a tool call's
/// input (its string values) or a tool's output; `None` for other events and empty text.
pub fn searchable(event: &Event) -> Option<(Field, std::borrow::Cow<'_, str>)> {
    let (field, text): (Field, std::borrow::Cow<'_, str>) = match &event.payload {
        Payload::Message(m) if m.role == Role::Assistant => (Field::Answer, m.text.as_str().into()),
        Payload::Message(m) if matches!(m.role, Role::User) => (Field::Prompt, m.text.as_str().into()),
        Payload::Reasoning(r) => (Field::Reasoning, r.text.as_str().into()),
        Payload::ToolCall(c) => match (&c.input, &c.input_text) {
            (_, Some(text)) => (Field::ToolInput, text.as_str().into()),
            (Some(input), None) => (Field::ToolInput, string_values(input.get()).into()),
            (None, None) => return None,
        },
        Payload::ToolOutput(o) => (Field::ToolOutput, o.text.as_str().into()),
        _ => return None,
    };
    (!text.is_empty()).then_some((field, text))
}

/// A look through raw bytes for a query's literals ([`Query::scan`]).
pub struct Scan<'q> {
    query: &'q Query,
    seen: Vec<bool>,
    left: usize,
    /// The end of the last piece, for a literal that spans two pieces.
    tail: Vec<u8>,
}

impl Scan<'_> {
    /// Looks through the next piece; true once every literal has been seen (or when the query
    /// has none).
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        let Some(prefilter) = &self.query.prefilter else { return true };
        if self.left == 0 {
            return true;
        }
        let keep = self.query.longest.saturating_sub(1);
        // A literal across the two pieces is in the end of the last and the start of this one;
        // the others are in this piece alone, looked through where it lies.
        let mut seam = std::mem::take(&mut self.tail);
        let had = !seam.is_empty();
        seam.extend_from_slice(&bytes[..keep.min(bytes.len())]);
        if (had && self.mark(prefilter, &seam)) || self.mark(prefilter, bytes) {
            return true;
        }
        self.tail = if bytes.len() >= keep {
            bytes[bytes.len() - keep..].to_vec()
        } else {
            // A piece shorter than the longest literal: the end of both.
            seam[seam.len().saturating_sub(keep)..].to_vec()
        };
        false
    }

    /// Marks the literals found in `bytes`; true once every literal has been seen.
    fn mark(&mut self, prefilter: &[regex::bytes::Regex], bytes: &[u8]) -> bool {
        for (i, literal) in prefilter.iter().enumerate() {
            if !self.seen[i] && literal.find_iter(bytes).any(|m| whole_word(bytes, m.start(), m.end())) {
                self.seen[i] = true;
                self.left -= 1;
            }
        }
        self.left == 0
    }

    /// Looks through everything `reader` gives; true once every literal has been seen.
    ///
    /// # Errors
    /// When reading fails.
    pub fn read(&mut self, mut reader: impl std::io::Read) -> std::io::Result<bool> {
        thread_local! {
            /// A buffer per thread, kept from one file to the next.
            static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        BUFFER.with_borrow_mut(|buf| {
            buf.resize(256 << 10, 0);
            loop {
                let n = match reader.read(buf) {
                    Ok(0) => return Ok(self.left == 0 || self.query.prefilter.is_none()),
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                if self.feed(&buf[..n]) {
                    return Ok(true);
                }
            }
        })
    }
}

/// Whether `bytes[start..end]`, raw JSON or text, may be a whole word of the text it holds: the
/// byte before it is no word character, or ends a JSON escape (`\n`, `\u2028`), and the byte
/// after it is no word character. At either end of `bytes` it may be (the next or last piece
/// says).
fn whole_word(bytes: &[u8], start: usize, end: usize) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let before = start == 0
        || !word(bytes[start - 1])
        || (start >= 2 && bytes[start - 2] == b'\\' && b"ntrbf".contains(&bytes[start - 1]))
        || (start >= 6
            && bytes[start - 6] == b'\\'
            && bytes[start - 5] == b'u'
            && bytes[start - 4..start].iter().all(u8::is_ascii_hexdigit));
    let after = end == bytes.len() || !word(bytes[end]);
    before && after
}

/// The words and quoted phrases of a query, each as its words.
fn split(text: &str) -> Vec<Vec<String>> {
    let mut terms = Vec::new();
    for (i, part) in text.split('"').enumerate() {
        let words: Vec<String> = part
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        if i % 2 == 1 {
            // Inside quotes: one phrase.
            if !words.is_empty() {
                terms.push(words);
            }
        } else {
            terms.extend(words.into_iter().map(|w| vec![w]));
        }
    }
    terms
}

/// A term matching its words in order, separated by anything that is not a word, on word
/// boundaries.
fn term(words: &[String]) -> Result<Term, String> {
    let body: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
    let pattern = format!(r"(?i)\b{}\b", body.join(r"\W+"));
    let regex = Regex::new(&pattern).map_err(|e| e.to_string())?;
    // A word beyond ASCII may be written as \u escapes in the raw JSON: no literal then.
    let literals = if words.iter().all(|w| w.is_ascii()) {
        words.iter().map(|w| w.to_ascii_lowercase()).collect()
    } else {
        Vec::new()
    };
    Ok(Term { regex, words: words.to_vec(), literals })
}

/// The string values of a JSON document (not its keys), one per line.
fn string_values(json: &str) -> String {
    fn walk(value: &serde_json::Value, out: &mut String) {
        match value {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            serde_json::Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(json) {
        walk(&value, &mut out);
    }
    out
}

/// The most matches kept per session.
pub const HITS_PER_SESSION: usize = 3;
/// Characters of context on each side of a match in a snippet.
const CONTEXT: usize = 70;

/// One event that matched.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// The event's id.
    pub event_id: String,
    /// What part of the session it is.
    pub field: Field,
    /// The tool, for tool inputs and outputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// When.
    #[serde(serialize_with = "crate::model::time::option::serialize")]
    pub timestamp: Option<DateTime<Utc>>,
    /// Matches in the event's text.
    pub matches: u64,
    /// Text around the first match, on one line.
    pub snippet: String,
    /// Where the matches are in the snippet: byte ranges.
    pub highlights: Vec<(usize, usize)>,
    /// The file and line the event comes from.
    pub source: String,
}

impl Hit {
    /// What part of the session it is, as `--in` names it.
    pub fn field_name(&self) -> &'static str {
        self.field.name()
    }
}

/// A session that matched.
#[derive(Debug, Clone, Serialize)]
pub struct SessionHits {
    /// The agent.
    pub agent: Agent,
    /// The session id (a subagent's events count for the session that started it).
    pub session_id: String,
    /// Its working directory, as first named (by any of its events, kept by the filters or not).
    pub project: Option<String>,
    /// Its first prompt, on one line, shortened (whether the filters keep it or not).
    pub title: Option<String>,
    /// Its first event's time (whether the filters keep it or not).
    #[serde(serialize_with = "crate::model::time::option::serialize")]
    pub started_at: Option<DateTime<Utc>>,
    /// The time of its last match.
    #[serde(serialize_with = "crate::model::time::option::serialize")]
    pub last_match_at: Option<DateTime<Utc>>,
    /// Rank: higher is better.
    pub score: f64,
    /// Matches of each term, in query order.
    pub term_matches: Vec<u64>,
    /// Its best matches, most matches first.
    pub hits: Vec<Hit>,
    /// Events that matched.
    pub events_matched: u64,
    /// Whether the filters kept any of its events.
    #[serde(skip)]
    pub kept: bool,
}

impl SessionHits {
    /// The session `id` of `agent`, before any of its events, for a query of `terms` terms.
    fn new(agent: Agent, id: &str, terms: usize) -> SessionHits {
        SessionHits {
            agent,
            session_id: id.to_owned(),
            project: None,
            title: None,
            started_at: None,
            last_match_at: None,
            score: 0.0,
            term_matches: vec![0; terms],
            hits: Vec::new(),
            events_matched: 0,
            kept: false,
        }
    }

    /// Takes what `event` says of the session: where, its first prompt, when it started.
    pub fn see(&mut self, event: &Event) {
        if self.project.is_none() {
            self.project.clone_from(&event.context.cwd);
        }
        if let Some(t) = event.timestamp {
            self.started_at = Some(self.started_at.map_or(t, |s| s.min(t)));
        }
        if self.title.is_none()
            && let Payload::Message(m) = &event.payload
            && m.role == Role::User
            && !event.injected
            && !m.text.trim().is_empty()
        {
            self.title = Some(one_line(&m.text, 100));
        }
    }

    /// Takes what a later part of the session says of it.
    fn describe(&mut self, project: Option<String>, title: Option<String>, started_at: Option<DateTime<Utc>>) {
        self.project = self.project.take().or(project);
        self.title = self.title.take().or(title);
        self.started_at = match (self.started_at, started_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// The sessions read, as they are found; see [`Results::ranked`].
#[derive(Debug, Default)]
pub struct Results {
    sessions: Vec<SessionHits>,
    index: HashMap<(Agent, String), usize>,
}

impl Results {
    /// The session `(agent, id)`, made when first named.
    fn session(&mut self, query: &Query, agent: Agent, id: &str) -> &mut SessionHits {
        let i = match self.index.get(&(agent, id.to_owned())) {
            Some(&i) => i,
            None => {
                self.index.insert((agent, id.to_owned()), self.sessions.len());
                self.sessions.push(SessionHits::new(agent, id, query.terms.len()));
                self.sessions.len() - 1
            }
        };
        &mut self.sessions[i]
    }

    /// Takes what a part of a session says of it, as [`SessionHits::see`] would have from its
    /// events (an index keeps this for the events it does not give).
    pub fn describe(
        &mut self,
        query: &Query,
        (agent, id): (Agent, &str),
        project: Option<String>,
        title: Option<String>,
        started_at: Option<DateTime<Utc>>,
    ) {
        self.session(query, agent, id).describe(project, title, started_at);
    }

    /// Takes one event: what it says of its session, and, when the filters keep it, its matches.
    pub fn add(&mut self, query: &Query, event: &Event) {
        if event.copied {
            return;
        }
        let session = self.session(query, event.agent, root_session(event));
        session.see(event);
        if !query.filter.keeps(event) {
            return;
        }
        session.kept = true;
        if query.terms.is_empty() {
            return;
        }
        let Some((field, text)) = query.text(event) else { return };
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut matched_terms = 0;
        for (t, term) in query.terms.iter().enumerate() {
            let found: Vec<(usize, usize)> = term.regex.find_iter(&text).map(|m| (m.start(), m.end())).collect();
            if !found.is_empty() {
                matched_terms += 1;
                session.term_matches[t] += found.len() as u64;
                spans.extend(found);
            }
        }
        if matched_terms == 0 {
            return;
        }
        spans.sort_unstable();
        session.events_matched += 1;
        if event.timestamp > session.last_match_at {
            session.last_match_at = event.timestamp;
        }
        let tool = match &event.payload {
            Payload::ToolCall(c) => Some(c.name.clone()),
            Payload::ToolOutput(o) => o.name.clone(),
            _ => None,
        };
        let (snippet, highlights) = snippet(&text, &spans);
        let hit = Hit {
            event_id: event.id.clone(),
            field,
            tool,
            timestamp: event.timestamp,
            matches: spans.len() as u64,
            snippet,
            highlights,
            source: format!("{}:{}", event.source.file, event.source.line),
        };
        // The best few: most matches, then the earliest.
        let at = session.hits.iter().position(|h| h.matches < hit.matches).unwrap_or(session.hits.len());
        if at < HITS_PER_SESSION {
            session.hits.insert(at, hit);
            session.hits.truncate(HITS_PER_SESSION);
        }
    }

    /// Adds the sessions of `other`, read after these.
    pub fn merge(&mut self, other: Results) {
        for session in other.sessions {
            let key = (session.agent, session.session_id.clone());
            match self.index.get(&key) {
                None => {
                    self.index.insert(key, self.sessions.len());
                    self.sessions.push(session);
                }
                Some(&i) => {
                    let mine = &mut self.sessions[i];
                    mine.describe(session.project, session.title, session.started_at);
                    mine.kept |= session.kept;
                    mine.last_match_at = mine.last_match_at.max(session.last_match_at);
                    mine.events_matched += session.events_matched;
                    mine.term_matches.iter_mut().zip(session.term_matches).for_each(|(a, b)| *a += b);
                    for hit in session.hits {
                        let at = mine.hits.iter().position(|h| h.matches < hit.matches).unwrap_or(mine.hits.len());
                        mine.hits.insert(at, hit);
                    }
                    mine.hits.truncate(HITS_PER_SESSION);
                }
            }
        }
    }

    /// Every session the filters kept an event of, newest first (for [`Query::all`]).
    pub fn listed(self) -> Vec<SessionHits> {
        let mut sessions: Vec<SessionHits> = self.sessions.into_iter().filter(|s| s.kept).collect();
        sessions.sort_by(|a, b| {
            b.started_at
                .cmp(&a.started_at)
                .then_with(|| (a.agent.as_str(), &a.session_id).cmp(&(b.agent.as_str(), &b.session_id)))
        });
        sessions
    }

    /// The sessions in which every term matched, best first.
    pub fn ranked(self) -> Vec<SessionHits> {
        let mut sessions: Vec<SessionHits> = self
            .sessions
            .into_iter()
            .filter(|s| s.term_matches.iter().all(|n| *n > 0))
            .map(|mut s| {
                s.score = s.term_matches.iter().map(|n| 1.0 + (*n as f64).ln()).sum();
                s
            })
            .collect();
        sessions.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| b.last_match_at.cmp(&a.last_match_at))
                .then_with(|| (a.agent.as_str(), &a.session_id).cmp(&(b.agent.as_str(), &b.session_id)))
        });
        sessions
    }
}

/// Text on one line, at most `max` characters (an ellipsis marks the cut).
fn one_line(text: &str, max: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// The text around the first match, whitespace runs made single spaces, with the ranges of
/// the matches that fall in it.
fn snippet(text: &str, spans: &[(usize, usize)]) -> (String, Vec<(usize, usize)>) {
    let (first, _) = spans[0];
    let start = text[..first].char_indices().rev().nth(CONTEXT - 1).map_or(0, |(i, _)| i);
    let end_at = text[first..].char_indices().nth(CONTEXT * 2).map_or(text.len(), |(i, _)| first + i);
    let window = &text[start..end_at];
    // Collapse whitespace, keeping a map from window offsets to snippet offsets.
    let mut out = String::with_capacity(window.len() + 2);
    let mut map = vec![0usize; window.len() + 1];
    let mut last_space = false;
    if start > 0 {
        out.push('…');
    }
    for (i, c) in window.char_indices() {
        map[i] = out.len();
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
        let here = out.len();
        map[i + 1..i + c.len_utf8()].fill(here);
    }
    map[window.len()] = out.len();
    if end_at < text.len() {
        out.push('…');
    }
    let highlights = spans
        .iter()
        .filter(|(s, e)| *s >= start && *e <= end_at)
        .map(|(s, e)| (map[s - start], map[e - start]))
        .collect();
    (out, highlights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_on_word_boundaries_only() {
        let q = Query::parse("migration", false).unwrap();
        let t = &q.terms[0].regex;
        assert!(t.is_match("The Migration failed"));
        assert!(!t.is_match("premigrations"));
        assert!(!t.is_match("aGVsbG9taWdyYXRpb24=migrationX"));
    }

    #[test]
    fn a_phrase_matches_its_words_in_order() {
        let q = Query::parse("\"database migration\" failed", false).unwrap();
        assert_eq!(q.terms.len(), 2);
        assert!(q.terms[0].regex.is_match("the database\n  migration"));
        assert!(!q.terms[0].regex.is_match("migration database"));
    }

    #[test]
    fn the_prefilter_needs_every_literal() {
        let q = Query::parse("alpha beta", false).unwrap();
        assert!(q.may_match(b"..ALPHA..beta.."));
        assert!(!q.may_match(b"..alpha.."));
        assert!(Query::parse("al.ha", true).unwrap().may_match(b"nothing"));
    }

    #[test]
    fn the_prefilter_looks_for_whole_words_of_the_raw_json() {
        let q = Query::parse("rollback", false).unwrap();
        assert!(!q.may_match(br#"{"text":"the scrollback buffer, rollbacks"}"#));
        for raw in [
            r#""rollback""#,
            r#""a
ROLLBACK.""#,
            r#"" rollback""#,
            r#""x	rollback
""#,
            "rollback",
        ] {
            assert!(q.may_match(raw.as_bytes()), "{raw}");
        }
    }

    #[test]
    fn the_prefilter_sees_a_literal_split_between_two_pieces() {
        let q = Query::parse("needle", false).unwrap();
        let mut scan = q.scan();
        assert!(!scan.feed(b"....nee"));
        assert!(scan.feed(b"DLE...."));
    }

    #[test]
    fn the_prefilter_sees_a_literal_over_pieces_shorter_than_it() {
        let q = Query::parse("needle", false).unwrap();
        let mut scan = q.scan();
        assert!(!["..n", "e", "ed", "l"].iter().any(|piece| scan.feed(piece.as_bytes())));
        assert!(scan.feed(b"e."));
    }

    #[test]
    fn a_snippet_marks_its_matches() {
        let text = format!("{}needle in\n\n a haystack{}", "x ".repeat(200), " y".repeat(200));
        let (snippet, highlights) = snippet(&text, &[(400, 406)]);
        assert_eq!(&snippet[highlights[0].0..highlights[0].1], "needle");
        assert!(snippet.starts_with('…') && snippet.ends_with('…'));
        assert!(snippet.contains("needle in a haystack"));
    }
}
