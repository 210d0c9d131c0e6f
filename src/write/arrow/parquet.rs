//! Parquet output: one file (and its sessions beside it), or a Hive-style partitioned dataset.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use arrow_schema::Schema;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::{ArrowWriter, add_encoded_arrow_schema_to_metadata};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use arrow_array::RecordBatch;

use super::columns::{EventColumns, event_schema, metadata, plain, session_batch, session_schema};
use super::io_error;
use super::partition::{NULL_PARTITION, PartitionBuilder, PartitionPart, Partitioner};
use super::pieces::Gathered;
use super::row_groups::{ROW_GROUP_BYTES, ROW_GROUP_ROWS, RowGroups};
use crate::model::{Diagnostic, Event, SessionSummary};
use crate::write::{
    AtomicFile, Builders, EventSink, Options, Pending, Piece, Sessions, Target, WriteError, is_directory_target,
    not_a_directory, sessions_beside, unsupported,
};

/// Partition files open at once in a dataset; the least recently used is closed beyond that.
const MAX_OPEN_PARTITIONS: usize = 8;

/// Compressed bytes after which a partition file is closed and the next part begun.
const PART_FILE_BYTES: usize = 512 << 20;

/// Free-text and JSON columns: their values rarely repeat, so they get no dictionary pages, and
/// a minimum and maximum of free text selects nothing, so they get no statistics.
const FREE_TEXT: [&str; 9] =
    ["text", "parts", "raw_text", "signature", "tool_input", "tool_input_text", "tool_result", "data", "extra"];

/// Identifier columns whose values are unique or nearly so: no dictionary pages.
const UNIQUE: [&str; 4] = ["id", "record_id", "parent_record_id", "call_id"];

/// How a file of `schema` is written: the properties below, and as the Arrow schema that
/// readers are given, the [`plain`] one.
fn options(table: &str, schema: &Schema) -> ArrowWriterOptions {
    let mut properties = properties(table);
    add_encoded_arrow_schema_to_metadata(&plain(schema), &mut properties);
    ArrowWriterOptions::new().with_properties(properties).with_skip_arrow_metadata(true)
}

fn properties(table: &str) -> WriterProperties {
    let metadata = metadata(table).into_iter().map(|(k, v)| KeyValue::new(k, v));
    let mut metadata: Vec<KeyValue> = metadata.collect();
    metadata.sort_by(|a, b| a.key.cmp(&b.key));
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("3 is a zstd level")))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_coerce_types(true)
        .set_key_value_metadata(Some(metadata));
    for column in FREE_TEXT {
        builder = builder
            .set_column_dictionary_enabled(ColumnPath::from(column), false)
            .set_column_statistics_enabled(ColumnPath::from(column), EnabledStatistics::None);
    }
    for column in UNIQUE {
        builder = builder.set_column_dictionary_enabled(ColumnPath::from(column), false);
    }
    builder.build()
}

pub fn open<'w>(target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
    match target {
        Target::Stream(out) if options.partition_by.is_empty() => Ok(Box::new(Single {
            events: Some(EventFile::new(out, true, options.threads)?),
            gathered: Gathered::new(true, true).stored_ahead(),
            sessions_path: None,
        })),
        Target::Stream(_) => Err(unsupported("--partition-by without -o DIR", "parquet")),
        Target::Path(path) if options.partition_by.is_empty() && is_directory_target(&path) => {
            Err(not_a_directory(&path, "parquet"))
        }
        Target::Path(path) if options.partition_by.is_empty() => Ok(Box::new(Single {
            events: Some(EventFile::new(AtomicFile::create(&path)?, true, options.threads)?),
            gathered: Gathered::new(true, true).stored_ahead(),
            sessions_path: sessions_beside(&path),
        })),
        Target::Path(root) => Ok(Box::new(Partitioned::new(root, options))),
    }
}

/// One Parquet file of events, fed event by event or batch by batch.
struct EventFile<W: Write + Send> {
    writer: RowGroups<W>,
    columns: EventColumns,
}

impl<W: Write + Send> EventFile<W> {
    /// An events file; with more than one of the run's `threads`, its columns are encoded on
    /// as many threads of their own.
    fn new(out: W, with_agent: bool, threads: usize) -> io::Result<Self> {
        let schema = event_schema(with_agent);
        let options = options("events", &schema);
        let pool = if threads > 1 { threads } else { 0 };
        let writer = RowGroups::new(out, schema, options, pool).map_err(io_error)?;
        Ok(EventFile { writer, columns: EventColumns::new(with_agent, false) })
    }

