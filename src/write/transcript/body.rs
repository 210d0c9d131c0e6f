//! A session's rendered sections, held until the session ends so that its header can say what
//! only the end knows (title, end, totals), and so that each subagent's sections can be placed
//! under the call that spawned it. Held in memory up to a few MiB, then in an anonymous
//! temporary file: a session of any size renders in bounded memory.

use std::io::{self, Read, Seek, SeekFrom, Write};

use tempfile::SpooledTempFile;

/// Bytes held in memory before the rest goes to a temporary file.
const IN_MEMORY: usize = 4 << 20;

/// One piece of the body, in the order it was rendered.
enum Piece {
    /// Bytes `start..end` of the spool, rendered for thread `thread` (0: the main thread).
    Text { thread: usize, start: u64, end: u64 },
    /// The place of the subagent spawned by the main thread's call `call_id`.
    Spawn { call_id: String, label: Option<String> },
}

/// The sections of one session, by thread.
pub struct Body {
    spool: SpooledTempFile,
    len: u64,
    pieces: Vec<Piece>,
    /// Subagent threads: their id and the call that spawned them, when known. Thread `i + 1`
    /// is `threads[i]`.
    threads: Vec<(String, Option<String>)>,
    /// The thread being written.
    current: usize,
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

impl Body {
    /// An empty body.
    pub fn new() -> Self {
        Body { spool: SpooledTempFile::new(IN_MEMORY), len: 0, pieces: Vec::new(), threads: Vec::new(), current: 0 }
    }

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

    /// Marks the place of the subagent spawned by the main thread's call `call_id`.
    /// `label` says what the subagent was asked to do.
    pub fn spawn(&mut self, call_id: &str, label: Option<&str>) {
        self.pieces.push(Piece::Spawn { call_id: call_id.to_owned(), label: label.map(str::to_owned) });
    }

    /// Writes the main thread's sections, each subagent's placed under its spawning call (or,
    /// when that call is not in the session, after everything else), into `out`.
    ///
    /// # Errors
    /// When reading the spool back or writing fails.
    pub fn copy_to(mut self, frame: &mut dyn Frame, out: &mut dyn Write) -> io::Result<()> {
        let mut placed = vec![false; self.threads.len()];
        let pieces = std::mem::take(&mut self.pieces);
        for piece in &pieces {
            match piece {
                Piece::Text { thread: 0, start, end } => self.copy(*start, *end, out)?,
                Piece::Text { .. } => {}
                Piece::Spawn { call_id, label } => {
                    let spawned = self.threads.iter().position(|(_, c)| c.as_deref() == Some(call_id));
                    if let Some(i) = spawned.filter(|i| !placed[*i]) {
                        placed[i] = true;
                        self.subagent(i, label.as_deref(), &pieces, frame, out)?;
                    }
                }
            }
        }
        let strays: Vec<usize> = placed.iter().enumerate().filter(|(_, p)| !**p).map(|(i, _)| i).collect();
        for i in strays {
            self.subagent(i, None, &pieces, frame, out)?;
        }
        Ok(())
    }

    fn subagent(
        &mut self,
        i: usize,
        label: Option<&str>,
        pieces: &[Piece],
        frame: &mut dyn Frame,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        frame.open(&self.threads[i].0, label, out)?;
        for piece in pieces {
            if let Piece::Text { thread, start, end } = piece
                && *thread == i + 1
            {
                self.copy(*start, *end, out)?;
            }
        }
        frame.close(out)
    }

    fn copy(&mut self, start: u64, end: u64, out: &mut dyn Write) -> io::Result<()> {
        self.spool.seek(SeekFrom::Start(start))?;
        let copied = io::copy(&mut (&mut self.spool).take(end - start), out)?;
        if copied < end - start {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a held-back transcript ends early"));
        }
        Ok(())
    }
}

impl Write for Body {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.spool.seek(SeekFrom::Start(self.len))?;
        let n = self.spool.write(buf)?;
        let (start, end) = (self.len, self.len + n as u64);
        self.len = end;
        match self.pieces.last_mut() {
            Some(Piece::Text { thread, end: last, .. }) if *thread == self.current && *last == start => *last = end,
            _ => self.pieces.push(Piece::Text { thread: self.current, start, end }),
        }
        Ok(n)
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
        let mut body = Body::new();
        body.write_all(b"a ").unwrap();
        body.spawn("call-1", Some("/do"));
        body.write_all(b"b ").unwrap();
        body.thread(Some("x"), Some("call-1"));
        body.write_all(b"x1 ").unwrap();
        body.thread(None, None);
        body.write_all(b"c ").unwrap();
        body.thread(Some("y"), None);
        body.write_all(b"y1").unwrap();
        body.thread(Some("x"), None);
        body.write_all(b"x2").unwrap();
        let mut out = Vec::new();
        body.copy_to(&mut Brackets, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a [x/do:x1 x2]b c [y:y1]");
    }

    #[test]
    fn a_long_body_spills_and_comes_back_whole() {
        let mut body = Body::new();
        let line = "0123456789abcdef".repeat(64);
        for _ in 0..(IN_MEMORY / line.len() + 10) {
            body.write_all(line.as_bytes()).unwrap();
        }
        assert!(body.spool.is_rolled(), "spilled to a file");
        let mut out = Vec::new();
        body.copy_to(&mut Brackets, &mut out).unwrap();
        assert_eq!(out.len(), (IN_MEMORY / line.len() + 10) * line.len());
        assert!(out.chunks(line.len()).all(|c| c == line.as_bytes()));
    }
}
