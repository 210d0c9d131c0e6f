//! Sessions' rendered sections, held until a session ends so that its header can say what only
//! the end knows (title, end, totals), and so that each subagent's sections can be placed under
//! the call that spawned it, whenever its file is read. The sessions being rendered share one
//! [`Spool`]: in memory up to a few MiB, then an anonymous temporary file, so that any number of
//! sessions of any size render in bounded memory; each [`Body`] only lists its pieces.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::write::{SizedWrite, copy_range};

/// Bytes held in memory before the rest goes to a temporary file.
const IN_MEMORY: usize = 8 << 20;

/// Bytes a body gathers before they go to the spool as one piece: sessions whose events
/// interleave would otherwise make a piece of every event.
const CHUNK: usize = 16 << 10;

/// Bytes all bodies may gather before every body hands its bytes to the spool.
pub const GATHERED: usize = 4 << 20;

/// Where the bytes of the sessions being rendered are: in memory, or, past [`IN_MEMORY`], in a
/// temporary file.
pub struct Spool {
    bytes: Vec<u8>,
    file: Option<BufWriter<File>>,
    len: u64,
    /// Bytes the bodies gathered and have not handed over yet.
    gathered: usize,
    /// Whether the file has bytes not yet flushed to it, which reading back must flush first.
    dirty: bool,
}

impl Spool {
    /// An empty spool.
    pub fn new() -> Self {
        Spool { bytes: Vec::new(), file: None, len: 0, gathered: 0, dirty: false }
    }

    /// Appends `buf`; gives the range it takes.
    fn append(&mut self, buf: &[u8]) -> io::Result<(u64, u64)> {
        if self.file.is_none() && self.bytes.len() + buf.len() > IN_MEMORY {
            let mut file = BufWriter::with_capacity(256 * 1024, tempfile::tempfile()?);
            file.write_all(&self.bytes)?;
            self.bytes = Vec::new();
            self.file = Some(file);
        }
        match &mut self.file {
            Some(file) => {
                file.write_all(buf)?;
                self.dirty = true;
            }
            None => self.bytes.extend_from_slice(buf),
        }
        let start = self.len;
        self.len += buf.len() as u64;
        Ok((start, self.len))
    }

    /// Writes bytes `start..end` to `out`.
    fn copy(&mut self, start: u64, end: u64, out: &mut dyn Write) -> io::Result<()> {
        match &mut self.file {
            None => out.write_all(&self.bytes[start as usize..end as usize]),
            Some(file) => {
                if self.dirty {
                    file.flush()?;
                    self.dirty = false;
                }
                copy_range(file.get_ref(), start, end - start, &mut SizedWrite(out))
            }
        }
    }

    /// Bytes the bodies gathered and have not handed over yet; past [`GATHERED`], the caller
    /// has every body hand them over ([`Body::hand_over`]).
    pub fn gathered(&self) -> usize {
        self.gathered
    }

    /// Forgets everything: no body refers to it any more.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.file = None;
        self.len = 0;
        self.gathered = 0;
        self.dirty = false;
    }
}

/// One piece of a body, in the order it was rendered.
enum Piece {
    /// Bytes `start..end` of the spool, rendered for thread `thread` (0: the main thread).
    Text { thread: usize, start: u64, end: u64 },
    /// The place of the subagent spawned by the main thread's call `call_id`.
    Spawn { call_id: String, label: Option<String> },
}

/// The sections of one session, by thread.
#[derive(Default)]
pub struct Body {
    pieces: Vec<Piece>,
    /// Subagent threads: their id and the call that spawned them, when known. Thread `i + 1`
    /// is `threads[i]`.
    threads: Vec<(String, Option<String>)>,
    /// The thread being written.
    current: usize,
    /// Bytes written and not yet in the spool, and their thread.
    gathered: Vec<u8>,
    gathered_thread: usize,
}

/// How a subagent's sections are framed where they are placed.
pub trait Frame {
    /// Writes what comes before a subagent's sections; `label` says what it was asked to do.
    ///
    /// # Errors
    /// When writing fails.
    fn open(&mut self, agent_id: &str, label: Option<&str>, out: &mut dyn Write) -> io::Result<()>;

    /// Writes what comes after them.
    ///
    /// # Errors
    /// When writing fails.
    fn close(&mut self, out: &mut dyn Write) -> io::Result<()>;
}

/// Writes into a body, its bytes kept in the spool.
pub struct BodyWriter<'a> {
    body: &'a mut Body,
    spool: &'a mut Spool,
}

impl Body {
    /// Writes from now on into subagent `agent_id`'s sections (`None`: the main thread's); the
    /// subagent was spawned by call `call_id`, when known.
    pub fn thread(&mut self, agent_id: Option<&str>, call_id: Option<&str>) {
        self.current = match agent_id {
            None => 0,
            Some(id) => match self.threads.iter().position(|(t, _)| t == id) {
                Some(i) => {
                    if self.threads[i].1.is_none() {
                        self.threads[i].1 = call_id.map(str::to_owned);
                    }
                    i + 1
                }
                None => {
                    self.threads.push((id.to_owned(), call_id.map(str::to_owned)));
                    self.threads.len()
                }
            },
        };
    }

    /// Marks the place of the subagent spawned by the main thread's call `call_id`; `label`
    /// says what the subagent was asked to do.
    ///
    /// # Errors
    /// When the spool cannot be written.
    pub fn spawn(&mut self, spool: &mut Spool, call_id: &str, label: Option<&str>) -> io::Result<()> {
        self.hand_over(spool)?;
        self.pieces.push(Piece::Spawn { call_id: call_id.to_owned(), label: label.map(str::to_owned) });
        Ok(())
    }

