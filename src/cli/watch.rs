//! `agentlog watch`: follow the agents' session files and write their new events as the agents
//! write them ([`crate::pipeline::follow`]): as unified JSON lines on standard output, as a file
//! per session in a directory kept current (`-o DIR/`), or as spans sent to an OTLP endpoint
//! (`--otlp-endpoint`).
//!
//! It looks again when the file system says a file under its inputs changed (the `notify`
//! crate), and every `--interval` besides where it cannot tell (`--poll`, or no notifications).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::model::{Agent, Event};
use crate::pipeline::InputSpec;
use crate::pipeline::follow::{Follower, Given, Note, State};
use crate::stats::filter::Filter;
use crate::write::otel::live::{Live, Sent};
use crate::write::otel::otlp::Exporter;
use crate::write::{self, AtomicFile, Target, Writer};

use super::args::WatchArgs;
use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// The formats `-o DIR/` keeps: those that write a file per session.
const SESSION_FORMATS: &[&str] = &["unified", "jsonl", "markdown", "html", "atif", "interchange"];

/// With notifications, a look at everything this often all the same: new folders the
/// notifications do not cover yet (a new project, a new day), and a file system that drops them.
const RESCAN: Duration = Duration::from_secs(10);

/// The state is saved at most this often while watch runs (and when it stops): it holds a hash
/// of every event given, and is written whole.
const SAVE_EVERY: Duration = Duration::from_secs(2);

/// What `--state` keeps: what the follower has seen and given, and the spans sent.
#[derive(Debug, Default, Deserialize)]
struct Saved {
    #[serde(flatten)]
    follow: State,
    #[serde(default)]
    spans_sent: Sent,
    #[serde(default)]
    spans_pending: BTreeSet<String>,
}

/// Where the events go.
struct Outputs {
    /// Unified JSON lines on standard output, unless another output is chosen.
    stdout: bool,
    /// `-o DIR/`: the writer and the directory.
    dir: Option<(&'static dyn Writer, PathBuf, write::Options)>,
    /// `--otlp-endpoint`.
    live: Option<(Live, Arc<Exporter>)>,
}

impl Outputs {
    /// Whether outputs take whole sessions when they change.
    fn sessions(&self) -> bool {
        self.dir.is_some() || self.live.is_some()
    }
}

/// Runs `agentlog watch`: rounds until interrupted (or one with `--once`).
pub fn run(args: &WatchArgs, reporter: &Reporter) -> Exit {
    match Watch::new(args, reporter) {
        Ok(watch) => watch.run(),
        Err(exit) => exit,
    }
}

struct Watch<'a> {
    args: &'a WatchArgs,
    reporter: &'a Reporter,
    reader: Option<&'static dyn crate::read::Reader>,
    settings: crate::read::Settings,
    spans_sent: Option<Sent>,
    /// The files of sessions whose spans wait for them to be quiet, from the last run or for
    /// the next.
    spans_pending: BTreeSet<String>,
    follow: Option<State>,
    outputs: Outputs,
    spool: Option<PathBuf>,
    /// Whether the state changed since it was last saved, and when that was.
    unsaved: bool,
    saved: Option<Instant>,
}

