//! Columnar writers: Parquet (`--to parquet`) and Arrow IPC (`--to arrow`).
//!
//! Both write the same two tables, defined once in [`columns`]: **events** (one row per event,
//! filterable fields as typed top-level columns, token usage as a struct of nullable `Int64`,
//! free-form JSON as `Utf8` columns with Parquet's JSON logical type) and **sessions** (one row
//! per session summary). Readers are given plain strings ([`plain`]): Parquet stores columns of
//! few values dictionary-encoded, Arrow IPC holds no dictionaries. Every file carries `agentlog.table`,
//! `agentlog.schema_version` and `agentlog.version` in its key-value metadata. Columns do not
//! depend on the input: a field a source lacks is null. New columns may be added in later
//! minor schema versions.
//!
//! Layouts: `-o FILE.parquet` writes the events there and the sessions to
//! `FILE.sessions.parquet`; `-o DIR --partition-by agent,date` writes a Hive-style dataset
//! (`DIR/events/agent=codex/date=2026-02-23/part-<run>-<n>.parquet`, and `DIR/sessions/…`), with
//! partition columns only in the path; a stream (standard output) gets the events only (Parquet
//! file or Arrow IPC stream).
//!
//! Memory: events are buffered in column builders until 8192 rows or 16 MiB of text, then
//! handed to the file writer as one record batch; a batch also ends with each group of inputs.
//! Given builders ([`crate::write::EventSink::builders`]), the reading threads build the batches
//! and the sessions' summaries of their own groups. Parquet row groups are cut between batches
//! once they hold 128 Ki rows or 64 MiB of Arrow data; with more than one of the run's
//! [`Options::threads`], a single Parquet file encodes and compresses its columns on as many
//! threads of its own (`row_groups.rs`); the bytes are the same. A partitioned dataset keeps at
//! most 8 partition files open, its batches built by the reading threads too, and encodes on
//! the caller's thread, since its part files are cut at an exact size. Session summaries are
//! held until the end (one small record per session).
//!
//! [`Options::threads`]: crate::write::Options::threads

/// The [`EventSink`] methods, all but `finish`, of a sink of one events table that keeps a
/// [`pieces::Gathered`] in `self.gathered` and writes each batch it gives with
/// `self.write(Option<RecordBatch>)`.
macro_rules! gathered_sink {
    () => {
        fn begin_source(&mut self, _name: &str) -> io::Result<()> {
            self.gathered.begin_source();
            Ok(())
        }

        fn event(&mut self, event: &Event) -> io::Result<()> {
            let batch = self.gathered.event(event)?;
            self.write(batch)
        }

        fn builders(&mut self) -> Option<Builders> {
            Some(self.gathered.builders())
        }

        fn piece(&mut self, piece: Piece) -> io::Result<()> {
            let batch = self.gathered.piece(piece)?;
            self.write(batch)
        }

        fn end_source(&mut self, _name: &str, lines: u64, diagnostics: &[Diagnostic]) -> io::Result<()> {
            self.gathered.end_source(lines, diagnostics);
            Ok(())
        }
    };
}

mod batches;
mod columns;
mod ipc;
mod lines;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(feature = "parquet")]
mod partition;
mod pieces;
#[cfg(feature = "parquet")]
mod row_groups;

use std::io;
use std::path::{Path, PathBuf};

use crate::write::{EventSink, Options, Target, WriteError, Writer, sessions_beside, unsupported};

pub use batches::{Batches, Table};
pub use columns::{event_schema, plain, session_schema};
pub use lines::{line_schema, line_schema_file, spark_ddl};

/// Rows per record batch.
const BATCH_ROWS: usize = 8192;

/// Text bytes per record batch.
const BATCH_BYTES: usize = 16 << 20;

/// The Parquet writer.
#[cfg(feature = "parquet")]
pub struct Parquet;

#[cfg(feature = "parquet")]
impl Writer for Parquet {
    fn name(&self) -> &'static str {
        "parquet"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["parquet"]
    }

    fn description(&self) -> &'static str {
        "Parquet (zstd), events and sessions tables; --partition-by agent,date for a Hive dataset"
    }

    fn binary(&self) -> bool {
        true
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        parquet::open(target, options)
    }

    fn side_files(&self, path: &Path, options: &Options) -> Vec<PathBuf> {
        if options.partition_by.is_empty() { sessions_beside(path).into_iter().collect() } else { Vec::new() }
    }
}

/// The Arrow IPC writer.
pub struct Arrow;

impl Writer for Arrow {
    fn name(&self) -> &'static str {
        "arrow"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["arrow", "arrows", "feather", "ipc"]
    }

    fn description(&self) -> &'static str {
        "Arrow IPC: a file with -o (sessions beside it), a stream on standard output"
    }

    fn binary(&self) -> bool {
        true
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        if !options.partition_by.is_empty() {
            return Err(unsupported("--partition-by", self.name()));
        }
        ipc::open(target)
    }

    fn side_files(&self, path: &Path, _options: &Options) -> Vec<PathBuf> {
        sessions_beside(path).into_iter().collect()
    }
}

/// Arrow and Parquet errors as I/O errors, keeping I/O errors (a closed pipe) as they were.
fn io_error(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    let e = e.into();
    let e = match e.downcast::<io::Error>() {
        Ok(io) => return *io,
        Err(e) => e,
    };
    // Parquet and Arrow wrap the writer's I/O errors; a closed pipe must stay a closed pipe.
    #[cfg(feature = "parquet")]
    let e = match e.downcast::<::parquet::errors::ParquetError>() {
        Ok(parquet) => match *parquet {
            ::parquet::errors::ParquetError::External(inner) => return io_error(inner),
            other => return io::Error::other(other),
        },
        Err(e) => e,
    };
    match e.downcast::<arrow_schema::ArrowError>() {
        Ok(arrow) => match *arrow {
            arrow_schema::ArrowError::IoError(_, io) => io,
            other => io::Error::other(other),
        },
        Err(e) => io::Error::other(e),
    }
}
