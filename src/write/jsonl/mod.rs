//! The normalised JSONL writer (`--to unified`, alias `jsonl`).
//!
//! Wire format: one [`Event`] per line as compact JSON, UTF-8, `\n` after every line, in the
//! order the readers emit them. Every line validates against `schema/event.schema.json`; every
//! field is present on every line (`null` when unknown). New event kinds, meta types and
//! fields may appear in later minor schema versions; readers of this format should ignore what
//! they do not know. Memory: one 256 KiB output buffer. The writer hands out its encoder
//! ([`EventSink::encoder`]), so that callers with several threads can encode events where they
//! read them and pass it blocks of lines.
//!
//! With `-o DIR/` (an existing directory or a path ending in `/`) each session gets a file of
//! its own, `DIR/<agent>/<agent>-<session id>.jsonl` (the id reduced to safe characters). Files
//! are written under temporary names and renamed when the run completes, replacing a previous
//! run's files of the same sessions and leaving the others; at most 64 are open at once.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use crate::model::{Agent, Event};
use crate::write::{
    AtomicFile, EncodedSink, Encoder, EventSink, Options, Target, WriteError, Writer as Format, create_temporary,
    encode, forget_temporary, is_directory_target, remove_temporary, session_file_name, temporary_path, unsupported,
};

/// The JSONL writer.
pub struct Jsonl;

impl Format for Jsonl {
    fn name(&self) -> &'static str {
        "unified"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["jsonl"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["jsonl", "ndjson"]
    }

    fn description(&self) -> &'static str {
        "normalised JSONL, one unified event per line"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        if !options.partition_by.is_empty() {
            return Err(unsupported("--partition-by", self.name()));
        }
        Ok(match target {
            Target::Stream(out) => Box::new(Writer::new(out)),
            Target::Path(dir) if is_directory_target(&dir) => Box::new(PerSession::new(dir)),
            Target::Path(path) => Box::new(FileWriter(Some(Writer::new(AtomicFile::create(&path)?)))),
        })
    }
}

/// Bytes of output gathered before they are written.
const BUFFER: usize = 256 * 1024;

/// Writes events as JSON lines through a buffer.
pub struct Writer<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// A writer to `out`, buffered.
    pub fn new(out: W) -> Self {
        Writer { out, buf: Vec::with_capacity(BUFFER + 64 * 1024) }
    }

    /// Writes the buffer once it is full.
    fn spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= BUFFER {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is buffered and flushes `out`.
    fn drain(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()
    }
}

impl<W: Write> EventSink for Writer<W> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        encode::event(event, &mut self.buf);
        self.spill()
    }

    fn encoded(&mut self) -> Option<&mut dyn EncodedSink> {
        Some(self)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.drain()
    }
}

impl<W: Write> EncodedSink for Writer<W> {
    fn encoder(&self) -> Encoder {
        encode::event
    }

    fn write_encoded(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.buf.is_empty() && bytes.len() >= BUFFER {
            return self.out.write_all(bytes);
        }
        self.buf.extend_from_slice(bytes);
        self.spill()
    }
}

/// A [`Writer`] to a file that gets its final name when finished.
struct FileWriter(Option<Writer<AtomicFile>>);

impl FileWriter {
    fn writer(&mut self) -> &mut Writer<AtomicFile> {
        self.0.as_mut().expect("no event after finish")
    }
}

impl EventSink for FileWriter {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.writer().event(event)
    }

    fn encoded(&mut self) -> Option<&mut dyn EncodedSink> {
        Some(self)
    }

    fn finish(&mut self) -> io::Result<()> {
        let mut writer = self.0.take().expect("finish is called once");
        writer.drain()?;
        writer.out.commit()
    }
}

impl EncodedSink for FileWriter {
    fn encoder(&self) -> Encoder {
        encode::event
    }

    fn write_encoded(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer().write_encoded(bytes)
    }

    fn write_encoded_from(&mut self, from: &File, at: u64, len: u64) -> io::Result<()> {
        let writer = self.writer();
        writer.drain()?;
        writer.out.copy_from(from, at, len)
    }
}

/// Files open at once in a per-session directory.
const MAX_OPEN: usize = 64;

