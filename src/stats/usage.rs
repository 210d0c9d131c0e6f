//! Token usage and cost summed into rows: by day, week, month, session, project, model or
//! agent, or any combination.

use std::collections::BTreeMap;

use crate::model::{Event, Meta, MetaType, Payload, UsageTotals};

use super::filter::{Filter, model, root_session};
use super::time::{Period, Zone};

/// What usage rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageKey {
    /// Calendar day of the response, in the chosen zone.
    Day,
    /// ISO week (from Monday) of the response.
    Week,
    /// Calendar month of the response.
    Month,
    /// The session; a subagent's responses count under the session that started it.
    Session,
    /// The working directory.
    Project,
    /// The model that served the response.
    Model,
    /// The agent.
    Agent,
}

impl UsageKey {
    /// Every key.
    pub const ALL: [UsageKey; 7] = [
        UsageKey::Day,
        UsageKey::Week,
        UsageKey::Month,
        UsageKey::Session,
        UsageKey::Project,
        UsageKey::Model,
        UsageKey::Agent,
    ];

    /// The key of a name; `None` for another name.
    pub fn from_name(name: &str) -> Option<UsageKey> {
        UsageKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The key's name, as a column and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            UsageKey::Day => "day",
            UsageKey::Week => "week",
            UsageKey::Month => "month",
            UsageKey::Session => "session",
            UsageKey::Project => "project",
            UsageKey::Model => "model",
            UsageKey::Agent => "agent",
        }
    }

    /// The key's value for a response.
    fn of(self, event: &Event, zone: Zone) -> Option<String> {
        let period = |p: Period| event.timestamp.map(|t| p.label(zone.date(t)));
        match self {
            UsageKey::Day => period(Period::Day),
            UsageKey::Week => period(Period::Week),
            UsageKey::Month => period(Period::Month),
            UsageKey::Session => Some(root_session(event).to_owned()),
            UsageKey::Project => event.context.cwd.clone(),
            UsageKey::Model => model(event).map(str::to_owned),
            UsageKey::Agent => Some(event.agent.as_str().to_owned()),
        }
    }
}

/// How a usage table is made: its keys, the zone of its periods, and the events it counts.
#[derive(Debug, Clone)]
pub struct UsageQuery {
    /// The keys of a row, in order; none gives one row.
    pub by: Vec<UsageKey>,
    /// The zone that days, weeks and months are counted in.
    pub zone: Zone,
    /// The events counted.
    pub filter: Filter,
}

/// The values of a row's keys, in the query's order; `None` where the response does not say
/// (no time, no working directory, no model).
pub type RowKey = Vec<Option<String>>;

/// Usage totals per row, rows in key order.
#[derive(Debug, Clone, Default)]
pub struct UsageTable {
    rows: BTreeMap<RowKey, UsageTotals>,
}

impl UsageTable {
    /// Counts `event` if it is one model response's usage that the query keeps. Copies of
    /// earlier responses (resumed or forked history) are not counted again.
    pub fn add(&mut self, query: &UsageQuery, event: &Event) {
        let Payload::Meta(Meta { meta_type: MetaType::Usage, usage: Some(usage), .. }) = &event.payload else {
            return;
        };
        if event.copied || !query.filter.keeps(event) {
            return;
        }
        let key: RowKey = query.by.iter().map(|k| k.of(event, query.zone)).collect();
        // A total held at its largest value is reported on the session, not here.
        let _ = self.rows.entry(key).or_default().add(usage);
    }

    /// Adds the rows of `other`.
    pub fn merge(&mut self, other: UsageTable) {
        for (key, totals) in other.rows {
            let _ = self.rows.entry(key).or_default().merge(&totals);
        }
    }

    /// The rows, in key order.
    pub fn rows(&self) -> impl Iterator<Item = (&RowKey, &UsageTotals)> {
        self.rows.iter()
    }

    /// The sum of all rows.
    pub fn totals(&self) -> UsageTotals {
        let mut all = UsageTotals::default();
        for totals in self.rows.values() {
            let _ = all.merge(totals);
        }
        all
    }
}
