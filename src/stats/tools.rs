//! Tool use summed into rows: calls, outputs, failures, durations and the commonest error
//! messages, per tool or tool family, by session, project, day, agent or model.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::model::{Event, Payload, ToolFamily};

use super::filter::{Filter, model, root_session};
use super::time::{Period, Zone};
use super::usage::RowKey;

/// Distinct error messages kept per row; later ones are counted without their text.
const MAX_MESSAGES: usize = 1000;

/// Longest error message kept, in characters: the first line of the output, cut.
const MESSAGE_CHARS: usize = 160;

/// Error messages reported per row.
pub const TOP_ERRORS: usize = 5;

/// What tool rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsKey {
    /// The tool's name as the agent called it.
    Tool,
    /// The tool's family (`shell`, `edit`, …), the same for every agent.
    Family,
    /// The session; a subagent's calls count under the session that started it.
    Session,
    /// The working directory.
    Project,
    /// Calendar day of the call, in the chosen zone.
    Day,
    /// The agent.
    Agent,
    /// The model in use.
    Model,
}

impl ToolsKey {
    /// Every key.
    pub const ALL: [ToolsKey; 7] = [
        ToolsKey::Tool,
        ToolsKey::Family,
        ToolsKey::Session,
        ToolsKey::Project,
        ToolsKey::Day,
        ToolsKey::Agent,
        ToolsKey::Model,
    ];

    /// The key's name, as a column and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ToolsKey::Tool => "tool",
            ToolsKey::Family => "family",
            ToolsKey::Session => "session",
            ToolsKey::Project => "project",
            ToolsKey::Day => "day",
            ToolsKey::Agent => "agent",
            ToolsKey::Model => "model",
        }
    }

    /// The key of a name; `None` for another name.
    pub fn from_name(name: &str) -> Option<ToolsKey> {
        ToolsKey::ALL.into_iter().find(|k| k.name() == name)
    }

    fn of(self, event: &Event, name: Option<&str>, zone: Zone) -> Option<String> {
        match self {
            ToolsKey::Tool => name.map(str::to_owned),
            ToolsKey::Family => {
                // The family the agent's reader gave the tool; by its name for events without one.
                let kind = match &event.payload {
                    Payload::ToolCall(call) => call.tool_kind,
                    Payload::ToolOutput(output) => output.tool_kind,
                    _ => None,
                };
                kind.or_else(|| name.map(ToolFamily::of)).map(|k| k.as_str().to_owned())
            }
            ToolsKey::Session => Some(root_session(event).to_owned()),
            ToolsKey::Project => event.context.cwd.clone(),
            ToolsKey::Day => event.timestamp.map(|t| Period::Day.label(zone.date(t))),
            ToolsKey::Agent => Some(event.agent.as_str().to_owned()),
            ToolsKey::Model => model(event).map(str::to_owned),
        }
    }
}

/// How a tools table is made.
#[derive(Debug, Clone)]
pub struct ToolsQuery {
    /// The keys of a row, in order.
    pub by: Vec<ToolsKey>,
    /// The zone that days are counted in.
    pub zone: Zone,
    /// The events counted.
    pub filter: Filter,
}

/// The sums of one row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolTotals {
    /// Tool calls.
    pub calls: u64,
    /// Tool outputs.
    pub outputs: u64,
    /// Outputs whose call failed (`failed` true).
    pub errors: u64,
    /// Outputs whose `failed` is known, true or false.
    pub known: u64,
    /// Durations in milliseconds, each with how many outputs took it.
    durations: BTreeMap<u64, u64>,
    /// Error messages, each with how many failed outputs gave it.
    messages: HashMap<String, u64>,
    /// Failed outputs whose message was not kept (past [`MAX_MESSAGES`] distinct ones).
    other_messages: u64,
}

/// A row's figures, as written out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolFigures {
    /// Tool calls.
    pub calls: u64,
    /// Tool outputs.
    pub outputs: u64,
    /// Outputs whose call failed.
    pub errors: u64,
    /// Outputs whose failure or success is known.
    pub failures_known: u64,
    /// `errors / failures_known`; null when none is known.
    pub error_rate: Option<f64>,
    /// Outputs with a duration.
    pub durations_known: u64,
    /// Median duration in milliseconds (the value at rank ⌈n/2⌉); null without durations.
    pub median_ms: Option<u64>,
    /// 95th percentile duration in milliseconds (the value at rank ⌈0.95·n⌉).
    pub p95_ms: Option<u64>,
    /// The commonest error messages (first line of the output), most frequent first.
    pub top_errors: Vec<ErrorCount>,
}

/// An error message and how many failed outputs gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorCount {
    /// The first line of the output, cut to 160 characters.
    pub message: String,
    /// Failed outputs that gave it.
    pub count: u64,
}

impl ToolTotals {
    /// Adds another row's sums.
    pub fn merge(&mut self, other: ToolTotals) {
        self.calls += other.calls;
        self.outputs += other.outputs;
        self.errors += other.errors;
        self.known += other.known;
        for (ms, n) in other.durations {
            *self.durations.entry(ms).or_default() += n;
        }
        for (message, n) in other.messages {
            self.count_message(message, n);
        }
        self.other_messages += other.other_messages;
    }

