//! The interchange writer (`--to interchange`): one JSON document that another program can
//! take as a contract, following `schema/interchange.schema.json`.
//!
//! Wire format: `{"schema_version", "header", "sessions": [{"session": <summary>, "events":
//! [<event>, …]}, …]}` with one event per line. Sessions come in the order they first appear,
//! each session's events in the order they were read. `header.created_at` is the time of writing,
//! or `SOURCE_DATE_EPOCH` when set (reproducible output). With `-o DIR/` (an existing directory
//! or a path ending in `/`) each session gets a document of its own,
//! `DIR/<agent>/<agent>-<session id>.json`, with the id reduced to safe characters.
//!
//! Validation: each event is checked against the event schema as it arrives, and the rest of
//! each document (header and summaries) once before it is written; the first violation stops the
//! writer, naming the session, the event's `seq` and the JSON pointer, and no output file is
//! left. Memory: events wait in an anonymous temporary file until the summaries are complete;
//! only their offsets stay in memory.

mod shortened;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use chrono::{DateTime, Utc};

use crate::model::{
    Agent, Event, Header, INTERCHANGE_SCHEMA_ID, Json, Producer, SCHEMA_VERSION, Schemas, SessionSummary,
};
use crate::write::{
    AtomicFile, EventSink, Options, Pending, Sessions, Target, WriteError, Writer, is_directory_target,
    session_file_name, unsupported,
};

/// The interchange writer.
pub struct Interchange;

impl Writer for Interchange {
    fn name(&self) -> &'static str {
        "interchange"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }

    fn description(&self) -> &'static str {
        "one schema-checked JSON document (or one per session with -o DIR/)"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        if !options.partition_by.is_empty() {
            return Err(unsupported("--partition-by", self.name()));
        }
        let output = match target {
            Target::Stream(out) => Output::Stream(out),
            Target::Path(path) if is_directory_target(&path) => Output::PerSession(path),
            Target::Path(path) => Output::File(path),
        };
        let spool = BufWriter::with_capacity(256 * 1024, tempfile::tempfile()?);
        Ok(Box::new(Document {
            output: Some(output),
            spool,
            offset: 0,
            events: HashMap::new(),
            order: Vec::new(),
            sessions: Sessions::default(),
            inputs: Vec::new(),
            validator: Schemas::new(),
            buf: Vec::new(),
        }))
    }
}

enum Output<'w> {
    Stream(Box<dyn Write + Send + 'w>),
    File(PathBuf),
    PerSession(PathBuf),
}

type Key = (Agent, String);

/// Encoded events longer than this are checked with their long strings cut short
/// ([`shortened`]) rather than as a copy of the whole event.
const LONG_EVENT: usize = 1 << 20;

struct Document<'w> {
    output: Option<Output<'w>>,
    /// Events as JSON, in arrival order, until the document is written.
    spool: BufWriter<File>,
    offset: u64,
    /// Where each session's events are in the spool.
    events: HashMap<Key, Vec<(u64, u32)>>,
    /// Sessions in the order they first appeared.
    order: Vec<Key>,
    sessions: Sessions,
    inputs: Vec<String>,
    validator: Schemas,
    buf: Vec<u8>,
}

