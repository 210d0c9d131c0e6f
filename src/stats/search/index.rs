//! A full-text index of an archive's sessions, kept beside them by `agentlog archive --index`.
//!
//! The index is an SQLite database (`DIR/.agentlog-index.sqlite`) holding, for every event with
//! searchable text ([`super::searchable`]), where its line is (file and byte offset) and which
//! session it counts under, and an FTS5 table of its words (contentless: the text stays in the
//! archive's files). Per file and session it keeps what the session's events say of it (project,
//! first prompt, start), so that the sessions of a search are described without reading them.
//!
//! A search looks each term up (a word, or a phrase as its words in order), keeps the sessions
//! holding every term, and reads only the lines of the events found there, in the order a
//! streaming search reads them; those events then go through [`super::Results::add`] as they
//! would have. The index only narrows what is read: the words are matched again on the text,
//! so the results are those of a search of the files. An index is used only while every file
//! it describes is as it was when indexed, and no file was added ([`Index::is_current`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};

use super::{Query, Results, SessionHits, searchable};
use crate::model::{Agent, Event};
use crate::pipeline::{self, InputSpec};
use crate::read::Settings;

/// The index's file name, in the archive directory.
pub const FILE: &str = ".agentlog-index.sqlite";

/// The layout of the index; an index of another layout is rebuilt.
const LAYOUT: i64 = 2;

/// Files read in parallel, then written, at a time while indexing.
const BATCH: usize = 64;

/// An open index.
pub struct Index {
    db: Connection,
}

/// What [`Index::update`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Updated {
    /// Files (re)indexed.
    pub indexed: u64,
    /// Files unchanged since the last update.
    pub unchanged: u64,
    /// Files no longer there, taken out.
    pub removed: u64,
    /// Events with searchable text indexed.
    pub events: u64,
    /// Bytes of the files (re)indexed.
    pub bytes: u64,
}

/// A file's size and modification time in nanoseconds.
type Stamp = (u64, i64);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?;
    let nanos = match modified.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    };
    Some((meta.len(), nanos))
}

fn nanos(t: Option<DateTime<Utc>>) -> Option<i64> {
    t.and_then(|t| t.timestamp_nanos_opt())
}

/// What one file gives the index.
struct Parsed {
    path: String,
    stamp: Stamp,
    /// Per session: what its events here say of it.
    about: Vec<SessionHits>,
    /// Per event with text: its line's offset, its session (an index into `about`), its text.
    events: Vec<(u64, usize, String)>,
}

impl Index {
    /// Opens the index of the archive in `dir`, if it has one.
    ///
    /// # Errors
    /// When the index cannot be opened.
    pub fn open(dir: &Path) -> rusqlite::Result<Option<Index>> {
        let path = dir.join(FILE);
        if !path.is_file() {
            return Ok(None);
        }
        let db = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        Ok((layout(&db) == Some(LAYOUT)).then_some(Index { db }))
    }

    /// Opens the index of the archive in `dir` for writing, making it when there is none (or
    /// when it has another layout).
    ///
    /// # Errors
    /// When the index cannot be made or opened.
    pub fn create(dir: &Path) -> io::Result<Index> {
        let path = dir.join(FILE);
        let layout = Connection::open(&path).ok().and_then(|db| layout(&db));
        if layout != Some(LAYOUT) {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Self::made(&path, layout == Some(LAYOUT)).map_err(io::Error::other)
    }

    /// Opens the index at `path`, making its tables unless `made`.
    fn made(path: &Path, made: bool) -> rusqlite::Result<Index> {
        let db = Connection::open(path)?;
        if !made {
            db.execute_batch(
                "PRAGMA page_size = 8192;
                 CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
                 CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
                                     mtime INTEGER NOT NULL, ord INTEGER NOT NULL);
                 CREATE TABLE sessions (id INTEGER PRIMARY KEY, agent TEXT NOT NULL, session TEXT NOT NULL,
                                        UNIQUE (agent, session));
                 CREATE TABLE about (file INTEGER NOT NULL, session INTEGER NOT NULL, project TEXT, title TEXT,
                                     started_at INTEGER, started_by_meta INTEGER NOT NULL,
                                     PRIMARY KEY (session, file)) WITHOUT ROWID;
                 CREATE INDEX about_file ON about (file);
                 CREATE TABLE events (id INTEGER PRIMARY KEY, file INTEGER NOT NULL, offset INTEGER NOT NULL,
                                      session INTEGER NOT NULL);
                 CREATE INDEX events_file ON events (file);
                 CREATE VIRTUAL TABLE words USING fts5 (text, content = '', contentless_delete = 1,
                                                        tokenize = 'unicode61 remove_diacritics 2');",
            )?;
            db.execute("INSERT INTO meta (key, value) VALUES ('layout', ?1)", [LAYOUT])?;
        }
        db.busy_timeout(std::time::Duration::from_secs(10))?;
        Ok(Index { db })
    }

