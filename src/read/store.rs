//! Sessions kept in an SQLite database (OpenCode, Kilo CLI, Crush), read one session at a time.
//!
//! A database is opened read-only in place, `-wal` and `-shm` beside it included: the agents
//! write in WAL mode and leave their latest rows in the `-wal` until their next start, so a copy
//! of the `.db` alone would miss them. The connection opens the `-shm` index read-only too
//! (SQLite's `readonly_shm`), so reading writes no byte: it never checkpoints, never deletes the
//! `-wal`, and takes no lock that keeps the agent from writing. Each session is read inside one
//! read transaction, so it is one consistent snapshot even while the agent writes.
//!
//! A session is a unit of work like a file: the pipeline lists a database's sessions
//! ([`crate::read::Reader::stored_sessions`]) and reads each as its own input named
//! `<database>#<session id>` ([`Stored`]).

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// The first bytes of every SQLite 3 database file.
const MAGIC: &[u8] = b"SQLite format 3\0";

/// Whether a file starting with `head` is an SQLite database.
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// How long a read waits for a writer that holds the database briefly (WAL recovery, a
/// checkpoint restarting the log) before it gives up with [`StoreError::Locked`].
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// An SQLite database opened read-only.
pub struct Db {
    connection: Connection,
    path: String,
}

impl Db {
    /// Opens the database at `path` read-only.
    ///
    /// # Errors
    /// When it cannot be opened or is not a database.
    pub fn open(path: &str) -> Result<Db, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let open = |query: &str| {
            let uri = format!("file:{}?{query}", uri_path(Path::new(path)));
            Connection::open_with_flags(&uri, flags).and_then(|c| {
                // Opening is lazy: the first query finds out whether the file and its WAL can
                // be read.
                c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map(|()| c)
            })
        };
        // First with the `-shm` index opened read-only, so that reading writes nothing at all
        // (SQLite then reads the `-wal` into memory itself and checks it against the index).
        // Without a `-shm` (a `-wal` copied alone), SQLite must build one beside the database;
        // where it cannot (a read-only directory), what the `.db` holds is read as immutable.
        let connection = match open("mode=ro&readonly_shm=1") {
            Err(e) if is_cannot_open(&e) => match open("mode=ro") {
                Err(e) if is_cannot_open(&e) => open("immutable=1"),
                opened => opened,
            },
            opened => opened,
        }
        .map_err(|e| StoreError::of(path, None, e))?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(|e| StoreError::of(path, None, e))?;
        Ok(Db { connection, path: path.to_owned() })
    }

    /// The database's path as given.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether the database has no table at all: an agent's database just made, before its
    /// first migration.
    pub fn is_empty(&self) -> bool {
        self.connection.query_row("SELECT 1 FROM sqlite_master WHERE type = 'table'", [], |_| Ok(())).is_err()
    }

    /// Whether the database has a table named `name`.
    pub fn has_table(&self, name: &str) -> bool {
        has_table(&self.connection, name)
    }

    /// The columns of table `name`, in order; empty when there is no such table.
    pub fn columns(&self, name: &str) -> Vec<String> {
        let Ok(mut statement) = self.connection.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid") else {
            return Vec::new();
        };
        statement
            .query_map([name], |row| row.get::<_, String>(0))
            .map(|rows| rows.filter_map(Result::ok).collect())
            .unwrap_or_default()
    }

    /// Checks that table `table` has every column of `needed`.
    ///
    /// # Errors
    /// [`StoreError::Schema`] naming the table and the first column missing.
    pub fn require(&self, table: &str, needed: &[&str]) -> Result<(), StoreError> {
        let columns = self.columns(table);
        if columns.is_empty() {
            return Err(StoreError::Schema { path: self.path.clone(), table: table.into(), missing: None });
        }
        match needed.iter().find(|c| !columns.iter().any(|have| have == *c)) {
            Some(missing) => Err(StoreError::Schema {
                path: self.path.clone(),
                table: table.into(),
                missing: Some((*missing).into()),
            }),
            None => Ok(()),
        }
    }

    /// Runs `read` inside one read transaction, so that everything it reads is one snapshot of
    /// the database; `table` names what is read, for an error.
    ///
    /// # Errors
    /// When a query fails: the database is locked, corrupt, or not of the expected schema.
    pub fn snapshot<T>(
        &self,
        table: &str,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let error = |e| StoreError::of(&self.path, Some(table), e);
        self.connection.execute_batch("BEGIN DEFERRED").map_err(error)?;
        let result = read(&self.connection);
        // A read transaction has nothing to commit; ending it lets the agent checkpoint past it.
        let ended = self.connection.execute_batch("COMMIT");
        let value = result.map_err(error)?;
        ended.map_err(error)?;
        Ok(value)
    }
}

