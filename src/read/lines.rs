//! The line loop every line-based reader goes through ([`read_lines`]): lines are read with a
//! length limit, parsed (on the run's pool while it has idle threads, in chunks), accounted for
//! (mapped, or diagnosed once), and mapped in order; values repaired or rejected while a line
//! was parsed become that line's warnings.

use std::io::{self, BufRead};

use super::settings::KEPT_OF_LONG_LINE;
use super::{
    Emitter, InputDiagnostic, Line, LineMapper, LineParser, Problem, ReadReport, Settings, diagnostic, lenient,
};
use crate::model::{Agent, Event};

/// Input bytes parsed as one unit on another thread.
const PARSE_CHUNK_BYTES: usize = 1 << 20;

/// Chunks of one input parsed ahead of the one being mapped; bounds memory.
const CHUNKS_AHEAD: usize = 4;

/// Reads the input `name` line by line: `parser` parses the lines (on the run's pool while it
/// has idle threads), `mapper` takes them in order. Keeps the line accounting.
///
/// # Errors
/// I/O errors from the input or from `out`.
pub fn read_lines<P: LineParser>(
    agent: Agent,
    name: &str,
    mut bytes: Box<dyn BufRead + '_>,
    settings: &Settings,
    parser: &P,
    mapper: &mut dyn LineMapper<P::Parsed>,
    out: &mut dyn FnMut(Event) -> io::Result<()>,
) -> io::Result<ReadReport> {
    let _reading = settings.reading();
    let mut lines =
        Lines { name, settings, report: ReadReport::default(), number: 0, offset: 0, at_end: false, spare: Vec::new() };
    let mut emitter = Emitter::new(agent, name, out);
    lines.read(&mut *bytes, parser, mapper, &mut emitter)?;
    mapper.finish(&mut emitter)?;
    lines.report.events = emitter.count();
    Ok(lines.report)
}

/// The line accounting of one input, and where its next line starts.
struct Lines<'n> {
    name: &'n str,
    settings: &'n Settings,
    report: ReadReport,
    /// Lines read so far, blank ones included.
    number: u64,
    offset: u64,
    /// Whether the input has ended: it is not read again (a terminal would wait for more).
    at_end: bool,
    /// Chunk buffers already mapped, to be filled again.
    spare: Vec<Vec<u8>>,
}

/// One non-blank line: where it is in the input, and where in the buffer it was read into.
struct ChunkLine {
    number: u64,
    offset: u64,
    /// The line's bytes within the buffer, without the line ending.
    range: std::ops::Range<usize>,
    /// Whether a line ending followed (the last line of an input may lack one).
    terminated: bool,
    /// The line's length when it was longer than the limit: only its start is in the buffer.
    length: Option<u64>,
}

/// Consecutive lines of an input, owned so that another thread can parse them.
struct Chunk {
    text: Vec<u8>,
    lines: Vec<ChunkLine>,
}

