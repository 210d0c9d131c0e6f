//! Arguments of looking through past sessions: `agentlog search`, `agentlog sessions` and the
//! MCP server that offers both to agents.

use clap::builder::PossibleValuesParser;

use super::{FilterArgs, from_values};

/// Arguments of `agentlog search`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  agentlog search migration                      sessions that mention it, best first
  agentlog search '\"database migration\" failed' --since 2026-10-01
  agentlog search 'TODO|FIXME' --regex --in answer
  agentlog search pytest --kind tool_call --tool Bash --json")]
pub struct SearchArgs {
    /// Words and \"quoted phrases\", all of which a session must hold (case-insensitive, whole
    /// words); with --regex, one regular expression.
    #[arg(value_name = "QUERY")]
    pub query: String,

    /// As for convert; none reads the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// QUERY is a regular expression (Rust syntax, case-insensitive unless it says `(?-i)`).
    #[arg(long)]
    pub regex: bool,

    /// Read the files even when INPUT is an archive with an up-to-date index (`archive --index`).
    #[arg(long)]
    pub no_index: bool,

    /// Search only these parts of sessions (repeatable, or comma-separated).
    #[arg(long = "in", value_name = "PART", value_delimiter = ',', value_parser = ["prompt", "answer", "reasoning", "tool-input", "tool-output"])]
    pub fields: Vec<String>,

    /// Search only events of these kinds (repeatable, or comma-separated).
    #[arg(long = "kind", value_name = "KIND", value_delimiter = ',', value_parser = ["message", "reasoning", "tool_call", "tool_output"])]
    pub kinds: Vec<String>,

    /// Search only what this role wrote: user (prompts), assistant (answers, reasoning, tool
    /// calls), tool (tool outputs); repeatable.
    #[arg(long = "role", value_name = "ROLE", value_delimiter = ',', value_parser = ["user", "assistant", "tool"])]
    pub roles: Vec<String>,

    /// Search only the calls and outputs of this tool: a part of its name or a glob pattern;
    /// repeatable.
    #[arg(long = "tool", value_name = "PATTERN")]
    pub tools: Vec<String>,

    /// Show this many sessions at most.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,

    /// One JSON document: the sessions, each with its best matches.
    #[arg(long)]
    pub json: bool,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Which sessions and events are searched.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Arguments of `agentlog sessions`.
#[derive(Debug, clap::Args)]
pub struct SessionsArgs {
    /// As for convert; none reads the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// One JSON document: `sessions_total`, `next_offset` and the sessions.
    #[arg(long)]
    pub json: bool,

    /// Show this many sessions at most.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Skip this many sessions first (the next page).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Which sessions are listed.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Arguments of `agentlog mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The inputs its tools read, as for convert; none reads the agents' default places. No
    /// tool reaches a file outside them.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,
}