impl<'a> Watch<'a> {
    fn new(args: &'a WatchArgs, reporter: &'a Reporter) -> Result<Self, Exit> {
        let usage = |message: String| {
            reporter.error(&CliError::Usage { message });
            Exit::Usage
        };
        let reader = super::reader_named(&args.from);
        let settings = super::convert::settings(
            super::jobs(args.jobs),
            crate::read::DEFAULT_MAX_LINE_BYTES,
            Filter::default(),
            None,
        );
        let saved = match &args.state {
            Some(path) => load(path).map_err(usage)?,
            None => Saved::default(),
        };
        let dir = match &args.output {
            None => None,
            Some(dir) if !write::is_directory_target(dir) => {
                return Err(usage(format!(
                    "-o {}: watch keeps a file per session: name a directory (DIR/)",
                    dir.display()
                )));
            }
            Some(dir) => {
                let writer = write::writer(&args.to)
                    .filter(|w| SESSION_FORMATS.contains(&w.name()))
                    .ok_or_else(|| usage(format!("--to {}: -o DIR/ takes {}", args.to, SESSION_FORMATS.join(", "))))?;
                let options = write::Options {
                    threads: 1,
                    listing: Some(write::transcript::Listing::default()),
                    ..write::Options::default()
                };
                Some((writer, dir.clone(), options))
            }
        };
        let spool = args.otlp_spool.clone().or_else(|| args.state.as_ref().map(|s| s.with_extension("otlp")));
        let live = match super::otlp::endpoint(&args.otlp, spool.clone(), true).map_err(|e| {
            reporter.error(&e);
            Exit::Usage
        })? {
            None => None,
            Some(endpoint) => {
                let exporter = super::otlp::start(endpoint, reporter.quiet()).map_err(|e| {
                    reporter.error(&e);
                    Exit::Output
                })?;
                let quiet = Duration::from_secs(args.session_quiet);
                let live = Live::new(Arc::clone(&exporter), args.otel_content, quiet, saved.spans_sent.clone());
                Some((live, exporter))
            }
        };
        let outputs = Outputs { stdout: dir.is_none() && live.is_none(), dir, live };
        Ok(Watch {
            args,
            reporter,
            reader,
            settings,
            spans_sent: Some(saved.spans_sent),
            spans_pending: saved.spans_pending,
            follow: Some(saved.follow),
            outputs,
            spool,
            unsaved: false,
            saved: None,
        })
    }

    fn run(mut self) -> Exit {
        super::GRACEFUL.store(true, Ordering::SeqCst);
        let exit = self.follow();
        match &self.outputs.live {
            // What the endpoint has not taken within a few seconds waits in the spool.
            Some((_, exporter)) => {
                exit.max(super::otlp::finish(exporter, Duration::from_secs(5), self.spool.as_ref(), self.reporter))
            }
            None => exit,
        }
    }