impl Lines<'_> {
    /// Reads lines and maps them in order. While [`Settings::parse_on_pool`] says so, chunks of lines
    /// are read ahead and parsed on the pool; otherwise each line is parsed here, just before
    /// it is mapped.
    fn read<P: LineParser>(
        &mut self,
        bytes: &mut dyn BufRead,
        parser: &P,
        mapper: &mut dyn LineMapper<P::Parsed>,
        out: &mut Emitter<'_>,
    ) -> io::Result<()> {
        type Parsed<T> = std::thread::Result<Vec<Take<T>>>;
        let mut pending = std::collections::VecDeque::with_capacity(CHUNKS_AHEAD);
        let mut buf = Vec::new();
        loop {
            while !self.at_end && pending.len() < CHUNKS_AHEAD && self.settings.parse_on_pool() {
                let chunk = self.next_chunk(bytes)?;
                if chunk.lines.is_empty() {
                    break;
                }
                let (to, from) = std::sync::mpsc::sync_channel::<(Chunk, Parsed<P::Parsed>)>(1);
                let parser = parser.clone();
                let settings = self.settings.clone();
                self.settings.spawn(move || {
                    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        chunk.lines.iter().map(|l| take(&parser, &settings, l, &chunk.text[l.range.clone()])).collect()
                    }));
                    let _ = to.send((chunk, parsed));
                });
                pending.push_back(from);
            }
            let Some(from) = pending.pop_front() else {
                if self.read_in_place(bytes, parser, mapper, out)? {
                    continue;
                }
                buf.clear();
                let Some(line) = self.next_line(bytes, &mut buf, 0)? else { return Ok(()) };
                let content = &buf[line.range.clone()];
                let Some((parsed, repairs)) =
                    self.unless_parsed(take(parser, self.settings, &line, content), mapper, out)?
                else {
                    continue;
                };
                let parsed = self.account(&line, content, parsed, repairs);
                let_go_if_long(&mut buf);
                if let Some(parsed) = parsed {
                    mapper.map(parsed, out)?;
                    let content = buf.get(line.range.clone()).unwrap_or_default();
                    self.note_repairs(&line, content, notes_in(content, None));
                }
                continue;
            };
            let (chunk, parsed) = from.recv().map_err(|_| io::Error::other("a parsing thread stopped"))?;
            let parsed = parsed.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let Chunk { mut text, lines } = chunk;
            for (i, (line, parsed)) in lines.iter().zip(parsed).enumerate() {
                let Some((parsed, repairs)) = self.unless_parsed(parsed, mapper, out)? else { continue };
                let content = &text[line.range.clone()];
                let parsed = self.account(line, content, parsed, repairs);
                // Only a chunk's last line can be long: a chunk ends after PARSE_CHUNK_BYTES.
                if i + 1 == lines.len() {
                    let_go_if_long(&mut text);
                }
                if let Some(parsed) = parsed {
                    mapper.map(parsed, out)?;
                    let content = text.get(line.range.clone()).unwrap_or_default();
                    self.note_repairs(line, content, notes_in(content, None));
                }
            }
            if text.capacity() > 0 {
                text.clear();
                self.spare.push(text);
            }
        }
    }

    /// Reads the next line where the input holds it, when it is whole in the input's buffer
    /// and within the length limit: parses and maps it without copying it, as
    /// [`Lines::read`] does a copy. False, having read nothing, for any other line, and at
    /// the end of input.
    fn read_in_place<P: LineParser>(
        &mut self,
        bytes: &mut dyn BufRead,
        parser: &P,
        mapper: &mut dyn LineMapper<P::Parsed>,
        out: &mut Emitter<'_>,
    ) -> io::Result<bool> {
        if self.at_end {
            return Ok(false);
        }
        let available = match bytes.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(false),
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            self.at_end = true;
            return Ok(false);
        }
        let Some(end) = memchr::memchr(b'\n', available).filter(|end| *end < self.settings.max_line_bytes()) else {
            return Ok(false);
        };
        let read = end + 1;
        self.number += 1;
        let offset = self.offset;
        self.offset += read as u64;
        let content = trim_line_end(&available[..read]);
        if !content.iter().all(u8::is_ascii_whitespace) {
            let line =
                ChunkLine { number: self.number, offset, range: 0..content.len(), terminated: true, length: None };
            if let Some((parsed, repairs)) =
                self.unless_parsed(take(parser, self.settings, &line, content), mapper, out)?
                && let Some(parsed) = self.account(&line, content, parsed, repairs)
            {
                mapper.map(parsed, out)?;
                self.note_repairs(&line, content, notes_in(content, None));
            }
        }
        bytes.consume(read);
        Ok(true)
    }

    /// Counts a line skipped or skimmed, mapping what was skimmed of it; gives a line parsed
    /// whole back, to be counted with its problems.
    fn unless_parsed<T>(
        &mut self,
        take: Take<T>,
        mapper: &mut dyn LineMapper<T>,
        out: &mut Emitter<'_>,
    ) -> io::Result<Option<Whole<T>>> {
        match take {
            Take::Parsed(parsed) => return Ok(Some(parsed)),
            Take::Skipped => {}
            Take::Skimmed(parsed) => mapper.map(parsed, out)?,
        }
        self.report.lines += 1;
        Ok(None)
    }

    /// Reads whole lines until the chunk holds [`PARSE_CHUNK_BYTES`]; no lines at the end of input.
    fn next_chunk(&mut self, bytes: &mut dyn BufRead) -> io::Result<Chunk> {
        let text = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(PARSE_CHUNK_BYTES + 64 * 1024));
        let mut chunk = Chunk { text, lines: Vec::new() };
        while chunk.text.len() < PARSE_CHUNK_BYTES {
            let start = chunk.text.len();
            match self.next_line(bytes, &mut chunk.text, start)? {
                Some(line) => chunk.lines.push(line),
                None => break,
            }
        }
        Ok(chunk)
    }

    /// Appends the next non-blank line to `buf` (from `start`, blank lines dropped); `None` at
    /// the end of input.
    fn next_line(&mut self, bytes: &mut dyn BufRead, buf: &mut Vec<u8>, start: usize) -> io::Result<Option<ChunkLine>> {
        let limit = self.settings.max_line_bytes();
        while !self.at_end {
            let (read, too_long) = read_line(bytes, buf, limit)?;
            if read == 0 {
                self.at_end = true;
                break;
            }
            self.number += 1;
            let offset = self.offset;
            self.offset += read as u64;
            let line = &buf[start..];
            let terminated = line.last() == Some(&b'\n');
            let content = trim_line_end(line);
            if content.iter().all(u8::is_ascii_whitespace) {
                buf.truncate(start);
                continue;
            }
            let range = start..start + content.len();
            let length = too_long.then_some(read as u64 - u64::from(terminated));
            return Ok(Some(ChunkLine { number: self.number, offset, range, terminated, length }));
        }
        Ok(None)
    }

    /// Counts one parsed line; keeps its diagnostic if it failed, and the diagnostics of the
    /// values repaired in it if it did not.
    fn account<T>(
        &mut self,
        line: &ChunkLine,
        content: &[u8],
        parsed: Result<T, Problem>,
        repairs: Vec<Problem>,
    ) -> Option<T> {
        self.report.lines += 1;
        match parsed {
            Ok(parsed) => {
                self.report.lines_mapped += 1;
                self.note_repairs(line, content, repairs);
                Some(parsed)
            }
            Err(p) => {
                self.report.lines_diagnosed += 1;
                let p = if line.terminated { p } else { p.at_end_of_input() };
                self.report.push(|| InputDiagnostic::new(self.name, line.number, &String::from_utf8_lossy(content), p));
                None
            }
        }
    }

    /// Keeps a diagnostic for each value changed in a mapped line.
    #[inline]
    fn note_repairs(&mut self, line: &ChunkLine, content: &[u8], repairs: Vec<Problem>) {
        if !repairs.is_empty() {
            self.note_repairs_slow(line, content, repairs);
        }
    }

    #[inline(never)]
    fn note_repairs_slow(&mut self, line: &ChunkLine, content: &[u8], repairs: Vec<Problem>) {
        for p in repairs {
            let text = String::from_utf8_lossy(content);
            self.report.push(|| InputDiagnostic::new(self.name, line.number, &text, p).kept());
        }
    }
}

