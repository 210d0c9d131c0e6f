//! [`Json`]: a JSON value carried through unchanged, as compact single-line text.
//!
//! Raw text copied from an input is JSON *syntax*, but not always JSON *data* that every
//! consumer accepts: serde_json copies a value it does not decode without checking its escapes,
//! its numbers' range or its depth. A [`Json`] is always both: a value that is not is repaired
//! when it is kept (see [`Repair`]), and each repair is noted for the line being read
//! ([`take_repairs`]).

use std::cell::RefCell;
use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A JSON value kept as its compact source text (tool inputs, structured results, raw records).
///
/// The text is copied from the source as-is when it is already compact, valid JSON data on one
/// line, so numbers, key order and escapes survive byte for byte; a value spread over several
/// lines is compacted, and a value that is not valid data is repaired ([`Repair`]), so it never
/// breaks a JSONL line nor a consumer.
#[derive(Clone)]
pub struct Json(Box<RawValue>);

/// Deepest nesting of arrays and objects a [`Json`] keeps; deeper values are kept as a string
/// of their text. Well under serde_json's limit of 128, which also counts the event around it.
pub const MAX_DEPTH: usize = 100;

/// A change made to a value so that it is valid JSON data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repair {
    /// A `\uD800`–`\uDFFF` escape not part of a surrogate pair, written as U+FFFD.
    LoneSurrogate,
    /// A number beyond the range of a 64-bit float (`1e400`), written as a string of its text.
    NumberOutOfRange,
    /// Arrays or objects nested deeper than [`MAX_DEPTH`], written as a string of their text.
    TooDeep,
}

impl Repair {
    /// One line for a diagnostic.
    pub fn describe(self) -> &'static str {
        match self {
            Repair::LoneSurrogate => "a lone surrogate escape was written as U+FFFD",
            Repair::NumberOutOfRange => "a number beyond the range of a 64-bit float was written as a string",
            Repair::TooDeep => "a value nested more than 100 levels deep was written as a string of its text",
        }
    }
}

/// A repair made while a line was read: what, and where (the address of the offending byte).
#[derive(Debug, Clone, Copy)]
pub struct Noted {
    /// What was changed.
    pub repair: Repair,
    /// Address of the offending byte in memory; the line loop turns it into a column.
    pub at: usize,
}

thread_local! {
    /// Repairs made on this thread since [`take_repairs`] last ran. A line is read on one
    /// thread from start to end, so the line loop takes them after each line.
    static REPAIRS: RefCell<Vec<Noted>> = const { RefCell::new(Vec::new()) };
}

/// The repairs made on this thread since the last call, oldest first.
pub fn take_repairs() -> Vec<Noted> {
    REPAIRS.with(|r| if r.borrow().is_empty() { Vec::new() } else { std::mem::take(&mut *r.borrow_mut()) })
}

/// Whether repairs were made on this thread since [`take_repairs`] last ran.
pub fn has_repairs() -> bool {
    REPAIRS.with(|r| !r.borrow().is_empty())
}

fn note(repair: Repair, at: *const u8) {
    REPAIRS.with(|r| r.borrow_mut().push(Noted { repair, at: at as usize }));
}

