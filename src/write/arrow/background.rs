//! A Parquet writer that encodes and compresses on a thread of its own, while the caller builds
//! the next record batch and writes the file's bytes.

use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::{self, JoinHandle};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::errors::ParquetError;

use super::io_error;

/// Bytes of the file handed back at a time.
const WRITE_CHUNK_BYTES: usize = 1 << 20;

/// Feeds an [`ArrowWriter`] on another thread and writes what it gives back to `out`.
///
/// The encoding thread sees the same batches in the same order as a writer on the caller's
/// thread would, so the bytes are the same. It takes a batch only once it has encoded the last
/// one, and the caller writes the bytes back while it waits for that. Memory: one batch more
/// than on the caller's thread (the one being encoded while the next is built).
pub struct Background<W: Write> {
    out: W,
    batches: Option<Sender<RecordBatch>>,
    back: Receiver<Back>,
    thread: Option<JoinHandle<Result<(), ParquetError>>>,
}

/// What the encoding thread hands back.
enum Back {
    /// Bytes of the file, in order.
    Bytes(Vec<u8>),
    /// It is done with the last batch and waits for the next.
    Ready,
}

impl<W: Write> Background<W> {
    /// Starts the encoding thread for a file of `schema`.
    pub fn new(out: W, schema: SchemaRef, options: ArrowWriterOptions) -> io::Result<Self> {
        let (batches, batches_in) = mpsc::channel::<RecordBatch>();
        let (to, back) = mpsc::channel();
        let thread = thread::Builder::new().name("agentlog-parquet".into()).spawn(move || {
            let ready = to.clone();
            let chunks = Chunks { buffer: Vec::with_capacity(WRITE_CHUNK_BYTES), to };
            let mut writer = ArrowWriter::try_new_with_options(chunks, schema, options)?;
            // A send fails only once the caller is gone; the batches then stop too.
            let _ = ready.send(Back::Ready);
            for batch in batches_in {
                writer.write(&batch)?;
                let _ = ready.send(Back::Ready);
            }
            writer.into_inner()?.send()?;
            Ok(())
        })?;
        Ok(Background { out, batches: Some(batches), back, thread: Some(thread) })
    }

    /// Hands a batch to the encoding thread once it is done with the last one, writing what it
    /// gives back meanwhile.
    ///
    /// # Errors
    /// When writing fails, or encoding failed.
    pub fn write(&mut self, batch: RecordBatch) -> io::Result<()> {
        loop {
            match self.back.recv() {
                Ok(Back::Bytes(chunk)) => self.out.write_all(&chunk)?,
                Ok(Back::Ready) => break,
                Err(_) => return Err(self.stopped()),
            }
        }
        let sent = self.batches.as_ref().is_some_and(|to| to.send(batch).is_ok());
        if sent { Ok(()) } else { Err(self.stopped()) }
    }

    /// Waits for the encoding thread to write the rest and the footer; returns the output.
    ///
    /// # Errors
    /// When writing fails, or encoding failed.
    pub fn close(mut self) -> io::Result<W> {
        self.batches = None;
        for back in &self.back {
            if let Back::Bytes(chunk) = back {
                self.out.write_all(&chunk)?;
            }
        }
        match self.join() {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }

    /// Why the encoding thread stopped taking batches.
    fn stopped(&mut self) -> io::Error {
        self.join().unwrap_or_else(|| io::Error::other("the Parquet encoding thread stopped"))
    }

    /// Waits for the encoding thread; its error, if it failed.
    fn join(&mut self) -> Option<io::Error> {
        let result = self.thread.take()?.join();
        match result {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(io_error(e)),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// The encoding thread's output: bytes gathered and sent back a chunk at a time.
struct Chunks {
    buffer: Vec<u8>,
    to: Sender<Back>,
}

impl Chunks {
    /// Sends what is gathered.
    fn send(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buffer, Vec::with_capacity(WRITE_CHUNK_BYTES));
        self.to
            .send(Back::Bytes(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the Parquet output was closed"))
    }
}

impl Write for Chunks {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= WRITE_CHUNK_BYTES {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
