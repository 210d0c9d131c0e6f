//! Text from the log made safe for HTML: escaped text, and the model's Markdown rendered with
//! every HTML tag in it shown as text, links kept only for safe schemes, and images turned into
//! links (a transcript loads nothing from the network).

use std::io::{self, Write};

use crate::write::SizedWrite;
use pulldown_cmark::{CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// Writes `text` with `&`, `<`, `>`, `"` and `'` escaped, for element content and quoted
/// attribute values alike.
pub fn escape(text: &str, out: &mut dyn Write) -> io::Result<()> {
    let bytes = text.as_bytes();
    let mut done = 0;
    for (i, b) in bytes.iter().enumerate() {
        let entity: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            b'\'' => b"&#39;",
            _ => continue,
        };
        out.write_all(&bytes[done..i])?;
        out.write_all(entity)?;
        done = i + 1;
    }
    out.write_all(&bytes[done..])
}

/// `text` escaped, as a string.
pub fn escaped(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    escape(text, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("escaping keeps UTF-8")
}

/// Whether a link may point there: `http`, `https` and `mailto` URLs, and links without a
/// scheme (relative paths, `#anchors`). Never `javascript:`, `data:` or `vbscript:`.
pub fn safe_url(url: &str) -> bool {
    let url: String = url.chars().filter(|c| !c.is_whitespace() && !c.is_control()).collect();
    let scheme_end = url.find(':');
    let path_start = url.find(['/', '?', '#']);
    match (scheme_end, path_start) {
        (None, _) => true,
        (Some(colon), Some(path)) if path < colon => true,
        (Some(colon), _) => ["http", "https", "mailto"].iter().any(|s| url[..colon].eq_ignore_ascii_case(s)),
    }
}

/// Writes the model's Markdown as HTML that runs nothing and loads nothing.
pub fn markdown(text: &str, out: &mut dyn Write) -> io::Result<()> {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::CodeBlock),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: checked(dest_url), title, id })
        }
        Event::Start(Tag::Image { dest_url, title, id, .. }) => {
            Event::Start(Tag::Link { link_type: LinkType::Inline, dest_url: checked(dest_url), title, id })
        }
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    pulldown_cmark::html::write_html_io(SizedWrite(out), events)
}

/// A link's target, or `#` when it is not safe.
fn checked(url: CowStr<'_>) -> CowStr<'_> {
    if safe_url(&url) { url } else { CowStr::Borrowed("#") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(text: &str) -> String {
        let mut out = Vec::new();
        markdown(text, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn tags_in_markdown_are_shown_not_run() {
        let out = html("hi <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n<div onclick=x>block</div>\n");
        assert!(!out.contains("<script") && !out.contains("<img") && !out.contains("<div"), "{out}");
        assert!(out.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{out}");
    }

    #[test]
    fn links_keep_only_safe_schemes_and_images_become_links() {
        let out =
            html("[a](javascript:alert(1)) [b]( JaVaScRiPt:x) [c](https://example.com) ![d](https://e.com/x.png)");
        assert!(!out.to_lowercase().contains("javascript"), "{out}");
        assert!(out.contains(r#"<a href="https://example.com">c</a>"#), "{out}");
        assert!(out.contains(r#"<a href="https://e.com/x.png">d</a>"#) && !out.contains("<img"), "{out}");
        assert!(safe_url("docs/a.md#x") && safe_url("#top") && safe_url("a/b:c"));
        assert!(!safe_url("java\tscript:x") && !safe_url("data:text/html,x") && !safe_url("vbscript:x"));
    }

    #[test]
    fn escaping_covers_both_quotes() {
        assert_eq!(escaped(r#"<a href="x" title='y'>&"#), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;");
    }
}
