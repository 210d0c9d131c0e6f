//! What `usage` and `tools` share: read the inputs on every thread, sum each group's events
//! into a table of its own, merge the tables in input order, and report the inputs' problems.

use std::collections::HashMap;
use std::io;

use crate::model::Event;
use crate::pipeline::{self, Destination, Outcome, Totals};
use crate::read::Settings;
use crate::stats::Sums;
use indicatif::ProgressBar;

use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// Sums the events of one group of inputs, and keeps their outcomes to report in input order.
struct Summing<'a, T> {
    table: T,
    add: &'a (dyn Fn(&mut T, &Event) + Sync),
    outcomes: Vec<Outcome>,
    progress: &'a ProgressBar,
    sizes: &'a HashMap<String, u64>,
}

impl<T> Destination for Summing<'_, T> {
    fn begin(&mut self, _name: &str) -> io::Result<()> {
        Ok(())
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        (self.add)(&mut self.table, &event);
        Ok(())
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        self.progress.inc(self.sizes.get(&outcome.name).copied().unwrap_or(0));
        self.outcomes.push(outcome);
        Ok(())
    }
}

/// Reading threads for `--jobs`: all cores by default, never more.
pub fn threads(jobs: Option<usize>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    jobs.unwrap_or(cores).clamp(1, cores)
}

/// Reads `inputs` (none: the agents' default places) with the reader `from` names, adding
/// every event to a table with `add`; gives the table and what became of the inputs, whose
/// problems are reported on the way.
///
/// # Errors
/// The exit status of a run that could not sum at all.
pub fn sum<T: Sums>(
    inputs: &[String],
    from: &str,
    settings: &Settings,
    reporter: &Reporter,
    add: impl Fn(&mut T, &Event) + Sync,
) -> Result<(T, Totals), Exit> {
    sum_where(inputs, from, settings, reporter, &|_, _| pipeline::Look::Read, add)
}

/// [`sum`] over the groups of inputs `look` chooses, just before each is read: those it skips
/// are not read, and the files it held are read from memory.
///
/// # Errors
/// The exit status of a run that could not sum at all.
pub fn sum_where<T: Sums>(
    inputs: &[String],
    from: &str,
    settings: &Settings,
    reporter: &Reporter,
    look: &(dyn Fn(&pipeline::Group, &mut pipeline::Held) -> pipeline::Look + Sync),
    add: impl Fn(&mut T, &Event) + Sync,
) -> Result<(T, Totals), Exit> {
    let reader = super::reader_named(from);
    let (specs, mut errors) = super::resolve_inputs(inputs, reader);
    if specs.is_empty() && errors.is_empty() {
        super::say_none_found(inputs, reporter);
    }
    let inputs = specs;
    let (groups, plan_errors) = pipeline::plan(&inputs, reader, &|_| None, settings);
    errors.extend(plan_errors);
    for e in &errors {
        reporter.error(e);
    }
    let sizes: HashMap<String, u64> =
        groups.iter().flat_map(|g| &g.items).map(|i| (i.spec.name().to_owned(), i.size)).collect();
    let agents: HashMap<&str, &str> = groups
        .iter()
        .flat_map(|g| &g.items)
        .map(|i| (i.spec.name(), i.reader.agent().map_or(i.reader.name(), |a| a.as_str())))
        .collect();
    let progress = reporter.progress_bar(sizes.values().sum());
    // A group skipped counts as read for the progress.
    let look = |group: &pipeline::Group, held: &mut pipeline::Held| match look(group, held) {
        pipeline::Look::Skip => {
            progress.inc(group.items.iter().map(|i| i.size).sum());
            pipeline::Look::Skip
        }
        read => read,
    };
    let summed = crate::stats::fold(&groups, settings, &look, || Summing {
        table: T::default(),
        add: &add,
        outcomes: Vec::new(),
        progress: &progress,
        sizes: &sizes,
    });
    progress.finish_and_clear();
    let summed = summed.map_err(|e| {
        reporter.error(&CliError::output(&None, e));
        Exit::Output
    })?;
    let mut table = T::default();
    let mut totals = Totals { failed: errors.len() as u64, ..Totals::default() };
    for group in summed {
        table.merge(group.table);
        for outcome in &group.outcomes {
            totals.add(outcome);
            table.outcome(agents.get(outcome.name.as_str()).copied().unwrap_or_default(), outcome);
            match &outcome.result {
                Ok(report) => reporter.diagnostics(&outcome.name, &report.diagnostics),
                Err(e) => reporter.error(e),
            }
        }
    }
    Ok((table, totals))
}
