//! Building a sink's output on the threads that read: [`Build`] and the [`Piece`]s it makes.

use std::any::Any;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

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
    content: Content,
}

/// Where a piece's content is.
enum Content {
    /// In memory; with a [`Storage`], it may be written to a file.
    Here(Box<dyn Any + Send>, Option<&'static Storage>),
    /// Written to a file, read back when the piece is opened.
    Stored(Stored),
}

/// A piece's content written to a range of a file.
struct Stored {
    file: Arc<Mutex<File>>,
    at: u64,
    len: u64,
    storage: &'static Storage,
    /// Called once the content is read back: the file's range is no longer needed.
    read: Box<dyn FnOnce() + Send>,
}

/// How a sink writes the content of its pieces as bytes and reads it back, so that pieces of
/// inputs read far ahead of the writer can wait in a temporary file instead of memory.
pub struct Storage {
    /// Writes the content; `false`, having written nothing, when this content is kept in memory.
    pub store: fn(&(dyn Any + Send), &mut dyn Write) -> io::Result<bool>,
    /// Reads back content written by `store`.
    pub load: fn(&mut dyn Read) -> io::Result<Box<dyn Any + Send>>,
}

impl Piece {
    /// A piece holding `content`, which takes `bytes` of memory.
    pub fn new(content: impl Any + Send, bytes: usize) -> Self {
        Piece { bytes, content: Content::Here(Box::new(content), None) }
    }

    /// The same, which may wait in a file, written and read back by `storage`.
    pub fn storable(content: impl Any + Send, bytes: usize, storage: &'static Storage) -> Self {
        Piece { bytes, content: Content::Here(Box::new(content), Some(storage)) }
    }

    /// Writes its content to `out`, if it may wait in a file; whether it did.
    ///
    /// # Errors
    /// When writing fails.
    pub fn store(&self, out: &mut dyn Write) -> io::Result<bool> {
        match &self.content {
            Content::Here(content, Some(storage)) => (storage.store)(content.as_ref(), out),
            _ => Ok(false),
        }
    }

    /// Whether it may wait in a file.
    pub fn is_storable(&self) -> bool {
        matches!(self.content, Content::Here(_, Some(_)))
    }

    /// The piece once [`Piece::store`] wrote it to `file` at `at`, `len` bytes: it holds no
    /// memory, and calls `read` when its content has been read back.
    pub fn into_stored(self, file: Arc<Mutex<File>>, at: u64, len: u64, read: Box<dyn FnOnce() + Send>) -> Self {
        match self.content {
            Content::Here(_, Some(storage)) => {
                Piece { bytes: 0, content: Content::Stored(Stored { file, at, len, storage, read }) }
            }
            content => Piece { bytes: self.bytes, content },
        }
    }

    /// Its content, when it is a `T`; read back from its file if it waited there.
    ///
    /// # Errors
    /// When it is not a `T` (a piece given to a sink that did not build it), or cannot be read
    /// back.
    pub fn open<T: Any>(self) -> io::Result<T> {
        let content = match self.content {
            Content::Here(content, _) => content,
            Content::Stored(stored) => stored.read_back()?,
        };
        content.downcast::<T>().map(|b| *b).map_err(|_| io::Error::other("a piece built for another output"))
    }
}

impl Stored {
    fn read_back(self) -> io::Result<Box<dyn Any + Send>> {
        let content = {
            let mut file = self.file.lock().map_err(|_| io::Error::other("a thread using the file panicked"))?;
            file.seek(SeekFrom::Start(self.at))?;
            let mut range = BufReader::new(&mut *file).take(self.len);
            (self.storage.load)(&mut range)?
        };
        (self.read)();
        Ok(content)
    }
}

/// Makes one [`Build`]er for each thread that reads.
pub type Builders = Arc<dyn Fn() -> Box<dyn Build> + Send + Sync>;
