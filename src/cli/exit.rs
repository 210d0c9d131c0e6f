//! Exit codes, one per outcome; the guide's table (docs/src/promises.md) lists them.

use std::process::ExitCode;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Everything converted, no diagnostics.
    Success,
    /// Everything readable converted, but some input lines were reported and skipped.
    Warnings,
    /// `validate` found lines that do not follow the schema.
    Invalid,
    /// The command line was wrong: unknown flag or format, missing input.
    Usage,
    /// An input could not be read at all (missing, unreadable, unknown format).
    Input,
    /// The output could not be written.
    Output,
    /// A bug: something agentlog assumed impossible happened.
    Internal,
}

impl Exit {
    /// How a run that read inputs ended: the worst of a bug, an unreadable input and a
    /// reported line.
    pub fn of(totals: &crate::pipeline::Totals) -> Exit {
        if totals.internal > 0 {
            Exit::Internal
        } else if totals.failed > 0 {
            Exit::Input
        } else if totals.warnings > 0 {
            Exit::Warnings
        } else {
            Exit::Success
        }
    }

    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Warnings | Exit::Invalid => 1,
            Exit::Usage => 2,
            Exit::Input => 3,
            Exit::Output => 4,
            Exit::Internal => 70,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}
