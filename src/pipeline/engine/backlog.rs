//! Messages of a group read ahead of the writer, kept in order while its channel is full, so
//! that a thread that has built pieces for a later group goes on reading instead of waiting.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::mpsc::TrySendError;

use super::claims::waiting_bytes;
use super::{Forward, Message, stopped};

/// The messages a reading thread keeps for its group; pieces among them count in the budget's
/// waiting bytes, which bounds them.
pub(super) type Backlog = VecDeque<Message>;

impl Forward {
    /// Sends `message` after those kept before it. A piece of a group read ahead first waits
    /// while the pieces waiting hold their limit; a message that finds the channel full is
    /// kept, unless the group is the one being written, whose thread waits for the writer.
    pub(super) fn send_in_order(&mut self, message: Message) -> io::Result<()> {
        let waiting = waiting_bytes(&message);
        if waiting > 0 && self.budget.writing.load(Ordering::Relaxed) != self.group {
            self.budget.wait_for_room(self.group);
        }
        self.budget.waiting.fetch_add(waiting, Ordering::Relaxed);
        self.backlog.get_or_insert_default().push_back(message);
        self.send_kept()
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