impl EventSink for Document<'_> {
    fn begin_source(&mut self, name: &str) -> io::Result<()> {
        self.inputs.push(name.to_owned());
        self.sessions.begin_source();
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.buf.clear();
        crate::write::encode::event(event, &mut self.buf);
        self.buf.pop(); // The line's newline: the document places its events itself.
        let value =
            if self.buf.len() <= LONG_EVENT { serde_json::to_value(event)? } else { shortened::parse(&self.buf)? };
        if let Some(v) = self.validator.event_violations(&value).first() {
            let message =
                format!("event seq {} of session {} breaks the event schema at {v}", event.seq, event.session_id);
            return Err(WriteError::Schema { message }.into_io());
        }
        self.spool.write_all(&self.buf)?;
        let key = (event.agent, event.session_id.clone());
        if !self.events.contains_key(&key) {
            self.order.push(key.clone());
        }
        self.events.entry(key).or_default().push((self.offset, self.buf.len() as u32));
        self.offset += self.buf.len() as u64;
        self.sessions.observe(event);
        Ok(())
    }

    fn end_source(&mut self, _name: &str, lines: u64, diagnostics: &[crate::model::Diagnostic]) -> io::Result<()> {
        self.sessions.end_source(lines, diagnostics);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.spool.flush()?;
        let mut spool = self.spool.get_ref().try_clone()?;
        let summaries: HashMap<Key, SessionSummary> = std::mem::take(&mut self.sessions)
            .finish()
            .into_iter()
            .map(|s| ((s.agent, s.session_id.clone()), s))
            .collect();
        let header = Header {
            schema: INTERCHANGE_SCHEMA_ID.to_owned(),
            producer: Producer { name: "agentlog".into(), version: env!("CARGO_PKG_VERSION").into() },
            created_at: created_at()?,
            inputs: std::mem::take(&mut self.inputs),
        };
        let order = std::mem::take(&mut self.order);
        match self.output.take().expect("finish is called once") {
            Output::Stream(mut out) => {
                self.write_document(&mut out, &header, &order, &summaries, &mut spool)?;
                out.flush()
            }
            Output::File(path) => {
                let mut file = BufWriter::new(AtomicFile::create(&path)?);
                self.write_document(&mut file, &header, &order, &summaries, &mut spool)?;
                file.into_inner().map_err(io::IntoInnerError::into_error)?.commit()
            }
            Output::PerSession(dir) => {
                let mut used = HashSet::new();
                let mut files = Vec::new();
                for key in &order {
                    let path = dir.join(key.0.as_str()).join(session_file_name(key.0, &key.1, "json", &mut used));
                    let mut file = BufWriter::new(AtomicFile::create(&path)?);
                    self.write_document(&mut file, &header, std::slice::from_ref(key), &summaries, &mut spool)?;
                    // Closed now, so that a run of many sessions holds one file open at a time.
                    files.push(file.into_inner().map_err(io::IntoInnerError::into_error)?.close()?);
                }
                // Every document is complete before any gets its final name.
                Pending::rename_all(files)
            }
        }
    }
}

impl Document<'_> {
    /// Checks the document without its events, then writes it with them.
    fn write_document(
        &self,
        out: &mut dyn Write,
        header: &Header,
        keys: &[Key],
        summaries: &HashMap<Key, SessionSummary>,
        spool: &mut File,
    ) -> io::Result<()> {
        let sessions: Vec<&SessionSummary> = keys.iter().map(|k| &summaries[k]).collect();
        let skeleton = serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "header": header,
            "sessions": sessions.iter().map(|s| serde_json::json!({ "session": s, "events": [] })).collect::<Vec<_>>(),
        });
        if let Some(v) = self.validator.document_violations(&skeleton).first() {
            let message = format!("the document breaks the interchange schema at {v}");
            return Err(WriteError::Schema { message }.into_io());
        }
        write!(
            out,
            "{{\"schema_version\":{},\"header\":{},\"sessions\":[",
            Json::from_value(SCHEMA_VERSION),
            Json::from_value(header)
        )?;
        // A session's events mostly sit one after another in the spool: it is read through a
        // buffer and sought only where they do not.
        let mut spool = BufReader::with_capacity(256 * 1024, spool);
        spool.seek(SeekFrom::Start(0))?;
        let mut position = 0;
        let mut event = Vec::new();
        for (i, (key, summary)) in keys.iter().zip(&sessions).enumerate() {
            out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
            write!(out, "{{\"session\":{},\"events\":[", Json::from_value(summary))?;
            for (j, &(offset, len)) in self.events[key].iter().enumerate() {
                event.resize(len as usize, 0);
                if offset != position {
                    spool.seek(SeekFrom::Start(offset))?;
                }
                spool.read_exact(&mut event)?;
                position = offset + u64::from(len);
                out.write_all(if j == 0 { b"\n" } else { b",\n" })?;
                out.write_all(&event)?;
            }
            out.write_all(b"\n]}")?;
        }
        out.write_all(b"\n]}\n")
    }
}

/// The time of writing, or `SOURCE_DATE_EPOCH` (seconds since 1970) for reproducible output.
fn created_at() -> io::Result<DateTime<Utc>> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text.trim().parse::<i64>().ok().and_then(|s| DateTime::from_timestamp(s, 0)).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("SOURCE_DATE_EPOCH={text:?} is not a time in seconds"))
        }),
        Err(_) => Ok(Utc::now()),
    }
}