impl Json {
    /// Parses `text` as one JSON value and keeps it.
    ///
    /// # Errors
    /// When `text` is not exactly one valid JSON value.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let raw: &RawValue = serde_json::from_str(text)?;
        Ok(Self::from_raw(raw))
    }

    /// Keeps an already parsed raw value, compacting it when it spans several lines and
    /// repairing it when it is not valid JSON data.
    pub fn from_raw(raw: &RawValue) -> Self {
        // Parsed raw values hold no surrounding whitespace, and copying one does not re-parse it.
        match repair_text(raw.get()) {
            None => Json(raw.to_owned()),
            Some(text) => Json::repaired(text),
        }
    }

    /// Keeps compact, valid JSON data as it is, else rewrites it.
    fn from_boxed(raw: Box<RawValue>) -> Self {
        match repair_text(raw.get()) {
            None => Json(raw),
            Some(text) => Json::repaired(text),
        }
    }

    /// Keeps text that [`repair_text`] wrote.
    fn repaired(text: String) -> Self {
        Json(RawValue::from_string(text).expect("rewritten JSON is valid"))
    }

    /// Serialises any value into a [`Json`].
    ///
    /// Rust values serialise to valid JSON data, and so do [`Json`] values inside them; raw
    /// text copied from an input inside `value` is checked and repaired as [`Json::from_raw`]
    /// does only with [`Json::from_value_of_raw`].
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Self {
        Json(serde_json::value::to_raw_value(value).expect("serialising to a string cannot fail"))
    }

    /// Serialises a value that holds raw text copied from an input, checking and repairing the
    /// result as [`Json::from_raw`] does.
    pub fn from_value_of_raw<T: Serialize + ?Sized>(value: &T) -> Self {
        Json::from_boxed(serde_json::value::to_raw_value(value).expect("serialising to a string cannot fail"))
    }

    /// The value as a raw JSON value, to deserialise without parsing the text again.
    pub fn raw(&self) -> &RawValue {
        &self.0
    }

    /// The compact JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Parses the text into a [`serde_json::Value`].
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.get()).expect("a Json holds valid JSON data")
    }
}

/// `text`, one valid JSON value, rewritten as [`Json`] keeps values (compact, lone surrogates
/// replaced, numbers out of range and values too deep as strings), with each repair noted;
/// `None` when a cheap test finds nothing to change.
pub fn repair_text(text: &str) -> Option<String> {
    if !needs_rewrite(text) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    rewrite(text, MAX_DEPTH, &mut out);
    Some(out)
}

/// Whether `text`, one valid JSON value, may hold a line break between tokens, an escape of a
/// lone surrogate, a number out of a 64-bit float's range or nesting past [`MAX_DEPTH`]: a
/// test that may say yes for valid compact text, never no for invalid.
///
/// One branch-free pass over fixed blocks, which the compiler vectorises, looks at every byte
/// (strings included) for a line break (never valid inside a string), the start of a surrogate
/// escape (`\\ud`), an `e` followed by three digits (or `+` and two), and counts brackets. Only
/// what it finds is looked at closely.
fn needs_rewrite(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut brackets = 0usize;
    let mut start = 0;
    while start < bytes.len() {
        let end = (start + BLOCK).min(bytes.len());
        // Each block is read with the three bytes after it; the last one is padded with spaces.
        let mut padded = [b' '; BLOCK + 3];
        let window: &[u8] = match bytes.get(start..end + 3) {
            Some(window) if end - start == BLOCK => window,
            _ => {
                let rest = &bytes[start..];
                let n = rest.len().min(BLOCK + 3);
                padded[..n].copy_from_slice(&rest[..n]);
                &padded
            }
        };
        let scan = Scan::of(window);
        brackets += usize::from(scan.brackets);
        if scan.line_break != 0 {
            return true;
        }
        if scan.surrogate != 0
            && memchr::memchr_iter(b'\\', &bytes[start..end]).any(|i| is_lone_surrogate(bytes, start + i))
        {
            return true;
        }
        if scan.exponent != 0 && has_long_exponent(bytes, start, end) {
            return true;
        }
        start = end;
    }
    (brackets > MAX_DEPTH && is_too_deep(bytes))
        || (bytes.len() >= 200 && bytes.chunks_exact(32).any(|c| c.iter().all(u8::is_ascii_digit)))
}

/// What one block of a value holds, as [`needs_rewrite`] looks for it.
struct Scan {
    line_break: u8,
    surrogate: u8,
    exponent: u8,
    brackets: u8,
}

