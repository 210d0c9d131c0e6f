//! Command-line arguments, as close to what the user typed as clap allows.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::{Parser, Subcommand, ValueEnum};

use crate::read::READERS;
use crate::write::WRITERS;

mod find;
mod live;
mod report;
mod sums;

pub use find::{McpArgs, SearchArgs, SessionsArgs};
pub use live::{OtlpArgs, OtlpProtocol, WatchArgs};
pub use report::ReportArgs;
pub use sums::{DriftArgs, ToolsArgs, UsageArgs};

/// Examples at the end of `agentlog --help`.
const EXAMPLES: &str = "\
Examples:
  agentlog ls                                        the sessions convert would read
  agentlog convert -o sessions.parquet               every session of every agent, as Parquet
  agentlog convert ~/.codex/sessions | jq .kind      one agent's sessions, as unified JSONL
  agentlog convert -o out --to parquet --partition-by agent,date
                                                     a Hive dataset for DuckDB, Polars, Spark
  agentlog convert ~/.claude/projects -o transcripts/ --to html
                                                     a page per session to read, and an index
  agentlog convert --session 7acd --to markdown -o session.md
                                                     one session to share
  agentlog usage --by month --by model               tokens and cost per month and model
  agentlog tools --by family                         calls, failures and durations per tool family
  agentlog report --since 30d -o report.html         tokens, cost and tools as charts on one page
  agentlog handoff 7acd --to claude-code --write     continue a session of any agent in Claude Code
  agentlog watch --new | jq .kind                    every event as the agents write it
  agentlog search '\"migration failed\"'              the sessions that say so, best first
  claude mcp add agentlog -- agentlog mcp            let an agent search earlier sessions
  agentlog validate events.jsonl                     check a file against the published schema
  agentlog completions zsh > ~/.zfunc/_agentlog      shell completions (also bash, fish, …)";

/// What `agentlog --version` says: the program's version, the commit it was built from
/// (`unknown` outside a git checkout) and the event schema's version.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("AGENTLOG_COMMIT"),
    ", schema ",
    crate::schema_version!(),
    ")"
);

/// Convert coding-agent session logs into one unified event model.
#[derive(Debug, Parser)]
#[command(name = "agentlog", version = VERSION, propagate_version = true, max_term_width = 100, after_help = EXAMPLES)]
pub struct Args {
    /// Print nothing on stderr but errors: no progress, no warnings, no summary.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// When diagnostics on stderr are coloured: `auto` on a terminal unless `NO_COLOR` is set.
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert session files into unified events.
    Convert(ConvertArgs),
    /// List the session files convert would read: agent, session, size, version, path, kind;
    /// for an archive directory, its sessions and whether their sources still exist.
    Ls(LsArgs),
    /// Keep a copy of every session in DIR that survives the agents deleting their own: converts
    /// what is new or changed since the last run and keeps sessions whose sources are gone.
    Archive(ArchiveArgs),
    /// Tokens and cost of the model responses, by day, week, month, session, project, model or
    /// agent.
    Usage(UsageArgs),
    /// Tool calls, failures and durations, per tool or tool family, by session, project, day,
    /// agent or model.
    Tools(ToolsArgs),
    /// One HTML page of charts: tokens and cost per day by model and agent, sessions and
    /// prompts per project, tool calls and failures per family, the longest and costliest
    /// sessions with their transcripts.
    Report(ReportArgs),
    /// What agentlog does not map yet, per agent and version: record kinds kept as unknown
    /// events, fields kept in extra, and new kinds of file in an agent's places.
    Drift(DriftArgs),
    /// Hand a session of any agent over to Claude Code or Codex: write it where that agent
    /// resumes it, and print the command that does.
    Handoff(HandoffArgs),
    /// Find the sessions whose prompts, answers, reasoning or tool calls match words, phrases or
    /// a regular expression.
    Search(SearchArgs),
    /// List the sessions, newest first: start, agent, id, project and first prompt.
    Sessions(SessionsArgs),
    /// Serve the sessions to agents over the Model Context Protocol (stdio): list, search, read,
    /// usage and tool statistics.
    Mcp(McpArgs),
    /// Follow the agents' session files and write new events on standard output as unified
    /// JSON lines, as the agents write them.
    Watch(WatchArgs),
    /// Check unified JSONL or interchange files against the published schemas.
    Validate(ValidateArgs),
    /// Print a published schema: JSON Schema, or, for loaders of unified JSONL, Arrow or Spark.
    Schema {
        /// Which schema.
        #[arg(value_enum)]
        which: SchemaName,
    },
    /// Print a shell completion script, e.g. `agentlog completions bash > ~/.local/share/bash-completion/completions/agentlog`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `agentlog man > ~/.local/share/man/man1/agentlog.1`.
    Man,
}

