//! Messages of groups read ahead, held back in temporary files while the writer is busy with
//! earlier groups, within a budget shared by the reading threads.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::model::Agent;

use super::{Destination, Message, deliver};

/// Bytes of encoded events, or of pieces, the reading threads may hold back in temporary files
/// at a time, before they wait for the writer instead.
pub(super) const SPILL_BYTES: u64 = 1 << 30;

/// Bytes that groups read ahead of the writer may keep in memory, waiting in their channels:
/// encoded events, before they hold the rest back in temporary files; pieces built for the
/// writer, before their thread waits.
pub(super) const AHEAD_BYTES: u64 = 32 << 20;

/// What the reading threads share to bound what they hold back.
#[derive(Default)]
pub(super) struct Budget {
    /// Bytes held back in files by every reading thread, to be kept under [`SPILL_BYTES`].
    pub(super) spilled: AtomicU64,
    /// Bytes of encoded events in the channels, to be kept under [`AHEAD_BYTES`] for the
    /// groups read ahead of the writer.
    pub(super) waiting: AtomicU64,
    /// The group being written.
    pub(super) writing: AtomicUsize,
    /// Whether a temporary file could not be made or written.
    pub(super) no_files: AtomicBool,
    /// Told when the writer has taken a message that was waiting, for groups read ahead that
    /// wait for [`Budget::waiting`] to fall.
    pub(super) room: (Mutex<()>, Condvar),
}

impl Budget {
    /// Whether the reading threads hold [`SPILL_BYTES`] back in files already.
    pub(super) fn spent(&self) -> bool {
        self.spilled.load(Ordering::Relaxed) >= SPILL_BYTES
    }

    /// Waits until the messages waiting in memory hold less than [`AHEAD_BYTES`], or the
    /// writer reaches `group`.
    pub(super) fn wait_for_room(&self, group: usize) {
        let Ok(mut lock) = self.room.0.lock() else { return };
        while self.waiting.load(Ordering::Relaxed) >= AHEAD_BYTES && self.writing.load(Ordering::Relaxed) != group {
            // The timeout only guards against a wake-up missed between the check and the wait.
            match self.room.1.wait_timeout(lock, std::time::Duration::from_millis(20)) {
                Ok((l, _)) => lock = l,
                Err(_) => return,
            }
        }
    }

    /// Tells groups waiting for room that the writer took a message.
    pub(super) fn made_room(&self) {
        self.room.1.notify_all();
    }

    /// Whether groups read ahead can hold back more than [`AHEAD_BYTES`]: in files, while
    /// they can be made and written and hold less than [`SPILL_BYTES`].
    pub(super) fn can_hold_back(&self) -> bool {
        !self.spent() && !self.no_files.load(Ordering::Relaxed)
    }
}

/// Bytes a reading thread writes to one temporary file before it starts the next: a file is
/// removed once the groups held back in it are written.
pub(super) const SHELF_BYTES: u64 = 128 << 20;

/// The anonymous temporary file a reading thread holds messages back in, shared by the groups
/// it reads one after another, each in a range of its own. The reading thread appends to it
/// while the writing thread reads earlier ranges back.
pub(super) type Shelf = Arc<Mutex<File>>;

/// A group's messages held back while the writer is busy with earlier groups: encoded events
/// in a range of its reading thread's [`Shelf`], the rest (and what the events name) in memory.
pub(super) struct Spill {
    pub(super) file: Shelf,
    /// Where the group's range of the file starts.
    pub(super) start: u64,
    pub(super) held: Vec<Held>,
    pub(super) budget: Arc<Budget>,
    /// Whether the file could not be written: nothing more is held back.
    pub(super) full: bool,
}

/// One held-back message.
pub(super) enum Held {
    Message(Message),
    /// Encoded events: this many bytes of the file, next in order, and their sessions.
    Encoded(u64, Vec<(Agent, String)>),
}

impl Spill {
    /// An empty spill at the end of the thread's `shelf`, which is started, or started again
    /// once it holds [`SHELF_BYTES`]; `None` when no temporary file can be made.
    pub(super) fn new(budget: &Arc<Budget>, shelf: &mut Option<Shelf>) -> Option<Self> {
        let end = |file: &Shelf| file.lock().ok().and_then(|mut f| f.seek(SeekFrom::End(0)).ok());
        let (file, start) = match shelf.as_ref().and_then(|f| Some((f, end(f)?))) {
            Some((file, start)) if start < SHELF_BYTES => (Arc::clone(file), start),
            _ => {
                let Ok(file) = tempfile::tempfile() else {
                    budget.no_files.store(true, Ordering::Relaxed);
                    return None;
                };
                let file = Arc::new(Mutex::new(file));
                *shelf = Some(Arc::clone(&file));
                (file, 0)
            }
        };
        Some(Spill { file, start, held: Vec::new(), budget: Arc::clone(budget), full: false })
    }

    /// Whether nothing more may be held back.
    pub(super) fn is_full(&self) -> bool {
        self.full || self.budget.spent()
    }

    /// Holds a message back; encoded events that cannot be written to the file stay in memory.
    pub(super) fn hold(&mut self, message: Message) {
        let held = match message {
            Message::Encoded(encoded) => match self.append(&encoded.bytes) {
                Ok(()) => {
                    self.budget.spilled.fetch_add(encoded.bytes.len() as u64, Ordering::Relaxed);
                    Held::Encoded(encoded.bytes.len() as u64, encoded.sessions)
                }
                Err(_) => {
                    self.full = true;
                    self.budget.no_files.store(true, Ordering::Relaxed);
                    Held::Message(Message::Encoded(encoded))
                }
            },
            message => Held::Message(message),
        };
        self.held.push(held);
    }

    /// Appends bytes to the end of the file, where this group's range ends: the reading thread
    /// writes nothing else while it reads the group.
    pub(super) fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let mut file = self.file.lock().map_err(|_| io::Error::other("a thread using the file panicked"))?;
        file.seek(SeekFrom::End(0))?;
        file.write_all(bytes)
    }

    /// Appends what `write` writes to the end of the file, where this group's range ends;
    /// returns its length, or `None` when `write` wrote nothing.
    pub(super) fn append_with(
        &self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<bool>,
    ) -> io::Result<Option<u64>> {
        let mut file = self.file.lock().map_err(|_| io::Error::other("a thread using the file panicked"))?;
        let start = file.seek(SeekFrom::End(0))?;
        let mut out = io::BufWriter::with_capacity(256 * 1024, &mut *file);
        let wrote = write(&mut out)?;
        out.flush()?;
        drop(out);
        let end = file.stream_position()?;
        Ok(wrote.then_some(end - start))
    }

    /// Hands the held messages to `dest`, in order.
    pub(super) fn deliver(self, dest: &mut dyn Destination) -> io::Result<()> {
        let mut at = self.start;
        for held in self.held {
            match held {
                Held::Message(message) => deliver(message, dest)?,
                Held::Encoded(len, sessions) => {
                    let file = self.file.lock().map_err(|_| io::Error::other("a thread using the file panicked"))?;
                    dest.encoded_from(&file, at, len, sessions)?;
                    drop(file);
                    at += len;
                    self.budget.spilled.fetch_sub(len, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }
}
