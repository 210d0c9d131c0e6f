//! A Parquet file whose columns are encoded and compressed side by side on a pool of threads,
//! while the caller goes on handing it batches.
//!
//! Each column of the open row group is a queue of arrays worked off in order by one task at a
//! time on the pool, so columns run side by side and a column's pages come out as they would on
//! one thread. A row group is cut between batches once it holds [`ROW_GROUP_ROWS`] rows or
//! [`ROW_GROUP_BYTES`] of Arrow data: cuts depend on the batches only, so the file's bytes do not
//! depend on the number of threads. Finished row groups are appended in order by the caller's
//! thread, which writes the file.
//!
//! Memory: the arrays queued for encoding (at most [`QUEUED_BYTES`], then the caller waits), the
//! open row group's encoded pages, and those of at most [`CLOSING`] row groups being finished.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{FieldRef, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, ArrowWriterOptions, compute_leaves,
};
use parquet::errors::{ParquetError, Result};
use parquet::file::writer::SerializedFileWriter;

/// Rows after which a row group ends (at the end of the batch that reaches them).
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// Bytes of Arrow data after which a row group ends.
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// Bytes of arrays waiting to be encoded before the caller waits.
const QUEUED_BYTES: usize = 64 << 20;

/// Row groups whose columns may still be finishing while the next is filled.
const CLOSING: usize = 1;

/// A Parquet file being written.
pub struct RowGroups<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// Threads that encode columns; `None` encodes on the caller's thread.
    pool: Option<Pool>,
    /// The open row group's columns, in schema order.
    open: Vec<Column>,
    rows: usize,
    bytes: usize,
    /// Row groups started.
    started: usize,
    /// Row groups closed but not yet appended, oldest first.
    closing: VecDeque<Closing>,
}

/// The pool and what bounds the work queued on it.
struct Pool {
    threads: rayon::ThreadPool,
    queued: Arc<Queued>,
}

/// Bytes of arrays queued on the pool, which the caller waits on.
#[derive(Default)]
struct Queued {
    state: Mutex<QueuedState>,
    less: Condvar,
}

#[derive(Default)]
struct QueuedState {
    bytes: usize,
    /// Whether the caller waits: only then is it woken, which saves a system call per array.
    waiting: bool,
}

impl Queued {
    fn add(&self, bytes: usize) {
        if let Ok(mut queued) = self.state.lock() {
            queued.bytes += bytes;
        }
    }

    fn done(&self, bytes: usize) {
        if let Ok(mut queued) = self.state.lock() {
            queued.bytes -= bytes;
            if queued.waiting && queued.bytes < QUEUED_BYTES {
                queued.waiting = false;
                self.less.notify_one();
            }
        }
    }

    /// Waits until less than [`QUEUED_BYTES`] are queued.
    fn wait(&self) {
        let Ok(mut queued) = self.state.lock() else { return };
        while queued.bytes >= QUEUED_BYTES {
            queued.waiting = true;
            match self.less.wait(queued) {
                Ok(q) => queued = q,
                Err(_) => return,
            }
        }
    }
}

/// One column of the open row group: written here, or through a queue worked off on the pool.
enum Column {
    Here(Writers),
    Pooled(Arc<Mutex<Queue>>),
}

/// The column writers of one column of the schema (one per leaf), and what they met.
struct Writers {
    field: FieldRef,
    writers: Vec<ArrowColumnWriter>,
    error: Option<ParquetError>,
}

impl Writers {
    /// Writes an array of this column; a failure (or a panic, a bug) is kept for
    /// [`Writers::close`], and later arrays are skipped.
    fn write(&mut self, array: &ArrayRef) {
        if self.error.is_some() {
            return;
        }
        let (field, writers) = (&self.field, &mut self.writers);
        let written = caught(|| {
            let leaves = compute_leaves(field, array)?;
            writers.iter_mut().zip(&leaves).try_for_each(|(writer, leaf)| writer.write(leaf))
        });
        self.error = written.err();
    }

    fn close(self) -> Result<Vec<ArrowColumnChunk>> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let writers = self.writers;
        caught(|| writers.into_iter().map(ArrowColumnWriter::close).collect())
    }
}

/// Runs `f`, turning a panic (a bug) into an error: on the pool, a panic would abort the process.
fn caught<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(ParquetError::General("encoding a column failed (a bug)".into())))
}

/// Work for a pooled column, in order.
enum Work {
    Write(ArrayRef, usize),
    Close(usize, Sender<(usize, Result<Vec<ArrowColumnChunk>>)>),
}

/// A pooled column's writers and its work not yet done; `running` while a task works it off.
struct Queue {
    writers: Option<Writers>,
    work: VecDeque<Work>,
    running: bool,
}

