//! Reader for Kilo CLI sessions (`~/.local/share/kilo/kilo.db`): Kilo CLI is a fork of OpenCode
//! and keeps OpenCode's tables, with boards of its own beside them (not read), so this reader
//! reads them with OpenCode's code ([`crate::read::opencode`]).
//!
//! What differs, as Kilo CLI 7.7.7 writes it: `agent` is `code` rather than `build`; a call of a
//! tool it does not have keeps the tool's name and is an error (OpenCode names it `invalid`);
//! and an assistant message that ran a subagent has a `cost` that includes the subagent's,
//! while its `step-finish` part, where usage is counted, keeps its own.

use std::io;
use std::path::{Path, PathBuf};

use crate::model::{Agent, Event, ToolFamily};
use crate::read::opencode::{self, db};
use crate::read::store::{Db, StoreError, Stored};
use crate::read::{Head, Input, Peek, ReadReport, Reader, StoredError, StoredInput};

/// The Kilo CLI reader.
pub struct Kilo;

impl Reader for Kilo {
    fn name(&self) -> &'static str {
        "kilo"
    }

    fn agent(&self) -> Option<Agent> {
        Some(Agent::Kilo)
    }

    fn description(&self) -> &'static str {
        "Kilo CLI sessions (~/.local/share/kilo/kilo.db)"
    }

    fn sniff(&self, _head: &Head<'_>) -> bool {
        false
    }

    fn home(&self) -> Option<&'static str> {
        Some("$XDG_DATA_HOME/kilo or ~/.local/share/kilo")
    }

    fn discover(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
        opencode::databases(&opencode::data_dir(env, "kilo"), "kilo")
    }

    fn accepts(&self, path: &Path) -> bool {
        opencode::is_database_name(path, "kilo")
    }

    fn peek(&self, record: &serde_json::Value) -> Peek {
        opencode::OpenCode.peek(record)
    }

    fn tool_family(&self, name: &str) -> ToolFamily {
        opencode::family(name)
    }

    fn stored_sessions(&self, db: &Db) -> Option<Result<Vec<Stored>, StoreError>> {
        (db::writer_of(db)? == Agent::Kilo).then(|| db::sessions(db, self.name()))
    }

    fn read_stored(
        &self,
        input: StoredInput<'_>,
        out: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> Result<ReadReport, StoredError> {
        db::read(Agent::Kilo, input, out)
    }

    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        opencode::read_export(Agent::Kilo, input, out)
    }
}
