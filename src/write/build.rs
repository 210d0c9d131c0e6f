//! Building a sink's output on the threads that read: [`Build`] and the [`Piece`]s it makes.

use std::any::Any;
use std::io;
use std::sync::Arc;

use crate::model::{Diagnostic, Event};

/// Builds part of a sink's output from events, on the thread that reads them, so that the work
/// of turning events into output runs on every thread and the sink only puts finished pieces in
/// place.
///
/// A builder sees the events of one group of inputs (see [`EventSink::end_group`]) at a time,
/// in order, and starts afresh after [`Build::end_group`]. What it builds must depend only on
/// the group's events, never on the thread or on what it built before: the sink's output is
/// then the same however the groups are shared among threads.
///
/// [`EventSink::end_group`]: super::EventSink::end_group
pub trait Build: Send {
    /// Before an input's events.
    fn begin_source(&mut self) {}

    /// Takes one event; gives a piece once one is complete.
    ///
    /// # Errors
    /// When the piece cannot be made (a bug).
    fn event(&mut self, event: &Event) -> io::Result<Option<Piece>>;

    /// After an input's events, with the lines it had and the problems met.
    fn end_source(&mut self, _lines: u64, _diagnostics: &[Diagnostic]) {}

    /// After the group's last input: the rest of what was built, if anything.
    ///
    /// # Errors
    /// When the piece cannot be made (a bug).
    fn end_group(&mut self) -> io::Result<Option<Piece>>;
}

/// Part of a sink's output, made by its [`Build`]er and opened only by the sink.
pub struct Piece {
    /// Bytes of memory it holds, so that callers can bound what waits to be written.
    pub bytes: usize,
    /// What it holds; only the sink that made the builder knows its type.
    pub content: Box<dyn Any + Send>,
}

impl Piece {
    /// A piece holding `content`, which takes `bytes` of memory.
    pub fn new(content: impl Any + Send, bytes: usize) -> Self {
        Piece { bytes, content: Box::new(content) }
    }

    /// Its content, when it is a `T`.
    ///
    /// # Errors
    /// When it is not: a piece was given to a sink that did not build it.
    pub fn open<T: Any>(self) -> io::Result<T> {
        self.content.downcast::<T>().map(|b| *b).map_err(|_| io::Error::other("a piece built for another output"))
    }
}

/// Makes one [`Build`]er for each thread that reads.
pub type Builders = Arc<dyn Fn() -> Box<dyn Build> + Send + Sync>;
