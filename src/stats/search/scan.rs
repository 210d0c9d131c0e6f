//! The look through a group's raw bytes for a query's literal words, before it is parsed.

use std::io::Read as _;

use super::Query;
use crate::pipeline::{Held, HeldFile};

/// A look through raw bytes for a query's literals ([`Query::scan`]).
pub struct Scan<'q> {
    query: &'q Query,
    seen: Vec<bool>,
    left: usize,
    /// The end of the last piece, for a literal that spans two pieces.
    tail: Vec<u8>,
}

impl<'q> Scan<'q> {
    /// A look for `query`'s literals, none seen yet.
    pub(super) fn new(query: &'q Query) -> Scan<'q> {
        Scan { query, seen: vec![false; query.literal_count], left: query.literal_count, tail: Vec::new() }
    }

    /// Looks through the next piece; true once every literal has been seen (or when the query
    /// has none).
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        let Some(prefilter) = &self.query.prefilter else { return true };
        if self.left == 0 {
            return true;
        }
        let keep = self.query.longest.saturating_sub(1);
        // A literal across the two pieces is in the end of the last and the start of this one;
        // the others are in this piece alone, looked through where it lies.
        let mut seam = std::mem::take(&mut self.tail);
        let had = !seam.is_empty();
        seam.extend_from_slice(&bytes[..keep.min(bytes.len())]);
        if (had && self.mark(prefilter, &seam)) || self.mark(prefilter, bytes) {
            return true;
        }
        self.tail = if bytes.len() >= keep {
            bytes[bytes.len() - keep..].to_vec()
        } else {
            // A piece shorter than the longest literal: the end of both.
            seam[seam.len().saturating_sub(keep)..].to_vec()
        };
        false
    }

    /// Marks the literals found in `bytes`; true once every literal has been seen.
    fn mark(&mut self, prefilter: &[regex::bytes::Regex], bytes: &[u8]) -> bool {
        for (i, literal) in prefilter.iter().enumerate() {
            if !self.seen[i] && holds(literal, bytes) {
                self.seen[i] = true;
                self.left -= 1;
            }
        }
        self.left == 0
    }

    /// Looks through the file at `path`, the group's item `item`: held whole in `held` when it
    /// fits in what [`HELD_BYTES`] leaves, with every place of every literal in it (true), else
    /// streamed until every literal has been seen (false).
    ///
    /// # Errors
    /// When reading fails; nothing of the file is held then.
    pub fn read_file(&mut self, path: &std::path::Path, item: usize, held: &mut Held) -> std::io::Result<bool> {
        let mut file = std::fs::File::open(path)?;
        let bytes = std::sync::Arc::make_mut(&mut held.bytes);
        let start = bytes.len();
        if start as u64 + file.metadata()?.len() > HELD_BYTES {
            return self.read(file).map(|_| false);
        }
        if let Err(e) = file.read_to_end(bytes) {
            bytes.truncate(start);
            return Err(e);
        }
        let found = self.places(&bytes[start..]);
        held.files.push(HeldFile { item, range: start..bytes.len(), found: found.map(Into::into) });
        Ok(true)
    }

    /// Whether every literal has been seen (always, for a query without literals).
    pub fn saw_all(&self) -> bool {
        self.left == 0 || self.query.prefilter.is_none()
    }

    /// Every place where a literal starts as a whole word in a whole file, in order, marking the
    /// literals seen; `None` for a query without literals.
    fn places(&mut self, bytes: &[u8]) -> Option<Vec<u64>> {
        let prefilter = self.query.prefilter.as_ref()?;
        let mut found = Vec::new();
        for (i, literal) in prefilter.iter().enumerate() {
            let before = found.len();
            let mut at = 0;
            while let Some(start) = first(literal, bytes, at) {
                found.push(start as u64);
                at = start + 1;
            }
            if found.len() > before && !self.seen[i] {
                self.seen[i] = true;
                self.left -= 1;
            }
        }
        found.sort_unstable();
        found.dedup();
        Some(found)
    }

    /// Looks through everything `reader` gives; true once every literal has been seen.
    fn read(&mut self, mut reader: impl std::io::Read) -> std::io::Result<bool> {
        let mut buf = vec![0; 256 << 10];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(self.left == 0 || self.query.prefilter.is_none()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if self.feed(&buf[..n]) {
                return Ok(true);
            }
        }
    }
}

