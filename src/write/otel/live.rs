//! Spans of sessions still being written (`agentlog watch --otlp-endpoint`): each span is sent
//! once, as soon as it is complete.
//!
//! A session's spans are built again from all its events whenever it changes, with the same
//! ids each time. A response's span goes once its usage is known, a tool call's once its output
//! is; a session's and a subagent's span, and calls never answered, once the session's files
//! have been quiet for a while, with the times they have then (the spans of a session that goes
//! on after that still go, under the same session span). The spans sent are remembered by id
//! ([`Sent`]), to be kept between runs, and so are the files of sessions not quiet yet when a
//! run ends ([`Live::close`]), for the next run to read again.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::model::{Agent, Event};

use super::otlp::Exporter;
use super::spans::Session;

/// The spans sent, by session (`<agent>/<session id>`) and span id.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Sent(BTreeMap<String, BTreeSet<u64>>);

/// A session's spans as they are now, and the files they come from.
struct Tracked {
    spans: Session,
    files: std::collections::BTreeSet<String>,
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
    pub fn session(&mut self, events: &[Event]) -> io::Result<()> {
        let Some(first) = events.first() else { return Ok(()) };
        let key = key(first.agent, &first.session_id);
        let mut spans = Session::new(first.agent, &first.session_id, self.content);
        events.iter().for_each(|e| spans.add(e));
        let files = events.iter().map(|e| e.source.file.clone()).collect();
        let tracked = Tracked { spans, files };
        self.send(&key, &tracked, false)?;
        self.sessions.insert(key, tracked);
        Ok(())
    }

    /// Sends the spans left of the sessions whose files have been quiet long enough, and
    /// forgets those sessions.
    ///
    /// # Errors
    /// When a batch cannot be queued.
    pub fn tick(&mut self) -> io::Result<()> {
        let now = SystemTime::now();
        let quiet: Vec<String> =
            self.sessions.iter().filter(|(_, t)| self.is_quiet(t, now)).map(|(k, _)| k.clone()).collect();
        for key in quiet {
            let tracked = self.sessions.remove(&key).expect("listed above");
            self.send(&key, &tracked, true)?;
        }
        self.exporter.flush()
    }

    /// Sends what [`Live::tick`] sends, and gives the files of the sessions not quiet yet: a
    /// later run reads them again ([`Live::session`]) and sends the rest of their spans once
    /// they are.
    ///
    /// # Errors
    /// When a batch cannot be queued.
    pub fn close(&mut self) -> io::Result<BTreeSet<String>> {
        self.tick()?;
        Ok(std::mem::take(&mut self.sessions).into_values().flat_map(|t| t.files).collect())
    }

    /// Whether all of a session's files are older than `quiet`, or gone.
    fn is_quiet(&self, tracked: &Tracked, now: SystemTime) -> bool {
        tracked.files.iter().all(|file| {
            std::fs::metadata(file)
                .and_then(|m| m.modified())
                .map_or(true, |t| now.duration_since(t).is_ok_and(|age| age >= self.quiet))
        })
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
