//! What the readers of a group's inputs share: their state across the inputs, the run's
//! settings, and the inputs already in memory.

use std::any::Any;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Settings;

/// State that readers keep across the inputs of one group, one slot per reader, and the
/// [`Settings`] of the run.
///
/// Inputs that share state must be read in a fixed order (the order the user gave, directories
/// in name order) for the output to be the same on every run.
#[derive(Default)]
pub struct Shared {
    slots: Vec<(&'static str, Box<dyn Any + Send>)>,
    settings: Settings,
    in_memory: InMemory,
}

impl Shared {
    /// Empty state for a group read with `settings`, whose files `in_memory` holds are in memory.
    pub fn new(settings: Settings, in_memory: InMemory) -> Self {
        Shared { slots: Vec::new(), settings, in_memory }
    }

    /// The files of the group in memory.
    pub fn in_memory(&self) -> &InMemory {
        &self.in_memory
    }

    /// How the inputs are read.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Reads the next input knowing where the text the run looks for lies in it, or not
    /// (`None`); see [`Settings::found_at`].
    pub fn found_at(&mut self, found: Option<Arc<[u64]>>) {
        self.settings = self.settings.clone().found_at(found);
    }

    /// The slot of the reader named `owner`, created empty on first use.
    pub fn slot<T: Any + Send + Default>(&mut self, owner: &'static str) -> &mut T {
        let i = match self.slots.iter().position(|(name, _)| *name == owner) {
            Some(i) => i,
            None => {
                self.slots.push((owner, Box::new(T::default())));
                self.slots.len() - 1
            }
        };
        self.slots[i].1.downcast_mut().expect("a reader keeps one type in its slot")
    }
}

/// Files of the group being read that are already in memory, by name: a reader that looks
/// into another file of the group (a subagent's parent session) finds it here before opening it.
#[derive(Clone, Default)]
pub struct InMemory {
    bytes: Arc<Vec<u8>>,
    files: Vec<(PathBuf, Range<usize>)>,
}

impl InMemory {
    /// The files named in `files`, each at its range of `bytes`.
    pub fn new(bytes: Arc<Vec<u8>>, files: Vec<(PathBuf, Range<usize>)>) -> Self {
        InMemory { bytes, files }
    }

    /// The bytes of the file at `path`, when it is in memory.
    pub fn get(&self, path: &Path) -> Option<&[u8]> {
        let (_, range) = self.files.iter().find(|(name, _)| name == path)?;
        self.bytes.get(range.clone())
    }
}
