//! Sums over events, for the `usage` and `tools` commands: which events to count ([`filter`]),
//! the periods they fall in ([`time`]), and the tables they are summed into ([`usage`]).
//!
//! Tables are summed per group of inputs on every thread ([`fold`]) and merged in input
//! order, so that the sums, floating-point costs included, do not depend on the threads.

pub mod filter;
pub mod time;
pub mod usage;

use std::io;

use crate::pipeline::{Destination, Group, read_group};
use crate::read::Settings;

/// Reads every group into a destination of its own, made by `make`, on `settings`' threads;
/// gives the destinations in group order.
///
/// # Errors
/// The first error of a destination.
pub fn fold<D: Destination + Send>(
    groups: &[Group],
    settings: &Settings,
    make: impl Fn() -> D + Sync + Send,
) -> io::Result<Vec<D>> {
    settings
        .map(groups, |group| {
            let mut dest = make();
            read_group(group, &mut dest, settings)?;
            dest.end_group()?;
            Ok(dest)
        })
        .into_iter()
        .collect()
}
