//! [`Sessions`]: session summaries built from the events and source reports a writer sees.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use crate::model::{Agent, Diagnostic, Event, SessionSummary, SessionTally};

/// Session summaries of everything written so far, one per (agent, session id).
///
/// Memory grows with the number of sessions (one summary each, plus the call ids of their tool
/// calls), not with the number of events.
#[derive(Debug, Default)]
pub struct Sessions {
    /// By agent, then session id: looked up with the event's `&str` id, never a copy of it.
    tallies: BTreeMap<Agent, BTreeMap<String, SessionTally>>,
    /// The session the current source's lines and problems are counted in: its first one.
    current: Option<(Agent, String)>,
}

impl Sessions {
    /// Starts a new source.
    pub fn begin_source(&mut self) {
        self.current = None;
    }

    /// Takes one event into its session's summary.
    pub fn observe(&mut self, event: &Event) {
        self.current.get_or_insert_with(|| (event.agent, event.session_id.clone()));
        let sessions = self.tallies.entry(event.agent).or_default();
        match sessions.get_mut(event.session_id.as_str()) {
            Some(tally) => tally.observe(event),
            None => {
                let mut tally = SessionTally::new(event.agent, &event.session_id);
                tally.observe(event);
                sessions.insert(event.session_id.clone(), tally);
            }
        }
    }

    /// Counts a finished source's lines and problems in its first session.
    pub fn end_source(&mut self, lines: u64, diagnostics: &[Diagnostic]) {
        let current = self.current.as_ref();
        if let Some(tally) = current.and_then(|(agent, id)| self.tallies.get_mut(agent)?.get_mut(id)) {
            tally.add_lines(lines, diagnostics);
        }
    }

    /// Takes in the summaries of `other`, made from other events: a session met in both
    /// gets the two summaries merged.
    pub fn absorb(&mut self, other: Sessions) {
        for (agent, tallies) in other.tallies {
            let mine = self.tallies.entry(agent).or_default();
            for (id, tally) in tallies {
                match mine.entry(id) {
                    Entry::Vacant(entry) => {
                        entry.insert(tally);
                    }
                    Entry::Occupied(mut entry) => entry.get_mut().merge(tally),
                }
            }
        }
    }

    /// Whether no session has been seen.
    pub fn is_empty(&self) -> bool {
        self.tallies.is_empty()
    }

    /// The summaries, by agent and session id.
    pub fn finish(self) -> Vec<SessionSummary> {
        self.tallies.into_values().flat_map(BTreeMap::into_values).map(SessionTally::finish).collect()
    }
}
