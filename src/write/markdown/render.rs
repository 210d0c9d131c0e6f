//! The pieces of a Markdown transcript, each safe whatever text it holds.

use std::io::{self, Write};

use chrono::{DateTime, Utc};

use crate::model::{
    Agent, Event, MetaType, Payload, Reasoning, Role, ToolCall, ToolFamily, ToolOutput, UsageTotals, mcp_server,
};

/// Tool outputs longer than this many lines, or bytes, are folded.
const FOLD_LINES: usize = 20;
const FOLD_BYTES: usize = 2000;

/// Longest key argument shown on a tool call's line.
const KEY_CHARS: usize = 120;

/// What a finished session's index line says.
pub struct Closed {
    pub agent: Agent,
    pub id: String,
    pub cwd: Option<String>,
    pub started: Option<DateTime<Utc>>,
    pub ended: Option<DateTime<Utc>>,
    pub prompts: u64,
    pub tool_calls: u64,
    pub output_tokens: u64,
}

impl Closed {
    /// Minutes from the first event to the last.
    pub fn minutes(&self) -> Option<i64> {
        Some((self.ended? - self.started?).num_minutes())
    }
}

/// The session being written, and what its closing line will say.
pub struct Session {
    agent: Agent,
    id: String,
    cwd: Option<String>,
    started: Option<DateTime<Utc>>,
    ended: Option<DateTime<Utc>>,
    prompts: u64,
    tool_calls: u64,
    usage: UsageTotals,
    /// Events copied from an earlier session, not repeated.
    pub copied: u64,
    copies_noted: bool,
    /// Whether its header is written: not before it has something to show.
    pub opened: bool,
}

impl Session {
    /// The session `e` belongs to, nothing written yet.
    pub fn new(e: &Event) -> Self {
        Session {
            agent: e.agent,
            id: e.session_id.clone(),
            cwd: e.context.cwd.clone(),
            started: e.timestamp,
            ended: e.timestamp,
            prompts: 0,
            tool_calls: 0,
            usage: UsageTotals::default(),
            copied: 0,
            copies_noted: false,
            opened: false,
        }
    }

    /// Writes the header, with the context of `e`, its first event to show.
    pub fn open(&mut self, e: &Event, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        self.opened = true;
        writeln!(out, "## Session {}\n", code_span(&e.session_id))?;
        let version = e.context.agent_version.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
        writeln!(out, "- agent: {}{}", e.agent.as_str(), escape_line(&version))?;
        let fields = [("model", &e.context.model), ("directory", &e.context.cwd), ("branch", &e.context.git_branch)];
        for (name, value) in fields {
            if let Some(value) = value {
                writeln!(out, "- {name}: {}", code_span(value))?;
            }
        }
        if let Some(t) = self.started {
            writeln!(out, "- started: {}", t.format("%Y-%m-%d %H:%M:%S UTC"))?;
        }
        writeln!(out)
    }

    /// The agent of the session.
    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether `e` belongs to this session.
    pub fn is(&self, e: &Event) -> bool {
        self.agent == e.agent && self.id == e.session_id
    }

    /// Says once, before the session's own events, that copied ones were left out.
    pub fn note_copies(&mut self, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        if self.copied > 0 && !self.copies_noted {
            self.copies_noted = true;
            let text = format!("continues an earlier session: {} replayed events not repeated", self.copied);
            note(&text, out)?;
        }
        Ok(())
    }

    /// Counts an event of the session for its closing line.
    pub fn observe(&mut self, e: &Event) {
        if self.cwd.is_none() {
            self.cwd.clone_from(&e.context.cwd);
        }
        if let Some(t) = e.timestamp {
            self.started = Some(self.started.map_or(t, |s| s.min(t)));
            self.ended = Some(self.ended.map_or(t, |s| s.max(t)));
        }
        match &e.payload {
            Payload::Message(m) if m.role == Role::User && !e.injected => self.prompts += 1,
            Payload::ToolCall(_) => self.tool_calls += 1,
            Payload::Meta(m) if m.meta_type == MetaType::Usage => {
                if let Some(usage) = &m.usage {
                    self.usage.add(usage);
                }
            }
            _ => {}
        }
    }

    /// Writes the closing line; gives what an index says of the session.
    pub fn close(self, out: &mut (impl Write + ?Sized)) -> io::Result<Closed> {
        let closed = Closed {
            agent: self.agent,
            id: self.id,
            cwd: self.cwd,
            started: self.started,
            ended: self.ended,
            prompts: self.prompts,
            tool_calls: self.tool_calls,
            output_tokens: self.usage.output_tokens,
        };
        let duration = closed.minutes().map(|m| format!(" over {m} min")).unwrap_or_default();
        writeln!(
            out,
            "*{} prompts, {} tool calls{duration}; {}.*\n\n---\n",
            closed.prompts,
            closed.tool_calls,
            usage_line(&self.usage)
        )?;
        Ok(closed)
    }
}

