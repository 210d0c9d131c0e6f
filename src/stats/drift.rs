//! What agentlog does not map yet, per agent: record kinds kept as `unknown` events, fields
//! kept in `extra`, and files of a kind no reader recognised in an agent's own places; each
//! with a count, where it was first seen and the first and last agent version seen with it.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{Event, MetaType, Payload};
use crate::pipeline::Outcome;

/// What a row of the drift table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// A file in an agent's places whose first records no reader knows.
    File,
    /// A record kind kept whole as an `unknown` event.
    Record,
    /// A field of a known record that no event field carries, kept in `extra`.
    Field,
}

impl DriftKind {
    /// The kind's name in output.
    pub fn name(self) -> &'static str {
        match self {
            DriftKind::File => "file",
            DriftKind::Record => "record",
            DriftKind::Field => "field",
        }
    }
}

/// One row: what was seen how often, where first, and with which versions.
#[derive(Debug, Clone, Serialize)]
pub struct DriftRow {
    /// How many events (or files) carried it.
    pub count: u64,
    /// `file:line` of the first one, in input order.
    pub first_seen: String,
    /// The lowest agent version seen with it, when the records name one.
    pub first_version: Option<String>,
    /// The highest agent version seen with it.
    pub last_version: Option<String>,
}

/// The drift table: rows by agent, kind and name (`record_type` for records,
/// `record_type.field` for fields, the first record's kind for files).
#[derive(Debug, Default)]
pub struct DriftTable {
    rows: BTreeMap<(String, DriftKind, String), DriftRow>,
}

/// Keys agentlog itself puts in `extra`, which are not the source's fields.
const OWN_KEYS: [&str; 2] = ["merged_lines", "turns_not_marked"];

impl DriftTable {
    /// Takes one event: an `unknown` meta event is a record row, each key of its `extra` a
    /// field row.
    pub fn add(&mut self, event: &Event) {
        let agent = event.agent.as_str();
        let record_type = event.source.record_type.as_deref().unwrap_or("(no type)");
        let at = || format!("{}:{}", event.source.file, event.source.line);
        let version = event.context.agent_version.as_deref();
        if let Payload::Meta(m) = &event.payload
            && m.meta_type == MetaType::Unknown
        {
            self.see(agent, DriftKind::Record, record_type.to_owned(), at, version);
        }
        let Some(extra) = &event.extra else { return };
        let Ok(fields) = serde_json::from_str::<BTreeMap<&str, &serde_json::value::RawValue>>(extra.get()) else {
            return;
        };
        for field in fields.keys().filter(|k| !OWN_KEYS.contains(k)) {
            self.see(agent, DriftKind::Field, format!("{record_type}.{field}"), at, version);
        }
    }

    /// Takes what became of one input: a file read by the agent whose places it lies in, its
    /// format unknown, is a file row.
    pub fn outcome(&mut self, agent: &str, outcome: &Outcome) {
        let Ok(report) = &outcome.result else { return };
        for d in report.diagnostics.iter().filter(|d| d.problem.code == crate::read::Problem::NEW_KIND) {
            let message = &d.problem.message;
            let kind = message.split_once('(').and_then(|(_, rest)| rest.split_once(')')).map(|(kind, _)| kind);
            let name = kind.unwrap_or("?").to_owned();
            self.see(agent, DriftKind::File, name, || format!("{}:{}", outcome.name, d.line), None);
        }
    }

    fn see(&mut self, agent: &str, kind: DriftKind, name: String, at: impl Fn() -> String, version: Option<&str>) {
        let row = self.rows.entry((agent.to_owned(), kind, name)).or_insert_with(|| DriftRow {
            count: 0,
            first_seen: at(),
            first_version: None,
            last_version: None,
        });
        row.count += 1;
        if let Some(v) = version {
            row.see_version(v);
        }
    }

    /// Adds the rows of `other`, which come after this table's in input order.
    pub fn merge(&mut self, other: DriftTable) {
        for (key, row) in other.rows {
            match self.rows.get_mut(&key) {
                Some(mine) => {
                    mine.count += row.count;
                    for v in [row.first_version, row.last_version].into_iter().flatten() {
                        mine.see_version(&v);
                    }
                }
                None => {
                    self.rows.insert(key, row);
                }
            }
        }
    }

    /// The rows: agent, kind, name and figures, by agent, then kind, then name.
    pub fn rows(&self) -> impl Iterator<Item = (&str, DriftKind, &str, &DriftRow)> {
        self.rows.iter().map(|((agent, kind, name), row)| (agent.as_str(), *kind, name.as_str(), row))
    }
}

impl DriftRow {
    fn see_version(&mut self, v: &str) {
        if self.first_version.as_deref().is_none_or(|f| compare_versions(v, f) == Ordering::Less) {
            self.first_version = Some(v.to_owned());
        }
        if self.last_version.as_deref().is_none_or(|l| compare_versions(v, l) == Ordering::Greater) {
            self.last_version = Some(v.to_owned());
        }
    }
}

/// Orders versions by their dotted numbers (`2.1.9` before `2.1.10`), then as text.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let numbers = |v: &str| -> Vec<u64> {
        v.split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap_or(u64::MAX))
            .collect()
    };
    numbers(a).cmp(&numbers(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_their_numbers() {
        assert_eq!(compare_versions("2.1.9", "2.1.10"), Ordering::Less);
        assert_eq!(compare_versions("0.169.0", "0.58.0"), Ordering::Greater);
        assert_eq!(compare_versions("1.0.2", "1.0.2"), Ordering::Equal);
    }
}