/// The most bytes a look holds of a group's files, which are then read from memory; the files
/// beyond are looked through as they stream, and opened again to be read.
const HELD_BYTES: u64 = 64 << 20;

/// Whether raw bytes hold any of `literals` as a whole word ([`holds`]).
pub(super) fn holds_any(literals: &[regex::bytes::Regex], bytes: &[u8]) -> bool {
    literals.iter().any(|literal| holds(literal, bytes))
}

/// Whether raw bytes hold `literal` as a whole word ([`whole_word`]).
pub(super) fn holds(literal: &regex::bytes::Regex, bytes: &[u8]) -> bool {
    first(literal, bytes, 0).is_some()
}

/// Where `literal` first starts as a whole word in `bytes` at or after `from`.
fn first(literal: &regex::bytes::Regex, bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(m) = literal.find_at(bytes, from) {
        if whole_word(bytes, m.start(), m.end()) {
            return Some(m.start());
        }
        from = m.start() + 1;
    }
    None
}

/// Whether `bytes[start..end]`, raw JSON or text, may be a whole word of the text it holds: the
/// byte before it is no word character, or ends a JSON escape (`\n`, `\u2028`), and the byte
/// after it is no word character. At either end of `bytes` it may be (the next or last piece
/// says).
fn whole_word(bytes: &[u8], start: usize, end: usize) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let before = start == 0
        || !word(bytes[start - 1])
        || (start >= 2 && bytes[start - 2] == b'\\' && b"ntrbf".contains(&bytes[start - 1]))
        || (start >= 6
            && bytes[start - 6] == b'\\'
            && bytes[start - 5] == b'u'
            && bytes[start - 4..start].iter().all(u8::is_ascii_hexdigit));
    let after = end == bytes.len() || !word(bytes[end]);
    before && after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefilter_needs_every_literal() {
        let q = Query::parse("alpha beta", false).unwrap();
        assert!(q.may_match(b"..ALPHA..beta.."));
        assert!(!q.may_match(b"..alpha.."));
        assert!(Query::parse("al.ha", true).unwrap().may_match(b"nothing"));
    }

    #[test]
    fn the_prefilter_looks_for_whole_words_of_the_raw_json() {
        let q = Query::parse("rollback", false).unwrap();
        assert!(!q.may_match(br#"{"text":"the scrollback buffer, rollbacks"}"#));
        for raw in [
            r#""rollback""#,
            r#""a
ROLLBACK.""#,
            r#"" rollback""#,
            r#""x	rollback
""#,
            "rollback",
        ] {
            assert!(q.may_match(raw.as_bytes()), "{raw}");
        }
    }

    #[test]
    fn a_file_read_whole_gives_every_place_of_every_word() {
        let q = Query::parse("beta alpha", false).unwrap();
        let text = b"{\"a\":\"alpha\"}\n{\"b\":\"alphabet\"}\n{\"c\":\"Beta\\nalpha\"}\n";
        let mut scan = q.scan();
        let found = scan.places(text).unwrap();
        let places: Vec<&[u8]> = found.iter().map(|&at| &text[at as usize..at as usize + 4]).collect();
        assert_eq!(places, [&b"alph"[..], b"Beta", b"alph"]);
        assert_eq!(found[0], 6);
        assert!(scan.saw_all());
        // A file lacking a word, and then one with it.
        let mut scan = q.scan();
        assert_eq!(scan.places(b"alpha only").unwrap(), [0]);
        assert!(!scan.saw_all());
        assert_eq!(scan.places(b"beta, no other").unwrap(), [0]);
        assert!(scan.saw_all());
    }

    #[test]
    fn the_prefilter_sees_a_literal_split_between_two_pieces() {
        let q = Query::parse("needle", false).unwrap();
        let mut scan = q.scan();
        assert!(!scan.feed(b"....nee"));
        assert!(scan.feed(b"DLE...."));
    }

    #[test]
    fn the_prefilter_sees_a_literal_over_pieces_shorter_than_it() {
        let q = Query::parse("needle", false).unwrap();
        let mut scan = q.scan();
        assert!(!["..n", "e", "ed", "l"].iter().any(|piece| scan.feed(piece.as_bytes())));
        assert!(scan.feed(b"e."));
    }
}
