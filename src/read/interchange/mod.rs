//! Reader for agentlog's interchange documents (`--from interchange`): the events of every
//! session pass through unchanged, read as a stream.

mod walk;

use std::io;

pub use walk::walk_document;

use crate::model::{Agent, Event};
use crate::read::{Emitter, Head, Input, InputDiagnostic, Problem, ReadReport, Reader};

/// The interchange reader.
pub struct Interchange;

impl Reader for Interchange {
    fn name(&self) -> &'static str {
        "interchange"
    }

    fn agent(&self) -> Option<Agent> {
        None
    }

    fn description(&self) -> &'static str {
        "agentlog interchange documents, as written by --to interchange"
    }

    fn sniff(&self, head: &Head<'_>) -> bool {
        let t = head.first_line.trim_start();
        (t.starts_with("{\"schema_version\"") && t.contains("\"header\""))
            || head.records.first().is_some_and(|r| r.get("header").is_some() && r.get("sessions").is_some())
    }

    /// Lines are counted as the document's lines: all mapped when it reads whole; when it does
    /// not, the line where reading stopped is the one diagnosed.
    fn read(&self, input: Input<'_>, out: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        let Input { name, bytes, .. } = input;
        let mut counter = LineCounter { inner: bytes, lines: 0, blank: true };
        let mut emitter = Emitter::new(Agent::ClaudeCode, name, out);
        let mut failed: Option<io::Error> = None;
        let walked = walk_document(&mut counter, &mut |_, _, raw| {
            let event: Event = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            emitter.pass(event).map_err(|e| {
                let message = e.to_string();
                failed = Some(e);
                message
            })
        });
        if let Some(e) = failed {
            return Err(e);
        }
        let events = emitter.count();
        Ok(match walked {
            Ok(_) => ReadReport { lines: counter.lines, lines_mapped: counter.lines, events, ..ReadReport::default() },
            Err(e) if e.is_io() => return Err(e.into()),
            Err(e) => {
                // Count the lines the parser did not reach.
                io::copy(&mut counter, &mut io::sink())?;
                let lines = counter.lines;
                if lines == 0 {
                    return Ok(ReadReport::default());
                }
                let problem = Problem::from_json(&e);
                let line = (e.line() as u64).max(1);
                let diagnostic = InputDiagnostic::new(name, line, "", problem);
                ReadReport {
                    lines,
                    lines_mapped: lines - 1,
                    lines_diagnosed: 1,
                    events,
                    diagnostics: vec![diagnostic],
                    more_diagnostics: 0,
                }
            }
        })
    }
}

/// Counts the non-empty lines of what passes through it.
struct LineCounter<R> {
    inner: R,
    lines: u64,
    /// Whether the current line has been blank so far.
    blank: bool,
}

impl<R: io::Read> io::Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !self.blank {
            // A last line without a line ending.
            self.lines += 1;
            self.blank = true;
        }
        for &b in &buf[..n] {
            if b == b'\n' {
                if !self.blank {
                    self.lines += 1;
                }
                self.blank = true;
            } else if !b.is_ascii_whitespace() {
                self.blank = false;
            }
        }
        Ok(n)
    }
}
