//! The command line for programs that carry it in-process, such as the Python package: a run
//! whose errors come back as values instead of text on stderr, and a `convert` command line
//! resolved into what to read, for a caller that takes the events itself.

use std::ffi::OsString;

use miette::Diagnostic;

use crate::pipeline::{self, Group, InputError};
use crate::read::Settings;

use super::args::{Args, Command};
use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// An error of a run, as a value: what the `agentlog` command would print on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Its stable code, such as `agentlog::input::not_found`.
    pub code: Option<String>,
    /// One-line description.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
    /// The input it is about, when it is about one.
    pub path: Option<String>,
}

impl Problem {
    /// The problem a diagnostic describes.
    pub fn of(diagnostic: &(dyn Diagnostic + 'static)) -> Problem {
        let error: &(dyn std::error::Error + 'static) = diagnostic;
        let input = error.downcast_ref::<InputError>().or_else(|| match error.downcast_ref::<CliError>() {
            Some(CliError::Input(e)) => Some(e),
            _ => None,
        });
        Problem {
            code: diagnostic.code().map(|c| c.to_string()),
            message: diagnostic.to_string(),
            help: diagnostic.help().map(|h| h.to_string()),
            path: input.map(|e| e.path().to_owned()),
        }
    }
}

/// Runs a command line (its words, the program's name first) as the `agentlog` command would,
/// printing nothing on stderr: gives the exit code and the errors it would have printed. A
/// run's per-input diagnostics are in its `--report`.
pub fn run_keeping(arguments: impl IntoIterator<Item = OsString>) -> (Exit, Vec<Problem>) {
    let args = match Args::from_arguments(arguments) {
        Ok(args) => args,
        Err(e) => {
            let problem = Problem {
                code: Some("agentlog::usage::invalid".into()),
                message: e.render().to_string().trim_end().to_owned(),
                help: None,
                path: None,
            };
            return (Exit::Usage, vec![problem]);
        }
    };
    let reporter = Reporter::keeping();
    let exit = super::run_with(args, &reporter);
    (exit, reporter.take())
}

/// A `convert` command line resolved into what to read: its groups of inputs, in order, and the
/// run's settings (threads, filters, redaction).
pub struct Reading {
    /// The groups of inputs, in input order, sharded as `--shard` asks.
    pub groups: Vec<Group>,
    /// The settings to read them with.
    pub settings: Settings,
    /// The inputs that were found but cannot be read (unreadable, of no known format).
    pub failed: Vec<InputError>,
}

/// Resolves a `convert` command line (`agentlog convert [INPUT]... [--from …] [FILTERS] …`) into
/// the inputs and settings `convert` would read with; output options are ignored. Inputs that
/// name nothing, and arguments that are wrong, are errors.
///
/// # Errors
/// The problems `convert` would have reported before reading anything.
pub fn reading(arguments: impl IntoIterator<Item = OsString>) -> Result<Reading, Vec<Problem>> {
    let usage = |message: String| {
        vec![Problem { code: Some("agentlog::usage::invalid".into()), message, help: None, path: None }]
    };
    let args = Args::from_arguments(arguments).map_err(|e| usage(e.render().to_string().trim_end().to_owned()))?;
    let Command::Convert(args) = args.command else {
        return Err(usage("only a convert command line can be read".into()));
    };
    let reader = super::reader_named(&args.from);
    let (inputs, errors) = super::resolve_inputs(&args.inputs, reader);
    if !errors.is_empty() {
        return Err(errors.iter().map(|e| Problem::of(e)).collect());
    }
    let (filter, _) = super::filter::resolve(&args.filter).map_err(|e| vec![Problem::of(&e)])?;
    let reporter = Reporter::keeping();
    let redaction = args.redact.resolve_or_report(&reporter).map_err(|_| reporter.take())?;
    let settings = super::convert::settings(super::jobs(args.jobs), args.max_line_bytes, filter, redaction.as_ref());
    let (groups, failed) = pipeline::plan(&inputs, reader, &|_| None, &settings);
    let groups = match args.shard {
        Some(s) => pipeline::shard(groups, s.k, s.n),
        None => groups,
    };
    Ok(Reading { groups, settings, failed })
}
