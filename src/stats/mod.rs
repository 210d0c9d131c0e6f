//! Sums over events, for the `usage` and `tools` commands: which events to count ([`filter`]),
//! the periods they fall in ([`time`]), and the tables they are summed into ([`usage`],
//! [`tools`]).
//!
//! Tables are summed per group of inputs on every thread ([`fold`]) and merged in input
//! order, so that the sums, floating-point costs included, do not depend on the threads.

pub mod drift;
pub mod filter;
pub mod report;
pub mod search;
pub mod time;
pub mod tools;
pub mod usage;

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::pipeline::{Destination, Group, Held, Look, read_group};
use crate::read::Settings;

/// A table of sums that the tables of several groups merge into.
pub trait Sums: Default + Send {
    /// Adds the sums of `other`, which come after this table's in input order.
    fn merge(&mut self, other: Self);

    /// Takes what became of one input, read by the reader of `agent`; nothing by default.
    fn outcome(&mut self, _agent: &str, _outcome: &crate::pipeline::Outcome) {}
}

impl Sums for drift::DriftTable {
    fn merge(&mut self, other: Self) {
        drift::DriftTable::merge(self, other);
    }

    fn outcome(&mut self, agent: &str, outcome: &crate::pipeline::Outcome) {
        drift::DriftTable::outcome(self, agent, outcome);
    }
}

impl Sums for usage::UsageTable {
    fn merge(&mut self, other: Self) {
        usage::UsageTable::merge(self, other);
    }
}

impl Sums for search::Results {
    fn merge(&mut self, other: Self) {
        search::Results::merge(self, other);
    }
}

impl Sums for tools::ToolsTable {
    fn merge(&mut self, other: Self) {
        tools::ToolsTable::merge(self, other);
    }
}

/// Reads every group into a destination of its own, made by `make`, on as many threads as
/// `settings` has; gives the destinations in group order. Groups are claimed in order; once
/// none is left to claim, the lines of the large inputs still being read are parsed on the
/// threads that are idle. Just before a group is read, `look` decides whether it is: a group
/// it skips gets a destination that took nothing; the files it held are read from memory.
///
/// # Errors
/// The first error of a destination; the threads then stop claiming groups.
pub fn fold<D: Destination + Send>(
    groups: &[Group],
    settings: &Settings,
    look: &(dyn Fn(&Group, &mut Held) -> Look + Sync),
    make: impl Fn() -> D + Sync,
) -> io::Result<Vec<D>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let done: Vec<Mutex<Option<io::Result<D>>>> = groups.iter().map(|_| Mutex::new(None)).collect();
    let work = || {
        let mut held = Held::default();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            settings.set_inputs_waiting(groups.len().saturating_sub(i + 1));
            if i >= groups.len() || failed.load(Ordering::Relaxed) {
                return;
            }
            let mut dest = make();
            held.clear();
            let result = match look(&groups[i], &mut held) {
                Look::Skip => Ok(dest),
                Look::Read => {
                    read_group(&groups[i], &held, &mut dest, settings).and_then(|()| dest.end_group()).map(|()| dest)
                }
            };
            failed.fetch_or(result.is_err(), Ordering::Relaxed);
            *done[i].lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..settings.threads().min(groups.len()) {
            scope.spawn(work);
        }
        work();
    });
    settings.set_inputs_waiting(0);
    done.into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
        .map(|result| result.unwrap_or_else(|| Err(io::Error::other("a group was not read: an earlier one failed"))))
        .collect()
}