    /// Brings the index up to date with the files a search of `dir` reads: files changed or new
    /// are indexed again, files gone are taken out.
    ///
    /// # Errors
    /// When the index cannot be written, or a file cannot be read.
    pub fn update(&mut self, dir: &Path, settings: &Settings) -> io::Result<Updated> {
        let files = files(dir, settings);
        let db = &mut self.db;
        let tx = db.transaction().map_err(io::Error::other)?;
        let mut known: HashMap<String, (i64, Stamp)> = HashMap::new();
        {
            let mut rows = tx.prepare("SELECT id, path, size, mtime FROM files").map_err(io::Error::other)?;
            let mut rows = rows.query([]).map_err(io::Error::other)?;
            while let Some(r) = rows.next().map_err(io::Error::other)? {
                let size: i64 = r.get(2).map_err(io::Error::other)?;
                known.insert(
                    r.get(1).map_err(io::Error::other)?,
                    (r.get(0).map_err(io::Error::other)?, (size as u64, r.get(3).map_err(io::Error::other)?)),
                );
            }
        }
        let mut updated = Updated::default();
        let present: HashSet<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        for (path, (id, _)) in &known {
            if !present.contains(path.as_str()) {
                forget(&tx, *id).map_err(io::Error::other)?;
                updated.removed += 1;
            }
        }
        let mut changed = Vec::new();
        for (ord, (path, stamp)) in files.iter().enumerate() {
            match known.get(path) {
                Some((id, was)) if was == stamp => {
                    tx.execute("UPDATE files SET ord = ?1 WHERE id = ?2", params![ord as i64, id])
                        .map_err(io::Error::other)?;
                    updated.unchanged += 1;
                }
                Some((id, _)) => {
                    forget(&tx, *id).map_err(io::Error::other)?;
                    changed.push((ord, path.clone()));
                }
                None => changed.push((ord, path.clone())),
            }
        }
        let mut sessions: HashMap<(Agent, String), i64> = HashMap::new();
        for batch in changed.chunks(BATCH) {
            use rayon::prelude::*;
            let parsed: Vec<io::Result<Parsed>> = batch.par_iter().map(|(_, path)| parse(path)).collect();
            for ((ord, _), parsed) in batch.iter().zip(parsed) {
                let parsed = parsed?;
                updated.indexed += 1;
                updated.bytes += parsed.stamp.0;
                updated.events += parsed.events.len() as u64;
                store(&tx, *ord, &parsed, &mut sessions).map_err(io::Error::other)?;
            }
        }
        tx.execute("DELETE FROM sessions WHERE id NOT IN (SELECT session FROM about)", []).map_err(io::Error::other)?;
        tx.commit().map_err(io::Error::other)?;
        Ok(updated)
    }

