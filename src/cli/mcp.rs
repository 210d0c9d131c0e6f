//! `agentlog mcp`: a Model Context Protocol server on standard input and output, so that agents
//! can look through earlier sessions: list them, search them, read one as Markdown, and sum
//! their usage and tool calls.
//!
//! It reads only the inputs it was started with (the agents' default places when none): no
//! tool takes a path. Each tool runs the command it is named after (`search --json`, `usage
//! --json`, …) on those inputs, on a thread of its own, and gives its output; what the command
//! would have reported on stderr comes back as a tool error. Standard output carries the
//! protocol only.

use std::cell::RefCell;
use std::io;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::args::{Args, McpArgs};
use super::exit::Exit;
use super::report::Reporter;

thread_local! {
    /// Where commands run on this thread write what they would write on standard output, when
    /// set ([`stdout`]).
    static CAPTURE: RefCell<Option<Captured>> = const { RefCell::new(None) };
}

/// Output captured for a tool.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Standard output, or the capture of a tool running on this thread.
pub fn stdout() -> Box<dyn io::Write + Send> {
    match CAPTURE.with(|c| c.borrow().clone()) {
        Some(captured) => Box::new(captured),
        None => Box::new(io::stdout()),
    }
}

/// Runs `agentlog mcp` until the client closes standard input.
pub fn run(args: &McpArgs, reporter: &Reporter) -> Exit {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            reporter.error(&super::error::CliError::output(&None, e));
            return Exit::Output;
        }
    };
    let server = Server { inputs: args.inputs.clone(), from: args.from.clone() };
    let served = runtime.block_on(async move {
        let service = server.serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())
    });
    match served {
        Ok(_) => Exit::Success,
        Err(message) => {
            reporter.error(&super::error::CliError::Usage { message: format!("mcp: {message}") });
            Exit::Input
        }
    }
}

/// The server: the inputs every tool reads.
#[derive(Clone)]
struct Server {
    inputs: Vec<String>,
    from: String,
}

/// Filters most tools take.
#[derive(Debug, Default, Deserialize, JsonSchema)]
struct Filters {
    /// Only this agent: claude-code, codex, gemini-cli, copilot-cli, opencode, …
    agent: Option<String>,
    /// Only sessions whose working directory holds this text, or matches this glob pattern.
    project: Option<String>,
    /// Only from this date (2026-02-23) or time (RFC 3339) on, in UTC.
    since: Option<String>,
    /// Only up to this date (inclusive) or time, in UTC.
    until: Option<String>,
}

impl Filters {
    fn args(&self) -> Vec<String> {
        let mut args = vec!["--tz=UTC".to_owned()];
        let pairs =
            [("agent", &self.agent), ("project", &self.project), ("since", &self.since), ("until", &self.until)];
        for (name, value) in pairs {
            if let Some(value) = value {
                args.push(format!("--{name}={value}"));
            }
        }
        args
    }
}

/// `list_sessions`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ListParams {
    #[serde(flatten)]
    filters: Filters,
    /// Sessions per page (default 50).
    limit: Option<usize>,
    /// Sessions to skip, for the next page (default 0).
    offset: Option<usize>,
}

/// `search`.
#[derive(Debug, Deserialize, JsonSchema)]
struct SearchParams {
    /// Words and "quoted phrases" a session must all hold (case-insensitive, whole words), or a
    /// regular expression with `regex`.
    query: String,
    /// Take `query` as one regular expression.
    regex: Option<bool>,
    /// Search only these parts: prompt, answer, reasoning, tool-input, tool-output.
    #[serde(rename = "in")]
    fields: Option<Vec<String>>,
    /// Search only the calls and outputs of this tool (a part of its name or a glob pattern).
    tool: Option<String>,
    #[serde(flatten)]
    filters: Filters,
    /// Sessions to give at most (default 10).
    limit: Option<usize>,
}

/// `read_session`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ReadParams {
    /// The session's id, or its start.
    session_id: String,
    /// Characters of the transcript to skip, for the next page (default 0).
    offset: Option<usize>,
    /// Characters per page (default 20000).
    limit: Option<usize>,
}

/// `usage` and `tool_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
struct SumParams {
    /// Group rows by these keys, in order. usage: day, week, month, session, project, model,
    /// agent (default day); tool_stats: tool, family, session, project, day, agent, model
    /// (default tool).
    by: Option<Vec<String>>,
    #[serde(flatten)]
    filters: Filters,
}

impl SumParams {
    /// The command line of `usage --json` or `tools --json`.
    fn args(&self) -> Vec<String> {
        let mut args = self.filters.args();
        args.push("--json".to_owned());
        args.extend(self.by.iter().flatten().map(|key| format!("--by={key}")));
        args
    }
}

