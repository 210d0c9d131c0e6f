//! `agentlog search`: sessions whose prompts, answers, reasoning, tool inputs or outputs match
//! a query ([`crate::stats::search`]), ranked, as text or JSON.

use std::io::IsTerminal;
use std::path::Path;

use crate::pipeline::{Held, Look};
use crate::read::{self, Settings};
use crate::stats::search::index::Index;
use crate::stats::search::{Field, Query, Results, SessionHits};

use super::args::{SearchArgs, SessionsArgs};
use super::exit::Exit;
use super::report::Reporter;

/// Runs `agentlog search`.
pub fn run(args: &SearchArgs, reporter: &Reporter) -> Exit {
    let usage = |message: String| {
        reporter.error(&super::error::CliError::Usage { message });
        Exit::Usage
    };
    let Some((filter, _)) = super::filter::resolve(&args.filter).inspect_err(|e| reporter.error(e)).ok() else {
        return Exit::Usage;
    };
    let mut query = match Query::parse(&args.query, args.regex) {
        Ok(query) => query,
        Err(message) => return usage(format!("{}: {message}", args.query)),
    };
    query.fields = fields(args);
    if query.fields.is_empty() && (!args.fields.is_empty() || !args.kinds.is_empty() || !args.roles.is_empty()) {
        return usage("--in, --kind and --role leave nothing to search together".into());
    }
    query.tools = match args.tools.iter().map(|t| t.parse()).collect() {
        Ok(tools) => tools,
        Err(message) => return usage(message),
    };
    query.filter = filter;
    let mut settings = Settings::new(super::sum::threads(args.jobs), read::DEFAULT_MAX_LINE_BYTES).unwrap_or_default();
    // Lines of bulk text (tools' outputs) without a term's words are not parsed either.
    if let Some(test) = query.line_test() {
        settings = settings.looking_for(test);
    }
    // A group of session files whose raw bytes lack a term cannot match: it is not parsed. Only
    // the files of agents whose sessions are their files alone are looked through (Claude Code,
    // Codex, Copilot CLI); the others' readers take text from other files (OpenCode's parts,
    // OpenHands' events) or from databases, where a value may be split across pages. Standard
    // input and a file that cannot be opened here are read. The files the look held (up to
    // 64 MiB of a group) are read from memory, not opened again, with every place of the words
    // in them: their lines are not looked through again. Once the words are seen and a file
    // does not fit, the look stops: the rest is read once, by the readers.
    let look = |group: &crate::pipeline::Group, held: &mut Held| {
        let mut scan = query.scan();
        for (i, item) in group.items.iter().enumerate() {
            let crate::pipeline::InputSpec::File(name) = &item.spec else { return Look::Read };
            if !self_contained(item.reader) || !is_text(name) {
                return Look::Read;
            }
            match scan.read_file(Path::new(name), i, held) {
                Ok(true) => {}
                Ok(false) if !scan.saw_all() => {}
                Ok(false) | Err(_) => return Look::Read,
            }
        }
        if scan.saw_all() { Look::Read } else { Look::Skip }
    };
    let indexed = from_index(args, &query, reporter);
    let searched = if indexed.is_some() { "index" } else { "files" };
    let (results, totals) = match indexed {
        Some(results) => (results, crate::pipeline::Totals::default()),
        None => {
            let summed = super::sum::sum_where(
                &args.inputs,
                &args.from,
                &settings,
                reporter,
                &look,
                |results: &mut Results, event| results.add(&query, event),
            );
            match summed {
                Ok(summed) => summed,
                Err(exit) => return exit,
            }
        }
    };
    let ranked = results.ranked();
    let shown: Vec<&SessionHits> = ranked.iter().take(args.limit).collect();
    let text = if args.json {
        let document = serde_json::json!({
            "query": args.query,
            "searched": searched,
            "sessions_matched": ranked.len(),
            "sessions": shown,
        });
        serde_json::to_string_pretty(&document).expect("results serialise") + "\n"
    } else {
        let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        human(&shown, ranked.len(), colour)
    };
    let printed = super::print(text.as_bytes(), reporter).max(Exit::of(&totals));
    if ranked.is_empty() && printed == Exit::Success { Exit::Warnings } else { printed }
}

/// The results from the index of the archive given as the one INPUT, when it has one that is
/// up to date and the query is words and phrases (`--no-index` reads the files instead).
/// An index that cannot be read, or a file changed under it, is said on stderr, and the files
/// are read.
fn from_index(args: &SearchArgs, query: &Query, reporter: &Reporter) -> Option<Results> {
    let [dir] = &args.inputs[..] else { return None };
    let dir = std::path::Path::new(dir);
    if args.no_index || !["auto", "unified"].contains(&args.from.as_str()) || !super::archive::is_archive(dir) {
        return None;
    }
    let fallback = |why: String| {
        reporter.info(&format!("agentlog: {why}; reading the files"));
        None
    };
    let index = match Index::open(dir) {
        Ok(index) => index?,
        Err(e) => return fallback(format!("the index of {} cannot be read ({e})", dir.display())),
    };
    if !index.is_current(dir) {
        let dir = dir.display();
        return fallback(format!("the index of {dir} is out of date (`agentlog archive {dir}` updates it)"));
    }
    match index.search(query) {
        Ok(results) => results,
        Err(e) => fallback(format!("the index of {} cannot be used ({e})", dir.display())),
    }
}

/// Whether a reader takes a session's text from its own file only.
fn self_contained(reader: &dyn read::Reader) -> bool {
    use crate::model::Agent;
    matches!(reader.agent(), Some(Agent::ClaudeCode | Agent::Codex | Agent::CopilotCli))
}