/// Frees a buffer that held a long line, once the line is parsed: its events are written
/// without it beside them, and it is not kept for the next lines. Values repaired while the
/// line is mapped are then reported without a column.
fn let_go_if_long(buf: &mut Vec<u8>) {
    if buf.capacity() > LONG_LINE_BYTES {
        *buf = Vec::new();
    }
}

/// Buffers that grew past this to hold a line are freed once it is parsed.
const LONG_LINE_BYTES: usize = 4 * PARSE_CHUNK_BYTES;

/// How much of a line a run reads.
enum Take<T> {
    /// None of it.
    Skipped,
    /// What other lines need of it ([`LineParser::skim`]).
    Skimmed(T),
    /// All of it.
    Parsed(Whole<T>),
}

/// What a line read whole parsed to, and the values repaired on the way.
type Whole<T> = (Result<T, Problem>, Vec<Problem>);

/// How much of a line a run reads: a run counting only usage skips the lines that cannot
/// matter to it; a run looking for some text skips the lines of bulk text that lack it, and
/// skims the others that lack it. Every line is read whole but for these, and always the first
/// line (a header in some formats) and one too long to be read whole (it is reported).
fn take<P: LineParser>(parser: &P, settings: &Settings, line: &ChunkLine, content: &[u8]) -> Take<P::Parsed> {
    let whole = || Take::Parsed(parse_line(parser, line, content, settings.max_line_bytes()));
    if line.number == 1 || line.length.is_some() {
        return whole();
    }
    if settings.usage_only() && !parser.may_matter_to_usage(content) {
        return Take::Skipped;
    }
    if !settings.lacks_wanted(line.offset, content) {
        return whole();
    }
    match parser.is_bulk_text(content) {
        true => Take::Skipped,
        false => parser.skim(content).map_or_else(whole, Take::Skimmed),
    }
}