/// A page of text: its characters from `offset`, at most `limit`.
fn page(text: &str, offset: usize, limit: usize) -> serde_json::Value {
    let total = text.chars().count();
    let start = offset.min(total);
    let end = start.saturating_add(limit).min(total);
    let chunk: String = text.chars().skip(start).take(end - start).collect();
    serde_json::json!({
        "text": chunk,
        "offset": start,
        "total": total,
        "next_offset": (end < total).then_some(end),
    })
}

impl Server {
    /// Runs `agentlog COMMAND ARGS... -- INPUTS...` on a thread of the blocking pool with its
    /// output captured: the output, or the problems it reported as a tool error.
    async fn command(&self, command: &str, args: Vec<String>, positional: Vec<String>) -> CallToolResult {
        let mut argv = vec!["agentlog".to_owned(), "-q".to_owned(), "--color=never".to_owned(), command.to_owned()];
        argv.push(format!("--from={}", self.from));
        argv.extend(args);
        argv.push("--".to_owned());
        argv.extend(positional);
        argv.extend(self.inputs.iter().cloned());
        let ran = tokio::task::spawn_blocking(move || {
            let parsed = match Args::from_arguments(argv.iter().map(std::ffi::OsString::from)) {
                Ok(parsed) => parsed,
                Err(e) => return Err(e.to_string()),
            };
            let reporter = Reporter::keeping();
            let captured = Captured::default();
            CAPTURE.with(|c| *c.borrow_mut() = Some(captured.clone()));
            let exit = super::run_with(parsed, &reporter);
            CAPTURE.with(|c| *c.borrow_mut() = None);
            let output = std::mem::take(&mut *captured.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
            let problems: Vec<String> = reporter
                .take()
                .into_iter()
                .map(|p| match p.help {
                    Some(help) => format!("{} ({help})", p.message),
                    None => p.message,
                })
                .collect();
            match exit {
                Exit::Success | Exit::Warnings => Ok(String::from_utf8_lossy(&output).into_owned()),
                _ => Err(if problems.is_empty() { format!("failed ({exit:?})") } else { problems.join("\n") }),
            }
        })
        .await;
        match ran {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok(Err(message)) => CallToolResult::error(vec![ContentBlock::text(message)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("internal error: {e}"))]),
        }
    }
}

#[tool_handler(name = "agentlog")]
impl ServerHandler for Server {}

#[tool_router]
impl Server {
    /// The sessions of the coding agents' logs, newest first: agent, session id, project, first
    /// prompt and start time; paged.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn list_sessions(&self, Parameters(p): Parameters<ListParams>) -> CallToolResult {
        let mut args = p.filters.args();
        args.push("--json".to_owned());
        args.push(format!("--limit={}", p.limit.unwrap_or(50)));
        args.push(format!("--offset={}", p.offset.unwrap_or(0)));
        self.command("sessions", args, Vec::new()).await
    }

    /// The sessions whose prompts, answers, reasoning, tool inputs or outputs match the query,
    /// best first, each with its best matches (snippets) and session id.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn search(&self, Parameters(p): Parameters<SearchParams>) -> CallToolResult {
        let mut args = p.filters.args();
        args.push("--json".to_owned());
        args.push(format!("--limit={}", p.limit.unwrap_or(10)));
        if p.regex == Some(true) {
            args.push("--regex".to_owned());
        }
        for field in p.fields.unwrap_or_default() {
            args.push(format!("--in={field}"));
        }
        if let Some(tool) = p.tool {
            args.push(format!("--tool={tool}"));
        }
        self.command("search", args, vec![p.query]).await
    }

    /// One session as a Markdown transcript (prompts, answers, tool calls and outputs), a page
    /// of characters at a time: `next_offset` gives the next page.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn read_session(&self, Parameters(p): Parameters<ReadParams>) -> CallToolResult {
        let args =
            vec![format!("--session={}", p.session_id), "--to=markdown".to_owned(), "--reasoning=full".to_owned()];
        let result = self.command("convert", args, Vec::new()).await;
        if result.is_error == Some(true) {
            return result;
        }
        let text: String = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        if text.trim().is_empty() {
            return CallToolResult::error(vec![ContentBlock::text(format!("no session {}", p.session_id))]);
        }
        let page = page(&text, p.offset.unwrap_or(0), p.limit.unwrap_or(20_000).max(1));
        CallToolResult::success(vec![ContentBlock::text(page.to_string())])
    }

    /// Tokens and cost, per day, week, month, session, project, model or agent (JSON).
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn usage(&self, Parameters(p): Parameters<SumParams>) -> CallToolResult {
        self.command("usage", p.args(), Vec::new()).await
    }

    /// Tool calls, failures and durations, per tool, family, session, project, day, agent or
    /// model (JSON).
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    async fn tool_stats(&self, Parameters(p): Parameters<SumParams>) -> CallToolResult {
        self.command("tools", p.args(), Vec::new()).await
    }
}