    fn append(&mut self, event: &Event) -> io::Result<()> {
        self.columns.append(event);
        if self.columns.is_full() {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn flush_batch(&mut self) -> io::Result<()> {
        if self.columns.rows() > 0 {
            let batch = self.columns.finish().map_err(io_error)?;
            self.writer.write(&batch).map_err(io_error)?;
        }
        Ok(())
    }

    /// Writes a batch built elsewhere, after those appended before.
    fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        self.flush_batch()?;
        self.writer.write(batch).map_err(io_error)
    }

    /// Bytes written to the file so far, plus what its open row group holds; `None` while
    /// columns are encoded on other threads, which could not tell the same number every run.
    fn size(&self) -> Option<usize> {
        self.writer.size()
    }

    /// Writes the rest and the footer; returns the output.
    fn close(mut self) -> io::Result<W> {
        self.flush_batch()?;
        self.writer.finish().map_err(io_error)
    }
}

/// Writes sessions as one Parquet file, complete but not yet under its final name.
fn write_sessions(path: &Path, sessions: &[&SessionSummary], with_agent: bool) -> io::Result<Pending> {
    let batch = session_batch(sessions, with_agent, true).map_err(io_error)?;
    let file = AtomicFile::create(path)?;
    let schema = session_schema(with_agent);
    let options = options("sessions", &schema);
    let mut writer = ArrowWriter::try_new_with_options(file, schema, options).map_err(io_error)?;
    writer.write(&batch).map_err(io_error)?;
    writer.into_inner().map_err(io_error)?.close()
}

/// One events file, and its sessions beside it unless it is a stream.
struct Single<W: Write + Send> {
    events: Option<EventFile<W>>,
    gathered: Gathered,
    /// Where the sessions go; `None` on a stream.
    sessions_path: Option<PathBuf>,
}

impl<W: Write + Send> Single<W> {
    fn write(&mut self, batch: Option<RecordBatch>) -> io::Result<()> {
        let events = self.events.as_mut().expect("no event after finish");
        batch.map_or(Ok(()), |batch| events.write(&batch))
    }
}

/// How a finished events output is completed: a file is closed, to be renamed into place
/// with the sessions beside it, and a stream flushed.
trait Complete {
    fn complete(self) -> io::Result<Option<Pending>>;
}

impl Complete for AtomicFile {
    fn complete(self) -> io::Result<Option<Pending>> {
        self.close().map(Some)
    }
}

impl Complete for Box<dyn Write + Send + '_> {
    fn complete(mut self) -> io::Result<Option<Pending>> {
        self.flush().map(|()| None)
    }
}

impl<W: Write + Send + Complete> EventSink for Single<W> {
    gathered_sink!();

    fn finish(&mut self) -> io::Result<()> {
        let rest = self.gathered.rest()?;
        self.write(rest)?;
        let mut files: Vec<Pending> =
            self.events.take().expect("finish is called once").close()?.complete()?.into_iter().collect();
        if let Some(path) = self.sessions_path.take() {
            let summaries = self.gathered.sessions();
            files.push(write_sessions(&path, &summaries.iter().collect::<Vec<_>>(), true)?);
        }
        // Both files get their final names only once both are complete.
        Pending::rename_all(files)
    }
}

/// A Hive-style dataset: `ROOT/events/agent=…/date=…/part-<run>-<n>.parquet` and `ROOT/sessions/…`.
struct Partitioned {
    root: PathBuf,
    /// Names part files, so that runs over other inputs add files instead of replacing them.
    run: String,
    partitioner: Partitioner,
    /// Open partition files by directory, with the tick of their last use.
    open: BTreeMap<String, (EventFile<AtomicFile>, u64)>,
    tick: u64,
    next_part: HashMap<String, u32>,
    sessions: Sessions,
    /// Whether the events come built ([`EventSink::builders`]), and their sessions with them.
    built: bool,
    /// Part files complete but not yet renamed, closed so that they hold no file descriptor.
    pending: Vec<Pending>,
}

