//! The tables of `--to parquet` as record batches in memory, for programs that take Arrow data
//! rather than files (the Python package hands them over through the Arrow C stream interface).

use std::io;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::columns::{EventColumns, event_schema, plain, session_batch, session_schema};
use super::{BATCH_BYTES, BATCH_ROWS, io_error};
use crate::model::{Diagnostic, Event};
use crate::write::{EventSink, Sessions};

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
    columns: EventColumns,
    sessions: Sessions,
    give: F,
}

impl<F: FnMut(RecordBatch) -> io::Result<()>> Batches<F> {
    /// A sink that builds `table`.
    pub fn new(table: Table, give: F) -> Self {
        Batches { table, columns: EventColumns::new(true, false), sessions: Sessions::default(), give }
    }

    fn give_events(&mut self) -> io::Result<()> {
        if self.columns.rows() == 0 {
            return Ok(());
        }
        let batch = self.columns.finish().map_err(io_error)?;
        (self.give)(batch)
    }
}

impl<F: FnMut(RecordBatch) -> io::Result<()>> EventSink for Batches<F> {
    fn begin_source(&mut self, _name: &str) -> io::Result<()> {
        self.sessions.begin_source();
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        match self.table {
            Table::Sessions => self.sessions.observe(event),
            Table::Events => {
                self.columns.append(event);
                if self.columns.rows() >= BATCH_ROWS || self.columns.bytes() >= BATCH_BYTES {
                    self.give_events()?;
                }
            }
        }
        Ok(())
    }

    fn end_source(&mut self, _name: &str, lines: u64, diagnostics: &[Diagnostic]) -> io::Result<()> {
        self.sessions.end_source(lines, diagnostics);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.table {
            Table::Events => self.give_events(),
            Table::Sessions => {
                let summaries = std::mem::take(&mut self.sessions).finish();
                let batch = session_batch(&summaries.iter().collect::<Vec<_>>(), true, false).map_err(io_error)?;
                (self.give)(batch)
            }
        }
    }
}