impl Args {
    /// Parses a command line given as its words, the program's name first. `discover`, the old
    /// name of `ls`, is still understood, though not offered: as a clap alias it would come up in
    /// suggestions for typos.
    pub fn from_arguments(arguments: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Args, clap::Error> {
        let mut arguments: Vec<std::ffi::OsString> = arguments.into_iter().collect();
        if let Some(command) = arguments.iter_mut().skip(1).find(|a| !a.to_string_lossy().starts_with('-'))
            && command == "discover"
        {
            *command = "ls".into();
        }
        Args::try_parse_from(arguments)
    }
}

/// The help of INPUT, naming each agent's default places.
fn inputs_help() -> String {
    let homes: Vec<&str> = READERS.iter().filter_map(|r| r.home()).collect();
    format!(
        "Files, directories (read recursively), quoted glob patterns, or `-` for standard input; none reads the agents' default places ({})",
        homes.join(", ")
    )
}

/// Arguments of `agentlog convert`.
#[derive(Debug, clap::Args)]
pub struct ConvertArgs {
    /// Files, directories (read recursively), quoted glob patterns, or `-` for standard input;
    /// none reads the agents' default places.
    #[arg(value_name = "INPUT", help = inputs_help())]
    pub inputs: Vec<String>,

    /// Input format; `auto` tells each file's agent from its content.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// Output format; by default taken from the extension of -o (`.parquet`, `.arrow`), else
    /// `unified`.
    #[arg(long, short = 't', value_parser = PossibleValuesParser::new(to_values()))]
    pub to: Option<String>,

    /// Output file (or directory, with --partition-by); standard output when absent or `-`.
    /// Written under a temporary name and renamed when complete.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Write a Hive-style dataset under -o DIR, partitioned by these keys in this order
    /// (Parquet only).
    #[arg(long, value_name = "KEYS", value_delimiter = ',', value_enum)]
    pub partition_by: Vec<PartitionBy>,

    /// Threads reading inputs; all cores by default. The output does not depend on it.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Convert only shard K of N (for example 2/8): a fixed share of the sessions, all files of a
    /// session in the same shard, so that N runs together convert everything once.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,

    /// Write a JSON report of every input (status, events, diagnostics) to this file.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Longest input line read, in bytes; a longer line is reported and skipped without being
    /// held in memory.
    #[arg(long, value_name = "BYTES", default_value_t = crate::read::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,

    /// Allow -o inside an input directory.
    #[arg(long)]
    pub force: bool,

    /// With -o DIR/ (one file per session): skip inputs unchanged since the last run, as
    /// recorded in DIR/.agentlog-manifest.json, and redo the sessions of the rest.
    #[arg(long)]
    pub incremental: bool,

    /// Transcripts (markdown, html): show reasoning folded, in full, or not at all.
    #[arg(long, value_enum, default_value_t = ReasoningArg::Folded, value_name = "HOW", help_heading = "Transcripts")]
    pub reasoning: ReasoningArg,

    /// Transcripts: fold tool outputs longer than this many lines.
    #[arg(long, value_name = "N", default_value_t = 20, help_heading = "Transcripts")]
    pub fold_lines: usize,

