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

use regex::Regex;
use serde::Serialize;

use super::filter::{Filter, root_session};
use crate::model::{Event, Payload, Role};

pub mod index;
mod results;
mod scan;

pub use results::{HITS_PER_SESSION, Hit, Results, SessionHits};
pub use scan::Scan;

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

    /// Whether one line's raw bytes hold any literal of the query, so that an event of the line
    /// may match some term; `None` for a query without literals, where any line may.
    pub fn line_test(&self) -> Option<crate::read::Wanted> {
        let prefilter = self.prefilter.clone()?;
        Some(std::sync::Arc::new(move |line: &[u8]| scan::holds_any(&prefilter, line)))
    }

    /// A look through raw bytes, fed in pieces, for the literals of the query.
    pub fn scan(&self) -> Scan<'_> {
        Scan::new(self)
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
        let (field, raw, json) = stored_text(event)?;
        // Text without any literal of the query cannot match a term: a tool call's input is
        // then not taken apart into its string values, nor any text run through the terms. A
        // word in JSON may be escaped only as the raw log escapes it, which the test allows for.
        if self.prefilter.as_ref().is_some_and(|prefilter| !scan::holds_any(prefilter, raw.as_bytes())) {
            return None;
        }
        let text = as_searched(raw, json)?;
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
    let (field, raw, json) = stored_text(event)?;
    Some((field, as_searched(raw, json)?))
}

/// The field of an event's searchable text, and that text as the event holds it: a tool call's
/// input as JSON (`true`), whose string values are the text searched.
fn stored_text(event: &Event) -> Option<(Field, &str, bool)> {
    match &event.payload {
        Payload::Message(m) if m.role == Role::Assistant => Some((Field::Answer, &m.text, false)),
        Payload::Message(m) if m.role == Role::User => Some((Field::Prompt, &m.text, false)),
        Payload::Reasoning(r) => Some((Field::Reasoning, &r.text, false)),
        Payload::ToolCall(c) => match (&c.input, &c.input_text) {
            (_, Some(text)) => Some((Field::ToolInput, text, false)),
            (Some(input), None) => Some((Field::ToolInput, input.get(), true)),
            (None, None) => None,
        },
        Payload::ToolOutput(o) => Some((Field::ToolOutput, &o.text, false)),
        _ => None,
    }
}

/// The text searched in text an event holds ([`stored_text`]); `None` when it is empty.
fn as_searched(raw: &str, json: bool) -> Option<std::borrow::Cow<'_, str>> {
    let text: std::borrow::Cow<'_, str> = if json { string_values(raw).into() } else { raw.into() };
    (!text.is_empty()).then_some(text)
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
}