/// Parses one line; also gives a problem for each value repaired or rejected while it was parsed.
///
/// A byte-order mark is dropped. A line that fails to parse but is valid JSON syntax holding
/// invalid data (a lone surrogate, a number out of range, nesting too deep for the parser) is
/// repaired as [`crate::model::Json`] repairs values, and parsed again.
fn parse_line<P: LineParser>(parser: &P, line: &ChunkLine, content: &[u8], limit: usize) -> Whole<P::Parsed> {
    forget_notes();
    if let Some(length) = line.length {
        return (Err(Problem::line_too_long(length, limit)), Vec::new());
    }
    let text = match simdutf8::compat::from_utf8(content) {
        Err(e) => return (Err(Problem::invalid_utf8(e.valid_up_to())), Vec::new()),
        // U+FEFF, a byte-order mark.
        Ok(text) if text.as_bytes().starts_with(b"\xEF\xBB\xBF") => &text[3..],
        Ok(text) => text,
    };
    let parse = |text: &str| -> Result<P::Parsed, Problem> {
        parser.parse(Line { number: line.number, offset: line.offset, text })
    };
    match parse(text) {
        Ok(parsed) => (Ok(parsed), notes_in(content, None)),
        Err(problem) => {
            forget_notes();
            let repaired = serde_json::from_str::<serde::de::IgnoredAny>(text)
                .ok()
                .and_then(|_| crate::model::repair_text(text))
                .and_then(|fixed| parse(&fixed).ok().map(|parsed| (parsed, notes_in(content, Some(&fixed)))));
            match repaired {
                Some((parsed, notes)) => (Ok(parsed), notes),
                None => {
                    forget_notes();
                    (Err(problem), Vec::new())
                }
            }
        }
    }
}

/// Drops the notes of values repaired or rejected on this thread.
fn forget_notes() {
    if has_notes() {
        crate::model::take_repairs();
        lenient::take_rejected();
    }
}

/// Whether values were repaired or rejected on this thread since the notes were last taken.
fn has_notes() -> bool {
    crate::model::has_repairs() || lenient::has_rejected()
}

/// The values repaired or rejected on this thread since the last call, as problems of the line
/// `content` (or of its repaired text `fixed`, where a value is in that), each once: a value
/// copied again from a copy outside the line is not reported twice.
#[inline]
fn notes_in(content: &[u8], fixed: Option<&str>) -> Vec<Problem> {
    if !has_notes() {
        return Vec::new();
    }
    take_notes(content, fixed)
}

/// [`notes_in`] where there are notes.
#[inline(never)]
fn take_notes(content: &[u8], fixed: Option<&str>) -> Vec<Problem> {
    let repairs = crate::model::take_repairs();
    let rejected = lenient::take_rejected();
    let original = String::from_utf8_lossy(content);
    // Where an address is: its column and JSON path, in the line or in its repaired text.
    let place = |at: usize| -> Option<(usize, String)> {
        [Some(original.as_ref()), fixed].into_iter().flatten().find_map(|text| {
            let column = at.checked_sub(text.as_ptr() as usize).filter(|c| *c < text.len())?;
            Some((column, diagnostic::json_path_at(text, column)))
        })
    };
    let mut found: Vec<(crate::model::Repair, Option<(usize, String)>)> = Vec::new();
    for noted in repairs {
        let at = place(noted.at);
        if !found.contains(&(noted.repair, at.clone())) {
            found.push((noted.repair, at));
        }
    }
    let located = |repair| found.iter().any(|(r, at)| *r == repair && at.is_some());
    // A value repaired and then rejected by its field is reported once, as rejected.
    let rejected_at: Vec<Option<usize>> = rejected.iter().map(|r| place(r.at).map(|(column, _)| column)).collect();
    let mut problems: Vec<Problem> = found
        .iter()
        .filter(|(repair, at)| at.is_some() || !located(*repair))
        .filter(|(_, at)| at.as_ref().is_none_or(|(column, _)| !rejected_at.contains(&Some(*column))))
        .map(|(repair, at)| {
            let (column, path) = at.clone().unwrap_or_else(|| (0, "$".to_owned()));
            Problem::repaired(&path, repair.describe(), column)
        })
        .collect();
    for r in rejected {
        let (column, path) = place(r.at).unwrap_or_else(|| (0, "$".to_owned()));
        problems.push(Problem::invalid_field(r.path.unwrap_or(&path), r.expected, &r.found, column));
    }
    problems
}