    /// Transcripts: fold tool outputs longer than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 2000, help_heading = "Transcripts")]
    pub fold_bytes: usize,

    /// Transcripts: show images as placeholders (type and size), embed inline PNG, JPEG, GIF and
    /// WebP images as data, or write them to files beside the output (`out.files/`, `DIR/files/`).
    #[arg(long, value_enum, default_value_t = ImagesArg::Placeholder, value_name = "HOW", help_heading = "Transcripts")]
    pub images: ImagesArg,

    /// OpenTelemetry: record message content on the spans (prompts, answers, tool arguments and
    /// results); off by default, as the GenAI conventions ask.
    #[arg(long)]
    pub otel_content: bool,

    /// Sending traces to an OTLP endpoint.
    #[command(flatten)]
    pub otlp: OtlpArgs,

    /// Which sessions and events are written; --project and --model select whole sessions, by
    /// the first working directory and model they name.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Secrets and pseudonyms.
    #[command(flatten)]
    pub redact: super::redact::RedactArgs,
}

/// `--reasoning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReasoningArg {
    /// Folded, to be opened.
    Folded,
    /// In full.
    Full,
    /// Left out.
    Omit,
}

/// `--images`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImagesArg {
    /// A placeholder naming the type and size.
    Placeholder,
    /// Embedded as data.
    Embed,
    /// Written to files beside the output and linked.
    Files,
}

/// `--shard K/N`.
#[derive(Debug, Clone, Copy)]
pub struct Shard {
    /// This shard, from 1.
    pub k: u32,
    /// Number of shards.
    pub n: u32,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    let (k, n) = text.split_once('/').ok_or("expected K/N, such as 2/8")?;
    let (k, n): (u32, u32) =
        (k.trim().parse().map_err(|_| "K is not a number")?, n.trim().parse().map_err(|_| "N is not a number")?);
    if n == 0 || k == 0 || k > n {
        return Err(format!("expected 1 <= K <= N, but found {k}/{n}"));
    }
    Ok(Shard { k, n })
}

/// Which sessions and events a command looks at.
#[derive(Debug, clap::Args)]
pub struct FilterArgs {
    /// Only this session (its id or the start of it; a subagent goes with the session that
    /// started it); repeatable.
    #[arg(long = "session", value_name = "ID", help_heading = "Filters")]
    pub sessions: Vec<String>,

    /// Only from this date (2026-02-23) or time (2026-02-23T14:00, or RFC 3339) on, in --tz.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Only up to this date (inclusive) or time, in --tz.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// The time zone of dates and of days, weeks and months: UTC, local, an offset (+02:00) or a
    /// name (Europe/Berlin).
    #[arg(long, value_name = "ZONE", default_value = "local", help_heading = "Filters")]
    pub tz: String,

    /// Only this agent; repeatable.
    #[arg(long = "agent", value_name = "AGENT", value_parser = PossibleValuesParser::new(agent_values()), help_heading = "Filters")]
    pub agents: Vec<String>,

    /// Only sessions in a working directory holding this text, or matching this glob pattern
    /// (`*/work/*`); repeatable.
    #[arg(long = "project", value_name = "PATTERN", help_heading = "Filters")]
    pub projects: Vec<String>,

    /// Only this model: a part of its name (`opus`) or a glob pattern; repeatable.
    #[arg(long = "model", value_name = "PATTERN", help_heading = "Filters")]
    pub models: Vec<String>,
}

/// Arguments of `agentlog handoff`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  agentlog handoff 7acd --to claude-code                 where it would go (writes nothing)
  agentlog handoff 7acd --to claude-code --write         write it, print `cd … && claude --resume …`
  agentlog handoff 019a --to codex --cwd ~/src/app --write --register
  agentlog handoff 7acd --to codex ~/backup/sessions --write --redact")]
pub struct HandoffArgs {
    /// The session: its id, or the start of it, of any agent.
    #[arg(value_name = "SESSION")]
    pub session: String,

