//! Arguments of the commands that sum events into tables: `agentlog usage`, `agentlog tools`
//! and `agentlog drift`.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;

use super::{FilterArgs, from_values};

/// Arguments of `agentlog usage`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  agentlog usage                                 cost per day, every agent, this machine's days
  agentlog usage --by month --by model           per month and model
  agentlog usage --by session --since 2026-02-01 --json
  agentlog usage --prices-info                   where the prices come from")]
pub struct UsageArgs {
    /// As for convert; none reads the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// Group rows by these keys, in this order (repeatable, or comma-separated); `day` when
    /// none is given.
    #[arg(long, value_name = "KEY", value_delimiter = ',', value_parser = PossibleValuesParser::new(usage_keys()))]
    pub by: Vec<String>,

    /// One JSON document: rows, totals, the models without a price, and where the prices come
    /// from.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,

    /// CSV: a header and one line per row, no totals.
    #[arg(long)]
    pub csv: bool,

    /// Add or replace model prices from this file: litellm's model price file, or entries of
    /// its shape under `models`.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,

    /// Print where the prices come from (package, version, sha256) and the models priced, and
    /// read nothing.
    #[arg(long)]
    pub prices_info: bool,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Which sessions and responses are counted.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Arguments of `agentlog drift`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  agentlog drift                                 what agentlog does not map yet in your sessions
  agentlog drift ~/.codex/sessions --json        the same for scripts")]
pub struct DriftArgs {
    /// As for convert; none reads the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// One JSON document: the rows, for scripts.
    #[arg(long)]
    pub json: bool,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
}

/// Arguments of `agentlog tools`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  agentlog tools                                 calls, failures and durations per tool
  agentlog tools --by family --by agent          tool families side by side across agents
  agentlog tools --by day,tool --csv > tools.csv")]
pub struct ToolsArgs {
    /// As for convert; none reads the agents' default places.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// Group rows by these keys, in this order (repeatable, or comma-separated); `tool` when
    /// none is given.
    #[arg(long, value_name = "KEY", value_delimiter = ',', value_parser = PossibleValuesParser::new(tools_keys()))]
    pub by: Vec<String>,

    /// One JSON document: rows with their commonest error messages, and totals.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,

    /// CSV: a header and one line per row, no totals.
    #[arg(long)]
    pub csv: bool,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Which sessions and calls are counted.
    #[command(flatten)]
    pub filter: FilterArgs,

    /// Secrets and pseudonyms in the error messages shown.
    #[command(flatten)]
    pub redact: super::super::redact::RedactArgs,
}

fn tools_keys() -> Vec<&'static str> {
    crate::stats::tools::ToolsKey::ALL.iter().map(|k| k.name()).collect()
}

fn usage_keys() -> Vec<&'static str> {
    crate::stats::usage::UsageKey::ALL.iter().map(|k| k.name()).collect()
}
