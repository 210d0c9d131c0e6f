//! Messages of a group read ahead of the writer, kept in order while its channel is full, and
//! pieces written to a temporary file once those waiting in memory hold their limit, so that a
//! thread that has built pieces for a later group goes on reading instead of waiting.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::TrySendError;

use super::claims::waiting_bytes;
use super::spill::{AHEAD_BYTES, Spill};
use super::{Built, Forward, Message, stopped};
use crate::write::Piece;

/// The messages a reading thread keeps for its group; pieces among them count in the budget's
/// waiting bytes, which bounds them.
pub(super) type Backlog = VecDeque<Message>;

impl Forward {
    /// Sends `message` after those kept before it. A piece of a group read ahead, while the
    /// pieces waiting hold their limit, goes to a temporary file if it may, else waits; a
    /// message that finds the channel full is kept, unless the group is the one being written,
    /// whose thread waits for the writer.
    pub(super) fn send_in_order(&mut self, mut message: Message) -> io::Result<()> {
        let mut waiting = waiting_bytes(&message);
        if waiting > 0 && self.budget.writing.load(Ordering::Relaxed) != self.group {
            if self.budget.waiting.load(Ordering::Relaxed) >= AHEAD_BYTES
                && let Message::Built(Built { piece, .. }) = &mut message
            {
                *piece = piece.take().map(|p| self.store(p));
                waiting = waiting_bytes(&message);
            }
            if waiting > 0 {
                self.budget.wait_for_room(self.group);
            }
        }
        self.budget.waiting.fetch_add(waiting, Ordering::Relaxed);
        self.backlog.get_or_insert_default().push_back(message);
        self.send_kept()
    }

    /// Writes a piece to the thread's temporary file, if it may wait there and the files have
    /// room ([`SPILL_BYTES`]), so that the thread reads on instead of waiting for the writer to
    /// make room in memory; else gives it back as it was.
    fn store(&mut self, piece: Piece) -> Piece {
        if !self.budget.can_hold_back() || !piece.is_storable() {
            return piece;
        }
        let Some(spill) = Spill::new(&self.budget, &mut self.shelf) else { return piece };
        let len = match spill.append_with(|out| piece.store(out)) {
            Ok(Some(len)) => len,
            Ok(None) => return piece,
            Err(_) => {
                self.budget.no_files.store(true, Ordering::Relaxed);
                return piece;
            }
        };
        self.budget.spilled.fetch_add(len, Ordering::Relaxed);
        let budget = Arc::clone(&self.budget);
        let read = Box::new(move || {
            budget.spilled.fetch_sub(len, Ordering::Relaxed);
        });
        piece.into_stored(spill.file, spill.start, len, read)
    }

    /// Sends the kept messages, in order, while the channel has room, or all of them while the
    /// group is the one being written.
    fn send_kept(&mut self) -> io::Result<()> {
        let Some(backlog) = self.backlog.as_mut() else { return Ok(()) };
        while let Some(message) = backlog.pop_front() {
            if self.budget.writing.load(Ordering::Relaxed) == self.group {
                self.to.send(message).map_err(stopped)?;
                continue;
            }
            match self.to.try_send(message) {
                Ok(()) => {}
                Err(TrySendError::Full(message)) => {
                    backlog.push_front(message);
                    return Ok(());
                }
                Err(e) => return Err(stopped(e)),
            }
        }
        Ok(())
    }

    /// At the group's end: what is still kept goes to the writer as one message, through the
    /// channel if it has room, else into `last`, which the writer looks in once the channel is
    /// closed.
    pub(super) fn finish_backlog(&mut self) -> io::Result<()> {
        self.send_kept()?;
        let Some(backlog) = self.backlog.as_mut().filter(|b| !b.is_empty()) else { return Ok(()) };
        let kept = Message::Kept(std::mem::take(backlog).into());
        match self.to.try_send(kept) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(kept)) => {
                *self.last.lock().map_err(|_| io::Error::other("the writer panicked"))? = Some(kept);
                Ok(())
            }
            Err(e) => Err(stopped(e)),
        }
    }
}
