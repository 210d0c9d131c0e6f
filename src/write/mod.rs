//! Writers: one per output format, each taking events through an [`EventSink`].
//!
//! A writer is a unit struct implementing [`Writer`], listed once in [`WRITERS`]; `--to`
//! values and the conformance tests walk that list. Writers know nothing of agents: they see
//! only the unified model.

pub mod jsonl;

use std::io::{self, Write};

use crate::model::Event;

/// Every writer agentlog has, in the order `--help` lists them.
pub const WRITERS: &[&dyn Writer] = &[&jsonl::Jsonl];

/// Output formats that are planned but not yet written by this build.
pub const PLANNED: &[&str] = &["parquet", "arrow", "interchange"];

/// Looks a writer up by name or alias (`unified`, `jsonl`).
pub fn writer(name: &str) -> Option<&'static dyn Writer> {
    WRITERS.iter().copied().find(|w| w.name() == name || w.aliases().contains(&name))
}

/// An output format.
pub trait Writer: Send + Sync {
    /// The name users type after `--to`.
    fn name(&self) -> &'static str;

    /// Other names accepted after `--to`.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// One line for `--help`.
    fn description(&self) -> &'static str;

    /// Starts writing to `out`.
    fn open<'w>(&self, out: Box<dyn Write + 'w>) -> Box<dyn EventSink + 'w>;
}

/// Takes events in order and writes them.
///
/// I/O errors are returned unchanged (a closed pipe is the caller's to judge).
pub trait EventSink {
    /// Called before the events of each input.
    ///
    /// # Errors
    /// When writing fails.
    fn begin_source(&mut self, _name: &str) -> io::Result<()> {
        Ok(())
    }

    /// Writes one event.
    ///
    /// # Errors
    /// When writing fails.
    fn event(&mut self, event: &Event) -> io::Result<()>;

    /// Writes whatever is buffered; must be called once after the last event.
    ///
    /// # Errors
    /// When writing fails.
    fn finish(&mut self) -> io::Result<()>;
}