    /// Where to look for the session; none: the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// The agent that continues the session.
    #[arg(long, short = 't', value_parser = ["claude-code", "codex"])]
    pub to: String,

    /// The working directory the session continues in (the agent looks its sessions up by it);
    /// the session's own by default.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Write the session into the agent's own store (~/.claude/projects, ~/.codex/sessions);
    /// without it, nothing is written. An existing file is never replaced.
    #[arg(long)]
    pub write: bool,

    /// With --to codex: also add the session to Codex's thread index (state_N.sqlite), one row,
    /// as the session used last, so that its picker and `codex resume --last` offer it. Codex
    /// resumes the session by its id without it.
    #[arg(long, requires = "write")]
    pub register: bool,

    /// Secrets and pseudonyms.
    #[command(flatten)]
    pub redact: super::redact::RedactArgs,
}

/// Arguments of `agentlog ls`.
#[derive(Debug, clap::Args)]
pub struct LsArgs {
    /// As for convert; none lists the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', value_parser = PossibleValuesParser::new(from_values()))]
    pub from: Option<String>,

    /// One JSON object per file (agent, format, kind, session, size, version, path), one per line;
    /// for an archive, one per session (agent, session, status, file).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `agentlog archive`.
#[derive(Debug, clap::Args)]
pub struct ArchiveArgs {
    /// The archive directory; created when missing.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// As for convert; none archives the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Longest input line read, in bytes, as for convert.
    #[arg(long, value_name = "BYTES", default_value_t = crate::read::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,

    /// Keep a full-text index of the archive's sessions for `agentlog search` (in
    /// DIR/.agentlog-index.sqlite); once made, every run brings it up to date.
    #[arg(long)]
    pub index: bool,
}

/// Partition keys of `--partition-by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PartitionBy {
    /// `agent=claude-code`, `agent=codex`, … (the agent's name in the output).
    Agent,
    /// `date=YYYY-MM-DD` of the event time, UTC.
    Date,
}

/// Arguments of `agentlog validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Unified JSONL or interchange files to check against the published schemas.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// How to report: diagnostics on stderr, or a JSON report on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
}

/// Report formats of `agentlog validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Diagnostics on stderr.
    Text,
    /// One JSON document on stdout: per file, its format, counts and problems.
    Json,
}

/// When to colour diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// On a terminal, unless `NO_COLOR` is set to a non-empty value.
    Auto,
    /// Always, even in a file or a pipe.
    Always,
    /// Never.
    Never,
}

/// The published schemas.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SchemaName {
    /// One line of unified JSONL (`schema/event.schema.json`).
    Event,
    /// An interchange document (`schema/interchange.schema.json`).
    Interchange,
    /// One line of unified JSONL as an Arrow schema, in an empty Arrow IPC file: for Polars,
    /// `pl.read_ndjson(path, schema=pl.read_ipc_schema(FILE))`.
    #[cfg(feature = "arrow")]
    Arrow,
    /// One line of unified JSONL as a Spark DDL string: for `spark.read.schema(DDL).json(path)`.
    #[cfg(feature = "arrow")]
    Spark,
}

pub(super) fn agent_values() -> Vec<&'static str> {
    READERS.iter().filter_map(|r| r.agent()).map(|a| a.as_str()).collect()
}

pub(super) fn from_values() -> Vec<clap::builder::PossibleValue> {
    let auto = clap::builder::PossibleValue::new("auto").help("tell each file's agent from its content");
    std::iter::once(auto)
        .chain(READERS.iter().map(|r| clap::builder::PossibleValue::new(r.name()).help(r.description())))
        .collect()
}

fn to_values() -> Vec<clap::builder::PossibleValue> {
    let written = WRITERS.iter().flat_map(|w| {
        std::iter::once(clap::builder::PossibleValue::new(w.name()).help(w.description()))
            .chain(w.aliases().iter().map(|a| clap::builder::PossibleValue::new(*a).hide(true)))
    });
    written.collect()
}
