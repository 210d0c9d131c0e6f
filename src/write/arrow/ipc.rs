//! Arrow IPC output: the file format for `-o FILE`, the stream format on standard output.

use std::io::{self, Write};

use arrow_ipc::writer::{FileWriter, StreamWriter};

use arrow_array::RecordBatch;

use super::columns::{event_schema, plain, session_batch};
use super::io_error;
use super::pieces::Gathered;
use crate::model::{Diagnostic, Event};
use crate::write::{
    AtomicFile, Builders, EventSink, Pending, Piece, Target, WriteError, is_directory_target, not_a_directory,
    sessions_beside,
};

/// Arrow IPC holds the [`plain`] schema: a reader needs no support for dictionary deltas or
/// extension types.
pub fn open<'w>(target: Target<'w>) -> Result<Box<dyn EventSink + 'w>, WriteError> {
    let schema = plain(&event_schema(true));
    let (out, sessions_path) = match target {
        Target::Stream(out) => (Out::Stream(StreamWriter::try_new(out, &schema).map_err(io_error)?), None),
        Target::Path(path) if is_directory_target(&path) => return Err(not_a_directory(&path, "arrow")),
        Target::Path(path) => {
            let file = AtomicFile::create(&path)?;
            (Out::File(FileWriter::try_new(file, &schema).map_err(io_error)?), sessions_beside(&path))
        }
    };
    let gathered = Gathered::new(true, true).stored_ahead();
    Ok(Box::new(Ipc { out: Some(out), gathered, sessions_path }))
}

enum Out<'w> {
    Stream(StreamWriter<Box<dyn Write + Send + 'w>>),
    File(FileWriter<AtomicFile>),
}

struct Ipc<'w> {
    out: Option<Out<'w>>,
    gathered: Gathered,
    /// Where the sessions go; `None` on a stream.
    sessions_path: Option<std::path::PathBuf>,
}

impl Ipc<'_> {
    fn write(&mut self, batch: Option<RecordBatch>) -> io::Result<()> {
        let Some(batch) = batch else { return Ok(()) };
        match self.out.as_mut().expect("no write after finish") {
            Out::Stream(w) => w.write(&batch),
            Out::File(w) => w.write(&batch),
        }
        .map_err(io_error)
    }
}

impl EventSink for Ipc<'_> {
    gathered_sink!();

    fn finish(&mut self) -> io::Result<()> {
        let rest = self.gathered.rest()?;
        self.write(rest)?;
        let mut files = Vec::new();
        match self.out.take().expect("finish is called once") {
            Out::Stream(mut w) => w.finish().map_err(io_error)?,
            Out::File(mut w) => {
                w.finish().map_err(io_error)?;
                files.push(w.into_inner().map_err(io_error)?.close()?);
            }
        }
        if let Some(path) = self.sessions_path.take() {
            let summaries = self.gathered.sessions();
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