impl Partitioned {
    fn new(root: PathBuf, options: &Options) -> Self {
        Partitioned {
            root,
            run: options.run_id.clone(),
            partitioner: Partitioner::new(options.partition_by.clone()),
            open: BTreeMap::new(),
            tick: 0,
            next_part: HashMap::new(),
            sessions: Sessions::default(),
            built: false,
            pending: Vec::new(),
        }
    }

    fn part_path(&mut self, table: &str, dir: &str) -> PathBuf {
        let n = self.next_part.entry(format!("{table}/{dir}")).or_insert(0);
        let path = self.root.join(table).join(dir).join(format!("part-{}-{n:04}.parquet", self.run));
        *n += 1;
        path
    }

    /// The open part file of a partition directory, opened (closing the least recently used
    /// beyond [`MAX_OPEN_PARTITIONS`]) if need be.
    fn file(&mut self, dir: &str) -> io::Result<&mut EventFile<AtomicFile>> {
        if !self.open.contains_key(dir) {
            if self.open.len() >= MAX_OPEN_PARTITIONS {
                let oldest = self.open.iter().min_by_key(|(_, (_, used))| *used).map(|(d, _)| d.clone());
                if let Some(oldest) = oldest {
                    self.close(&oldest)?;
                }
            }
            let path = self.part_path("events", dir);
            // Part files are cut at a size, which must be known exactly: encoded here.
            let file = EventFile::new(AtomicFile::create(&path)?, self.partitioner.with_agent(), 1)?;
            self.open.insert(dir.to_owned(), (file, 0));
        }
        self.tick += 1;
        let (file, used) = self.open.get_mut(dir).expect("opened above");
        *used = self.tick;
        Ok(file)
    }

    /// Closes a partition's part file once it holds [`PART_FILE_BYTES`].
    fn close_if_full(&mut self, dir: &str) -> io::Result<()> {
        let full = self.open.get(dir).is_some_and(|(file, _)| file.size().is_some_and(|s| s >= PART_FILE_BYTES));
        if full { self.close(dir) } else { Ok(()) }
    }

    fn close(&mut self, dir: &str) -> io::Result<()> {
        if let Some((file, _)) = self.open.remove(dir) {
            self.pending.push(file.close()?.close()?);
        }
        Ok(())
    }
}

impl EventSink for Partitioned {
    fn begin_source(&mut self, _name: &str) -> io::Result<()> {
        if !self.built {
            self.sessions.begin_source();
        }
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.sessions.observe(event);
        let dir = self.partitioner.dir(event).to_owned();
        self.file(&dir)?.append(event)?;
        self.close_if_full(&dir)
    }

    fn builders(&mut self) -> Option<Builders> {
        self.built = true;
        Some(PartitionBuilder::builders(self.partitioner.keys().to_vec()))
    }

    fn piece(&mut self, piece: Piece) -> io::Result<()> {
        let PartitionPart { batches, sessions } = piece.open()?;
        if let Some(sessions) = sessions {
            self.sessions.absorb(sessions);
        }
        for (dir, batch) in batches {
            self.file(&dir)?.write(&batch)?;
            self.close_if_full(&dir)?;
        }
        Ok(())
    }

    fn end_source(&mut self, _name: &str, lines: u64, diagnostics: &[Diagnostic]) -> io::Result<()> {
        if !self.built {
            self.sessions.end_source(lines, diagnostics);
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        for dir in self.open.keys().cloned().collect::<Vec<_>>() {
            self.close(&dir)?;
        }
        let summaries = std::mem::take(&mut self.sessions).finish();
        let mut by_partition: BTreeMap<String, Vec<&SessionSummary>> = BTreeMap::new();
        for s in &summaries {
            let date = s.started_at.map_or_else(|| NULL_PARTITION.to_owned(), |t| t.format("%Y-%m-%d").to_string());
            by_partition.entry(self.partitioner.path_of(s.agent, &date)).or_default().push(s);
        }
        for (dir, sessions) in by_partition {
            let path = self.part_path("sessions", &dir);
            let written = write_sessions(&path, &sessions, self.partitioner.with_agent())?;
            self.pending.push(written);
        }
        // No part file has its final name until the whole dataset is complete: a reader of
        // `DIR/events/**` never sees part of a run.
        Pending::rename_all(std::mem::take(&mut self.pending))
    }
}