/// Whether the database open on `c` has a table named `name`.
pub fn has_table(c: &Connection, name: &str) -> bool {
    c.query_row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", [name], |_| Ok(())).is_ok()
}

/// What stopped the read of a session: the database, or handing an event on.
pub enum Failure {
    /// A query failed.
    Sql(rusqlite::Error),
    /// The caller failed to take an event.
    Out(std::io::Error),
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Sql(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Out(e)
    }
}

/// Reads one session of a database as `agent`'s: `read` runs inside one snapshot, emitting
/// through an emitter named after the session and counting rows in the report; `table` names
/// what a failed query was reading.
///
/// # Errors
/// When the database cannot be read, or `out` fails.
pub fn read_session(
    agent: crate::model::Agent,
    input: crate::read::StoredInput<'_>,
    table: &str,
    out: &mut dyn FnMut(crate::model::Event) -> std::io::Result<()>,
    read: impl FnOnce(
        &Connection,
        &Stored,
        &mut crate::read::Emitter<'_>,
        &mut crate::read::ReadReport,
    ) -> Result<(), Failure>,
) -> Result<crate::read::ReadReport, crate::read::StoredError> {
    let crate::read::StoredInput { stored, db, .. } = input;
    let mut emitter = crate::read::Emitter::new(agent, &stored.name, out);
    let mut report = crate::read::ReadReport::default();
    let mut failure = None;
    db.snapshot(table, |c| {
        failure = read(c, stored, &mut emitter, &mut report).err();
        Ok(())
    })?;
    match failure {
        Some(Failure::Sql(e)) => Err(StoreError::of(db.path(), Some(table), e).into()),
        Some(Failure::Out(e)) => Err(e.into()),
        None => {
            report.events = emitter.count();
            Ok(report)
        }
    }
}

/// One session a database holds, as listed before reading.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Stored {
    /// The database file, as given or found.
    pub path: String,
    /// The session's id.
    pub session: String,
    /// `<path>#<session>`: the input's name in listings, diagnostics and `source.file`.
    pub name: String,
    /// What changes when the session does: its latest update time and its row counts, so that
    /// `--incremental` and `archive` re-read only sessions that changed.
    pub fingerprint: String,
    /// The version of the agent that wrote it, where the database says.
    pub version: Option<String>,
    /// Bytes of JSON its rows hold, about what a file of it would weigh.
    pub size: u64,
    /// The name of the reader that listed it, and reads it.
    pub reader: &'static str,
}

/// Why a database or one of its tables could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process holds the database longer than agentlog waits.
    #[error("{path}: the database is locked{}", on_table(.table))]
    Locked {
        /// The database file.
        path: String,
        /// The table being read.
        table: Option<String>,
    },
    /// The file is damaged or not a database.
    #[error("{path}: the database is damaged or not SQLite{}: {message}", on_table(.table))]
    Corrupt {
        /// The database file.
        path: String,
        /// The table being read.
        table: Option<String>,
        /// SQLite's message.
        message: String,
    },
    /// The database lacks a table or column the reader needs: a schema it does not know.
    #[error("{path}: unknown schema: {}", missing_text(.table, .missing))]
    Schema {
        /// The database file.
        path: String,
        /// The table.
        table: String,
        /// The column missing, when the table is there.
        missing: Option<String>,
    },
    /// Any other failure SQLite reports.
    #[error("{path}: cannot read the database{}: {message}", on_table(.table))]
    Other {
        /// The database file.
        path: String,
        /// The table being read.
        table: Option<String>,
        /// SQLite's message.
        message: String,
    },
}

fn on_table(table: &Option<String>) -> String {
    table.as_ref().map(|t| format!(" (table `{t}`)")).unwrap_or_default()
}

fn missing_text(table: &str, missing: &Option<String>) -> String {
    match missing {
        Some(column) => format!("table `{table}` has no column `{column}`"),
        None => format!("no table `{table}`"),
    }
}