/// Whether a file holds its text as it is: JSON lines, JSON, Markdown.
fn is_text(name: &str) -> bool {
    let extension = std::path::Path::new(name).extension().and_then(|e| e.to_str()).unwrap_or("");
    ["jsonl", "json", "ndjson", "md"].iter().any(|e| extension.eq_ignore_ascii_case(e))
}

/// The fields `--in`, `--kind` and `--role` leave; empty for all.
fn fields(args: &SearchArgs) -> Vec<Field> {
    let by_kind = |kind: &str| match kind {
        "message" => vec![Field::Prompt, Field::Answer],
        "reasoning" => vec![Field::Reasoning],
        "tool_call" => vec![Field::ToolInput],
        _ => vec![Field::ToolOutput],
    };
    let by_role = |role: &str| match role {
        "user" => vec![Field::Prompt],
        "assistant" => vec![Field::Answer, Field::Reasoning, Field::ToolInput],
        _ => vec![Field::ToolOutput],
    };
    let sets: Vec<Vec<Field>> = [
        (!args.fields.is_empty())
            .then(|| Field::ALL.into_iter().filter(|f| args.fields.iter().any(|n| n == f.name())).collect()),
        (!args.kinds.is_empty()).then(|| args.kinds.iter().flat_map(|k| by_kind(k)).collect()),
        (!args.roles.is_empty()).then(|| args.roles.iter().flat_map(|r| by_role(r)).collect()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if sets.is_empty() {
        return Vec::new();
    }
    Field::ALL.into_iter().filter(|f| sets.iter().all(|set| set.contains(f))).collect()
}

/// The results as text: a few lines per session, the matches marked on a terminal.
fn human(sessions: &[&SessionHits], matched: usize, colour: bool) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if sessions.is_empty() {
        out.push_str("no session matches\n");
        return out;
    }
    let (bold, mark, dim, reset) =
        if colour { ("\x1b[1m", "\x1b[1;31m", "\x1b[2m", "\x1b[0m") } else { ("", "", "", "") };
    for (n, s) in sessions.iter().enumerate() {
        let when = s.started_at.map(|t| t.format("%Y-%m-%d %H:%M").to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{bold}{}. {}{reset}  {}  {when}  {}",
            n + 1,
            s.title.as_deref().unwrap_or("(no prompt)"),
            s.agent.as_str(),
            s.project.as_deref().unwrap_or("")
        );
        let _ = writeln!(
            out,
            "   {dim}{}  {} matching events, score {:.2}{reset}",
            s.session_id, s.events_matched, s.score
        );
        for hit in &s.hits {
            let mut line = String::new();
            let mut at = 0;
            for &(start, end) in &hit.highlights {
                if start < at {
                    continue;
                }
                line.push_str(&hit.snippet[at..start]);
                let _ = write!(line, "{mark}{}{reset}", &hit.snippet[start..end]);
                at = end;
            }
            line.push_str(&hit.snippet[at..]);
            let what = match &hit.tool {
                Some(tool) => format!("{} {tool}", hit.field_name()),
                None => hit.field_name().to_owned(),
            };
            let _ = writeln!(out, "   {dim}{what}:{reset} {line}");
        }
        out.push('\n');
    }
    if matched > sessions.len() {
        let _ = writeln!(out, "{dim}{} more sessions match; --limit N shows more{reset}", matched - sessions.len());
    }
    out
}

/// Runs `agentlog sessions`: every session, newest first.
pub fn sessions(args: &SessionsArgs, reporter: &Reporter) -> Exit {
    let Some((filter, _)) = super::filter::resolve(&args.filter).inspect_err(|e| reporter.error(e)).ok() else {
        return Exit::Usage;
    };
    let mut query = Query::all();
    query.filter = filter;
    let settings = Settings::new(super::sum::threads(args.jobs), read::DEFAULT_MAX_LINE_BYTES).unwrap_or_default();
    let summed = super::sum::sum(&args.inputs, &args.from, &settings, reporter, |results: &mut Results, event| {
        results.add(&query, event);
    });
    let (results, totals) = match summed {
        Ok(summed) => summed,
        Err(exit) => return exit,
    };
    let listed = results.listed();
    let total = listed.len();
    let page: Vec<&SessionHits> = listed.iter().skip(args.offset).take(args.limit.unwrap_or(usize::MAX)).collect();
    let text = if args.json {
        let rows: Vec<serde_json::Value> = page
            .iter()
            .map(|s| {
                serde_json::json!({
                    "agent": s.agent.as_str(),
                    "session_id": s.session_id,
                    "project": s.project,
                    "title": s.title,
                    "started_at": s.started_at.as_ref().map(crate::model::time::format),
                })
            })
            .collect();
        let next = (args.offset + page.len() < total).then_some(args.offset + page.len());
        let document = serde_json::json!({ "sessions_total": total, "next_offset": next, "sessions": rows });
        serde_json::to_string_pretty(&document).expect("sessions serialise") + "\n"
    } else {
        use std::fmt::Write as _;
        let mut out = String::new();
        for s in &page {
            let when = s.started_at.map_or_else(|| "-".repeat(17), |t| t.format("%Y-%m-%d %H:%MZ").to_string());
            let _ = writeln!(
                out,
                "{when}  {:<12}  {}  {}  {}",
                s.agent.as_str(),
                s.session_id,
                s.project.as_deref().unwrap_or("-"),
                s.title.as_deref().unwrap_or("")
            );
        }
        out
    };
    super::print(text.as_bytes(), reporter).max(Exit::of(&totals))
}
