//! Arguments of following sessions live: `agentlog watch`, and sending traces to an OTLP
//! endpoint (`--otlp-endpoint`, also taken by `convert`).

use std::path::PathBuf;

use clap::ValueEnum;
use clap::builder::PossibleValuesParser;

use super::from_values;

/// Arguments of `agentlog watch`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  agentlog watch                                   every agent's sessions, as they are written
  agentlog watch ~/.codex/sessions --state codex.watch | jq .kind
  agentlog watch --state s.watch --once            what is new since the last run, then stop")]
pub struct WatchArgs {
    /// As for convert; none follows the agents' default places. New files there are picked up.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,

    /// Input format, as for convert.
    #[arg(long, short = 'f', default_value = "auto", value_parser = PossibleValuesParser::new(from_values()))]
    pub from: String,

    /// Keep what was seen and written in this file, so that a later run starts where this one
    /// stopped: no event written twice, none missed. Without it, a run starts with every event
    /// there is.
    #[arg(long, value_name = "FILE")]
    pub state: Option<std::path::PathBuf>,

    /// How often to look at the files, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub interval: u64,

    /// Look once, write what is new, and stop.
    #[arg(long)]
    pub once: bool,

    /// Start from now: what the files hold already is taken as written, and only what comes
    /// after is (without --state, or with a new one).
    #[arg(long)]
    pub new: bool,

    /// Threads reading inputs; all cores by default.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// Keep a file per session in this directory, written again as the session grows, in the
    /// format of --to; standard output then carries nothing.
    #[arg(long, short = 'o', value_name = "DIR/")]
    pub output: Option<PathBuf>,

    /// The format of the files of -o DIR/: unified (JSONL), markdown, html, atif, interchange.
    #[arg(long, short = 't', default_value = "unified", value_name = "FORMAT")]
    pub to: String,

    /// OpenTelemetry: record message content on the spans.
    #[arg(long)]
    pub otel_content: bool,

    /// A session's own span, and calls never answered, are sent once it has been quiet this
    /// many seconds (its other spans go as soon as they are complete).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub session_quiet: u64,

    /// Batches not yet taken by the endpoint wait in this folder, and are sent by the next run
    /// (default: FILE.otlp/ beside --state FILE).
    #[arg(long, value_name = "DIR")]
    pub otlp_spool: Option<PathBuf>,

    /// Look for changes by polling only, also where the file system sends notifications.
    #[arg(long)]
    pub poll: bool,

    /// Sending traces to an OTLP endpoint as sessions go.
    #[command(flatten)]
    pub otlp: OtlpArgs,
}

/// Where and how traces are sent (`--otlp-endpoint`, with `--to otel`). The standard
/// environment variables `OTEL_EXPORTER_OTLP_HEADERS` (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`),
/// `OTEL_EXPORTER_OTLP_PROTOCOL` and `OTEL_EXPORTER_OTLP_COMPRESSION` are read too, so that
/// secrets need not be on the command line.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "OTLP export")]
pub struct OtlpArgs {
    /// Send the traces to this OTLP/HTTP endpoint instead of writing them: a URL ending in
    /// /v1/traces (one with no path gets it). Implies --to otel.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// The wire encoding: protobuf, which every OTLP receiver takes, or OTLP/JSON.
    #[arg(long, value_enum, value_name = "ENCODING")]
    pub otlp_protocol: Option<OtlpProtocol>,

    /// Gzip the requests.
    #[arg(long)]
    pub otlp_gzip: bool,

    /// A header sent with every request, for authentication (repeatable): `NAME=VALUE`.
    #[arg(long, value_name = "NAME=VALUE")]
    pub otlp_header: Vec<String>,

    /// How long one request may take, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub otlp_timeout: u64,

    /// How long to go on trying while the endpoint fails (429, 5xx, timeouts, refused), in
    /// seconds, before giving batches up.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub otlp_retry_for: u64,
}

/// `--otlp-protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OtlpProtocol {
    /// `application/x-protobuf`.
    Protobuf,
    /// `application/json`.
    Json,
}