/// A row group whose columns are being finished: their chunks come back on `from`.
struct Closing {
    /// Each column's chunks, once back.
    chunks: Vec<Option<Result<Vec<ArrowColumnChunk>>>>,
    /// Columns not yet back.
    remaining: usize,
    from: Receiver<(usize, Result<Vec<ArrowColumnChunk>>)>,
}

impl Closing {
    /// Takes the chunks that are back, waiting for the rest with `wait`; whether all are.
    fn collect(&mut self, wait: bool) -> Result<bool> {
        while self.remaining > 0 {
            let back = if wait { self.from.recv().ok() } else { self.from.try_recv().ok() };
            let Some((i, chunks)) = back else {
                return if wait { Err(ParquetError::General("an encoding task stopped".into())) } else { Ok(false) };
            };
            self.chunks[i] = Some(chunks);
            self.remaining -= 1;
        }
        Ok(true)
    }
}

impl<W: Write + Send> RowGroups<W> {
    /// A file of `schema` written to `out`, its columns encoded on `threads` threads besides
    /// the caller's (none: on the caller's thread).
    ///
    /// # Errors
    /// When the schema cannot be written as Parquet, or a thread cannot be started.
    pub fn new(out: W, schema: SchemaRef, options: ArrowWriterOptions, threads: usize) -> Result<Self> {
        let (file, factory) =
            ArrowWriter::try_new_with_options(out, schema.clone(), options)?.into_serialized_writer()?;
        let pool = if threads > 0 {
            let threads = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("agentlog-parquet-{i}"))
                .build()
                .map_err(|e| ParquetError::External(Box::new(e)))?;
            Some(Pool { threads, queued: Arc::default() })
        } else {
            None
        };
        let closing = VecDeque::new();
        Ok(RowGroups { file, factory, schema, pool, open: Vec::new(), rows: 0, bytes: 0, started: 0, closing })
    }

    /// Adds a batch to the open row group, and closes it once it is full.
    ///
    /// # Errors
    /// When encoding or writing fails.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if self.open.is_empty() {
            self.open()?;
        }
        for (column, array) in self.open.iter_mut().zip(batch.columns()) {
            match column {
                Column::Here(writers) => writers.write(array),
                Column::Pooled(queue) => {
                    let pool = self.pool.as_ref().expect("pooled columns have a pool");
                    let bytes = array.get_array_memory_size();
                    pool.queued.add(bytes);
                    push(pool, queue, Work::Write(Arc::clone(array), bytes));
                }
            }
        }
        self.rows += batch.num_rows();
        self.bytes += data_bytes(batch)?;
        if self.rows >= ROW_GROUP_ROWS || self.bytes >= ROW_GROUP_BYTES {
            self.close_row_group()?;
        }
        if let Some(pool) = &self.pool {
            pool.queued.wait();
        }
        self.append_finished(false)
    }

    /// Starts a row group: its column writers, by column of the schema.
    fn open(&mut self) -> Result<()> {
        let mut writers = self.factory.create_column_writers(self.started)?.into_iter();
        self.started += 1;
        for field in self.schema.fields() {
            let leaves = leaf_count(field);
            let writers =
                Writers { field: Arc::clone(field), writers: writers.by_ref().take(leaves).collect(), error: None };
            self.open.push(match self.pool {
                Some(_) => Column::Pooled(Arc::new(Mutex::new(Queue {
                    writers: Some(writers),
                    work: VecDeque::new(),
                    running: false,
                }))),
                None => Column::Here(writers),
            });
        }
        Ok(())
    }

    /// Closes the open row group: on the pool, its columns finish there and it is appended
    /// later, in order.
    fn close_row_group(&mut self) -> Result<()> {
        let columns = std::mem::take(&mut self.open);
        self.rows = 0;
        self.bytes = 0;
        let (to, chunks) = channel();
        let count = columns.len();
        for (i, column) in columns.into_iter().enumerate() {
            match column {
                Column::Here(writers) => {
                    let _ = to.send((i, writers.close()));
                }
                Column::Pooled(queue) => {
                    push(self.pool.as_ref().expect("pooled columns have a pool"), &queue, Work::Close(i, to.clone()));
                }
            }
        }
        let chunks_back = std::iter::repeat_with(|| None).take(count).collect();
        self.closing.push_back(Closing { chunks: chunks_back, remaining: count, from: chunks });
        if self.closing.len() > CLOSING { self.append_finished(true) } else { Ok(()) }
    }

    /// Appends the row groups finished so far, oldest first; with `wait`, waits for the oldest.
    fn append_finished(&mut self, wait: bool) -> Result<()> {
        let mut wait = wait;
        while let Some(oldest) = self.closing.front_mut() {
            if !oldest.collect(wait)? {
                return Ok(());
            }
            let closing = self.closing.pop_front().expect("looked at above");
            let mut row_group = self.file.next_row_group()?;
            for chunks in closing.chunks {
                for chunk in chunks.expect("every column is back")? {
                    chunk.append_to_row_group(&mut row_group)?;
                }
            }
            row_group.close()?;
            wait = false;
        }
        Ok(())
    }

    /// Bytes written so far plus those the open row group holds, when the columns are encoded
    /// on the caller's thread: then known exactly on every run.
    pub fn size(&self) -> Option<usize> {
        let mut size = self.file.bytes_written();
        for column in &self.open {
            match column {
                Column::Here(writers) => {
                    size += writers.writers.iter().map(ArrowColumnWriter::memory_size).sum::<usize>()
                }
                Column::Pooled(_) => return None,
            }
        }
        Some(size)
    }

    /// Writes the last row group and the footer; returns the output.
    ///
    /// # Errors
    /// When encoding or writing fails.
    pub fn finish(mut self) -> Result<W> {
        if !self.open.is_empty() {
            self.close_row_group()?;
        }
        while !self.closing.is_empty() {
            self.append_finished(true)?;
        }
        self.file.into_inner()
    }
}

