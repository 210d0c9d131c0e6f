//! Values read from a line's raw bytes where its writer puts them in a known order, for the
//! lines a search skims ([`super::LineParser::skim`]): a line written otherwise is parsed.

/// A JSON string's text up to its closing quote, `bytes` starting just after its opening
/// one, and the bytes after the closing quote; `None` for one holding an escape or a control
/// character, or not ending.
pub(crate) fn string(bytes: &[u8]) -> Option<(&str, &[u8])> {
    let end = memchr::memchr2(b'"', b'\\', bytes)?;
    let text = std::str::from_utf8(&bytes[..end]).ok()?;
    (bytes[end] == b'"' && !text.bytes().any(|b| b < 0x20)).then(|| (text, &bytes[end + 1..]))
}

/// The bytes after a JSON string's closing quote, escapes and all, `bytes` starting just after
/// its opening one; `None` when it does not end.
pub(crate) fn after_string(bytes: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    loop {
        let i = at + memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        if bytes[i] == b'"' {
            return Some(&bytes[i + 1..]);
        }
        // The escaped byte; the digits of a `\u` escape are plain bytes.
        at = i + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_ends_at_its_first_unescaped_quote() {
        assert_eq!(string(br#"abc","x""#), Some(("abc", &br#","x""#[..])));
        assert_eq!(string(br#"a\"b""#), None);
        assert_eq!(after_string(br#"a\"b\\","x""#), Some(&br#","x""#[..]));
        assert_eq!(after_string(br#"a\u0022""#), Some(&b""[..]));
        assert_eq!(after_string(br#"never \"ends"#), None);
        assert_eq!(after_string(br#"ends in \"#), None);
    }
}