/// One JSONL file per session under a directory.
struct PerSession {
    dir: PathBuf,
    /// Temporary and final path of every session seen.
    files: HashMap<(Agent, String), (PathBuf, PathBuf)>,
    names: HashSet<String>,
    /// Open temporary files, with the tick of their last use.
    open: HashMap<(Agent, String), (BufWriter<File>, u64)>,
    tick: u64,
    /// The line being written.
    line: Vec<u8>,
    /// Sessions whose file is synced to disk.
    synced: HashSet<(Agent, String)>,
    committed: bool,
}

impl PerSession {
    fn new(dir: PathBuf) -> Self {
        PerSession {
            dir,
            files: HashMap::new(),
            names: HashSet::new(),
            open: HashMap::new(),
            tick: 0,
            line: Vec::new(),
            synced: HashSet::new(),
            committed: false,
        }
    }
}

impl EventSink for PerSession {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        let key = (event.agent, event.session_id.clone());
        self.tick += 1;
        if !self.open.contains_key(&key) {
            if self.open.len() >= MAX_OPEN
                && let Some(oldest) = self.open.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone())
            {
                let (mut file, _) = self.open.remove(&oldest).expect("found above");
                file.flush()?;
            }
            let (temp, _) = match self.files.get(&key) {
                Some(paths) => paths.clone(),
                None => {
                    let sub = self.dir.join(event.agent.as_str());
                    fs::create_dir_all(&sub)?;
                    let name = session_file_name(event.agent, &event.session_id, "jsonl", &mut self.names);
                    let path = sub.join(name);
                    let paths = (temporary_path(&path), path);
                    // A temporary file left by an earlier, failed run is started afresh.
                    create_temporary(&paths.0)?;
                    self.files.insert(key.clone(), paths.clone());
                    paths
                }
            };
            let file = OpenOptions::new().append(true).open(&temp)?;
            self.open.insert(key.clone(), (BufWriter::with_capacity(64 * 1024, file), 0));
        }
        let (out, used) = self.open.get_mut(&key).expect("opened above");
        *used = self.tick;
        self.line.clear();
        encode::event(event, &mut self.line);
        out.write_all(&self.line)
    }

    fn finish(&mut self) -> io::Result<()> {
        for (key, (mut file, _)) in self.open.drain() {
            file.flush()?;
            file.get_ref().sync_all()?;
            self.synced.insert(key);
        }
        // Files closed earlier to stay under MAX_OPEN were flushed but not synced.
        for (key, (temp, _)) in &self.files {
            if !self.synced.contains(key) {
                File::open(temp)?.sync_all()?;
            }
        }
        let mut files: Vec<&(PathBuf, PathBuf)> = self.files.values().collect();
        files.sort();
        for (temp, path) in files {
            fs::rename(temp, path)?;
            forget_temporary(temp);
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for PerSession {
    fn drop(&mut self) {
        if !self.committed {
            for (temp, _) in self.files.values() {
                remove_temporary(temp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Seek, SeekFrom};

    use super::*;

    /// A file holding `text`, as a reading thread holds encoded events back.
    fn held(text: &[u8]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(text).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file
    }

    #[test]
    fn events_copied_from_a_file_come_after_those_buffered_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let mut sink = Jsonl.open(Target::Path(path.clone()), &Options::default()).unwrap();
        let from = held(b"xx{\"b\":2}\n{\"c\":3}\nyy");
        sink.encoded().unwrap().write_encoded(b"{\"a\":1}\n").unwrap();
        sink.encoded().unwrap().write_encoded_from(&from, 2, 16).unwrap();
        sink.encoded().unwrap().write_encoded(b"{\"d\":4}\n").unwrap();
        sink.finish().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"d\":4}\n");
    }

    #[test]
    fn a_held_back_range_that_ends_early_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let from = held(b"{\"b\":2}\n");
        for target in [Target::Path(dir.path().join("out.jsonl")), Target::Stream(Box::new(Vec::new()))] {
            let mut sink = Jsonl.open(target, &Options::default()).unwrap();
            let error = sink.encoded().unwrap().write_encoded_from(&from, 0, 9).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
        }
    }
}
