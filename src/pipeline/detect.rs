//! Opening an input and telling its format from its first lines.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};

use crate::read::{self, Reader};

use super::inputs::InputSpec;
use super::plan::Item;

/// Lines looked at to tell a file's format.
const SNIFF_LINES: usize = 8;

/// Bytes of those lines held at most.
const SNIFF_BYTES: u64 = 16 << 20;

/// Bytes of the first line kept as text.
const FIRST_LINE_BYTES: usize = 64 << 10;

/// An opened input and the reader for it.
pub struct Chosen<'a> {
    /// The input, from its first byte.
    pub bytes: Box<dyn BufRead + 'a>,
    /// The reader to read it with.
    pub reader: &'static dyn Reader,
    /// The reader whose format the first lines match, if any.
    pub looks_like: Option<&'static dyn Reader>,
    /// The first non-empty line, for a diagnostic about the whole input.
    pub first_line: String,
    /// When no format matched the first lines and the reader was chosen by where the file
    /// lies ([`read::owner`]): the kind of its first record (its `type`), to name in a warning.
    pub new_kind: Option<String>,
}

/// The reader for an input: the one given, or the one whose format the first lines match;
/// `None` when nothing is given and nothing matches. With `check`, the first lines of an input
/// given a reader are looked at too, to tell what they look like.
///
/// The lines read to decide are put back in front of the rest, so nothing is read twice from
/// the source (which may be a pipe).
pub fn choose_reader<'a>(
    name: &str,
    given: Option<&'static dyn Reader>,
    check: bool,
    mut bytes: Box<dyn BufRead + 'a>,
) -> io::Result<Option<Chosen<'a>>> {
    if let Some(reader) = given.filter(|_| !check) {
        return Ok(Some(Chosen { bytes, reader, looks_like: None, first_line: String::new(), new_kind: None }));
    }
    let mut head = Vec::new();
    for _ in 0..SNIFF_LINES {
        // The lines looked at are held in memory: at most SNIFF_BYTES of them, however long.
        let room = SNIFF_BYTES.saturating_sub(head.len() as u64);
        if room == 0 || (&mut bytes).take(room).read_until(b'\n', &mut head)? == 0 {
            break;
        }
    }
    let told = {
        // Checked as UTF-8 once; a line of the text is a line of the bytes, as a newline is never
        // part of a sequence replaced.
        let text = lossy(&head);
        let lines = || text.split_inclusive('\n');
        let first = lines().map(|line| line.trim().trim_start_matches('\u{feff}')).find(|line| !line.is_empty());
        first.map(|line| {
            let mut prefix = FIRST_LINE_BYTES.min(line.len());
            while !line.is_char_boundary(prefix) {
                prefix -= 1;
            }
            let first_line = line[..prefix].to_owned();
            // Each line is parsed when a reader asks for its record: most formats are told by the
            // first.
            let records = read::Records::new(lines().map(Into::into).collect());
            let looks_like = read::sniff(&read::Head { name, records: &records, first_line: &first_line, text: &text });
            // A file in an agent's own places is that agent's, even when its first lines are new.
            let by_place = if given.is_none() && looks_like.is_none() { read::owner(name) } else { None };
            let new_kind = by_place.map(|_| {
                let kind = records.first().and_then(|r| r.get("type")).and_then(serde_json::Value::as_str);
                kind.unwrap_or("a record without a type").to_owned()
            });
            (first_line, looks_like, by_place, new_kind)
        })
    };
    let rest: Box<dyn BufRead + 'a> = Box::new(BufReader::new(Cursor::new(head).chain(bytes)));
    let Some((first_line, looks_like, by_place, new_kind)) = told else {
        // An empty input: any reader turns it into no events.
        let reader = given.unwrap_or(read::READERS[0]);
        return Ok(Some(Chosen { bytes: rest, reader, looks_like: None, first_line: String::new(), new_kind: None }));
    };
    Ok(given.or(looks_like).or(by_place).map(|reader| Chosen { bytes: rest, reader, looks_like, first_line, new_kind }))
}

