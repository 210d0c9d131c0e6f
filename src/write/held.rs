//! [`Held`]: what a writer builds per session until the group of inputs ends.

use std::collections::HashMap;

use crate::model::Agent;

/// Per-session state of one group of inputs, in the order the sessions first appeared.
pub struct Held<T> {
    sessions: Vec<T>,
    index: HashMap<(Agent, String), usize>,
}

impl<T> Default for Held<T> {
    fn default() -> Self {
        Held { sessions: Vec::new(), index: HashMap::new() }
    }
}

impl<T> Held<T> {
    /// The state of a session, made by `make` when it is first met.
    pub fn get(&mut self, agent: Agent, session: &str, make: impl FnOnce() -> T) -> &mut T {
        let i = match self.index.get(&(agent, session.to_owned())) {
            Some(&i) => i,
            None => {
                self.sessions.push(make());
                self.index.insert((agent, session.to_owned()), self.sessions.len() - 1);
                self.sessions.len() - 1
            }
        };
        &mut self.sessions[i]
    }

    /// Every session held, in order, leaving none.
    pub fn take(&mut self) -> Vec<T> {
        self.index.clear();
        std::mem::take(&mut self.sessions)
    }
}
