//! What a run did: totals, and a report of every input that can be written as JSON (the
//! `--report` file).

use serde::Serialize;

use crate::model::Diagnostic;

use super::engine::Outcome;
use super::error::InputError;

/// What a run did, in numbers.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Inputs converted.
    pub files: u64,
    /// Distinct sessions seen.
    pub sessions: u64,
    /// Events written.
    pub events: u64,
    /// Input lines reported.
    pub warnings: u64,
    /// Inputs that could not be read at all.
    pub failed: u64,
    /// Inputs whose reading met a bug.
    pub internal: u64,
    /// Input bytes read.
    pub bytes: u64,
}

impl Totals {
    /// Counts one input's outcome.
    pub fn add(&mut self, outcome: &Outcome) {
        match &outcome.result {
            Ok(report) => {
                self.files += 1;
                self.events += report.events;
                self.warnings += report.warnings();
            }
            Err(e) => {
                self.failed += 1;
                self.internal += u64::from(matches!(e, InputError::Internal { .. }));
            }
        }
    }
}

/// What became of each input, in input order.
#[derive(Debug, Default, Clone, Serialize)]
pub struct RunReport {
    /// One entry per input.
    pub files: Vec<InputReport>,
    /// The run's totals, once it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
}

/// What became of one input.
#[derive(Debug, Clone, Serialize)]
pub struct InputReport {
    /// The input as given.
    pub file: String,
    /// Whether it converted, with or without problems.
    pub status: Status,
    /// Non-empty lines read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// Events written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// The lines reported, at most [`crate::read::MAX_DIAGNOSTICS`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Vec<Diagnostic>>,
    /// Further lines reported, only counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more_diagnostics: Option<u64>,
    /// Why it could not be read, for `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How an input fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Converted, nothing reported.
    Ok,
    /// Converted, with lines reported.
    Warnings,
    /// Not read at all.
    Error,
}

impl InputReport {
    /// The report of one input's outcome.
    pub fn of(outcome: &Outcome) -> Self {
        match &outcome.result {
            Ok(report) => {
                let diagnostics: Vec<Diagnostic> = report.diagnostics.iter().map(|d| d.to_record()).collect();
                InputReport {
                    file: outcome.name.clone(),
                    status: if diagnostics.is_empty() { Status::Ok } else { Status::Warnings },
                    lines: Some(report.lines),
                    events: Some(report.events),
                    diagnostics: Some(diagnostics),
                    more_diagnostics: Some(report.more_diagnostics),
                    error: None,
                }
            }
            Err(e) => InputReport {
                file: outcome.name.clone(),
                status: Status::Error,
                lines: None,
                events: None,
                diagnostics: None,
                more_diagnostics: None,
                error: Some(e.to_string()),
            },
        }
    }
}