    fn count_message(&mut self, message: String, n: u64) {
        if let Some(count) = self.messages.get_mut(&message) {
            *count += n;
        } else if self.messages.len() < MAX_MESSAGES {
            self.messages.insert(message, n);
        } else {
            self.other_messages += n;
        }
    }

    /// The value at rank ⌈q·n⌉ of the durations.
    fn quantile(&self, q: f64) -> Option<u64> {
        let n: u64 = self.durations.values().sum();
        let rank = ((q * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        self.durations.iter().find_map(|(ms, count)| {
            seen += count;
            (seen >= rank).then_some(*ms)
        })
    }

    /// The row's figures.
    pub fn figures(&self) -> ToolFigures {
        let mut top: Vec<ErrorCount> = self
            .messages
            .iter()
            .map(|(message, count)| ErrorCount { message: message.clone(), count: *count })
            .collect();
        top.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.message.cmp(&b.message)));
        top.truncate(TOP_ERRORS);
        ToolFigures {
            calls: self.calls,
            outputs: self.outputs,
            errors: self.errors,
            failures_known: self.known,
            error_rate: (self.known > 0).then(|| self.errors as f64 / self.known as f64),
            durations_known: self.durations.values().sum(),
            median_ms: self.quantile(0.5),
            p95_ms: self.quantile(0.95),
            top_errors: top,
        }
    }
}

/// Tool sums per row, rows in key order.
#[derive(Debug, Clone, Default)]
pub struct ToolsTable {
    rows: BTreeMap<RowKey, ToolTotals>,
}

impl ToolsTable {
    /// Counts `event` if it is a tool call or output that the query keeps; replayed copies of
    /// earlier ones are not counted again.
    pub fn add(&mut self, query: &ToolsQuery, event: &Event) {
        let name = match &event.payload {
            Payload::ToolCall(call) => Some(call.name.as_str()),
            Payload::ToolOutput(output) => output.name.as_deref(),
            _ => return,
        };
        if event.copied || !query.filter.keeps(event) {
            return;
        }
        let key: RowKey = query.by.iter().map(|k| k.of(event, name, query.zone)).collect();
        let row = self.rows.entry(key).or_default();
        match &event.payload {
            Payload::ToolCall(_) => row.calls += 1,
            Payload::ToolOutput(output) => {
                row.outputs += 1;
                row.known += u64::from(output.failed.is_some());
                if let Some(ms) = output.duration_ms {
                    *row.durations.entry(ms).or_default() += 1;
                }
                if output.failed == Some(true) {
                    row.errors += 1;
                    row.count_message(message(&output.text), 1);
                }
            }
            _ => {}
        }
    }

    /// Adds the rows of `other`.
    pub fn merge(&mut self, other: ToolsTable) {
        for (key, totals) in other.rows {
            self.rows.entry(key).or_default().merge(totals);
        }
    }

    /// The rows, in key order.
    pub fn rows(&self) -> impl Iterator<Item = (&RowKey, &ToolTotals)> {
        self.rows.iter()
    }

    /// The sum of all rows.
    pub fn totals(&self) -> ToolTotals {
        let mut all = ToolTotals::default();
        for totals in self.rows.values() {
            all.merge(totals.clone());
        }
        all
    }
}

/// Lines that shell tools put before a command's own output (Codex's unified exec and
/// simple exec formats), which say nothing about the error.
const HEADER_LINES: [&str; 7] = [
    "Chunk ID:",
    "Wall time:",
    "Process exited with code",
    "Process running with",
    "Original token count:",
    "Output:",
    "Exit code:",
];

/// An output's error message: its first non-blank line that is not a shell tool's header, cut
/// to [`MESSAGE_CHARS`].
fn message(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let line = lines.find(|l| !HEADER_LINES.iter().any(|h| l.starts_with(h))).unwrap_or("(no text)");
    match line.char_indices().nth(MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_the_values_at_their_nearest_rank() {
        let mut t = ToolTotals::default();
        for ms in [10, 20, 30, 40, 1000] {
            *t.durations.entry(ms).or_default() += 1;
        }
        // Ranks ⌈2.5⌉ = 3 and ⌈4.75⌉ = 5 of 10, 20, 30, 40, 1000.
        assert_eq!((t.quantile(0.5), t.quantile(0.95)), (Some(30), Some(1000)));
        assert_eq!(ToolTotals::default().quantile(0.5), None);
    }

    #[test]
    fn messages_are_first_lines_cut_short() {
        assert_eq!(message("\n  Error: exit code 1\nmore"), "Error: exit code 1");
        assert_eq!(
            message("Chunk ID: 8e4b\nWall time: 4.5 seconds\nOutput:\ntest result: FAILED\n"),
            "test result: FAILED"
        );
        assert_eq!(message(&"é".repeat(200)).chars().count(), MESSAGE_CHARS + 1);
        assert_eq!(message(""), "(no text)");
    }
}
