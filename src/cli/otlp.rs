//! `--otlp-endpoint`: the endpoint from the command line and the standard environment
//! variables, the exporter's notices on stderr, and its summary.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::write::otel::otlp::{Endpoint, Exporter, Notice, Protocol, Summary};

use super::args::{OtlpArgs, OtlpProtocol};
use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// The endpoint the arguments name, `None` without `--otlp-endpoint`; `spool` keeps batches
/// between runs; `forever` retries for as long as the process runs (`watch`).
///
/// # Errors
/// A usage error for a header without `=`, an endpoint that is not an http(s) URL, or a
/// protocol agentlog does not speak (gRPC).
pub fn endpoint(args: &OtlpArgs, spool: Option<PathBuf>, forever: bool) -> Result<Option<Endpoint>, CliError> {
    let usage = |message: String| CliError::Usage { message };
    let Some(url) = &args.otlp_endpoint else { return Ok(None) };
    let Some((scheme, rest)) = url.split_once("://").filter(|(s, _)| matches!(*s, "http" | "https")) else {
        return Err(usage(format!("--otlp-endpoint {url}: not an http:// or https:// URL")));
    };
    let url = match rest.contains('/') {
        true => url.clone(),
        false => format!("{scheme}://{rest}/v1/traces"),
    };
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let protocol = match (
        args.otlp_protocol,
        env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL")),
    ) {
        (Some(OtlpProtocol::Protobuf), _) => Protocol::Protobuf,
        (Some(OtlpProtocol::Json), _) => Protocol::Json,
        (None, None) => Protocol::Protobuf,
        (None, Some(p)) => match p.trim() {
            "http/protobuf" => Protocol::Protobuf,
            "http/json" => Protocol::Json,
            other => {
                return Err(usage(format!(
                    "OTEL_EXPORTER_OTLP_PROTOCOL={other}: agentlog sends OTLP over HTTP (http/protobuf or http/json)"
                )));
            }
        },
    };
    let compression = env("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION").or_else(|| env("OTEL_EXPORTER_OTLP_COMPRESSION"));
    let mut headers = Vec::new();
    // The environment's headers first, `NAME=VALUE,…` with values percent-encoded, as the
    // OpenTelemetry specification has them; those on the command line after.
    for list in [env("OTEL_EXPORTER_OTLP_HEADERS"), env("OTEL_EXPORTER_OTLP_TRACES_HEADERS")].into_iter().flatten() {
        for pair in list.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| usage("OTEL_EXPORTER_OTLP_HEADERS: each header is NAME=VALUE".into()))?;
            let value = percent_encoding::percent_decode_str(value.trim()).decode_utf8_lossy().into_owned();
            headers.push((name.trim().to_owned(), value));
        }
    }
    for header in &args.otlp_header {
        let (name, value) =
            header.split_once('=').ok_or_else(|| usage(format!("--otlp-header {header}: expected NAME=VALUE")))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    Ok(Some(Endpoint {
        url,
        protocol,
        gzip: args.otlp_gzip || compression.as_deref() == Some("gzip"),
        headers,
        timeout: Duration::from_secs(args.otlp_timeout.max(1)),
        spool,
        give_up_after: (!forever).then(|| Duration::from_secs(args.otlp_retry_for)),
    }))
}

/// Starts the exporter; its notices go to stderr (retries only once per batch, unless quiet).
///
/// # Errors
/// When its spool folder cannot be made or read.
pub fn start(endpoint: Endpoint, quiet: bool) -> Result<Arc<Exporter>, CliError> {
    let spool = endpoint.spool.clone();
    let url = endpoint.url.clone();
    let notify = move |notice: Notice| {
        let line = match notice {
            Notice::Retrying { spans, problem, wait } if !quiet => {
                format!("agentlog: {url}: {problem}; {spans} spans tried again in {:.1} s", wait.as_secs_f64())
            }
            Notice::Recovered { spans, tries } if !quiet => {
                format!("agentlog: {url}: {spans} spans sent after {tries} tries")
            }
            Notice::Rejected { spans, problem, kept } => {
                let kept = kept.map(|k| format!(" (kept in {})", k.display())).unwrap_or_default();
                format!("agentlog: {url}: {spans} spans not sent: {problem}{kept}")
            }
            Notice::Partial { rejected, message } => {
                format!("agentlog: {url}: the endpoint dropped {rejected} spans: {message}")
            }
            _ => return,
        };
        eprintln!("{line}");
    };
    Exporter::start(endpoint, Box::new(notify)).map_err(|e| CliError::output(&spool, e)).map(Arc::new)
}

/// Waits up to `wait` for the exporter to send what it holds, reports what it did, and says how
/// the run ends: [`Exit::Output`] when spans were refused or not sent.
pub fn finish(exporter: &Exporter, wait: Duration, spool: Option<&PathBuf>, reporter: &Reporter) -> Exit {
    let summary: Summary = match exporter.close(wait) {
        Ok(summary) => summary,
        Err(e) => {
            reporter.error(&CliError::output(&spool.cloned(), e));
            return Exit::Output;
        }
    };
    let left = match (summary.left, spool) {
        (0, _) => String::new(),
        (n, Some(dir)) => format!(", {n} waiting in {} for the next run", dir.display()),
        (n, None) => format!(", {n} not sent"),
    };
    let rejected = match summary.rejected {
        0 => String::new(),
        n => format!(", {n} refused"),
    };
    reporter.info(&format!("agentlog: {} spans sent in {} requests{rejected}{left}", summary.sent, summary.requests));
    match (summary.rejected, summary.left, spool) {
        (0, 0, _) | (0, _, Some(_)) => Exit::Success,
        _ => Exit::Output,
    }
}