    fn follow(&mut self) -> Exit {
        let args = self.args;
        let settings = std::mem::take(&mut self.settings);
        let mut follower = Follower::new(self.follow.take().unwrap_or_default(), self.reader, &settings);
        let interval = Duration::from_millis(args.interval.max(10));
        let (wake, woken) = mpsc::channel();
        let mut watcher = if args.poll { None } else { notifications(wake) };
        let mut watched = HashSet::new();
        let mut stdout = io::stdout().lock();
        let mut buf = Vec::new();
        // With --new, a first round takes in what is there without writing it.
        let mut discard = args.new;
        let mut last_scan;
        // The sessions whose spans waited for them to be quiet when the last run stopped.
        if let Some((live, _)) = &mut self.outputs.live
            && !self.spans_pending.is_empty()
        {
            let pending: Vec<InputSpec> = self.spans_pending.iter().cloned().map(InputSpec::File).collect();
            let read = read_sessions(&pending, self.reader, &settings)
                .and_then(|sessions| sessions.values().try_for_each(|events| live.session(events)));
            if let Err(e) = read {
                self.reporter.error(&CliError::output(&self.spool, e));
                return Exit::Output;
            }
        }
        // The directory starts with every session there is, whatever the state says was seen:
        // its index lists them all. (On a first start, the first round writes them all.)
        if let Some((writer, dir, options)) = &self.outputs.dir
            && (args.new || !follower.state().is_empty())
        {
            let (inputs, _) = super::resolve_inputs(&args.inputs, self.reader);
            if let Err(exit) = render_all(*writer, dir, options, &inputs, self.reader, &settings, self.reporter) {
                return exit;
            }
        }
        loop {
            let (inputs, errors) = super::resolve_inputs(&args.inputs, self.reader);
            if !errors.is_empty() {
                // An input named on the command line that is not there: nothing to follow.
                errors.iter().for_each(|e| self.reporter.error(e));
                return Exit::Input;
            }
            last_scan = Instant::now();
            if let Some(watcher) = &mut watcher {
                watch_more(watcher.as_mut(), &args.inputs, &inputs, &mut watched);
            }
            let mut sessions: BTreeMap<(Agent, String), (Vec<Event>, bool)> = BTreeMap::new();
            let keep_sessions = self.outputs.sessions();
            let stdout_on = self.outputs.stdout;
            let notes = if std::mem::take(&mut discard) {
                // What the files held before is not written, nor are its problems reported.
                follower.catch_up(&inputs).map(|_| Vec::new())
            } else {
                follower.round_all(&inputs, &mut |e, given| {
                    if given == Given::New && stdout_on {
                        crate::write::encode::event(&e, &mut buf);
                    }
                    if keep_sessions && given != Given::Held {
                        let entry = sessions.entry((e.agent, e.session_id.clone())).or_default();
                        entry.1 |= given == Given::New;
                        entry.0.push(e);
                    }
                    Ok(())
                })
            };
            let notes = match notes {
                Ok(notes) => notes,
                Err(e) => {
                    self.reporter.error(&CliError::output(&None, e));
                    return Exit::Output;
                }
            };
            if !buf.is_empty() {
                match stdout.write_all(&buf).and_then(|()| stdout.flush()) {
                    Ok(()) => buf.clear(),
                    // The reader of the pipe went away: nothing more to follow for.
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Exit::Success,
                    Err(e) => {
                        self.reporter.error(&CliError::output(&None, e));
                        return Exit::Output;
                    }
                }
            }
            sessions.retain(|_, (_, new)| *new);
            if let Err(exit) = self.sessions(&sessions) {
                return exit;
            }
            for note in notes {
                report(&note, self.reporter);
            }
            let last = args.once || super::STOP.load(Ordering::SeqCst);
            // The spans still waiting for their sessions to be quiet go now, and are saved as
            // sent.
            if last && let Some((live, _)) = &mut self.outputs.live {
                match live.close() {
                    Ok(pending) => self.spans_pending = pending,
                    Err(e) => {
                        self.reporter.error(&CliError::output(&self.spool, e));
                        return Exit::Output;
                    }
                }
                self.unsaved = true;
            }
            if let Err(exit) = self.save(&mut follower, last) {
                return exit;
            }
            if last {
                return Exit::Success;
            }
            // Wait for a change, or for the interval where changes cannot be told.
            let started = Instant::now();
            loop {
                let due = match &watcher {
                    None => true,
                    Some(_) => follower.holding() || self.outputs.live.is_some() || last_scan.elapsed() >= RESCAN,
                };
                let timeout = if due { interval.saturating_sub(started.elapsed()) } else { interval };
                match woken.recv_timeout(timeout) {
                    Ok(()) => {
                        // Let a burst of writes end before looking.
                        std::thread::sleep(Duration::from_millis(20));
                        while woken.try_recv().is_ok() {}
                        break;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) if due => break,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        // Notifications stopped: poll from now on.
                        watcher = None;
                        std::thread::sleep(timeout);
                        break;
                    }
                }
                if super::STOP.load(Ordering::SeqCst) {
                    break;
                }
            }
        }
    }

    /// Writes the sessions that changed to the directory and the endpoint.
    fn sessions(&mut self, sessions: &BTreeMap<(Agent, String), (Vec<Event>, bool)>) -> Result<(), Exit> {
        if let Some((writer, dir, options)) = &self.outputs.dir
            && !sessions.is_empty()
        {
            let output = Some(dir.clone());
            let mut sink = writer
                .open(Target::Path(dir.clone()), options)
                .map_err(|e| super::convert::write_failed(e, &output, self.reporter))?;
            let written = sessions.values().try_for_each(|(events, _)| {
                events.iter().try_for_each(|e| sink.event(e))?;
                sink.end_group()
            });
            if let Err(e) = written.and_then(|()| sink.finish()) {
                self.reporter.error(&CliError::output(&Some(dir.clone()), e));
                return Err(Exit::Output);
            }
        }
        if let Some((live, _)) = &mut self.outputs.live {
            let sent = sessions.values().try_for_each(|(events, _)| live.session(events)).and_then(|()| live.tick());
            if let Err(e) = sent {
                self.reporter.error(&CliError::output(&self.spool, e));
                return Err(Exit::Output);
            }
        }
        Ok(())
    }

    /// Saves the state, when there is a state file and something changed: at most every
    /// [`SAVE_EVERY`], and on the `last` round.
    fn save(&mut self, follower: &mut Follower, last: bool) -> Result<(), Exit> {
        let Some(path) = &self.args.state else { return Ok(()) };
        let sent_changed = self.outputs.live.as_mut().is_some_and(|(live, _)| live.take_changed());
        self.unsaved |= follower.take_changed() | sent_changed;
        if !self.unsaved || !(last || self.saved.is_none_or(|t| t.elapsed() >= SAVE_EVERY)) {
            return Ok(());
        }
        self.unsaved = false;
        self.saved = Some(Instant::now());
        if let Some((live, _)) = &self.outputs.live {
            self.spans_sent = Some(live.sent().clone());
        }
        let saved = SavedRef {
            follow: follower.state(),
            spans_sent: self.spans_sent.as_ref(),
            spans_pending: &self.spans_pending,
        };
        save(path, &saved).map_err(|e| {
            self.reporter.error(&CliError::output(&Some(path.clone()), e));
            Exit::Output
        })
    }
}