/// Token usage of a session's responses, as the closing line shows it.
fn usage_line(usage: &UsageTotals) -> String {
    format!(
        "{} input, {} cache read, {} cache write, {} output tokens",
        usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens
    )
}

/// Tool calls waiting for their outputs.
#[derive(Default)]
pub struct Pending {
    calls: Vec<ToolCall>,
}

impl Pending {
    /// Holds a call until its output comes; a call without an id is written at once.
    pub fn call(&mut self, call: &ToolCall, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        if call.call_id.is_none() {
            return exchange(Some(call), None, out);
        }
        self.calls.push(call.clone());
        Ok(())
    }

    /// Writes an output with its call.
    pub fn output(&mut self, output: &ToolOutput, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        let at = self.calls.iter().position(|c| c.call_id.is_some() && c.call_id == output.call_id);
        let call = at.map(|i| self.calls.remove(i));
        exchange(call.as_ref(), Some(output), out)
    }

    /// Writes the calls still waiting, without output.
    pub fn flush(&mut self, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        for call in std::mem::take(&mut self.calls) {
            exchange(Some(&call), None, out)?;
        }
        Ok(())
    }
}

/// A user's prompt.
pub fn prompt(text: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    writeln!(out, "### User\n")?;
    markdown(text, out)
}

/// The assistant's text, its Markdown kept.
pub fn answer(text: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    if text.trim().is_empty() {
        return Ok(());
    }
    writeln!(out, "### Assistant\n")?;
    markdown(text, out)
}

/// Context the agent added to the conversation, folded and labelled by its first tag.
pub fn injected(role: Role, text: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    let tag = text.trim_start().strip_prefix('<').and_then(|t| t.split(['>', ' ', '\n']).next());
    let label = tag.filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    let label =
        label.map_or_else(|| format!("{} context", role.as_str()), |t| format!("{} context: {t}", role.as_str()));
    folded(&label, |out| fence(text, "", out), out)
}

/// Reasoning, folded; encrypted reasoning is only noted.
pub fn reasoning(r: &Reasoning, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    if r.text.trim().is_empty() {
        let what = if r.encrypted { "reasoning (encrypted, not shown)" } else { "reasoning (not recorded)" };
        return note(what, out);
    }
    folded("reasoning", |out| markdown(&r.text, out), out)
}

/// A one-line note between sections.
pub fn note(text: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    writeln!(out, "*— {} —*\n", escape_line(text))
}

/// A tool call and its output, either of which may be missing.
fn exchange(call: Option<&ToolCall>, output: Option<&ToolOutput>, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    let name = call.map(|c| c.name.as_str()).or_else(|| output.and_then(|o| o.name.as_deref())).unwrap_or("tool");
    let input =
        call.and_then(|c| c.input.as_ref()).and_then(|j| serde_json::from_str::<serde_json::Value>(j.get()).ok());
    let key = input.as_ref().and_then(key_argument).map(|k| format!(": {}", code_span(&k))).unwrap_or_default();
    let family = ToolFamily::of(name);
    let label = match mcp_server(name) {
        Some(server) => format!("MCP {}", escape_line(server)),
        None => family.label().to_owned(),
    };
    writeln!(out, "**{label}** {}{key}\n", code_span(name))?;
    if let Some(call) = call {
        shown(family, input.as_ref(), call.input_text.as_deref(), out)?;
        let input = match (&input, &call.input, &call.input_text) {
            (Some(value), _, _) => serde_json::to_string_pretty(value).unwrap_or_default(),
            (None, Some(json), _) => json.get().to_owned(),
            (None, None, Some(text)) => text.clone(),
            (None, None, None) => String::new(),
        };
        if !input.is_empty() {
            let info = if call.input.is_some() { "json" } else { "" };
            folded("input", |out| fence(&input, info, out), out)?;
        }
    }
    let Some(output) = output else {
        return note("no output recorded", out);
    };
    let lines = output.text.lines().count();
    let error = if output.is_error == Some(true) { ", error" } else { "" };
    let exit = output.exit_code.map(|c| format!(", exit code {c}")).unwrap_or_default();
    let label = format!("output, {lines} lines{error}{exit}");
    if lines > FOLD_LINES || output.text.len() > FOLD_BYTES {
        folded(&label, |out| fence(&output.text, "", out), out)
    } else {
        writeln!(out, "*{label}*\n")?;
        fence(&output.text, "", out)
    }
}

