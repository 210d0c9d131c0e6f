//! `agentlog convert`: read every input with its reader and push the events into one writer.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::time::Instant;

use crate::model::{Agent, Event};
use crate::read::{Reader, Settings};
use crate::write::{EncodedSink, EventSink, Options, Target, WriteError, Writer};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;
use crate::pipeline::{
    self as batch, Built, Destination, Encoded, InputReport, InputSpec, Outcome, Prepare, RunReport, Totals,
};

/// A convert run, resolved from the arguments.
pub struct Plan {
    /// The inputs, in the order they are read.
    pub inputs: Vec<InputSpec>,
    /// The reader for every input; `None` tells each input's format from its content.
    pub reader: Option<&'static dyn Reader>,
    /// The output format.
    pub writer: &'static dyn Writer,
    /// The output file or directory; standard output when `None`.
    pub output: Option<PathBuf>,
    /// Options for the writer.
    pub options: Options,
    /// Worker threads for reading; 1 reads everything on one thread.
    pub jobs: usize,
    /// The longest input line read; longer ones are reported and skipped.
    pub max_line_bytes: usize,
    /// Only this shard of the inputs (`k`, `n`): 1-based shard `k` of `n`.
    pub shard: Option<(u32, u32)>,
    /// Where to write a per-file JSON report.
    pub report: Option<PathBuf>,
    /// Skip inputs unchanged since the last run into the output directory.
    pub incremental: bool,
    /// The sessions and events written.
    pub filter: crate::stats::filter::Filter,
}

/// Hands events to the writer and keeps the books: totals, diagnostics, progress, report.
struct ToSink<'a, 'w> {
    sink: &'a mut (dyn EventSink + 'w),
    reporter: &'a Reporter,
    totals: Totals,
    sessions: std::collections::HashSet<(Agent, String)>,
    last_session: Option<(Agent, String)>,
    sizes: std::collections::HashMap<String, u64>,
    progress: &'a ProgressBar,
    report: Option<RunReport>,
    /// The sessions of each input, for an incremental run's manifest.
    input_sessions: Option<std::collections::HashMap<String, Vec<[String; 2]>>>,
    /// The sessions of the input being read.
    current: std::collections::BTreeSet<(Agent, String)>,
}

impl ToSink<'_, '_> {
    /// Counts the session of an event.
    fn session(&mut self, agent: Agent, id: &str) {
        // Events come in runs of one session: the set is looked at only when the session changes.
        if self.last_session.as_ref().is_none_or(|(a, i)| *a != agent || i != id) {
            let key = (agent, id.to_owned());
            self.sessions.insert(key.clone());
            if self.input_sessions.is_some() {
                self.current.insert(key.clone());
            }
            self.last_session = Some(key);
        }
    }

    /// The sink's way in for encoded events; the engine sends them only given its encoder.
    fn encoded_sink(&mut self) -> io::Result<&mut dyn EncodedSink> {
        self.sink.encoded().ok_or_else(|| io::Error::other("encoded events for an output that takes events"))
    }

    /// Counts the sessions of a run of encoded events.
    fn sessions_of(&mut self, sessions: &[(Agent, String)]) {
        for (agent, id) in sessions {
            self.session(*agent, id);
        }
    }
}

impl Destination for ToSink<'_, '_> {
    fn begin(&mut self, name: &str) -> io::Result<()> {
        self.last_session = None;
        self.current.clear();
        self.sink.begin_source(name)
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        self.session(event.agent, &event.session_id);
        self.sink.event(&event)
    }

    fn encoded(&mut self, encoded: Encoded) -> io::Result<()> {
        self.sessions_of(&encoded.sessions);
        self.encoded_sink()?.write_encoded(&encoded.bytes)
    }

    fn built(&mut self, built: Built) -> io::Result<()> {
        self.sessions_of(&built.sessions);
        built.piece.map_or(Ok(()), |piece| self.sink.piece(piece))
    }

    fn encoded_from(&mut self, from: &File, at: u64, len: u64, sessions: Vec<(Agent, String)>) -> io::Result<()> {
        self.sessions_of(&sessions);
        self.encoded_sink()?.write_encoded_from(from, at, len)
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        if let Some(inputs) = &mut self.input_sessions {
            let sessions = std::mem::take(&mut self.current).into_iter();
            inputs.insert(outcome.name.clone(), sessions.map(|(a, id)| [a.as_str().to_owned(), id]).collect());
        }
        let size = self.sizes.get(&outcome.name).copied().unwrap_or(0);
        self.totals.bytes += size;
        self.progress.inc(size);
        self.totals.add(&outcome);
        match &outcome.result {
            Ok(report) => {
                self.reporter.diagnostics(&outcome.name, &report.diagnostics);
                if report.more_diagnostics > 0 {
                    self.reporter.info(&format!(
                        "… and {} more problems in {} (the first {} are kept)",
                        report.more_diagnostics,
                        outcome.name,
                        crate::read::MAX_DIAGNOSTICS
                    ));
                }
                let records: Vec<_> = report.diagnostics.iter().map(|d| d.to_record()).collect();
                self.sink.end_source(&outcome.name, report.lines, &records)?;
            }
            Err(e) => self.reporter.error(e),
        }
        if let Some(report) = &mut self.report {
            report.files.push(InputReport::of(&outcome));
        }
        Ok(())
    }

