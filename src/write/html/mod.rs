//! HTML transcripts (`--to html`): one self-contained page per document, with inline CSS, no
//! script, folding by `<details>`, light and dark by `prefers-color-scheme`, readable on a
//! phone. What a transcript shows is [`crate::write::transcript`]'s; this module says how it
//! looks in HTML. Every string from the log is escaped ([`safe`]); the page's Content Security
//! Policy allows no script and no network access besides, should anything slip through.

pub(crate) mod safe;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::write::transcript::view::{Attachment, Exchange, Shown, one_line};
use crate::write::transcript::{self, Content, Frame, Header, ImagesShown, Listed, Style, Value, anchor, thousands};
use crate::write::{EventSink, Options, Target, WriteError, Writer};

use safe::{escape, escaped, markdown};

/// The page's style sheet.
const CSS: &str = include_str!("page.css");

/// No script, no network: only the inline style sheet and embedded images.
const POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/// The same, and image files beside the page (`--images files`).
const POLICY_WITH_FILES: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data: 'self' file:; base-uri 'none'; form-action 'none'";

/// The HTML writer.
pub struct Html;

impl Writer for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["html", "htm"]
    }

    fn description(&self) -> &'static str {
        "HTML transcripts: one self-contained page, no script; -o DIR/ for one per session and an index"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        transcript::open(HtmlStyle { images: options.transcript.images }, self.name(), target, options)
    }

    fn side_files(&self, path: &Path, options: &Options) -> Vec<PathBuf> {
        transcript::side_files(path, options)
    }
}

/// How each section of a transcript looks in HTML.
struct HtmlStyle {
    images: ImagesShown,
}

impl HtmlStyle {
    fn attachments(&self, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()> {
        for a in attachments {
            if let Some(link) = &a.link {
                writeln!(out, "<img class=\"embedded\" alt=\"{}\" src=\"{}\">", a.what, escaped(link))?;
                continue;
            }
            match (self.images == ImagesShown::Embedded).then(|| a.data_url()).flatten() {
                Some(url) => writeln!(out, "<img class=\"embedded\" alt=\"{}\" src=\"{url}\">", a.what)?,
                None => writeln!(out, "<p class=\"attachment\">{}</p>", escaped(&a.placeholder()))?,
            }
        }
        Ok(())
    }

    fn turn(&self, who: &str, text: &str, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "<section class=\"turn {}\"><div class=\"who\">{who}</div>", who.to_lowercase())?;
        if !text.trim().is_empty() {
            write!(out, "<div class=\"md\">")?;
            markdown(text, out)?;
            writeln!(out, "</div>")?;
        }
        self.attachments(attachments, out)?;
        writeln!(out, "</section>")
    }
}

/// Text in a code block; a diff's lines marked as added or removed.
fn pre(text: &str, info: &str, out: &mut dyn Write) -> io::Result<()> {
    write!(out, "<pre><code>")?;
    if info == "diff" {
        for line in text.split_inclusive('\n') {
            let class = match line.as_bytes().first() {
                Some(b'+') if !line.starts_with("+++") => Some("diff-add"),
                Some(b'-') if !line.starts_with("---") => Some("diff-del"),
                _ => None,
            };
            match class {
                Some(class) => {
                    write!(out, "<span class=\"{class}\">")?;
                    escape(line, out)?;
                    write!(out, "</span>")?;
                }
                None => escape(line, out)?,
            }
        }
    } else {
        escape(text, out)?;
    }
    writeln!(out, "</code></pre>")
}

/// A folded section.
fn folded(
    summary: &str,
    class: &str,
    body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "<details class=\"{class}\"><summary>{}</summary>", escaped(summary))?;
    body(out)?;
    writeln!(out, "</details>")
}

impl Frame for HtmlStyle {
    fn open(&mut self, agent_id: &str, label: Option<&str>, out: &mut dyn Write) -> io::Result<()> {
        let label = label.map(|l| format!(": {}", escaped(l))).unwrap_or_default();
        writeln!(
            out,
            "<details class=\"subagent\"><summary>subagent <code>{}</code>{label}</summary>",
            escaped(agent_id)
        )
    }

    fn close(&mut self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "</details>")
    }
}