/// Writes every session of `inputs` into `dir`, as `convert -o DIR/` does, reporting nothing:
/// the rounds that follow report what there is to.
fn render_all(
    writer: &dyn Writer,
    dir: &Path,
    options: &write::Options,
    inputs: &[InputSpec],
    reader: Option<&'static dyn crate::read::Reader>,
    settings: &crate::read::Settings,
    reporter: &Reporter,
) -> Result<(), Exit> {
    /// Hands every event to the sink, group by group.
    struct IntoSink<'s>(&'s mut dyn write::EventSink);
    impl crate::pipeline::Destination for IntoSink<'_> {
        fn begin(&mut self, _name: &str) -> io::Result<()> {
            Ok(())
        }
        fn event(&mut self, event: Event) -> io::Result<()> {
            self.0.event(&event)
        }
        fn end(&mut self, _outcome: crate::pipeline::Outcome) -> io::Result<()> {
            Ok(())
        }
        fn end_group(&mut self) -> io::Result<()> {
            self.0.end_group()
        }
    }
    let output = Some(dir.to_owned());
    let mut sink = writer
        .open(Target::Path(dir.to_owned()), options)
        .map_err(|e| super::convert::write_failed(e, &output, reporter))?;
    let (groups, _) = crate::pipeline::plan(inputs, reader, &|_| None, settings);
    let prepare = crate::pipeline::Prepare::Nothing;
    crate::pipeline::run(&groups, &mut IntoSink(&mut *sink), settings, &prepare).and_then(|()| sink.finish()).map_err(
        |e| {
            reporter.error(&CliError::output(&output, e));
            Exit::Output
        },
    )
}

