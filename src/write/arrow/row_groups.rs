//! A Parquet file whose columns are encoded and compressed side by side on a pool of threads.
//!
//! It does what the parquet crate's `ArrowWriter` does, and gives the same bytes: each batch
//! is split where a row group must end ([`ROW_GROUP_ROWS`] rows, or [`ROW_GROUP_BYTES`] of
//! encoded data as the column writers estimate it), and its columns are written to the row
//! group's column writers. Here each column (all its leaves, in order) is one task of the pool,
//! so a batch's columns are encoded at once; a column's writes stay in batch order, so where
//! the work runs changes nothing in the file. Memory: the row group being written, encoded,
//! as with `ArrowWriter`.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowColumnWriter, ArrowRowGroupWriterFactory, ArrowWriterOptions, compute_leaves};
use parquet::errors::{ParquetError, Result};
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

/// Rows per row group.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// Encoded bytes per row group, before compression, as the column writers estimate them.
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// A Parquet file being written.
pub struct RowGroups<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The open row group's column writers, per column of the schema; `None` between row groups.
    columns: Option<Vec<Vec<ArrowColumnWriter>>>,
    /// Rows in the open row group.
    rows: usize,
    /// Row groups written.
    written: usize,
    /// Threads that encode columns side by side; `None` encodes them on the caller's thread.
    pool: Option<rayon::ThreadPool>,
}

impl<W: Write + Send> RowGroups<W> {
    /// A file of `schema` written to `out`, its columns encoded on `threads` threads.
    ///
    /// # Errors
    /// When the schema cannot be written as Parquet, or a thread cannot be started.
    pub fn new(out: W, schema: SchemaRef, options: ArrowWriterOptions, threads: usize) -> Result<Self> {
        let (file, factory) =
            ArrowWriter::try_new_with_options(out, schema.clone(), options)?.into_serialized_writer()?;
        let pool = if threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("agentlog-parquet-{i}"))
                .build()
                .map_err(|e| ParquetError::External(Box::new(e)))?;
            Some(pool)
        } else {
            None
        };
        Ok(RowGroups { file, factory, schema, columns: None, rows: 0, written: 0, pool })
    }

    /// Adds a batch, splitting it where a row group must end, as `ArrowWriter::write` does.
    ///
    /// # Errors
    /// When encoding or writing fails.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut remaining = batch.clone();
        while remaining.num_rows() > 0 {
            if self.columns.is_none() {
                self.columns = Some(self.open(&remaining)?);
            }
            let mut split_at = (self.rows + remaining.num_rows() > ROW_GROUP_ROWS).then(|| ROW_GROUP_ROWS - self.rows);
            let candidate_rows = split_at.unwrap_or(remaining.num_rows());
            // With rows buffered, their average size says how many more fit under the byte limit.
            let current = self.estimated_bytes();
            if let Some(average) = current.checked_div(self.rows) {
                if current >= ROW_GROUP_BYTES {
                    self.flush()?;
                    continue;
                }
                if let Some(fit) = (ROW_GROUP_BYTES - current).checked_div(average)
                    && candidate_rows > fit
                {
                    if fit == 0 {
                        self.flush()?;
                        continue;
                    }
                    split_at = Some(fit);
                }
            }
            let rest = split_at.map(|at| remaining.slice(at, remaining.num_rows() - at));
            if let Some(at) = split_at {
                remaining = remaining.slice(0, at);
            }
            self.encode(&remaining)?;
            self.rows += remaining.num_rows();
            if self.rows >= ROW_GROUP_ROWS || self.estimated_bytes() >= ROW_GROUP_BYTES {
                self.flush()?;
            }
            remaining = match rest {
                Some(rest) => rest,
                None => break,
            };
        }
        Ok(())
    }

    /// Column writers for a new row group, grouped by the column of the schema they write.
    fn open(&self, batch: &RecordBatch) -> Result<Vec<Vec<ArrowColumnWriter>>> {
        let mut writers = self.factory.create_column_writers(self.written)?.into_iter();
        let mut columns = Vec::with_capacity(self.schema.fields().len());
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            let leaves = compute_leaves(field, column)?.len();
            columns.push(writers.by_ref().take(leaves).collect());
        }
        Ok(columns)
    }

    /// Writes each column of `batch` to its writers, the columns side by side.
    fn encode(&mut self, batch: &RecordBatch) -> Result<()> {
        let schema = &self.schema;
        let columns = self.columns.as_mut().expect("a row group is open");
        let write = |(i, writers): (usize, &mut Vec<ArrowColumnWriter>)| -> Result<()> {
            for (writer, leaf) in writers.iter_mut().zip(compute_leaves(schema.field(i), batch.column(i))?) {
                writer.write(&leaf)?;
            }
            Ok(())
        };
        match &self.pool {
            Some(pool) => pool.install(|| columns.par_iter_mut().enumerate().try_for_each(write)),
            None => columns.iter_mut().enumerate().try_for_each(write),
        }
    }

    fn estimated_bytes(&self) -> usize {
        self.columns.iter().flatten().flatten().map(ArrowColumnWriter::get_estimated_total_bytes).sum()
    }

    /// Bytes written so far plus those the open row group holds: known exactly on every run.
    pub fn size(&self) -> usize {
        self.file.bytes_written()
            + self.columns.iter().flatten().flatten().map(ArrowColumnWriter::memory_size).sum::<usize>()
    }

    /// Closes the open row group, if any, and appends its column chunks in schema order.
    fn flush(&mut self) -> Result<()> {
        let Some(columns) = self.columns.take() else { return Ok(()) };
        let close = |writers: Vec<ArrowColumnWriter>| {
            writers.into_iter().map(ArrowColumnWriter::close).collect::<Result<Vec<_>>>()
        };
        let chunks: Vec<Vec<_>> = match &self.pool {
            Some(pool) => pool.install(|| columns.into_par_iter().map(close).collect::<Result<_>>())?,
            None => columns.into_iter().map(close).collect::<Result<_>>()?,
        };
        let mut row_group = self.file.next_row_group()?;
        for chunk in chunks.into_iter().flatten() {
            chunk.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
        self.written += 1;
        self.rows = 0;
        Ok(())
    }

    /// Writes the last row group and the footer; returns the output.
    ///
    /// # Errors
    /// When encoding or writing fails.
    pub fn finish(mut self) -> Result<W> {
        self.flush()?;
        self.file.into_inner()
    }
}