/// Bytes as text, invalid UTF-8 replaced: checked by SIMD first, as most heads are valid.
fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => text.into(),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Opens an input for reading; `*.zst` files (Codex's compressed cold rollouts) are
/// decompressed as they are read.
pub fn open(input: &InputSpec) -> io::Result<Box<dyn BufRead>> {
    open_with(input, 256 << 10)
}

/// Opens an input to tell its format from its first lines, which are usually short: a file is
/// read in small pieces, so that telling the formats of many files reads little of each.
pub fn open_head(input: &InputSpec) -> io::Result<Box<dyn BufRead>> {
    open_with(input, 16 << 10)
}

/// Opens an input read `capacity` bytes at a time.
fn open_with(input: &InputSpec, capacity: usize) -> io::Result<Box<dyn BufRead>> {
    Ok(match input {
        InputSpec::Stdin => Box::new(BufReader::with_capacity(capacity, io::stdin())),
        InputSpec::File(path) if path.ends_with(".zst") => {
            Box::new(BufReader::with_capacity(capacity, zstd::stream::read::Decoder::new(File::open(path)?)?))
        }
        InputSpec::File(path) => Box::new(BufReader::with_capacity(capacity, File::open(path)?)),
        InputSpec::Stored(stored) => {
            let message = format!("{}: a session in a database is read by its reader, not as bytes", stored.name);
            return Err(io::Error::new(io::ErrorKind::Unsupported, message));
        }
    })
}

/// What an input holds, as its reader tells from its name and first bytes.
pub fn file_kind(item: &Item) -> read::FileKind {
    if let InputSpec::Stored(_) = &item.spec {
        return read::FileKind::Session;
    }
    // Side files are told by their name and first line's keys, which come early.
    let mut head = Vec::new();
    let _ = match &item.spec {
        InputSpec::File(path) if !path.ends_with(".zst") => {
            File::open(path).and_then(|f| f.take(4 << 10).read_to_end(&mut head))
        }
        spec => open(spec).and_then(|bytes| bytes.take(4 << 10).read_to_end(&mut head)),
    };
    item.reader.file_kind(item.spec.name(), &head)
}

/// What an input's first records say, as its reader reads them, for listing: its session (the
/// file's stem when they do not say), the agent version, the agent (the reader's, else as the
/// records name it) and what the file holds.
pub fn peek(item: &Item) -> read::Peek {
    if let InputSpec::Stored(stored) = &item.spec {
        return read::Peek {
            session: Some(stored.session.clone()),
            version: stored.version.clone(),
            agent: item.reader.agent().map(|a| a.as_str().to_owned()),
            kind: read::FileKind::Session,
        };
    }
    let mut found = read::Peek { session: item.reader.session_of(item.spec.name()), ..read::Peek::default() };
    let mut add = |record: &serde_json::Value| {
        let peek = item.reader.peek(record);
        found.session = found.session.take().or(peek.session);
        found.version = found.version.take().or(peek.version);
        found.agent = found.agent.take().or(peek.agent);
        found.session.is_some() && found.version.is_some()
    };
    if let Ok(bytes) = open(&item.spec) {
        // At most SNIFF_BYTES of the first lines are held, however long they are.
        let mut lines = BufReader::new(bytes.take(SNIFF_BYTES));
        let mut head = String::new();
        if lines.read_line(&mut head).is_ok() {
            found.kind = item.reader.file_kind(item.spec.name(), head.as_bytes());
            let bom = if head.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
            if head[bom..].trim() == "{" {
                // A pretty-printed document: small, so looked at whole.
                if lines.read_to_string(&mut head).is_ok()
                    && let Ok(document) = serde_json::from_str::<serde_json::Value>(&head[bom..])
                {
                    add(&document);
                }
            } else if !serde_json::from_str(&head[bom..]).is_ok_and(|record| add(&record)) {
                for line in lines.lines().take(SNIFF_LINES * 4).map_while(Result::ok) {
                    if serde_json::from_str(&line).is_ok_and(|record| add(&record)) {
                        break;
                    }
                }
            }
        }
    }
    found.session.get_or_insert_with(|| read::file_stem(item.spec.name()).to_owned());
    found.agent = found.agent.or_else(|| item.reader.agent().map(|a| a.as_str().to_owned()));
    found
}
