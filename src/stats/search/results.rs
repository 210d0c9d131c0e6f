//! The sessions a search finds, each with its best matches, ranked.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Field, Query, root_session};
use crate::model::{Agent, Event, Payload, Role};

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
    /// The time of its first prompt, answer or tool event, or of its first meta event (a hook
    /// run, a snapshot) when it has none of those (whether the filters keep it or not).
    #[serde(serialize_with = "crate::model::time::option::serialize")]
    pub started_at: Option<DateTime<Utc>>,
    /// Whether `started_at` is a meta event's time, which the first other event's replaces.
    #[serde(skip)]
    started_by_meta: bool,
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
    pub(super) fn new(agent: Agent, id: &str, terms: usize) -> SessionHits {
        SessionHits {
            agent,
            session_id: id.to_owned(),
            project: None,
            title: None,
            started_at: None,
            started_by_meta: false,
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
            self.started(Some(t), matches!(event.payload, Payload::Meta(_)));
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

    /// Takes a time the session was seen at, a meta event's or another's: a session starts at
    /// its first event of conversation, so that hooks run before the first prompt, and records
    /// a search skips unread, do not move its start.
    fn started(&mut self, at: Option<DateTime<Utc>>, by_meta: bool) {
        let Some(t) = at else { return };
        match self.started_at {
            Some(_) if by_meta && !self.started_by_meta => {}
            Some(s) if by_meta == self.started_by_meta => self.started_at = Some(s.min(t)),
            _ => (self.started_at, self.started_by_meta) = (Some(t), by_meta),
        }
    }

    /// Whether `started_at` is a meta event's time, the session having no other event with one
    /// (yet).
    pub fn started_by_meta(&self) -> bool {
        self.started_by_meta
    }

    /// Takes what a later part of the session says of it: its project, title, and start (and
    /// whether that is a meta event's time).
    fn describe(
        &mut self,
        project: Option<String>,
        title: Option<String>,
        (started_at, by_meta): (Option<DateTime<Utc>>, bool),
    ) {
        self.project = self.project.take().or(project);
        self.title = self.title.take().or(title);
        self.started(started_at, by_meta);
    }
}

/// The sessions read, as they are found; see [`Results::ranked`].
#[derive(Debug, Default)]
pub struct Results {
    sessions: Vec<SessionHits>,
    index: HashMap<(Agent, String), usize>,
    /// The session last named: events come in runs of one session.
    last: Option<usize>,
}

impl Results {
    /// The session `(agent, id)`, made when first named.
    fn session(&mut self, query: &Query, agent: Agent, id: &str) -> &mut SessionHits {
        let last = self.last.filter(|&i| self.sessions[i].agent == agent && self.sessions[i].session_id == id);
        let i = match last.or_else(|| self.index.get(&(agent, id.to_owned())).copied()) {
            Some(i) => i,
            None => {
                self.index.insert((agent, id.to_owned()), self.sessions.len());
                self.sessions.push(SessionHits::new(agent, id, query.terms.len()));
                self.sessions.len() - 1
            }
        };
        self.last = Some(i);
        &mut self.sessions[i]
    }

    /// Takes what a part of a session says of it, as [`SessionHits::see`] would have from its
    /// events (an index keeps this for the events it does not give): its project, title, and
    /// start with whether that is a meta event's time.
    pub fn describe(
        &mut self,
        query: &Query,
        (agent, id): (Agent, &str),
        project: Option<String>,
        title: Option<String>,
        started: (Option<DateTime<Utc>>, bool),
    ) {
        self.session(query, agent, id).describe(project, title, started);
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
                    mine.describe(session.project, session.title, (session.started_at, session.started_by_meta));
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
    fn a_snippet_marks_its_matches() {
        let text = format!("{}needle in\n\n a haystack{}", "x ".repeat(200), " y".repeat(200));
        let (snippet, highlights) = snippet(&text, &[(400, 406)]);
        assert_eq!(&snippet[highlights[0].0..highlights[0].1], "needle");
        assert!(snippet.starts_with('…') && snippet.ends_with('…'));
        assert!(snippet.contains("needle in a haystack"));
    }
}
