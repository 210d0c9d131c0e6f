//! The tables of `--to parquet` as record batches in memory, for programs that take Arrow data
//! rather than files (the Python package hands them over through the Arrow C stream interface).

use std::io;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::columns::{event_schema, plain, session_batch, session_schema};
use super::io_error;
use super::pieces::Gathered;
use crate::model::{Diagnostic, Event};
use crate::write::{Builders, EventSink, Piece};

/// Which table [`Batches`] builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// One row per event.
    Events,
    /// One row per session.
    Sessions,
}

impl Table {
    /// The table's schema: that of the Parquet file `--to parquet` writes for it.
    pub fn schema(self) -> SchemaRef {
        match self {
            Table::Events => plain(&event_schema(true)),
            Table::Sessions => plain(&session_schema(true)),
        }
    }
}

/// A sink that builds one table and hands each finished batch to `give`: the events table in
/// batches of at most 8192 rows or 16 MiB of text as events come, the sessions table as one
/// batch when the sink finishes (sessions are summed over all their inputs).
pub struct Batches<F> {
    table: Table,
    gathered: Gathered,
    give: F,
}

impl<F: FnMut(RecordBatch) -> io::Result<()>> Batches<F> {
    /// A sink that builds `table`.
    pub fn new(table: Table, give: F) -> Self {
        Batches { table, gathered: Gathered::new(true, table == Table::Events), give }
    }

    fn write(&mut self, batch: Option<RecordBatch>) -> io::Result<()> {
        batch.map_or(Ok(()), |batch| (self.give)(batch))
    }
}

impl<F: FnMut(RecordBatch) -> io::Result<()>> EventSink for Batches<F> {
    gathered_sink!();

    fn finish(&mut self) -> io::Result<()> {
        match self.table {
            Table::Events => {
                let rest = self.gathered.rest()?;
                self.write(rest)
            }
            Table::Sessions => {
                let summaries = self.gathered.sessions();
                let batch = session_batch(&summaries.iter().collect::<Vec<_>>(), true, false).map_err(io_error)?;
                (self.give)(batch)
            }
        }
    }
}