    /// Whether every file a search of `dir` reads is indexed as it is now.
    pub fn is_current(&self, dir: &Path) -> bool {
        let Ok(mut rows) = self.db.prepare("SELECT path, size, mtime FROM files") else { return false };
        let Ok(indexed) = rows
            .query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)?))))
            .and_then(Iterator::collect::<rusqlite::Result<HashMap<String, Stamp>>>)
        else {
            return false;
        };
        let (specs, errors) = pipeline::expand(&[dir.display().to_string()]);
        errors.is_empty()
            && specs.len() == indexed.len()
            && specs.iter().all(|spec| match spec {
                InputSpec::File(name) => indexed.get(name).is_some_and(|s| Some(*s) == stamp(Path::new(name))),
                _ => false,
            })
    }

    /// The sessions matching `query`, as a search of the archive's files finds them: the
    /// sessions holding every term are described from the index, and the events found there
    /// read from their files and added. `None` for a query the index cannot answer (a regular
    /// expression).
    ///
    /// # Errors
    /// When the index or a file cannot be read.
    pub fn search(&self, query: &Query) -> io::Result<Option<Results>> {
        let Some(terms) = query.words() else { return Ok(None) };
        let found = self.find(&terms).map_err(io::Error::other)?;
        let mut results = Results::default();
        for About { agent, session, project, title, started_at, started_by_meta } in found.about {
            results.describe(query, (agent, &session), project, title, (started_at, started_by_meta));
        }
        let mut open: Option<(&str, BufReader<File>)> = None;
        let mut buf = Vec::new();
        for (_, path, offset) in &found.lines {
            if open.as_ref().is_none_or(|(p, _)| p != path) {
                open = Some((path, BufReader::new(File::open(path)?)));
            }
            let (_, reader) = open.as_mut().expect("opened above");
            reader.seek(SeekFrom::Start(*offset))?;
            buf.clear();
            reader.read_until(b'\n', &mut buf)?;
            let text = std::str::from_utf8(&buf).map_err(io::Error::other)?;
            let event: Event = crate::read::parse_object(text.trim_end())
                .map_err(|p| io::Error::other(format!("{path}: changed since it was indexed ({})", p.message)))?;
            results.add(query, &event);
        }
        Ok(Some(results))
    }

    /// What the index says of the sessions holding every term: their descriptions, and the
    /// lines of their events that hold a term, both in the order a search of the files reads
    /// them.
    fn find(&self, terms: &[&[String]]) -> rusqlite::Result<Found> {
        let files: HashMap<i64, (i64, String)> = self
            .db
            .prepare_cached("SELECT id, ord, path FROM files")?
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
            .collect::<rusqlite::Result<_>>()?;
        let mut lookup = self.db.prepare_cached(
            "SELECT e.session, e.file, e.offset FROM words JOIN events e ON e.id = words.rowid WHERE words MATCH ?1",
        )?;
        // Per term: the lines holding it, by session.
        let mut found: Vec<HashMap<i64, Vec<(i64, i64)>>> = Vec::new();
        for words in terms {
            let mut by_session: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
            let mut rows = lookup.query([phrase(words)])?;
            while let Some(r) = rows.next()? {
                by_session.entry(r.get(0)?).or_default().push((r.get(1)?, r.get(2)?));
            }
            found.push(by_session);
        }
        let sessions: BTreeSet<i64> =
            found[0].keys().copied().filter(|s| found[1..].iter().all(|other| other.contains_key(s))).collect();
        let mut lines: Vec<(i64, String, u64)> = found
            .iter()
            .flat_map(|f| sessions.iter().filter_map(|s| f.get(s)).flatten())
            .filter_map(|(file, offset)| files.get(file).map(|(ord, path)| (*ord, path.clone(), *offset as u64)))
            .collect();
        lines.sort_unstable();
        lines.dedup();
        let mut about = Vec::new();
        let mut described = self.db.prepare_cached(
            "SELECT s.agent, s.session, a.project, a.title, a.started_at, a.started_by_meta FROM about a
             JOIN sessions s ON s.id = a.session JOIN files f ON f.id = a.file
             WHERE a.session = ?1 ORDER BY f.ord",
        )?;
        for session in &sessions {
            let mut rows = described.query([session])?;
            while let Some(r) = rows.next()? {
                let Some(agent) = Agent::from_name(&r.get::<_, String>(0)?) else { continue };
                let started_at: Option<i64> = r.get(4)?;
                about.push(About {
                    agent,
                    session: r.get(1)?,
                    project: r.get(2)?,
                    title: r.get(3)?,
                    started_at: started_at.map(DateTime::from_timestamp_nanos),
                    started_by_meta: r.get(5)?,
                });
            }
        }
        Ok(Found { about, lines })
    }
}

/// What [`Index::find`] finds.
struct Found {
    /// The sessions' descriptions, a row per file of a session.
    about: Vec<About>,
    /// The lines to read: each file's place in the reading order, its path, the line's offset.
    lines: Vec<(i64, String, u64)>,
}

/// What a file says of a session.
struct About {
    agent: Agent,
    session: String,
    project: Option<String>,
    title: Option<String>,
    started_at: Option<DateTime<Utc>>,
    /// Whether `started_at` is a meta event's time ([`SessionHits::started_by_meta`]).
    started_by_meta: bool,
}

/// The layout an index says it has; `None` for a database that is not an index.
fn layout(db: &Connection) -> Option<i64> {
    db.query_row("SELECT value FROM meta WHERE key = 'layout'", [], |r| r.get(0)).ok()
}

/// The FTS5 query for a term: its words, as [`words_only`] and the tokenizer split them, as
/// one phrase.
fn phrase(words: &[String]) -> String {
    let tokens: Vec<String> = words
        .iter()
        .flat_map(|w| words_only(w).split(' ').map(str::to_owned).collect::<Vec<_>>())
        .filter(|t| !t.is_empty())
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    tokens.join(" + ")
}