/// What a call does, shown as it reads best: edits as unified diffs, plans as checklists.
fn shown(
    family: ToolFamily,
    input: Option<&serde_json::Value>,
    text: Option<&str>,
    out: &mut (impl Write + ?Sized),
) -> io::Result<()> {
    let str_at = |v: &serde_json::Value, k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
    match (family, input) {
        (ToolFamily::Edit, Some(input)) => {
            let path = str_at(input, "file_path").unwrap_or_default();
            let mut edits: Vec<(String, String)> = Vec::new();
            if let (Some(old), Some(new)) = (str_at(input, "old_string"), str_at(input, "new_string")) {
                edits.push((old, new));
            }
            for edit in input.get("edits").and_then(serde_json::Value::as_array).into_iter().flatten() {
                if let (Some(old), Some(new)) = (str_at(edit, "old_string"), str_at(edit, "new_string")) {
                    edits.push((old, new));
                }
            }
            let patch = str_at(input, "input").or_else(|| str_at(input, "patch"));
            let mut diff = String::new();
            for (old, new) in &edits {
                let text = similar::TextDiff::from_lines(old.as_str(), new.as_str());
                diff.push_str(&text.unified_diff().context_radius(3).header(&path, &path).to_string());
            }
            match (diff.is_empty(), patch) {
                (false, _) => fence(&diff, "diff", out),
                (true, Some(patch)) => fence(&patch, "diff", out),
                (true, None) => Ok(()),
            }
        }
        (ToolFamily::Edit, None) => text.map_or(Ok(()), |patch| fence(patch, "diff", out)),
        (ToolFamily::Plan, Some(input)) => {
            let items = input.get("todos").or_else(|| input.get("plan")).and_then(serde_json::Value::as_array);
            for item in items.into_iter().flatten() {
                let what = str_at(item, "content").or_else(|| str_at(item, "step")).unwrap_or_default();
                let done = str_at(item, "status").is_some_and(|s| s == "completed");
                writeln!(out, "- [{}] {}", if done { "x" } else { " " }, escape_line(&what))?;
            }
            if items.is_some_and(|i| !i.is_empty()) {
                writeln!(out)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The argument that says most about a call: the command, path, pattern, URL or query.
fn key_argument(input: &serde_json::Value) -> Option<String> {
    let keys = ["command", "cmd", "file_path", "path", "pattern", "url", "query", "description", "prompt"];
    let value = keys.iter().find_map(|k| input.get(k))?;
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => {
            parts.iter().map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned)).collect::<Vec<_>>().join(" ")
        }
        other => other.to_string(),
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = line.chars().take(KEY_CHARS).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    Some(short)
}

/// Markdown from the log, kept as it is, but with any code fence it leaves open closed, so that
/// it cannot swallow the rest of the page.
fn markdown(text: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
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
fn fence(text: &str, info: &str, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    let ticks = "`".repeat(longest_run(text, '`').max(2) + 1);
    writeln!(out, "{ticks}{info}")?;
    out.write_all(text.as_bytes())?;
    if !text.is_empty() && !text.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "{ticks}\n")
}

/// A folded section: `<details>` with a plain-text summary.
fn folded<W: Write + ?Sized>(
    summary: &str,
    body: impl FnOnce(&mut W) -> io::Result<()>,
    out: &mut W,
) -> io::Result<()> {
    writeln!(out, "<details><summary>{}</summary>\n", escape_html(summary))?;
    body(out)?;
    writeln!(out, "</details>\n")
}

/// Inline code holding any text on one line.
fn code_span(text: &str) -> String {
    let line = text.replace(['\n', '\r'], " ");
    let ticks = "`".repeat(longest_run(&line, '`') + 1);
    let pad = if line.starts_with('`') || line.ends_with('`') || line.is_empty() { " " } else { "" };
    format!("{ticks}{pad}{line}{pad}{ticks}")
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for x in text.chars() {
        run = if x == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Text on one line that Markdown shows as it is.
pub fn escape_line(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\`*_[]<>#|~!&".contains(c) {
            escaped.push('\\');
        }
        escaped.push(if c == '\n' { ' ' } else { c });
    }
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
    fn key_arguments_are_cut_only_when_long() {
        let call = |command: &str| serde_json::json!({ "command": command });
        let spaced = format!("ls{}-la", " ".repeat(200));
        assert_eq!(key_argument(&call(&spaced)).unwrap(), "ls -la");
        let long = "x".repeat(KEY_CHARS + 1);
        assert_eq!(key_argument(&call(&long)).unwrap(), format!("{}…", "x".repeat(KEY_CHARS)));
        assert_eq!(key_argument(&serde_json::json!({ "command": ["git", "status"] })).unwrap(), "git status");
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
