//! Markdown that stays what it says whatever text it holds: code fences and spans longer than
//! any backtick run inside, fences left open by a message closed, one-line text escaped.

use std::io::{self, Write};

/// Markdown from the log, kept as it is, but with any code fence it leaves open closed, so that
/// it cannot swallow the rest of the page.
pub fn markdown(text: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    let text = text.trim_end();
    out.write_all(text.as_bytes())?;
    let mut open: Option<(char, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        let Some(c) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else { continue };
        let run = trimmed.chars().take_while(|x| *x == c).count();
        if run < 3 {
            continue;
        }
        open = match open {
            None => Some((c, run)),
            Some((o, n)) if o == c && run >= n && trimmed[run..].trim().is_empty() => None,
            still => still,
        };
    }
    if let Some((c, n)) = open {
        write!(out, "\n{}", c.to_string().repeat(n))?;
    }
    writeln!(out, "\n")
}

/// Text in a fenced code block whose fence is longer than any backtick run in it.
pub fn fence(text: &str, info: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    let ticks = "`".repeat(longest_ticks(text).max(2) + 1);
    writeln!(out, "{ticks}{info}")?;
    out.write_all(text.as_bytes())?;
    if !text.is_empty() && !text.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "{ticks}\n")
}

/// A folded section: `<details>` with a plain-text summary.
pub fn folded(
    summary: &str,
    body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "<details><summary>{}</summary>\n", escape_html(summary))?;
    body(out)?;
    writeln!(out, "</details>\n")
}

/// Inline code holding any text on one line.
pub fn code_span(text: &str) -> String {
    let line = text.replace(['\n', '\r'], " ");
    let ticks = "`".repeat(longest_ticks(&line) + 1);
    let pad = if line.starts_with('`') || line.ends_with('`') || line.is_empty() { " " } else { "" };
    format!("{ticks}{pad}{line}{pad}{ticks}")
}

/// The longest run of backticks in `text`.
fn longest_ticks(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut longest, mut end) = (0, 0);
    for start in memchr::memchr_iter(b'`', bytes) {
        if start < end {
            continue;
        }
        end = start + bytes[start..].iter().take_while(|b| **b == b'`').count();
        longest = longest.max(end - start);
    }
    longest
}

pub fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Text on one line that Markdown shows as it is.
pub fn escape_line(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 8);
    let mut done = 0;
    for (i, b) in text.bytes().enumerate() {
        // Every byte that needs care is ASCII, so `i` is always a character boundary here.
        match b {
            b'\\' | b'`' | b'*' | b'_' | b'[' | b']' | b'<' | b'>' | b'#' | b'|' | b'~' | b'!' | b'&' => {
                escaped.push_str(&text[done..i]);
                escaped.push('\\');
                done = i;
            }
            b'\n' | b'\r' => {
                escaped.push_str(&text[done..i]);
                escaped.push(' ');
                done = i + 1;
            }
            _ => {}
        }
    }
    escaped.push_str(&text[done..]);
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_and_code_spans_outgrow_the_backticks_inside() {
        let mut out = Vec::new();
        fence("a ```` b", "", &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "`````\na ```` b\n`````\n\n");
        assert_eq!(code_span("a `b` c"), "``a `b` c``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span("two\nlines"), "`two lines`");
    }

    #[test]
    fn one_line_text_escapes_what_markdown_would_read() {
        assert_eq!(
            escape_line("a*b_c `d` [e](f) <g> #h |i| ~j~ !k &l \\m"),
            r"a\*b\_c \`d\` \[e\](f) \<g\> \#h \|i\| \~j\~ \!k \&l \\m"
        );
        assert_eq!(escape_line("two\nlines\r\nhere é"), "two lines  here é");
    }

    #[test]
    fn a_fence_left_open_is_closed() {
        let mut out = Vec::new();
        markdown("see:\n```rust\nfn main() {}", &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "see:\n```rust\nfn main() {}\n```\n\n");
        let mut out = Vec::new();
        markdown("```\nclosed\n```", &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "```\nclosed\n```\n\n");
    }
}