impl Scan {
    /// Scans the first [`BLOCK`] bytes of `window`, which holds three more after them.
    #[inline(always)]
    fn of(window: &[u8]) -> Scan {
        let digit = |b: u8| u8::from(b.wrapping_sub(b'0') < 10);
        let (b0, b1, b2, b3) = (&window[..BLOCK], &window[1..=BLOCK], &window[2..BLOCK + 2], &window[3..BLOCK + 3]);
        let mut scan = Scan { line_break: 0, surrogate: 0, exponent: 0, brackets: 0 };
        for i in 0..BLOCK {
            let (a, b, c, d) = (b0[i], b1[i], b2[i], b3[i]);
            scan.line_break |= u8::from(a == b'\n') | u8::from(a == b'\r');
            scan.surrogate |= u8::from(a == b'\\') & u8::from(b == b'u') & u8::from(c | 0x20 == b'd');
            scan.exponent |= u8::from(a | 0x20 == b'e') & (digit(b) | u8::from(b == b'+')) & digit(c) & digit(d);
            scan.brackets += u8::from(a == b'[') | u8::from(a == b'{');
        }
        scan
    }
}

/// Whether the `\\` at `at` starts an escape (not an escaped backslash) of a surrogate that is
/// not half of a pair.
fn is_lone_surrogate(bytes: &[u8], at: usize) -> bool {
    if bytes.get(at + 1) != Some(&b'u') || bytes[..at].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 1 {
        return false;
    }
    match hex4(bytes, at + 2) {
        Some(0xD800..=0xDBFF) => {
            !(bytes.get(at + 6..at + 8) == Some(b"\\u") && matches!(hex4(bytes, at + 8), Some(0xDC00..=0xDFFF)))
        }
        // A low half right after a high half is the end of a pair.
        Some(0xDC00..=0xDFFF) => {
            !(at >= 6 && bytes[at - 6] == b'\\' && matches!(hex4(bytes, at - 4), Some(0xD800..=0xDBFF)))
        }
        _ => false,
    }
}

/// Whether arrays and objects nest past [`MAX_DEPTH`], brackets inside strings not counted.
fn is_too_deep(bytes: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut outside = 0;
    let mut at = 0;
    while let Some(quote) = memchr::memchr(b'"', &bytes[at..]).map(|i| at + i) {
        if bytes[..quote].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 1 {
            at = quote + 1; // an escaped quote, inside a string
            continue;
        }
        if outside <= quote && nests_past(&bytes[outside..quote], &mut depth) {
            return true;
        }
        // The string that opens here ends at the next quote that is not escaped.
        let mut end = quote + 1;
        while let Some(close) = memchr::memchr(b'"', &bytes[end..]).map(|i| end + i) {
            end = close + 1;
            if bytes[..close].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0 {
                break;
            }
        }
        outside = end;
        at = end;
    }
    nests_past(&bytes[outside.min(bytes.len())..], &mut depth)
}