/// `text` with every character that is not a word character of a search's terms (`\w`) made a
/// space: the tokenizer then never joins across a word boundary of a term (it takes `²` for a
/// letter, where `\bx\b` matches the `x` of `x²`), so that a word a term matches in the text is
/// always one of the text's tokens, or several in a row, as the term's own words are.
fn words_only(text: &str) -> std::borrow::Cow<'_, str> {
    static NOT_WORD: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\W").expect("a valid pattern"));
    NOT_WORD.replace_all(text, " ")
}

/// Takes a file out of the index.
fn forget(tx: &rusqlite::Transaction<'_>, file: i64) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM words WHERE rowid IN (SELECT id FROM events WHERE file = ?1)", [file])?;
    tx.execute("DELETE FROM events WHERE file = ?1", [file])?;
    tx.execute("DELETE FROM about WHERE file = ?1", [file])?;
    tx.execute("DELETE FROM files WHERE id = ?1", [file])?;
    Ok(())
}

/// Writes what a file gives into the index.
fn store(
    tx: &rusqlite::Transaction<'_>,
    ord: usize,
    parsed: &Parsed,
    sessions: &mut HashMap<(Agent, String), i64>,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO files (path, size, mtime, ord) VALUES (?1, ?2, ?3, ?4)",
        params![parsed.path, parsed.stamp.0 as i64, parsed.stamp.1, ord as i64],
    )?;
    let file = tx.last_insert_rowid();
    let mut ids = Vec::with_capacity(parsed.about.len());
    for about in &parsed.about {
        let key = (about.agent, about.session_id.clone());
        let id = match sessions.get(&key) {
            Some(id) => *id,
            None => {
                tx.execute(
                    "INSERT OR IGNORE INTO sessions (agent, session) VALUES (?1, ?2)",
                    params![about.agent.as_str(), about.session_id],
                )?;
                let id: i64 = tx.query_row(
                    "SELECT id FROM sessions WHERE agent = ?1 AND session = ?2",
                    params![about.agent.as_str(), about.session_id],
                    |r| r.get(0),
                )?;
                sessions.insert(key, id);
                id
            }
        };
        tx.execute(
            "INSERT INTO about (file, session, project, title, started_at, started_by_meta) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![file, id, about.project, about.title, nanos(about.started_at), about.started_by_meta()],
        )?;
        ids.push(id);
    }
    let mut event = tx.prepare_cached("INSERT INTO events (file, offset, session) VALUES (?1, ?2, ?3)")?;
    let mut words = tx.prepare_cached("INSERT INTO words (rowid, text) VALUES (?1, ?2)")?;
    for (offset, session, text) in &parsed.events {
        event.execute(params![file, *offset as i64, ids[*session]])?;
        words.execute(params![tx.last_insert_rowid(), text])?;
    }
    Ok(())
}

/// Reads a file of unified events for the index: each line's event, as a search reads it.
/// A line that is not an event is left out, as a search leaves it out.
fn parse(path: &str) -> io::Result<Parsed> {
    let stamp = stamp(Path::new(path)).ok_or_else(|| io::Error::other(format!("{path}: cannot be read")))?;
    let mut reader = BufReader::new(File::open(path)?);
    let mut parsed = Parsed { path: path.to_owned(), stamp, about: Vec::new(), events: Vec::new() };
    let mut index: HashMap<(Agent, String), usize> = HashMap::new();
    let (mut offset, mut buf) = (0u64, Vec::new());
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        let at = offset;
        offset += n as u64;
        let Ok(text) = std::str::from_utf8(&buf) else { continue };
        let Ok(event) = crate::read::parse_object::<Event>(text.trim_end()) else { continue };
        if event.copied {
            continue;
        }
        let key = (event.agent, super::root_session(&event).to_owned());
        let session = *index.entry(key.clone()).or_insert_with(|| {
            parsed.about.push(SessionHits::new(key.0, &key.1, 0));
            parsed.about.len() - 1
        });
        parsed.about[session].see(&event);
        if let Some((_, text)) = searchable(&event) {
            parsed.events.push((at, session, words_only(&text).into_owned()));
        }
    }
    Ok(parsed)
}

/// The files a search of `dir` reads, in the order it reads them, each with its stamp.
fn files(dir: &Path, settings: &Settings) -> Vec<(String, Stamp)> {
    let (specs, _) = pipeline::expand(&[dir.display().to_string()]);
    let (groups, _) = pipeline::plan(&specs, None, &|_| None, settings);
    groups
        .iter()
        .flat_map(|g| &g.items)
        .filter_map(|item| match &item.spec {
            InputSpec::File(name) if item.reader.name() == "unified" => Some((name.clone(), stamp(Path::new(name))?)),
            _ => None,
        })
        .collect()
}

/// The index's path for the archive in `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}