    fn end_group(&mut self) -> io::Result<()> {
        self.sink.end_group()
    }
}

/// The groups an incremental run redoes: those with an input changed since the manifest was
/// written, then, until none is added, those holding a session that a group to redo holds (by
/// the manifest, or, for a changed input, by its first lines).
fn groups_to_redo(groups: Vec<batch::Group>, manifest: &super::incremental::Manifest) -> Vec<batch::Group> {
    let sessions_of = |group: &batch::Group| -> Vec<[String; 2]> {
        let mut sessions: Vec<[String; 2]> =
            group.items.iter().flat_map(|i| manifest.sessions(&i.spec)).cloned().collect();
        for item in group.items.iter().filter(|i| !i.unchanged) {
            if let Some(agent) = item.reader.agent() {
                sessions.push([agent.as_str().to_owned(), batch::peek(item).session.unwrap_or_default()]);
            }
        }
        sessions
    };
    let mut redo: Vec<bool> = groups.iter().map(|g| g.items.iter().any(|i| !i.unchanged)).collect();
    let mut held: std::collections::HashSet<[String; 2]> =
        groups.iter().zip(&redo).filter(|(_, r)| **r).flat_map(|(g, _)| sessions_of(g)).collect();
    loop {
        let mut added = false;
        for (group, redo) in groups.iter().zip(redo.iter_mut()).filter(|(_, r)| !**r) {
            let sessions = sessions_of(group);
            if sessions.iter().any(|s| held.contains(s)) {
                *redo = true;
                added = true;
                held.extend(sessions);
            }
        }
        if !added {
            break;
        }
    }
    groups.into_iter().zip(redo).filter(|(_, r)| *r).map(|(g, _)| g).collect()
}

/// The settings of a run on `jobs` threads; without threads to spare, everything is read on
/// the calling one.
pub fn settings(
    jobs: usize,
    max_line_bytes: usize,
    filter: crate::stats::filter::Filter,
    redaction: Option<&super::redact::Redaction>,
) -> Settings {
    let settings = Settings::new(jobs, max_line_bytes)
        .or_else(|_| Settings::new(1, max_line_bytes))
        .unwrap_or_default()
        .with_filter(filter);
    match redaction {
        Some(redaction) => settings.with_redactor(redaction.redactor.clone()),
        None => settings,
    }
}

