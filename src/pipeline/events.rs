//! The simplest way in: every event of a file or directory, in order, as an iterator.

use std::io;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::model::Event;
use crate::read::{DEFAULT_MAX_LINE_BYTES, InputDiagnostic, Settings};

use super::engine::{Destination, Outcome, Prepare, run};
use super::error::InputError;
use super::inputs::expand;
use super::plan::plan;

/// Items read ahead of the caller; bounds memory.
const AHEAD: usize = 1024;

/// One thing [`events`] found, in input order.
// Nearly every item is an event: boxing it would cost an allocation each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Found {
    /// An event.
    Event(Event),
    /// A line that was reported (skipped, or mapped with a value changed), after the events of
    /// its input.
    Diagnostic(InputDiagnostic),
    /// An input that could not be read at all; the other inputs are still read.
    Failed(InputError),
}

/// Reads every session file of `path` (a file, or a directory walked recursively for the files
/// a reader accepts), each with the reader its first lines match, and gives their events in
/// order: files in name order, the files of one Claude Code project directory read with one
/// state so that resumed sessions are not counted twice. Reading runs on threads of its own
/// (one per core), a bounded number of items ahead of the iterator.
///
/// ```
/// use agentlog::pipeline::{Found, events};
///
/// let mut messages = 0;
/// for found in events("corpus/claude/user-and-assistant-text.jsonl")? {
///     match found {
///         Found::Event(event) if event.kind() == agentlog::model::Kind::Message => messages += 1,
///         Found::Event(_) => {}
///         Found::Diagnostic(d) => eprintln!("{d:?}"),
///         Found::Failed(e) => return Err(e.into()),
///     }
/// }
/// assert!(messages > 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// When `path` names nothing, or a glob pattern in it is invalid.
pub fn events(path: impl AsRef<Path>) -> Result<Events, InputError> {
    let (inputs, mut errors) = expand(&[path.as_ref().display().to_string()]);
    if let Some(e) = errors.pop() {
        return Err(e);
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let settings = Settings::new(cores, DEFAULT_MAX_LINE_BYTES).unwrap_or_default();
    let (groups, failed) = plan(&inputs, None, &|_| None, &settings);
    let (to, from) = sync_channel(AHEAD);
    let thread = std::thread::Builder::new()
        .name("agentlog-events".into())
        .spawn(move || {
            for e in failed {
                if to.send(Found::Failed(e)).is_err() {
                    return;
                }
            }
            // An error here only says that the iterator was dropped.
            let _ = run(&groups, &mut ToIterator(to), &settings, &Prepare::Nothing);
        })
        .map_err(|source| InputError::Unreadable { path: path.as_ref().display().to_string(), source })?;
    Ok(Events { from: Some(from), thread: Some(thread) })
}

/// The iterator [`events`] gives.
pub struct Events {
    from: Option<Receiver<Found>>,
    thread: Option<JoinHandle<()>>,
}

impl Iterator for Events {
    type Item = Found;

    fn next(&mut self) -> Option<Found> {
        self.from.as_ref()?.recv().ok()
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        // Closing the channel stops the reading thread at its next item.
        self.from = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Sends what is read to the iterator.
struct ToIterator(SyncSender<Found>);

impl ToIterator {
    fn send(&self, found: Found) -> io::Result<()> {
        self.0.send(found).map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the iterator was dropped"))
    }
}

impl Destination for ToIterator {
    fn begin(&mut self, _name: &str) -> io::Result<()> {
        Ok(())
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        self.send(Found::Event(event))
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        match outcome.result {
            Ok(report) => report.diagnostics.into_iter().try_for_each(|d| self.send(Found::Diagnostic(d))),
            Err(e) => self.send(Found::Failed(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_gives_each_files_events_together_in_order_with_its_diagnostics() {
        let found: Vec<Found> = events("corpus/claude").unwrap().collect();
        let events: Vec<&Event> = found
            .iter()
            .filter_map(|f| match f {
                Found::Event(e) => Some(e),
                _ => None,
            })
            .collect();
        let files: Vec<&str> = events.iter().map(|e| e.source.file.as_str()).collect();
        let mut order = files.clone();
        order.dedup();
        let (expanded, _) = expand(&["corpus/claude".to_owned()]);
        let expanded: Vec<&str> = expanded.iter().map(|i| i.name()).filter(|n| order.contains(n)).collect();
        assert_eq!(order, expanded, "each file's events come together, files in the order they are found");
        assert!(order.iter().any(|f| f.ends_with("malformed-lines.jsonl")));
        assert!(found.iter().any(|f| matches!(f, Found::Diagnostic(d) if d.file.ends_with("malformed-lines.jsonl"))));
        let ids: std::collections::HashSet<&str> = events.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids.len(), events.len(), "no event twice");
    }

    #[test]
    fn a_missing_path_is_an_error_and_dropping_early_stops_reading() {
        assert!(matches!(events("corpus/no-such-file.jsonl"), Err(InputError::NotFound { .. })));
        let mut some = events("corpus").unwrap();
        assert!(some.next().is_some());
        drop(some);
    }
}