/// Appends the next line of `bytes` to `buf`, its `\n` included, keeping at most `limit` bytes
/// of it: past that, only the first [`KEPT_OF_LONG_LINE`] bytes are kept (for the diagnostic)
/// and the rest is read and dropped. Gives the bytes read (0 at the end) and whether the line
/// was too long.
///
/// [`BufRead::read_until`], with the newline searched for by `memchr`'s vector code rather than
/// the standard library's word-at-a-time search, which took 2 % of a conversion's instructions.
fn read_line(bytes: &mut dyn BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<(usize, bool)> {
    let start = buf.len();
    let mut read = 0;
    let mut too_long = false;
    loop {
        let available = match bytes.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (used, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), available.is_empty()),
        };
        if !too_long {
            if buf.len() - start + used > limit {
                // Past the limit: keep the line's start for the diagnostic, and no more.
                too_long = true;
                let kept = (start + KEPT_OF_LONG_LINE).saturating_sub(buf.len()).min(used);
                buf.extend_from_slice(&available[..kept]);
                buf.truncate(start + KEPT_OF_LONG_LINE);
            } else {
                buf.extend_from_slice(&available[..used]);
            }
        }
        let newline = done && used > 0;
        bytes.consume(used);
        read += used;
        if done {
            // The kept start of a long line ends as the line did.
            if too_long && newline {
                buf.push(b'\n');
            }
            return Ok((read, too_long));
        }
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The lines of a whole document that a line-by-line read would count: those holding anything
/// but ASCII whitespace (the same test as for JSON Lines, so that a line of a vertical tab
/// counts alike everywhere).
pub(crate) fn counted_lines(text: &str) -> u64 {
    text.lines().filter(|l| !is_blank(l)).count() as u64
}

/// Whether a line holds only ASCII whitespace.
pub(crate) fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{Input, Shared, reader};

    #[test]
    fn read_line_reads_what_read_until_reads() {
        let inputs: [&[u8]; 5] = [b"", b"\n", b"ab\ncdefgh\n\n\nlast", b"one line\n", b"\r\n{\"a\":1}\r\nno end"];
        // Small buffers make lines cross the reader's buffer.
        for capacity in [1, 2, 3, 7, 64] {
            for input in inputs {
                let lines = |read: &dyn Fn(&mut dyn BufRead, &mut Vec<u8>) -> usize| {
                    let mut reader = io::BufReader::with_capacity(capacity, input);
                    let mut lines = Vec::new();
                    loop {
                        let mut line = Vec::new();
                        let n = read(&mut reader, &mut line);
                        assert_eq!(n, line.len());
                        lines.push(line);
                        if n == 0 {
                            return lines;
                        }
                    }
                };
                let ours = lines(&|r, buf| read_line(r, buf, usize::MAX).unwrap().0);
                let std = lines(&|r, buf| r.read_until(b'\n', buf).unwrap());
                assert_eq!(ours, std, "capacity {capacity}, input {:?}", String::from_utf8_lossy(input));
                assert_eq!(ours.concat(), input);
            }
        }
    }

    /// An input that fails if it is read again after it ended, as a terminal would wait.
    struct ReadOnce(io::Cursor<&'static [u8]>, bool);

    impl io::Read for ReadOnce {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.0.read(buf)
        }
    }

    impl BufRead for ReadOnce {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            if self.1 {
                return Err(io::Error::other("read again after the end"));
            }
            let rest = self.0.fill_buf()?;
            self.1 = rest.is_empty();
            Ok(rest)
        }

        fn consume(&mut self, n: usize) {
            self.0.consume(n);
        }
    }

    #[test]
    fn an_input_is_not_read_again_after_it_ends() {
        let text = include_bytes!("../../corpus/codex/envelope-user-and-assistant-text.jsonl");
        let mut shared = Shared::default();
        let input =
            Input { name: "t.jsonl", bytes: Box::new(ReadOnce(io::Cursor::new(text), false)), shared: &mut shared };
        let mut events = 0;
        let mut count = |_| {
            events += 1;
            Ok(())
        };
        let report = reader("codex").unwrap().read(input, &mut count).unwrap();
        assert!(events > 0 && report.diagnostics.is_empty());
    }
}
