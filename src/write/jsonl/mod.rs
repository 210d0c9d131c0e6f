//! The normalised JSONL writer (`--to unified`, alias `jsonl`).
//!
//! Wire format: one [`Event`] per line as compact JSON, UTF-8, `\n` after every line, in the
//! order the readers emit them. Every line validates against `schema/event.schema.json`; every
//! field is present on every line (`null` when unknown). New event kinds, meta types and
//! fields may appear in later minor schema versions; readers of this format should ignore what
//! they do not know. Memory: one 256 KiB output buffer.

use std::io::{self, BufWriter, Write};

use crate::model::Event;
use crate::write::{AtomicFile, EventSink, Options, Target, Writer as Format, unsupported};

/// The JSONL writer.
pub struct Jsonl;

impl Format for Jsonl {
    fn name(&self) -> &'static str {
        "unified"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["jsonl"]
    }

    fn description(&self) -> &'static str {
        "normalised JSONL, one unified event per line"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> io::Result<Box<dyn EventSink + 'w>> {
        if !options.partition_by.is_empty() {
            return Err(unsupported("--partition-by", self.name()));
        }
        Ok(match target {
            Target::Stream(out) => Box::new(Writer::new(out)),
            Target::Path(path) => Box::new(FileWriter(Some(Writer::new(AtomicFile::create(&path)?)))),
        })
    }
}

/// Writes events as JSON lines through a buffer.
pub struct Writer<W: Write> {
    out: BufWriter<W>,
}

impl<W: Write> Writer<W> {
    /// A writer to `out`, buffered.
    pub fn new(out: W) -> Self {
        Writer { out: BufWriter::with_capacity(256 * 1024, out) }
    }
}

impl<W: Write> EventSink for Writer<W> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, event)?;
        self.out.write_all(b"\n")
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// A [`Writer`] to a file that gets its final name when finished.
struct FileWriter(Option<Writer<AtomicFile>>);

impl EventSink for FileWriter {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.0.as_mut().expect("no event after finish").event(event)
    }

    fn finish(&mut self) -> io::Result<()> {
        let writer = self.0.take().expect("finish is called once");
        writer.out.into_inner().map_err(io::IntoInnerError::into_error)?.commit()
    }
}