impl Style for HtmlStyle {
    fn extension(&self) -> &'static str {
        "html"
    }

    fn begin_document(&mut self, title: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">")?;
        writeln!(out, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")?;
        let policy = if self.images == ImagesShown::Files { POLICY_WITH_FILES } else { POLICY };
        writeln!(out, "<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">")?;
        writeln!(out, "<meta name=\"referrer\" content=\"no-referrer\">")?;
        writeln!(out, "<meta name=\"generator\" content=\"agentlog\">")?;
        writeln!(
            out,
            "<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>",
            escaped(&one_line(title, 120))
        )
    }

    fn end_document(&mut self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "</main>\n</body>\n</html>")
    }

    fn header(&mut self, header: &Header, out: &mut dyn Write) -> io::Result<()> {
        let s = header.summary;
        writeln!(out, "<article class=\"session\" id=\"{}\">", escaped(&anchor(s.agent, &s.session_id)))?;
        writeln!(out, "<header>\n<h2>{}</h2>\n<dl class=\"facts\">", escaped(&header.title()))?;
        for (name, value, shown) in header.fields() {
            let value = match shown {
                Value::Text => escaped(&value),
                Value::Code => format!("<code>{}</code>", escaped(&value)),
                Value::Link(to) => format!("<a href=\"{}\"><code>{}</code></a>", escaped(&to), escaped(&value)),
            };
            writeln!(out, "<dt>{name}</dt><dd>{value}</dd>")?;
        }
        writeln!(out, "</dl>\n</header>")
    }

    fn end_session(&mut self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "</article>")
    }

    fn prompt(&mut self, text: &str, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()> {
        self.turn("User", text, attachments, out)
    }

    fn answer(&mut self, text: &str, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()> {
        if text.trim().is_empty() && attachments.is_empty() {
            return Ok(());
        }
        self.turn("Assistant", text, attachments, out)
    }

    fn section(&mut self, label: &str, content: Content, fold: bool, out: &mut dyn Write) -> io::Result<()> {
        let body = |out: &mut dyn Write| match content {
            Content::Markdown(text) => {
                write!(out, "<div class=\"md\">")?;
                markdown(text, out)?;
                writeln!(out, "</div>")
            }
            Content::Code(text, info) => pre(text, info, out),
        };
        if fold {
            folded(label, "section", body, out)
        } else {
            writeln!(out, "<section class=\"turn\"><div class=\"who\">{}</div>", escaped(label))?;
            body(out)?;
            writeln!(out, "</section>")
        }
    }

    fn note(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "<p class=\"note\">— {} —</p>", escaped(text))
    }

    fn command(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "<p class=\"note\">command <code>{}</code></p>", escaped(text))
    }

    fn exchange(&mut self, x: &Exchange, fold: bool, out: &mut dyn Write) -> io::Result<()> {
        let failed = x.output.is_some_and(|o| o.is_error == Some(true));
        writeln!(out, "<div class=\"tool{}\">", if failed { " failed" } else { "" })?;
        write!(
            out,
            "<div class=\"call\"><span class=\"label\">{}</span><code>{}</code>",
            escaped(&x.label),
            escaped(x.name)
        )?;
        if let Some(key) = &x.key {
            write!(out, ": <code>{}</code>", escaped(key))?;
        }
        writeln!(out, "</div>")?;
        match &x.shown {
            Some(Shown::Diff(diff)) => pre(diff, "diff", out)?,
            Some(Shown::Checklist(items)) => {
                writeln!(out, "<ul class=\"checklist\">")?;
                for (done, what) in items {
                    writeln!(out, "<li>{} {}</li>", if *done { "☑" } else { "☐" }, escaped(what))?;
                }
                writeln!(out, "</ul>")?;
            }
            None => {}
        }
        if let Some((input, json)) = &x.input {
            folded("input", "input", |out| pre(input, if *json { "json" } else { "" }, out), out)?;
        }
        match x.output {
            None => writeln!(out, "<p class=\"outcome\">no output recorded</p>")?,
            Some(output) => {
                let label = x.output_label();
                if output.text.is_empty() {
                    writeln!(out, "<p class=\"outcome\">{}</p>", escaped(&label))?;
                } else if fold {
                    folded(&label, "output", |out| pre(&output.text, "", out), out)?;
                } else {
                    writeln!(out, "<p class=\"outcome\">{}</p>", escaped(&label))?;
                    pre(&output.text, "", out)?;
                }
                self.attachments(&x.attachments, out)?;
            }
        }
        writeln!(out, "</div>")
    }

    fn anchors(&self) -> bool {
        true
    }

    fn index(&mut self, sessions: &[Listed], empty: usize, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "<h1>Sessions</h1>")?;
        let mut project: Option<&str> = None;
        for s in sessions {
            let cwd = s.summary.cwd.as_deref().unwrap_or("(no directory)");
            if project != Some(cwd) {
                if project.is_some() {
                    writeln!(out, "</tbody></table>")?;
                }
                project = Some(cwd);
                writeln!(out, "<h2><code>{}</code></h2>", escaped(cwd))?;
                writeln!(
                    out,
                    "<table><thead><tr><th>started</th><th>session</th><th>agent</th><th>minutes</th><th>prompts</th><th>tool calls</th><th>tokens</th></tr></thead><tbody>"
                )?;
            }
            let started =
                s.summary.started_at.map_or_else(|| "-".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string());
            let minutes = s.minutes().map_or_else(|| "-".to_owned(), |m| m.to_string());
            let title = one_line(s.summary.title.as_deref().unwrap_or(&s.summary.session_id), 80);
            writeln!(
                out,
                "<tr><td>{started}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"n\">{minutes}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escaped(&s.path),
                escaped(&title),
                s.summary.agent.as_str(),
                thousands(s.prompts),
                thousands(s.summary.counts.tool_calls),
                thousands(s.summary.usage.total_tokens)
            )?;
        }
        if project.is_some() {
            writeln!(out, "</tbody></table>")?;
        }
        if empty > 0 {
            let what = if empty == 1 { "session has" } else { "sessions have" };
            writeln!(
                out,
                "<p class=\"note\">{empty} more {what} nothing to show (only metadata, or only events replayed from another session) and no file.</p>"
            )?;
        }
        Ok(())
    }
}
