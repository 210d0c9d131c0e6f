//! Which events a command looks at: `--session`, `--since`, `--until`, `--agent`, `--project`,
//! `--model`.

use std::collections::HashMap;
use std::io;

use chrono::{DateTime, Utc};

use crate::model::{Agent, Event, Payload};

/// A pattern matched against a name: a glob pattern when it has `*`, `?` or `[`, else a part
/// of the name (`opus` matches `claude-opus-4-6`).
#[derive(Debug, Clone)]
pub enum NamePattern {
    /// Matches names holding this text.
    Part(String),
    /// Matches names that the glob pattern matches whole.
    Glob(glob::Pattern),
}

impl std::str::FromStr for NamePattern {
    type Err = String;

    fn from_str(text: &str) -> Result<NamePattern, String> {
        if text.contains(['*', '?', '[']) {
            glob::Pattern::new(text).map(NamePattern::Glob).map_err(|e| format!("`{text}` is not a valid pattern: {e}"))
        } else {
            Ok(NamePattern::Part(text.to_owned()))
        }
    }
}

impl NamePattern {
    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Part(part) => name.contains(part.as_str()),
            NamePattern::Glob(glob) => glob.matches(name),
        }
    }
}

/// What events to keep; an empty list or bound keeps all.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Session ids or their beginnings; a subagent's events go with the session that started
    /// it, and with its own.
    pub sessions: Vec<String>,
    /// First instant kept.
    pub since: Option<DateTime<Utc>>,
    /// First instant no longer kept.
    pub until: Option<DateTime<Utc>>,
    /// Agents kept.
    pub agents: Vec<Agent>,
    /// Patterns of working directories kept.
    pub projects: Vec<NamePattern>,
    /// Patterns of models kept.
    pub models: Vec<NamePattern>,
}

impl Filter {
    /// Whether the filter keeps everything.
    pub fn keeps_all(&self) -> bool {
        self.sessions.is_empty()
            && self.since.is_none()
            && self.until.is_none()
            && self.agents.is_empty()
            && self.projects.is_empty()
            && self.models.is_empty()
    }

    /// Whether `event` is kept. An event without the field a filter looks at (no time, no
    /// working directory, no model) is not kept by that filter.
    pub fn keeps(&self, event: &Event) -> bool {
        self.keeps_session(event)
            && (self.agents.is_empty() || self.agents.contains(&event.agent))
            && self.keeps_time(event.timestamp)
            && (self.projects.is_empty()
                || event.context.cwd.as_deref().is_some_and(|cwd| self.projects.iter().any(|p| p.matches(cwd))))
            && (self.models.is_empty() || model(event).is_some_and(|m| self.models.iter().any(|p| p.matches(m))))
    }

    /// Whether `--session` keeps the event: its session or the session that started it begins
    /// with one of the ids given.
    fn keeps_session(&self, event: &Event) -> bool {
        let (own, root) = (event.session_id.as_str(), root_session(event));
        self.sessions.is_empty()
            || self.sessions.iter().any(|s| own.starts_with(s.as_str()) || root.starts_with(s.as_str()))
    }

    /// Whether a time is within `--since` and `--until`.
    fn keeps_time(&self, t: Option<DateTime<Utc>>) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        t.is_some_and(|t| self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u))
    }
}

/// The session an event counts under: a subagent's parent session, else its own.
pub fn root_session(event: &Event) -> &str {
    match (&event.parent_session_id, event.is_sidechain) {
        (Some(parent), true) => parent,
        _ => &event.session_id,
    }
}

/// The model of an event: its usage's model, else the model in force.
pub fn model(event: &Event) -> Option<&str> {
    match &event.payload {
        Payload::Meta(m) => m.usage.as_ref().and_then(|u| u.model.as_deref()),
        _ => None,
    }
    .or(event.context.model.as_deref())
}

/// A filter applied to a stream of events, deciding whole sessions by their project and model.
///
/// `--project` and `--model` select sessions by the first working directory and the first model
/// they name: the events of a session are held until they are known (the first response names
/// both), then all written or all dropped; a session that never names them is dropped at the end
/// of its group.
/// `--session` and `--agent` select sessions too, and `--since`/`--until` select events within
/// the kept sessions.
pub struct Gate<'f> {
    filter: &'f Filter,
    sessions: HashMap<(Agent, String), Decision>,
}

/// What is known of a session.
enum Decision {
    /// Not yet: its events so far, and the fields seen.
    Held { events: Vec<Event>, cwd: Option<bool>, model: Option<bool> },
    /// Written.
    Kept,
    /// Dropped.
    Dropped,
}

impl<'f> Gate<'f> {
    /// A gate applying `filter`.
    pub fn new(filter: &'f Filter) -> Self {
        Gate { filter, sessions: HashMap::new() }
    }

    /// Hands `event` to `out` if its session and time are kept, now or once its session is
    /// decided.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn pass(&mut self, event: Event, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<()> {
        let f = self.filter;
        if !f.keeps_session(&event) || !(f.agents.is_empty() || f.agents.contains(&event.agent)) {
            return Ok(());
        }
        let session = root_session(&event);
        if f.projects.is_empty() && f.models.is_empty() {
            return if f.keeps_time(event.timestamp) { out(event) } else { Ok(()) };
        }
        let key = (event.agent, session.to_owned());
        let decision = self.sessions.entry(key).or_insert_with(|| Decision::Held {
            events: Vec::new(),
            cwd: f.projects.is_empty().then_some(true),
            model: f.models.is_empty().then_some(true),
        });
        match decision {
            Decision::Kept => {
                if f.keeps_time(event.timestamp) {
                    out(event)
                } else {
                    Ok(())
                }
            }
            Decision::Dropped => Ok(()),
            Decision::Held { events, cwd, model } => {
                if cwd.is_none() {
                    *cwd = event.context.cwd.as_deref().map(|c| f.projects.iter().any(|p| p.matches(c)));
                }
                if model.is_none() {
                    *model = self::model(&event).map(|m| f.models.iter().any(|p| p.matches(m)));
                }
                events.push(event);
                match (*cwd, *model) {
                    (Some(true), Some(true)) => {
                        let held = std::mem::take(events);
                        *decision = Decision::Kept;
                        held.into_iter().filter(|e| f.keeps_time(e.timestamp)).try_for_each(&mut *out)
                    }
                    (Some(false), _) | (_, Some(false)) => {
                        *decision = Decision::Dropped;
                        Ok(())
                    }
                    _ => Ok(()),
                }
            }
        }
    }
}