/// Runs the conversion; problems with single inputs are reported and the run goes on.
pub fn run(plan: &Plan, redaction: Option<super::redact::Redaction>, reporter: &Reporter) -> Exit {
    let started = Instant::now();
    // The run's threads: they tell the inputs' formats and parse the lines of large files; the
    // reading threads that map them in order are `batch::run`'s own. Without threads to spare,
    // everything is read on this one.
    let settings = settings(plan.jobs, plan.max_line_bytes, plan.filter.clone(), redaction.as_ref());
    let mut manifest = match (plan.incremental, super::incremental::directory(&plan.output)) {
        (true, Some(dir)) => Some(super::incremental::Manifest::load(dir)),
        _ => None,
    };
    let unchanged = |spec: &InputSpec| -> Option<&'static dyn Reader> {
        let name = manifest.as_ref()?.unchanged(spec)?;
        // An input read with another reader than the one asked for now is redone.
        if plan.reader.is_some_and(|given| given.name() != name) {
            return None;
        }
        crate::read::reader(name)
    };
    let (groups, errors) = batch::plan(&plan.inputs, plan.reader, &unchanged, &settings);
    let planned: usize = groups.iter().map(|g| g.items.len()).sum();
    // A group is redone whole when any of its inputs changed, and so is every group that holds
    // a session a redone group holds: a session's output file is rewritten from all its inputs.
    let groups = match &manifest {
        Some(manifest) => groups_to_redo(groups, manifest),
        None => groups,
    };
    let skipped = planned - groups.iter().map(|g| g.items.len()).sum::<usize>();
    let failed_to_plan = errors.len() as u64;
    for e in &errors {
        reporter.error(e);
    }
    let groups = match plan.shard {
        Some((k, n)) => batch::shard(groups, k, n),
        None => groups,
    };
    let total: u64 = groups.iter().flat_map(|g| &g.items).map(|i| i.size).sum();
    let progress = reporter.progress_bar(total);

    let target = match &plan.output {
        None => Target::Stream(super::mcp::stdout()),
        Some(path) => Target::Path(path.clone()),
    };
    let mut sink = match plan.writer.open(target, &plan.options) {
        Ok(sink) => sink,
        Err(e) => return write_failed(e, &plan.output, reporter),
    };
    let sizes = groups.iter().flat_map(|g| &g.items).map(|i| (i.spec.name().to_owned(), i.size)).collect();
    let mut dest = ToSink {
        sink: &mut *sink,
        reporter,
        totals: Totals { failed: failed_to_plan, ..Totals::default() },
        sessions: Default::default(),
        last_session: None,
        sizes,
        progress: &progress,
        report: plan.report.as_ref().map(|_| RunReport::default()),
        input_sessions: manifest.as_ref().map(|_| Default::default()),
        current: Default::default(),
    };
    let prepare = Prepare::for_sink(&mut *dest.sink);
    let mut result = batch::run(&groups, &mut dest, &settings, &prepare);
    let ToSink { mut totals, sessions, report, mut input_sessions, .. } = dest;
    totals.sessions = sessions.len() as u64;
    let redacted = redaction.as_ref().map(super::redact::Redaction::summary).unwrap_or_default();
    // The findings are written before the output is committed: an output redacted without the
    // report asked for is not left behind.
    if result.is_ok()
        && let Some(redaction) = redaction
        && let Err(e) = redaction.write_report()
    {
        drop(sink);
        progress.finish_and_clear();
        reporter.error(&e);
        return Exit::Output;
    }
    if result.is_ok() {
        result = sink.finish();
    }
    // Dropping an unfinished sink removes its temporary files.
    drop(sink);
    progress.finish_and_clear();
    if let Err(e) = result {
        return write_failed(WriteError::from_io(e), &plan.output, reporter);
    }
    if let (Some(manifest), Some(dir)) = (&mut manifest, super::incremental::directory(&plan.output)) {
        let saved = groups
            .iter()
            .flat_map(|g| &g.items)
            .try_for_each(|i| {
                let mut sessions = || input_sessions.as_mut().and_then(|s| s.remove(i.spec.name())).unwrap_or_default();
                match &i.spec {
                    // Only regular files can be read again to tell whether they changed.
                    InputSpec::File(path) if std::fs::metadata(path).is_ok_and(|m| m.is_file()) => {
                        manifest.record(path, i.reader.name(), sessions())
                    }
                    InputSpec::Stored(stored) => {
                        manifest.record_stored(stored, i.reader.name(), sessions());
                        Ok(())
                    }
                    _ => Ok(()),
                }
            })
            .and_then(|()| manifest.save(dir));
        if let Err(e) = saved {
            reporter.error(&CliError::output(&plan.output, e));
            return Exit::Output;
        }
    }
    if let (Some(path), Some(mut report)) = (&plan.report, report)
        && let Err(e) = {
            report.totals = Some(totals.clone());
            write_report(path, &report)
        }
    {
        reporter.error(&CliError::output(&Some(path.clone()), e));
        return Exit::Output;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let skipped = if manifest.is_some() { format!(" ({skipped} unchanged, skipped)") } else { String::new() };
    let written = match &plan.output {
        None => String::new(),
        Some(path) => match std::fs::metadata(path) {
            Ok(m) if m.is_file() => format!("; wrote {} ({})", path.display(), super::report::human_size(m.len())),
            _ => format!("; output in {}", path.display()),
        },
    };
    reporter.info(&format!(
        "agentlog: {} files{skipped}, {} sessions, {} events, {} warnings, {} errors{redacted}, {:.1} MB in {:.2} s ({:.1} MB/s){written}",
        totals.files,
        totals.sessions,
        totals.events,
        totals.warnings,
        totals.failed,
        totals.bytes as f64 / 1e6,
        elapsed,
        totals.bytes as f64 / 1e6 / elapsed.max(1e-9),
    ));
    Exit::of(&totals)
}

/// Reports a writer's failure, and gives what it means for the run: a reader closing the pipe
/// (`agentlog convert … | head`) is not an error; options that do not fit the format are a
/// usage error; events that break the published schema, like the rest, leave the output
/// unwritten.
pub(super) fn write_failed(e: WriteError, output: &Option<PathBuf>, reporter: &Reporter) -> Exit {
    match e {
        WriteError::Io(e) if e.kind() == io::ErrorKind::BrokenPipe => Exit::Success,
        WriteError::Io(e) => {
            reporter.error(&CliError::output(output, e));
            Exit::Output
        }
        e @ WriteError::Unsupported { .. } => {
            reporter.error(&e);
            Exit::Usage
        }
        e @ WriteError::Schema { .. } => {
            reporter.error(&e);
            Exit::Output
        }
    }
}

/// Writes the report as pretty JSON with every object's keys in name order.
fn write_report(path: &std::path::Path, report: &RunReport) -> io::Result<()> {
    let mut file = crate::write::AtomicFile::create(path)?;
    serde_json::to_writer_pretty(&mut file, &serde_json::to_value(report)?)?;
    io::Write::write_all(&mut file, b"\n")?;
    file.commit()
}

/// A progress bar of input bytes on stderr: drawn only on a terminal and when not quiet.
pub fn progress_bar(total: u64, visible: bool) -> ProgressBar {
    let target = if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}")
            .expect("a valid template"),
    );
    bar
}