impl StoreError {
    /// The error SQLite's `e` means, reading `table` of the database at `path`.
    pub fn of(path: &str, table: Option<&str>, e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::*;
        let (path, table) = (path.to_owned(), table.map(str::to_owned));
        let code = e.sqlite_error_code();
        match code {
            Some(DatabaseBusy | DatabaseLocked) => StoreError::Locked { path, table },
            Some(DatabaseCorrupt | NotADatabase) => StoreError::Corrupt { path, table, message: e.to_string() },
            _ => {
                // A query naming a table or column the database lacks.
                let message = e.to_string();
                match table {
                    Some(table) if message.starts_with("no such table") || message.starts_with("no such column") => {
                        let missing = message.strip_prefix("no such column: ").map(str::to_owned);
                        StoreError::Schema { path, table, missing }
                    }
                    table => StoreError::Other { path, table, message },
                }
            }
        }
    }

    /// The table the error is about, if any.
    pub fn table(&self) -> Option<&str> {
        match self {
            StoreError::Locked { table, .. } | StoreError::Corrupt { table, .. } | StoreError::Other { table, .. } => {
                table.as_deref()
            }
            StoreError::Schema { table, .. } => Some(table),
        }
    }
}

fn is_cannot_open(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly))
}

/// A path as the path of a `file:` URI: absolute, with the characters URIs reserve escaped.
fn uri_path(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::new();
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'%' | b'?' | b'#' => uri.push_str(&format!("%{byte:02X}")),
            _ => uri.push(byte as char),
        }
    }
    uri
}

/// A row's text column as a JSON value: the value it parses to, or the text itself when it is
/// not JSON.
pub fn json_column(text: Option<String>) -> serde_json::Value {
    match text {
        None => serde_json::Value::Null,
        Some(text) => serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_is_told_by_its_first_bytes() {
        assert!(is_sqlite(b"SQLite format 3\0\x10\x00"));
        assert!(!is_sqlite(b"{\"type\":\"user\"}"));
        assert!(!is_sqlite(b"SQLite format 3"));
    }

    #[test]
    fn reading_leaves_the_database_its_log_and_its_index_as_they_were() {
        // As OpenCode 1.18.33 left them: every row in the `-wal`, the `.db` a bare header.
        let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/recorded/opencode/1.18.33/tools-wal");
        let dir = tempfile::tempdir().unwrap();
        let files = ["opencode.db", "opencode.db-wal", "opencode.db-shm"].map(|f| dir.path().join(f));
        for file in &files {
            std::fs::copy(recorded.join(file.file_name().unwrap()), file).unwrap();
        }
        let bytes = || files.iter().map(|f| std::fs::read(f).unwrap()).collect::<Vec<_>>();
        let before = bytes();
        let db = Db::open(files[0].to_str().unwrap()).unwrap();
        let n: i64 = db.snapshot("part", |c| c.query_row("SELECT count(*) FROM part", [], |r| r.get(0))).unwrap();
        assert!(n > 0, "the rows in the log are read");
        drop(db);
        assert!(bytes() == before, "the database, its log and its index are as they were");
    }

    #[test]
    fn a_snapshot_does_not_hold_up_a_writer_nor_see_its_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let writer = Connection::open(&path).unwrap();
        writer.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);").unwrap();
        let db = Db::open(path.to_str().unwrap()).unwrap();
        let seen = db
            .snapshot("t", |c| {
                let first: i64 = c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?;
                writer.execute("INSERT INTO t VALUES (3)", []).expect("the writer is not held up");
                let second: i64 = c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?;
                Ok((first, second))
            })
            .unwrap();
        assert_eq!(seen, (2, 2));
    }

    #[test]
    fn a_missing_table_or_column_is_an_unknown_schema_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE session(id)").unwrap();
        let db = Db::open(path.to_str().unwrap()).unwrap();
        let e = db.require("session", &["id", "title"]).unwrap_err();
        assert!(e.to_string().ends_with("unknown schema: table `session` has no column `title`"), "{e}");
        let e = db.snapshot("part", |c| c.query_row("SELECT data FROM part", [], |_| Ok(()))).unwrap_err();
        assert!(matches!(&e, StoreError::Schema { table, .. } if table == "part"), "{e:?}");
    }

    #[test]
    fn a_damaged_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.db");
        let mut bytes = MAGIC.to_vec();
        bytes.resize(4096, 0xff);
        std::fs::write(&path, bytes).unwrap();
        let e = Db::open(path.to_str().unwrap()).err().expect("not a database");
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}");
    }
}
