//! `agentlog report`: one HTML page of charts ([`crate::stats::report`]), and beside it the
//! transcripts of the sessions it lists, written by `agentlog convert --to html`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::read::{self, Settings};
use crate::stats::report::html::{Options, render};
use crate::stats::report::{ReportQuery, ReportTable};

use super::args::{Args, ReportArgs};
use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// Runs `agentlog report`.
pub fn run(args: &ReportArgs, reporter: &Reporter) -> Exit {
    let prices = match super::usage::prices(args.prices.as_deref(), reporter) {
        Ok(prices) => prices,
        Err(exit) => return exit,
    };
    let Some((filter, zone)) = super::filter::resolve(&args.filter).inspect_err(|e| reporter.error(e)).ok() else {
        return Exit::Usage;
    };
    let transcripts = (!args.no_transcripts).then(|| beside(&args.output));
    // Neither the page nor the transcripts' folder may be, or hold, an input.
    let (specs, _) = super::resolve_inputs(&args.inputs, super::reader_named(&args.from));
    let guard = super::guard::Inputs::new(&args.inputs, &specs);
    let outputs = std::iter::once((args.output.clone(), false)).chain(transcripts.clone().map(|dir| (dir, true)));
    for (path, directory) in outputs {
        if let Err(refusal) = guard.check(&path, directory, &specs) {
            reporter.error(&CliError::Usage { message: refusal.message(&path) });
            return Exit::Usage;
        }
    }
    let query = ReportQuery::new(zone, filter);
    let settings = Settings::new(super::sum::threads(args.jobs), read::DEFAULT_MAX_LINE_BYTES)
        .unwrap_or_default()
        .with_prices(Arc::new(prices));
    let summed = super::sum::sum(&args.inputs, &args.from, &settings, reporter, |table: &mut ReportTable, event| {
        table.add(&query, event);
    });
    let (table, totals) = match summed {
        Ok(summed) => summed,
        Err(exit) => return exit,
    };
    let options = Options {
        zone: args.filter.tz.clone(),
        top: args.top,
        transcripts: transcripts.as_ref().and_then(|dir| Some(dir.file_name()?.to_string_lossy().into_owned())),
        generator: format!("agentlog {}", env!("CARGO_PKG_VERSION")),
    };
    let page = render(&table, &options);
    let written = crate::write::AtomicFile::create(&args.output).and_then(|mut file| {
        std::io::Write::write_all(&mut file, page.as_bytes())?;
        file.commit()
    });
    if let Err(e) = written {
        reporter.error(&CliError::output(&Some(args.output.clone()), e));
        return Exit::Output;
    }
    let mut exit = Exit::of(&totals);
    if let Some(dir) = transcripts {
        let (longest, costliest) = table.longest_and_costliest(args.top);
        let mut listed: Vec<&str> = longest.iter().chain(&costliest).map(|s| s.session_id.as_str()).collect();
        listed.sort_unstable();
        listed.dedup();
        if !listed.is_empty() {
            exit = exit.max(write_transcripts(args, &dir, &listed, reporter));
        }
    }
    exit
}

/// The folder of the transcripts beside the page: `report.html` → `report.sessions/`.
fn beside(page: &Path) -> PathBuf {
    let stem = page.file_stem().map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    page.with_file_name(format!("{stem}.sessions"))
}

/// Writes the HTML transcripts of the sessions listed, as `agentlog convert --to html -o DIR/`
/// with a `--session` for each, on the same inputs.
fn write_transcripts(args: &ReportArgs, dir: &Path, sessions: &[&str], reporter: &Reporter) -> Exit {
    let mut argv: Vec<String> = vec!["agentlog".into(), "convert".into(), format!("--from={}", args.from)];
    argv.extend(["--to".into(), "html".into(), "-o".into(), format!("{}/", dir.display())]);
    if let Some(jobs) = args.jobs {
        argv.push(format!("--jobs={jobs}"));
    }
    argv.extend(sessions.iter().map(|id| format!("--session={id}")));
    argv.push("--".into());
    argv.extend(args.inputs.iter().cloned());
    match Args::from_arguments(argv.iter().map(std::ffi::OsString::from)) {
        Ok(parsed) => super::run_with(parsed, reporter),
        Err(e) => {
            reporter.error(&CliError::Usage { message: e.to_string() });
            Exit::Internal
        }
    }
}
