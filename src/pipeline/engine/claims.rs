//! Handing groups to the reading threads in order, a bounded number ahead of the writer.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};

use crate::read::Settings;

use super::spill::Budget;
use super::{Built, Message};

/// Groups a reading thread may start beyond the one being written when it cannot hold their
/// messages back in files; bounds memory together with [`MESSAGES_AHEAD`].
pub(super) const GROUPS_AHEAD: usize = 4;

/// The same while it can: their encoded events wait in memory up to `AHEAD_BYTES`, then in
/// files. Reading far ahead keeps every thread busy while one reads a large input.
pub(super) const GROUPS_AHEAD_HELD: usize = 1024;

/// Groups a reading thread may start beyond the one being written when their messages are
/// pieces built for the writer, which wait in memory bounded in bytes: far enough that a thread
/// goes on reading while another reads a large group, near enough that what small messages and
/// session summaries the groups read ahead keep stays small.
pub(super) const GROUPS_AHEAD_BUILT: usize = 64;

/// Bytes of encoded events a message keeps waiting in a channel.
pub(super) fn waiting_bytes(message: &Message) -> u64 {
    match message {
        Message::Encoded(encoded) => encoded.bytes.capacity() as u64,
        Message::Built(Built { piece: Some(piece), .. }) => piece.bytes as u64,
        Message::Kept(messages) => messages.iter().map(waiting_bytes).sum(),
        _ => 0,
    }
}

/// How far ahead of the writer groups may be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// [`GROUPS_AHEAD`] per reader: what they read waits in memory, bounded by the channels.
    Near,
    /// [`GROUPS_AHEAD_HELD`] while the encoded events they read can be held back in files.
    WhileHeldBack,
    /// [`GROUPS_AHEAD_BUILT`]: what they read waits in memory, pieces bounded in bytes
    /// ([`Budget::wait_for_room`]).
    Built,
}

/// Hands groups to reading threads in order, never more than [`GROUPS_AHEAD`] (or
/// [`GROUPS_AHEAD_HELD`]) per reader beyond the group being written.
pub(super) struct Claims {
    pub(super) state: Mutex<ClaimState>,
    pub(super) changed: Condvar,
    pub(super) readers: usize,
    pub(super) groups: usize,
    /// What groups read ahead hold back or keep waiting.
    pub(super) budget: Arc<Budget>,
    /// How far ahead of the writer they may read.
    pub(super) reach: Reach,
    pub(super) settings: Settings,
}

pub(super) struct ClaimState {
    pub(super) next: usize,
    pub(super) writing: usize,
    pub(super) stopped: bool,
}

impl Claims {
    /// Claims of `groups` for `readers` threads, which read as far ahead as their `reach`.
    pub(super) fn new(groups: usize, readers: usize, budget: Arc<Budget>, reach: Reach, settings: Settings) -> Self {
        let state = ClaimState { next: 0, writing: 0, stopped: false };
        let mutex = Mutex::new(state);
        let claims = Claims { state: mutex, changed: Condvar::new(), readers, groups, budget, reach, settings };
        claims.update(|_| {});
        claims
    }

    /// Groups the readers may start beyond the one being written, now.
    pub(super) fn ahead(&self) -> usize {
        let ahead = match self.reach {
            Reach::Near => GROUPS_AHEAD,
            Reach::WhileHeldBack if self.budget.can_hold_back() => GROUPS_AHEAD_HELD,
            Reach::WhileHeldBack => GROUPS_AHEAD,
            Reach::Built => GROUPS_AHEAD_BUILT,
        };
        self.readers * ahead
    }

    /// The next group to read, once it is near enough the writer; `None` once stopped.
    pub(super) fn claim(&self) -> Option<usize> {
        let mut state = self.state.lock().ok()?;
        loop {
            if state.stopped {
                return None;
            }
            if state.next <= state.writing + self.ahead() {
                state.next += 1;
                self.tell_readers(&state);
                return Some(state.next - 1);
            }
            state = self.changed.wait(state).ok()?;
        }
    }

    /// Says that the writer is now at group `i`, to the claims and to the groups read ahead.
    pub(super) fn writing(&self, i: usize) {
        self.budget.writing.store(i, Ordering::Relaxed);
        self.budget.made_room();
        self.update(|s| s.writing = i);
    }

    pub(super) fn update(&self, change: impl FnOnce(&mut ClaimState)) {
        if let Ok(mut state) = self.state.lock() {
            change(&mut state);
            self.tell_readers(&state);
            self.changed.notify_all();
        }
    }

    /// Tells the readers how many groups a thread could claim now: while there are some, a
    /// thread reading a large input leaves its lines to be parsed by itself, not by the pool.
    pub(super) fn tell_readers(&self, state: &ClaimState) {
        let claimable = if state.stopped { 0 } else { self.groups.min(state.writing + self.ahead() + 1) };
        self.settings.set_inputs_waiting(claimable.saturating_sub(state.next));
    }
}
