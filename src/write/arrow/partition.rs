//! Which partition of a Hive-style dataset an event belongs to, and building each partition's
//! batches on the reading threads.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::Arc;

use arrow_array::RecordBatch;
use chrono::NaiveDate;

use super::columns::EventColumns;
use super::io_error;
use crate::model::{Agent, Diagnostic, Event};
use crate::write::{Build, Builders, PartitionKey, Piece, Sessions};

/// The value Hive and Spark use for a missing partition value.
pub(super) const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Tells each event's partition directory, relative to the table: `agent=codex/date=2026-02-23`.
pub(super) struct Partitioner {
    keys: Vec<PartitionKey>,
    /// Last known date per session, for events the source gives no time (old Codex files).
    last_date: HashMap<(Agent, String), NaiveDate>,
    /// The last event's agent, session, partition date and directory: events come in runs of one
    /// session and day, which then need no lookup.
    last: Option<(Agent, String, Option<NaiveDate>, String)>,
}

impl Partitioner {
    pub(super) fn new(keys: Vec<PartitionKey>) -> Self {
        Partitioner { keys, last_date: HashMap::new(), last: None }
    }

    /// The partition keys, in path order.
    pub(super) fn keys(&self) -> &[PartitionKey] {
        &self.keys
    }

    /// Whether the files carry the agent column: not when the agent is in the path.
    pub(super) fn with_agent(&self) -> bool {
        !self.keys.contains(&PartitionKey::Agent)
    }

    /// The partition directory of an event.
    pub(super) fn dir(&mut self, event: &Event) -> &str {
        let date = event.timestamp.map(|t| t.date_naive());
        let same = self.last.as_ref().is_some_and(|(agent, session, last_date, _)| {
            *agent == event.agent && *session == event.session_id && (date.is_none() || date == *last_date)
        });
        if !same {
            let key = (event.agent, event.session_id.clone());
            let date = match date {
                Some(date) => {
                    self.last_date.insert(key.clone(), date);
                    Some(date)
                }
                None => self.last_date.get(&key).copied(),
            };
            let text = date.map_or_else(|| NULL_PARTITION.to_owned(), |d| d.format("%Y-%m-%d").to_string());
            let dir = self.path_of(event.agent, &text);
            self.last = Some((key.0, key.1, date, dir));
        }
        self.last.as_ref().map(|(_, _, _, dir)| dir.as_str()).expect("set above")
    }

    /// The directory of an agent's partition of a date (`YYYY-MM-DD` or [`NULL_PARTITION`]).
    pub(super) fn path_of(&self, agent: Agent, date: &str) -> String {
        self.keys
            .iter()
            .map(|k| match k {
                PartitionKey::Agent => format!("agent={}", agent.as_str()),
                PartitionKey::Date => format!("date={date}"),
            })
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// What a [`PartitionBuilder`] makes: batches, each of one partition directory, and at the end of
/// a group, the summaries of the group's sessions.
pub(super) struct PartitionPart {
    pub(super) batches: Vec<(String, RecordBatch)>,
    pub(super) sessions: Option<Sessions>,
}

/// Builds a group's events into a batch per partition directory, of at most 8192 rows or 16 MiB
/// of text ([`EventColumns::is_full`]), the rest given at the group's end in directory order.
pub(super) struct PartitionBuilder {
    partitioner: Partitioner,
    columns: BTreeMap<String, EventColumns>,
    sessions: Sessions,
}

impl PartitionBuilder {
    /// Builders of a dataset partitioned by `keys`.
    pub(super) fn builders(keys: Vec<PartitionKey>) -> Builders {
        Arc::new(move || {
            let partitioner = Partitioner::new(keys.clone());
            Box::new(PartitionBuilder { partitioner, columns: BTreeMap::new(), sessions: Sessions::default() })
        })
    }
}

/// A part as a piece, sized by the memory its batches hold.
fn piece(part: PartitionPart) -> Piece {
    let bytes = part.batches.iter().map(|(_, b)| b.get_array_memory_size()).sum();
    Piece::new(part, bytes)
}

impl Build for PartitionBuilder {
    fn begin_source(&mut self) {
        self.sessions.begin_source();
    }

    fn event(&mut self, event: &Event) -> io::Result<Option<Piece>> {
        self.sessions.observe(event);
        let with_agent = self.partitioner.with_agent();
        let dir = self.partitioner.dir(event);
        if !self.columns.contains_key(dir) {
            self.columns.insert(dir.to_owned(), EventColumns::new(with_agent, false));
        }
        let columns = self.columns.get_mut(dir).expect("inserted above");
        columns.append(event);
        if !columns.is_full() {
            return Ok(None);
        }
        let batch = columns.finish().map_err(io_error)?;
        Ok(Some(piece(PartitionPart { batches: vec![(dir.to_owned(), batch)], sessions: None })))
    }

    fn end_source(&mut self, lines: u64, diagnostics: &[Diagnostic]) {
        self.sessions.end_source(lines, diagnostics);
    }

    fn end_group(&mut self) -> io::Result<Option<Piece>> {
        let mut batches = Vec::new();
        for (dir, mut columns) in std::mem::take(&mut self.columns) {
            if columns.rows() > 0 {
                batches.push((dir, columns.finish().map_err(io_error)?));
            }
        }
        // A group's partitions depend on its own events only.
        self.partitioner = Partitioner::new(std::mem::take(&mut self.partitioner.keys));
        let sessions = std::mem::take(&mut self.sessions);
        if batches.is_empty() && sessions.is_empty() {
            return Ok(None);
        }
        Ok(Some(piece(PartitionPart { batches, sessions: Some(sessions) })))
    }
}
