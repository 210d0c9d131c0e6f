//! Arguments of `agentlog report`.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;

use super::{FilterArgs, from_values};

/// Arguments of `agentlog report`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  agentlog report -o report.html                 every agent's sessions on this machine
  agentlog report --since 30d --agent codex -o codex.html
  agentlog report ~/agent-archive -o report.html --no-transcripts")]
pub struct ReportArgs {
    /// As for convert; none reads the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// The page to write (HTML). The transcripts of the sessions it lists go in a folder beside
    /// it, named after it (`report.html` → `report.sessions/`).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,

    /// Sessions listed as the longest and as the costliest.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    /// Write no transcripts beside the page, and link none.
    #[arg(long)]
    pub no_transcripts: bool,

    /// Add or replace model prices from this file, as for usage.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Which sessions and events are counted.
    #[command(flatten)]
    pub filter: FilterArgs,
}