/// Whether brackets in a stretch between strings take `depth` past [`MAX_DEPTH`].
fn nests_past(part: &[u8], depth: &mut usize) -> bool {
    for b in part {
        match b {
            b'[' | b'{' => {
                *depth += 1;
                if *depth > MAX_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => *depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Bytes looked at together by [`needs_rewrite`].
const BLOCK: usize = 64;

/// Whether an `e` or `E` in `bytes[start..end]` starts a long exponent ([`is_long_exponent`]).
fn has_long_exponent(bytes: &[u8], start: usize, end: usize) -> bool {
    memchr::memchr2_iter(b'e', b'E', &bytes[start..end]).any(|i| is_long_exponent(bytes, start + i))
}

/// Whether the `e` or `E` at `at` ends the mantissa of a number token and starts a positive
/// exponent of three digits or more that runs to a delimiter.
fn is_long_exponent(bytes: &[u8], at: usize) -> bool {
    let start = bytes[..at].iter().rposition(|b| !matches!(b, b'0'..=b'9' | b'.' | b'-')).map_or(0, |p| p + 1);
    let opens = start == 0 || matches!(bytes[start - 1], b':' | b',' | b'[' | b' ' | b'\t' | b'\r' | b'\n');
    let sign = usize::from(bytes.get(at + 1) == Some(&b'+'));
    let digits = bytes[at + 1 + sign..].iter().take_while(|b| b.is_ascii_digit()).count();
    let closes =
        matches!(bytes.get(at + 1 + sign + digits), None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n'));
    start < at && opens && digits >= 3 && closes
}

/// Writes `text`, one valid JSON value, to `out` without insignificant whitespace, with lone
/// surrogate escapes as `\ufffd`, numbers out of range as strings, and values nested deeper than
/// `max_depth` as strings of their text; notes each repair. Iterative: any depth is safe.
fn rewrite(text: &str, max_depth: usize, out: &mut String) {
    let bytes = text.as_bytes();
    let mut depth = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => i = copy_string(text, i, out),
            b'{' | b'[' if depth == max_depth => {
                let end = value_end(bytes, i);
                note(Repair::TooDeep, bytes[i..].as_ptr());
                let mut inner = String::with_capacity(end - i);
                rewrite(&text[i..end], usize::MAX, &mut inner);
                out.push_str(&serde_json::to_string(&inner).expect("a string serialises"));
                i = end;
            }
            b'{' | b'[' => {
                depth += 1;
                out.push(bytes[i] as char);
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                out.push(bytes[i] as char);
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let end = i + bytes[i..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                let number = &text[i..end];
                if number.parse::<f64>().is_ok_and(f64::is_infinite) {
                    note(Repair::NumberOutOfRange, bytes[i..].as_ptr());
                    out.push('"');
                    out.push_str(number);
                    out.push('"');
                } else {
                    out.push_str(number);
                }
                i = end;
            }
            _ => {
                // `,`, `:` and the letters of true, false and null: ASCII, copied as they are.
                let end = i + bytes[i..].iter().take_while(|b| b.is_ascii_alphabetic()).count().max(1);
                out.push_str(&text[i..end]);
                i = end;
            }
        }
    }
}

/// Copies the JSON string starting at `start` (its opening quote) to `out`, lone surrogate
/// escapes replaced; the offset just past it.
fn copy_string(text: &str, start: usize, out: &mut String) -> usize {
    let bytes = text.as_bytes();
    let mut i = start + 1;
    let mut copied = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => break,
            b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                let unit = hex4(bytes, i + 2);
                let paired = match unit {
                    Some(0xD800..=0xDBFF) => {
                        bytes.get(i + 6) == Some(&b'\\')
                            && bytes.get(i + 7) == Some(&b'u')
                            && matches!(hex4(bytes, i + 8), Some(0xDC00..=0xDFFF))
                    }
                    Some(0xDC00..=0xDFFF) => false,
                    _ => true,
                };
                if paired {
                    i += if matches!(unit, Some(0xD800..=0xDBFF)) { 12 } else { 6 };
                } else {
                    note(Repair::LoneSurrogate, bytes[i..].as_ptr());
                    out.push_str(&text[copied..i]);
                    out.push_str("\\ufffd");
                    i += 6;
                    copied = i;
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    let end = (i + 1).min(bytes.len());
    out.push_str(&text[copied..end]);
    end
}

/// The four hex digits at `at` as a number.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

/// The offset just past the array or object starting at `start`.
fn value_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    let mut in_string = false;
    while i < bytes.len() {
        match (in_string, bytes[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') => in_string = false,
            (false, b'"') => in_string = true,
            (false, b'{' | b'[') => depth += 1,
            (false, b'}' | b']') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// Whether `text` holds a line break.
pub(crate) fn has_line_break(text: &str) -> bool {
    memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_some()
}

impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Json {}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        if raw.get().is_empty() {
            return Err(D::Error::custom("expected a JSON value"));
        }
        Ok(Json::from_boxed(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_source_text_is_kept_byte_for_byte() {
        let json = Json::parse(r#"{"b":1e5,"a":"\u00e9"}"#).unwrap();
        assert_eq!(json.get(), r#"{"b":1e5,"a":"\u00e9"}"#);
    }

    #[test]
    fn pretty_printed_source_is_compacted_to_one_line() {
        let json = Json::parse("{\n  \"a\": [1,\n 2]\n}").unwrap();
        assert_eq!(json.get(), r#"{"a":[1,2]}"#);
    }

    #[test]
    fn surrounding_whitespace_is_not_kept() {
        assert_eq!(Json::parse(" \t{\"a\": 1} \t").unwrap().get(), r#"{"a": 1}"#);
        assert_eq!(Json::parse(" [1,\n2] ").unwrap().get(), "[1,2]");
    }

    /// The repairs noted for `text`, and what it is kept as.
    fn kept(text: &str) -> (String, Vec<Repair>) {
        take_repairs();
        let json = Json::parse(text).unwrap();
        let repairs = take_repairs().into_iter().map(|n| n.repair).collect();
        (json.get().to_owned(), repairs)
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_pairs_stay() {
        assert_eq!(kept(r#"["\ud83d\ude00","\u00e9"]"#), (r#"["\ud83d\ude00","\u00e9"]"#.into(), vec![]));
        let (text, repairs) = kept(r#"{"a":"x\ud800y","b":"\uDC00","c":"\ud800\ud800\udc00"}"#);
        assert_eq!(text, r#"{"a":"x\ufffdy","b":"\ufffd","c":"\ufffd\ud800\udc00"}"#);
        assert_eq!(repairs, [Repair::LoneSurrogate; 3]);
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
    }

    #[test]
    fn numbers_beyond_a_float_become_strings_and_others_stay() {
        let wide = "9".repeat(400);
        let (text, repairs) = kept(&format!(r#"[1e400,-1E+999,{wide},1e-400,1e308,12345678901234567890,"1e400"]"#));
        assert_eq!(text, format!(r#"["1e400","-1E+999","{wide}",1e-400,1e308,12345678901234567890,"1e400"]"#));
        assert_eq!(repairs, [Repair::NumberOutOfRange; 3]);
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), "{text}");
    }

    #[test]
    fn any_depth_is_kept_without_a_panic() {
        for depth in [MAX_DEPTH, MAX_DEPTH + 1, 127, 100_000] {
            let text = format!("{}{}{}", "[".repeat(depth), "\"\\ud800\"", "]".repeat(depth));
            let (kept, repairs) = kept(&text);
            let value: serde_json::Value = serde_json::from_str(&kept).unwrap();
            assert_eq!(repairs.contains(&Repair::TooDeep), depth > MAX_DEPTH, "{depth}");
            assert!(repairs.contains(&Repair::LoneSurrogate), "{depth}");
            if depth > MAX_DEPTH {
                // The part too deep is a string of its text, which is itself valid JSON.
                let mut inner = &value;
                for _ in 0..MAX_DEPTH {
                    inner = &inner[0];
                }
                let deeper: serde_json::Value =
                    serde_json::from_str(inner.as_str().unwrap()).unwrap_or(serde_json::Value::Null);
                assert!(depth >= 128 || deeper.is_array(), "{depth}");
            }
        }
    }

    #[test]
    fn bare_carriage_returns_between_values_are_dropped() {
        assert_eq!(kept("{\"a\":\r[1,\r\n2],\"b\":\"\\r\"}").0, r#"{"a":[1,2],"b":"\r"}"#);
    }

    #[test]
    fn round_trips_through_serde() {
        let json = Json::parse(r#"[1,"x",null]"#).unwrap();
        let text = serde_json::to_string(&json).unwrap();
        let back: Json = serde_json::from_str(&text).unwrap();
        assert_eq!(back, json);
    }
}