/// Bytes of data a batch holds: what its arrays hold, not the capacity of their buffers, which
/// depends on how they were built.
fn data_bytes(batch: &RecordBatch) -> Result<usize> {
    let mut bytes = 0;
    for column in batch.columns() {
        bytes += column.to_data().get_slice_memory_size().map_err(|e| ParquetError::External(Box::new(e)))?;
    }
    Ok(bytes)
}

/// Leaves (Parquet columns) of an Arrow field.
fn leaf_count(field: &arrow_schema::Field) -> usize {
    match field.data_type() {
        arrow_schema::DataType::Struct(fields) => fields.iter().map(|f| leaf_count(f)).sum(),
        _ => 1,
    }
}

/// Queues work on a pooled column, and starts a task to work the queue off if none runs.
fn push(pool: &Pool, queue: &Arc<Mutex<Queue>>, work: Work) {
    let start = match queue.lock() {
        Ok(mut q) => {
            q.work.push_back(work);
            !std::mem::replace(&mut q.running, true)
        }
        Err(_) => false,
    };
    if start {
        let queue = Arc::clone(queue);
        let queued = Arc::clone(&pool.queued);
        pool.threads.spawn(move || work_off(&queue, &queued));
    }
}

/// Works a column's queue off in order, until it is empty.
fn work_off(queue: &Mutex<Queue>, queued: &Queued) {
    loop {
        let (work, writers) = match queue.lock() {
            Ok(mut q) => match q.work.pop_front() {
                Some(work) => (work, q.writers.take()),
                None => {
                    q.running = false;
                    return;
                }
            },
            Err(_) => return,
        };
        // The lock is not held while encoding: the caller queues more meanwhile.
        let Some(mut writers) = writers else { return };
        match work {
            Work::Write(array, bytes) => {
                writers.write(&array);
                drop(array);
                queued.done(bytes);
                if let Ok(mut q) = queue.lock() {
                    q.writers = Some(writers);
                }
            }
            Work::Close(i, to) => {
                let _ = to.send((i, writers.close()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    fn text_file(threads: usize) -> RowGroups<Vec<u8>> {
        let schema = Arc::new(Schema::new(vec![Field::new("text", DataType::Utf8, true)]));
        RowGroups::new(Vec::new(), schema, ArrowWriterOptions::new(), threads).unwrap()
    }

    #[test]
    fn a_column_that_fails_to_encode_fails_the_file_on_any_thread_count() {
        // An array of another type than its column's: a bug, which the column writer does not
        // expect; on the pool it must not abort the process.
        let numbers = Arc::new(Schema::new(vec![Field::new("text", DataType::Int64, true)]));
        let wrong = RecordBatch::try_new(numbers, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))]).unwrap();
        for threads in [0, 2] {
            let mut file = text_file(threads);
            let written = file.write(&wrong).and_then(|()| file.finish().map(|_| ()));
            assert!(written.is_err(), "{threads} threads");
        }
    }

    #[test]
    fn the_pool_writes_the_same_bytes_as_the_callers_thread() {
        let schema = Arc::new(Schema::new(vec![Field::new("text", DataType::Utf8, true)]));
        let write = |threads| {
            let mut file = text_file(threads);
            for n in 0..40 {
                let values: Vec<String> = (0..5000).map(|i| format!("row {n} {i}")).collect();
                let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(values))]).unwrap();
                file.write(&batch).unwrap();
            }
            file.finish().unwrap()
        };
        let here = write(0);
        assert!(here.len() > 100_000);
        assert!(here == write(3), "the bytes differ");
    }
}