/// The events of the files of `inputs` that still exist, by session.
fn read_sessions(
    inputs: &[InputSpec],
    reader: Option<&'static dyn crate::read::Reader>,
    settings: &crate::read::Settings,
) -> io::Result<BTreeMap<(Agent, String), Vec<Event>>> {
    /// Gathers the events by session.
    struct Gather(BTreeMap<(Agent, String), Vec<Event>>);
    impl crate::pipeline::Destination for Gather {
        fn begin(&mut self, _name: &str) -> io::Result<()> {
            Ok(())
        }
        fn event(&mut self, event: Event) -> io::Result<()> {
            self.0.entry((event.agent, event.session_id.clone())).or_default().push(event);
            Ok(())
        }
        fn end(&mut self, _outcome: crate::pipeline::Outcome) -> io::Result<()> {
            Ok(())
        }
    }
    let present: Vec<InputSpec> = inputs.iter().filter(|i| Path::new(i.name()).exists()).cloned().collect();
    let (groups, _) = crate::pipeline::plan(&present, reader, &|_| None, settings);
    let mut gather = Gather(BTreeMap::new());
    crate::pipeline::run(&groups, &mut gather, settings, &crate::pipeline::Prepare::Nothing)?;
    Ok(gather.0)
}

/// [`Saved`], borrowed, to be written.
#[derive(Serialize)]
struct SavedRef<'s> {
    #[serde(flatten)]
    follow: &'s State,
    #[serde(skip_serializing_if = "Option::is_none")]
    spans_sent: Option<&'s Sent>,
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    spans_pending: &'s BTreeSet<String>,
}

/// A watcher whose notifications wake `wake`; `None` where the system has none.
fn notifications(wake: mpsc::Sender<()>) -> Option<Box<dyn notify::Watcher>> {
    let handler = move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|e| !e.kind.is_access()) {
            let _ = wake.send(());
        }
    };
    notify::recommended_watcher(handler).ok().map(|w| Box::new(w) as Box<dyn notify::Watcher>)
}

/// Adds what is not watched yet: the folders named as inputs, whole; the folders of the other
/// files followed and their parents, for a new session beside them or a new folder of sessions.
fn watch_more(
    watcher: &mut dyn notify::Watcher,
    args: &[String],
    inputs: &[InputSpec],
    watched: &mut HashSet<PathBuf>,
) {
    let whole: Vec<PathBuf> = args.iter().map(PathBuf::from).filter(|p| p.is_dir()).collect();
    let mut wanted: Vec<(PathBuf, notify::RecursiveMode)> =
        whole.iter().map(|d| (d.clone(), notify::RecursiveMode::Recursive)).collect();
    for spec in inputs {
        let InputSpec::File(name) = spec else { continue };
        let mut dir = Path::new(name).parent();
        for _ in 0..2 {
            let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) else { break };
            // A folder inside one watched whole is watched already.
            if !whole.iter().any(|w| d.starts_with(w)) {
                wanted.push((d.to_owned(), notify::RecursiveMode::NonRecursive));
            }
            dir = d.parent();
        }
    }
    for (path, mode) in wanted {
        if !watched.contains(&path) && watcher.watch(&path, mode).is_ok() {
            watched.insert(path);
        }
    }
}

fn report(note: &Note, reporter: &Reporter) {
    match note {
        Note::Truncated(name) => {
            reporter.info(&format!("agentlog: {name} is shorter than before; read again from its start"))
        }
        Note::Replaced(name) => {
            reporter.info(&format!("agentlog: {name} is another file now; read again from its start"))
        }
        Note::Removed(name) => reporter.info(&format!("agentlog: {name} is gone")),
        Note::Diagnostic(name, d) => reporter.diagnostics(name, std::slice::from_ref(d)),
        Note::Unreadable(e) => reporter.error(e),
    }
}

/// The state saved by an earlier run; a new one when the file does not exist.
fn load(path: &Path) -> Result<Saved, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("--state {}: not a state agentlog watch saved ({e})", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Saved::default()),
        Err(e) => Err(format!("--state {}: {e}", path.display())),
    }
}

/// Saves the state under a temporary name first, so that an interrupted save leaves the last one.
fn save(path: &Path, state: &SavedRef) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    serde_json::to_writer(&mut file, state)?;
    file.write_all(b"\n")?;
    file.commit()
}
