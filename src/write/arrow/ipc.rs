//! Arrow IPC output: the file format for `-o FILE`, the stream format on standard output.

use std::io::{self, Write};

use arrow_ipc::writer::{FileWriter, StreamWriter};

use super::columns::{EventColumns, event_schema, plain, session_batch};
use super::{BATCH_BYTES, BATCH_ROWS, io_error};
use crate::model::{Diagnostic, Event};
use crate::write::{
    AtomicFile, EventSink, Pending, Sessions, Target, WriteError, is_directory_target, not_a_directory, sessions_beside,
};

/// Arrow IPC holds the [`plain`] schema: a reader needs no support for dictionary deltas or
/// extension types.
pub fn open<'w>(target: Target<'w>) -> Result<Box<dyn EventSink + 'w>, WriteError> {
    let schema = plain(&event_schema(true));
    Ok(match target {
        Target::Stream(out) => {
            let writer = StreamWriter::try_new(out, &schema).map_err(io_error)?;
            Box::new(Ipc {
                out: Some(Out::Stream(writer)),
                columns: EventColumns::new(true, false),
                sessions: Sessions::default(),
                sessions_path: None,
            })
        }
        Target::Path(path) if is_directory_target(&path) => return Err(not_a_directory(&path, "arrow")),
        Target::Path(path) => {
            let sessions_path = sessions_beside(&path);
            let file = AtomicFile::create(&path)?;
            let writer = FileWriter::try_new(file, &schema).map_err(io_error)?;
            Box::new(Ipc {
                out: Some(Out::File(writer)),
                columns: EventColumns::new(true, false),
                sessions: Sessions::default(),
                sessions_path,
            })
        }
    })
}

enum Out<'w> {
    Stream(StreamWriter<Box<dyn Write + Send + 'w>>),
    File(FileWriter<AtomicFile>),
}

struct Ipc<'w> {
    out: Option<Out<'w>>,
    columns: EventColumns,
    sessions: Sessions,
    /// Where the sessions go; `None` on a stream.
    sessions_path: Option<std::path::PathBuf>,
}

impl Ipc<'_> {
    fn flush_batch(&mut self) -> io::Result<()> {
        if self.columns.rows() == 0 {
            return Ok(());
        }
        let batch = self.columns.finish().map_err(io_error)?;
        match self.out.as_mut().expect("no write after finish") {
            Out::Stream(w) => w.write(&batch),
            Out::File(w) => w.write(&batch),
        }
        .map_err(io_error)
    }
}

impl EventSink for Ipc<'_> {
    fn begin_source(&mut self, _name: &str) -> io::Result<()> {
        self.sessions.begin_source();
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.sessions.observe(event);
        self.columns.append(event);
        if self.columns.rows() >= BATCH_ROWS || self.columns.bytes() >= BATCH_BYTES {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn end_source(&mut self, _name: &str, lines: u64, diagnostics: &[Diagnostic]) -> io::Result<()> {
        self.sessions.end_source(lines, diagnostics);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush_batch()?;
        let mut files = Vec::new();
        match self.out.take().expect("finish is called once") {
            Out::Stream(mut w) => w.finish().map_err(io_error)?,
            Out::File(mut w) => {
                w.finish().map_err(io_error)?;
                files.push(w.into_inner().map_err(io_error)?.close()?);
            }
        }
        if let Some(path) = self.sessions_path.take() {
            let summaries = std::mem::take(&mut self.sessions).finish();
            let batch = session_batch(&summaries.iter().collect::<Vec<_>>(), true, false).map_err(io_error)?;
            let file = AtomicFile::create(&path)?;
            let mut w = FileWriter::try_new(file, &batch.schema()).map_err(io_error)?;
            w.write(&batch).map_err(io_error)?;
            w.finish().map_err(io_error)?;
            files.push(w.into_inner().map_err(io_error)?.close()?);
        }
        // Both files get their final names only once both are complete.
        Pending::rename_all(files)
    }
}
