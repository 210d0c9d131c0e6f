//! Markdown transcripts (`--to markdown`): what a person reads of a session, as
//! CommonMark/GFM whatever the content. What a transcript shows is [`crate::write::transcript`]'s;
//! this module says how it looks in Markdown: text from tools in code fences longer than any
//! backtick run inside it, a message that leaves a fence open has it closed, folded sections as
//! `<details>`.

mod render;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::write::transcript::view::{Attachment, Exchange, Shown};
use crate::write::transcript::{self, Content, Frame, Header, ImagesShown, Listed, Style, Value, thousands};
use crate::write::{EventSink, Options, Target, WriteError, Writer};

use render::{code_span, escape_line, fence, folded, markdown};

/// The Markdown writer.
pub struct Markdown;

impl Writer for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["md"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["md", "markdown"]
    }

    fn description(&self) -> &'static str {
        "Markdown transcripts: prompts, answers, tool calls with their outputs; -o DIR/ for one per session and an index"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        transcript::open(MarkdownStyle { images: options.transcript.images }, self.name(), target, options)
    }

    fn side_files(&self, path: &Path, options: &Options) -> Vec<PathBuf> {
        transcript::side_files(path, options)
    }
}

/// How each section of a transcript looks in Markdown.
struct MarkdownStyle {
    images: ImagesShown,
}

impl MarkdownStyle {
    fn attachments(&self, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()> {
        for a in attachments {
            if let Some(link) = &a.link {
                writeln!(out, "![{}](<{}>)\n", a.what, link.replace('<', "%3C").replace('>', "%3E"))?;
                continue;
            }
            match (self.images == ImagesShown::Embedded).then(|| a.data_url()).flatten() {
                Some(url) => writeln!(out, "![{}]({url})\n", a.what)?,
                None => writeln!(out, "*{}*\n", escape_line(&a.placeholder()))?,
            }
        }
        Ok(())
    }
}

impl Frame for MarkdownStyle {
    fn open(&mut self, agent_id: &str, label: Option<&str>, out: &mut dyn Write) -> io::Result<()> {
        let label = label.map(|l| format!(": {l}")).unwrap_or_default();
        writeln!(
            out,
            "<details><summary>subagent {}{}</summary>\n",
            render::escape_html(agent_id),
            render::escape_html(&label)
        )?;
        writeln!(out, "<blockquote>\n")
    }

    fn close(&mut self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "</blockquote>\n</details>\n")
    }
}

impl Style for MarkdownStyle {
    fn extension(&self) -> &'static str {
        "md"
    }

    fn begin_document(&mut self, _title: &str, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn end_document(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn header(&mut self, header: &Header, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "## {}\n", escape_line(&header.title()))?;
        for (name, value, shown) in header.fields() {
            let value = match shown {
                Value::Text => escape_line(&value),
                Value::Code => code_span(&value),
                Value::Link(to) => format!("[{}](<{}>)", code_span(&value), to.replace('<', "%3C").replace('>', "%3E")),
            };
            writeln!(out, "- {name}: {value}")?;
        }
        writeln!(out)
    }

    fn end_session(&mut self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "---\n")
    }

    fn prompt(&mut self, text: &str, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "### User\n")?;
        if !text.trim().is_empty() {
            markdown(text, out)?;
        }
        self.attachments(attachments, out)
    }

    fn answer(&mut self, text: &str, attachments: &[Attachment], out: &mut dyn Write) -> io::Result<()> {
        if text.trim().is_empty() && attachments.is_empty() {
            return Ok(());
        }
        writeln!(out, "### Assistant\n")?;
        if !text.trim().is_empty() {
            markdown(text, out)?;
        }
        self.attachments(attachments, out)
    }

    fn section(&mut self, label: &str, content: Content, fold: bool, out: &mut dyn Write) -> io::Result<()> {
        let body = |out: &mut dyn Write| match content {
            Content::Markdown(text) => markdown(text, out),
            Content::Code(text, info) => fence(text, info, out),
        };
        if fold {
            folded(label, body, out)
        } else {
            writeln!(out, "*{}*\n", escape_line(label))?;
            body(out)
        }
    }

    fn note(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "*— {} —*\n", escape_line(text))
    }

    fn command(&mut self, text: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "**command** {}\n", code_span(text))
    }

    fn exchange(&mut self, x: &Exchange, fold: bool, out: &mut dyn Write) -> io::Result<()> {
        let key = x.key.as_deref().map(|k| format!(": {}", code_span(k))).unwrap_or_default();
        writeln!(out, "**{}** {}{key}\n", escape_line(&x.label), code_span(x.name))?;
        match &x.shown {
            Some(Shown::Diff(diff)) => fence(diff, "diff", out)?,
            Some(Shown::Checklist(items)) => {
                for (done, what) in items {
                    writeln!(out, "- [{}] {}", if *done { "x" } else { " " }, escape_line(what))?;
                }
                writeln!(out)?;
            }
            None => {}
        }
        if let Some((input, json)) = &x.input {
            folded("input", |out| fence(input, if *json { "json" } else { "" }, out), out)?;
        }
        let Some(output) = x.output else {
            return self.note("no output recorded", out);
        };
        let label = x.output_label();
        if output.text.is_empty() {
            writeln!(out, "*{label}*\n")?;
        } else if fold {
            folded(&label, |out| fence(&output.text, "", out), out)?;
        } else {
            writeln!(out, "*{label}*\n")?;
            fence(&output.text, "", out)?;
        }
        self.attachments(&x.attachments, out)
    }

    fn index(&mut self, sessions: &[Listed], empty: usize, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "# Sessions\n")?;
        let mut project: Option<&str> = None;
        for s in sessions {
            let cwd = s.summary.cwd.as_deref().unwrap_or("(no directory)");
            if project != Some(cwd) {
                project = Some(cwd);
                writeln!(out, "\n## {}\n", escape_line(cwd))?;
                writeln!(out, "| started | session | agent | minutes | prompts | tool calls | tokens |")?;
                writeln!(out, "|---|---|---|--:|--:|--:|--:|")?;
            }
            let started =
                s.summary.started_at.map_or_else(|| "-".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string());
            let minutes = s.minutes().map_or_else(|| "-".to_owned(), |m| m.to_string());
            let title = s.summary.title.as_deref().unwrap_or(&s.summary.session_id);
            let title = transcript::view::one_line(title, 80);
            let link = format!("[{}](<{}>)", escape_line(&title).replace('|', "\\|"), s.path.replace('>', "%3E"));
            writeln!(
                out,
                "| {started} | {link} | {} | {minutes} | {} | {} | {} |",
                s.summary.agent.as_str(),
                thousands(s.prompts),
                thousands(s.summary.counts.tool_calls),
                thousands(s.summary.usage.total_tokens)
            )?;
        }
        if empty > 0 {
            let what = if empty == 1 { "session has" } else { "sessions have" };
            writeln!(
                out,
                "\n*{empty} more {what} nothing to show (only metadata, or only events replayed from another session) and no file.*"
            )?;
        }
        Ok(())
    }
}
