//! Spans of sessions still being written (`agentlog watch --otlp-endpoint`): each span is sent
//! once, as soon as it is complete.
//!
//! A session's spans are built again from all its events whenever it changes, with the same
//! ids each time. A response's span goes once its usage is known, a tool call's once its output
//! is; a session's and a subagent's span, and calls never answered, once the session has been
//! quiet for a while, with the times they have then (the spans of a session that goes on after
//! that still go, under the same session span). The spans sent are remembered by id
//! ([`Sent`]), to be kept between runs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::model::{Agent, Event};

use super::otlp::Exporter;
use super::spans::Session;

/// The spans sent, by session (`<agent>/<session id>`) and span id.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Sent(BTreeMap<String, BTreeSet<u64>>);

/// A session's spans as they are now.
struct Tracked {
    spans: Session,
    changed: Instant,
}

/// Sends the spans of sessions that change.
pub struct Live {
    exporter: Arc<Exporter>,
    content: bool,
    quiet: Duration,
    sessions: HashMap<String, Tracked>,
    sent: Sent,
    /// Whether `sent` changed since [`Live::take_changed`].
    changed: bool,
}

fn key(agent: Agent, session: &str) -> String {
    format!("{}/{session}", agent.as_str())
}

impl Live {
    /// Sends through `exporter`; `content` records message content; the spans that wait for a
    /// session to be quiet go after `quiet`; `sent` is what an earlier run sent.
    pub fn new(exporter: Arc<Exporter>, content: bool, quiet: Duration, sent: Sent) -> Self {
        Live { exporter, content, quiet, sessions: HashMap::new(), sent, changed: false }
    }

    /// Takes all the events of a session that changed, in order, and sends its spans that are
    /// complete now and were not sent before.
    ///
    /// # Errors
    /// When a batch cannot be queued.
    pub fn session(&mut self, events: &[Event], now: Instant) -> io::Result<()> {
        let Some(first) = events.first() else { return Ok(()) };
        let key = key(first.agent, &first.session_id);
        let mut spans = Session::new(first.agent, &first.session_id, self.content);
        events.iter().for_each(|e| spans.add(e));
        let tracked = Tracked { spans, changed: now };
        self.send(&key, &tracked, false)?;
        self.sessions.insert(key, tracked);
        Ok(())
    }

    /// Sends the spans left of the sessions quiet since `quiet` before `now`, and forgets them.
    ///
    /// # Errors
    /// When a batch cannot be queued.
    pub fn tick(&mut self, now: Instant) -> io::Result<()> {
        let quiet: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, t)| now.duration_since(t.changed) >= self.quiet)
            .map(|(k, _)| k.clone())
            .collect();
        for key in quiet {
            let tracked = self.sessions.remove(&key).expect("listed above");
            self.send(&key, &tracked, true)?;
        }
        self.exporter.flush()
    }

    /// Sends every span not sent yet, as when all sessions went quiet.
    ///
    /// # Errors
    /// When a batch cannot be queued.
    pub fn close(&mut self) -> io::Result<()> {
        for (key, tracked) in std::mem::take(&mut self.sessions) {
            self.send(&key, &tracked, true)?;
        }
        self.exporter.flush()
    }

    /// What has been sent, to be saved.
    pub fn sent(&self) -> &Sent {
        &self.sent
    }

    /// Whether more was sent since the last call: whether [`Live::sent`] is worth saving.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn send(&mut self, key: &str, tracked: &Tracked, all: bool) -> io::Result<()> {
        let sent = self.sent.0.entry(key.to_owned()).or_default();
        let mut new = Vec::new();
        let request = tracked.spans.request_of(&mut |id, done| {
            let id = u64::from_be_bytes(id);
            let go = (done || all) && !sent.contains(&id);
            if go {
                new.push(id);
            }
            go
        });
        if let Some(request) = request {
            self.exporter.send(&request)?;
            sent.extend(new);
            self.changed = true;
        }
        Ok(())
    }
}