    /// Moves the bytes gathered so far into the spool, as a piece of their thread.
    ///
    /// # Errors
    /// When the spool cannot be written.
    pub fn hand_over(&mut self, spool: &mut Spool) -> io::Result<()> {
        if self.gathered.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::take(&mut self.gathered);
        spool.gathered -= bytes.len();
        let (start, end) = spool.append(&bytes)?;
        let thread = self.gathered_thread;
        match self.pieces.last_mut() {
            Some(Piece::Text { thread: t, end: last, .. }) if *t == thread && *last == start => *last = end,
            _ => self.pieces.push(Piece::Text { thread, start, end }),
        }
        Ok(())
    }

    /// A writer into the thread being written, keeping the bytes in `spool`.
    pub fn writer<'a>(&'a mut self, spool: &'a mut Spool) -> BodyWriter<'a> {
        BodyWriter { body: self, spool }
    }

    /// Writes the main thread's sections, each subagent's placed under its spawning call (or,
    /// when that call is not in the session, after everything else), into `out`.
    ///
    /// # Errors
    /// When reading the spool back or writing fails.
    pub fn copy_to(mut self, spool: &mut Spool, frame: &mut dyn Frame, out: &mut dyn Write) -> io::Result<()> {
        self.hand_over(spool)?;
        let mut placed = vec![false; self.threads.len()];
        for piece in &self.pieces {
            match piece {
                Piece::Text { thread: 0, start, end } => spool.copy(*start, *end, out)?,
                Piece::Text { .. } => {}
                Piece::Spawn { call_id, label } => {
                    let spawned = self.threads.iter().position(|(_, c)| c.as_deref() == Some(call_id));
                    if let Some(i) = spawned.filter(|i| !placed[*i]) {
                        placed[i] = true;
                        self.subagent(i, label.as_deref(), spool, frame, out)?;
                    }
                }
            }
        }
        let strays: Vec<usize> = placed.iter().enumerate().filter(|(_, p)| !**p).map(|(i, _)| i).collect();
        for i in strays {
            self.subagent(i, None, spool, frame, out)?;
        }
        Ok(())
    }

    fn subagent(
        &self,
        i: usize,
        label: Option<&str>,
        spool: &mut Spool,
        frame: &mut dyn Frame,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        frame.open(&self.threads[i].0, label, out)?;
        for piece in &self.pieces {
            if let Piece::Text { thread, start, end } = piece
                && *thread == i + 1
            {
                spool.copy(*start, *end, out)?;
            }
        }
        frame.close(out)
    }
}

impl Write for BodyWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let body = &mut *self.body;
        if body.gathered_thread != body.current {
            body.hand_over(self.spool)?;
            body.gathered_thread = body.current;
        }
        body.gathered.extend_from_slice(buf);
        self.spool.gathered += buf.len();
        if body.gathered.len() >= CHUNK {
            body.hand_over(self.spool)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Brackets;

    impl Frame for Brackets {
        fn open(&mut self, agent_id: &str, label: Option<&str>, out: &mut dyn Write) -> io::Result<()> {
            write!(out, "[{agent_id}{}:", label.unwrap_or_default())
        }

        fn close(&mut self, out: &mut dyn Write) -> io::Result<()> {
            write!(out, "]")
        }
    }

    #[test]
    fn subagents_go_under_their_call_and_strays_at_the_end() {
        let (mut spool, mut body, mut other) = (Spool::new(), Body::default(), Body::default());
        body.writer(&mut spool).write_all(b"a ").unwrap();
        body.spawn(&mut spool, "call-1", Some("/do")).unwrap();
        body.writer(&mut spool).write_all(b"b ").unwrap();
        other.writer(&mut spool).write_all(b"other").unwrap();
        body.thread(Some("x"), Some("call-1"));
        body.writer(&mut spool).write_all(b"x1 ").unwrap();
        body.thread(None, None);
        body.writer(&mut spool).write_all(b"c ").unwrap();
        body.thread(Some("y"), None);
        body.writer(&mut spool).write_all(b"y1").unwrap();
        body.thread(Some("x"), None);
        body.writer(&mut spool).write_all(b"x2").unwrap();
        let mut out = Vec::new();
        body.copy_to(&mut spool, &mut Brackets, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a [x/do:x1 x2]b c [y:y1]");
        let mut out = Vec::new();
        other.copy_to(&mut spool, &mut Brackets, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "other");
    }

    #[test]
    fn interleaved_sessions_make_pieces_of_a_chunk_not_of_a_write() {
        let (mut spool, mut a, mut b) = (Spool::new(), Body::default(), Body::default());
        for i in 0..10_000 {
            write!(a.writer(&mut spool), "a{i} ").unwrap();
            write!(b.writer(&mut spool), "b{i} ").unwrap();
        }
        assert!(a.pieces.len() < 10 && b.pieces.len() < 10, "{} {}", a.pieces.len(), b.pieces.len());
        let mut out = Vec::new();
        a.copy_to(&mut spool, &mut Brackets, &mut out).unwrap();
        let expected: String = (0..10_000).map(|i| format!("a{i} ")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn a_long_body_spills_and_comes_back_whole() {
        let (mut spool, mut body) = (Spool::new(), Body::default());
        let line = "0123456789abcdef".repeat(64);
        let lines = (IN_MEMORY + 2 * CHUNK) / line.len() + 10;
        for _ in 0..lines {
            body.writer(&mut spool).write_all(line.as_bytes()).unwrap();
        }
        assert!(spool.file.is_some(), "spilled to a file");
        let mut out = Vec::new();
        body.copy_to(&mut spool, &mut Brackets, &mut out).unwrap();
        assert_eq!(out.len(), lines * line.len());
        assert!(out.chunks(line.len()).all(|c| c == line.as_bytes()));
    }
}
