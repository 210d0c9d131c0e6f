//! What `agentlog report` shows, summed in one read of the inputs: usage per day, model and
//! agent (as `agentlog usage` counts it), tool calls per family (as `agentlog tools` counts
//! them), and each session's project, length, prompts and cost. [`html`] draws the page.

pub mod html;
mod svg;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use crate::model::{Agent, Event, Meta, MetaType, Payload, Role, UsageTotals};

use super::filter::{Filter, root_session};
use super::time::Zone;
use super::tools::{ToolsKey, ToolsQuery, ToolsTable};
use super::usage::{UsageKey, UsageQuery, UsageTable};

/// How a report is made: the zone its days are counted in and the events it counts.
#[derive(Debug, Clone)]
pub struct ReportQuery {
    usage: UsageQuery,
    tools: ToolsQuery,
}

impl ReportQuery {
    /// A report of the events `filter` keeps, its days counted in `zone`.
    pub fn new(zone: Zone, filter: Filter) -> ReportQuery {
        let usage =
            UsageQuery { by: vec![UsageKey::Day, UsageKey::Model, UsageKey::Agent], zone, filter: filter.clone() };
        ReportQuery { usage, tools: ToolsQuery { by: vec![ToolsKey::Family], zone, filter } }
    }
}

/// One session, as the report shows it; a subagent's events count for the session that
/// started it.
#[derive(Debug, Clone)]
pub struct SessionFigures {
    /// The agent.
    pub agent: Agent,
    /// The session's id.
    pub session_id: String,
    /// Its working directory, as its first event names it.
    pub project: Option<String>,
    /// Its first prompt.
    pub title: Option<String>,
    /// The time of its first and last events.
    pub first: Option<DateTime<Utc>>,
    /// See `first`.
    pub last: Option<DateTime<Utc>>,
    /// Prompts typed (user messages not injected by the agent).
    pub prompts: u64,
    /// Its usage and cost.
    pub usage: UsageTotals,
}

impl SessionFigures {
    /// The time between its first and last events.
    pub fn duration(&self) -> Option<chrono::Duration> {
        Some(self.last? - self.first?)
    }

    fn merge(&mut self, other: SessionFigures) {
        self.project = self.project.take().or(other.project);
        self.title = self.title.take().or(other.title);
        self.first = [self.first, other.first].into_iter().flatten().min();
        self.last = [self.last, other.last].into_iter().flatten().max();
        self.prompts += other.prompts;
        let _ = self.usage.merge(&other.usage);
    }
}

/// The sums a report is drawn from.
#[derive(Debug, Clone, Default)]
pub struct ReportTable {
    /// Usage by day, model and agent.
    pub usage: UsageTable,
    /// Tool calls by family.
    pub tools: ToolsTable,
    sessions: Vec<SessionFigures>,
    index: HashMap<(Agent, String), usize>,
}

impl ReportTable {
    /// Counts `event` if the query keeps it. Copies of earlier events (resumed or forked
    /// history) are not counted again.
    pub fn add(&mut self, query: &ReportQuery, event: &Event) {
        self.usage.add(&query.usage, event);
        self.tools.add(&query.tools, event);
        if event.copied || !query.usage.filter.keeps(event) {
            return;
        }
        let key = (event.agent, root_session(event).to_owned());
        let i = *self.index.entry(key).or_insert_with_key(|(agent, id)| {
            self.sessions.push(SessionFigures {
                agent: *agent,
                session_id: id.clone(),
                project: None,
                title: None,
                first: None,
                last: None,
                prompts: 0,
                usage: UsageTotals::default(),
            });
            self.sessions.len() - 1
        });
        let session = &mut self.sessions[i];
        if session.project.is_none() {
            session.project.clone_from(&event.context.cwd);
        }
        if let Some(t) = event.timestamp {
            session.first = Some(session.first.map_or(t, |f| f.min(t)));
            session.last = Some(session.last.map_or(t, |l| l.max(t)));
        }
        match &event.payload {
            Payload::Message(m) if m.role == Role::User && !event.injected && !m.text.trim().is_empty() => {
                session.prompts += 1;
                if session.title.is_none() {
                    session.title = Some(m.text.split_whitespace().collect::<Vec<_>>().join(" "));
                }
            }
            Payload::Meta(Meta { meta_type: MetaType::Usage, usage: Some(usage), .. }) => {
                let _ = session.usage.add(usage);
            }
            _ => {}
        }
    }

    /// Adds the sums of `other`, read after these.
    pub fn merge(&mut self, other: ReportTable) {
        self.usage.merge(other.usage);
        self.tools.merge(other.tools);
        for session in other.sessions {
            let key = (session.agent, session.session_id.clone());
            match self.index.get(&key) {
                Some(&i) => self.sessions[i].merge(session),
                None => {
                    self.index.insert(key, self.sessions.len());
                    self.sessions.push(session);
                }
            }
        }
    }

    /// The sessions, in the order they were first seen.
    pub fn sessions(&self) -> &[SessionFigures] {
        &self.sessions
    }

    /// Sessions and prompts per project (`None`: events without a working directory), most
    /// sessions first.
    pub fn projects(&self) -> Vec<(Option<&str>, u64, u64)> {
        let mut by: BTreeMap<Option<&str>, (u64, u64)> = BTreeMap::new();
        for s in &self.sessions {
            let row = by.entry(s.project.as_deref()).or_default();
            row.0 += 1;
            row.1 += s.prompts;
        }
        let mut rows: Vec<_> = by.into_iter().map(|(p, (sessions, prompts))| (p, sessions, prompts)).collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        rows
    }

    /// The `n` sessions that lasted longest, then the `n` that cost most (with a cost).
    pub fn longest_and_costliest(&self, n: usize) -> (Vec<&SessionFigures>, Vec<&SessionFigures>) {
        let by_id = |a: &&SessionFigures, b: &&SessionFigures| {
            (a.agent.as_str(), &a.session_id).cmp(&(b.agent.as_str(), &b.session_id))
        };
        let mut longest: Vec<&SessionFigures> = self.sessions.iter().filter(|s| s.duration().is_some()).collect();
        longest.sort_by(|a, b| b.duration().cmp(&a.duration()).then_with(|| by_id(a, b)));
        longest.truncate(n);
        let mut costliest: Vec<&SessionFigures> =
            self.sessions.iter().filter(|s| s.usage.cost_usd.is_some_and(|c| c > 0.0)).collect();
        costliest.sort_by(|a, b| {
            let cost = |s: &SessionFigures| s.usage.cost_usd.unwrap_or(0.0);
            cost(b).total_cmp(&cost(a)).then_with(|| by_id(a, b))
        });
        costliest.truncate(n);
        (longest, costliest)
    }
}

impl super::Sums for ReportTable {
    fn merge(&mut self, other: Self) {
        ReportTable::merge(self, other);
    }
}
