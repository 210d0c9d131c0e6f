//! `agentlog watch`: follow the agents' session files and write their new events on standard
//! output as unified JSON lines, as the agents write them ([`crate::pipeline::follow`]).

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use crate::pipeline::follow::{Follower, Note, State};
use crate::stats::filter::Filter;
use crate::write::AtomicFile;

use super::args::WatchArgs;
use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// Runs `agentlog watch`: rounds until interrupted (or one with `--once`).
pub fn run(args: &WatchArgs, reporter: &Reporter) -> Exit {
    let reader = super::reader_named(&args.from);
    let settings =
        super::convert::settings(super::jobs(args.jobs), crate::read::DEFAULT_MAX_LINE_BYTES, Filter::default(), None);
    let state = match &args.state {
        Some(path) => match load(path) {
            Ok(state) => state,
            Err(message) => {
                reporter.error(&CliError::Usage { message });
                return Exit::Usage;
            }
        },
        None => State::default(),
    };
    let mut follower = Follower::new(state, reader, &settings);
    let interval = Duration::from_millis(args.interval.max(10));
    let mut stdout = io::stdout().lock();
    let mut buf = Vec::new();
    // With --new, a first round takes in what is there without writing it.
    let mut discard = args.new;
    loop {
        let (inputs, errors) = super::resolve_inputs(&args.inputs, reader);
        if !errors.is_empty() {
            // An input named on the command line that is not there: nothing to follow.
            errors.iter().for_each(|e| reporter.error(e));
            return Exit::Input;
        }
        let notes = if std::mem::take(&mut discard) {
            // What the files held before is not written, nor are its problems reported.
            follower.catch_up(&inputs).map(|_| Vec::new())
        } else {
            follower.round(&inputs, &mut |e| {
                crate::write::encode::event(&e, &mut buf);
                Ok(())
            })
        };
        let notes = match notes {
            Ok(notes) => notes,
            Err(e) => {
                reporter.error(&CliError::output(&None, e));
                return Exit::Output;
            }
        };
        if !buf.is_empty() {
            match stdout.write_all(&buf).and_then(|()| stdout.flush()) {
                Ok(()) => buf.clear(),
                // The reader of the pipe went away: nothing more to follow for.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Exit::Success,
                Err(e) => {
                    reporter.error(&CliError::output(&None, e));
                    return Exit::Output;
                }
            }
        }
        for note in notes {
            report(&note, reporter);
        }
        if let Some(path) = &args.state
            && follower.take_changed()
            && let Err(e) = save(path, follower.state())
        {
            reporter.error(&CliError::output(&Some(path.clone()), e));
            return Exit::Output;
        }
        if args.once {
            return Exit::Success;
        }
        std::thread::sleep(interval);
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
fn load(path: &Path) -> Result<State, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("--state {}: not a state agentlog watch saved ({e})", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(format!("--state {}: {e}", path.display())),
    }
}

/// Saves the state under a temporary name first, so that an interrupted save leaves the last one.
fn save(path: &Path, state: &State) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    serde_json::to_writer(&mut file, state)?;
    file.write_all(b"\n")?;
    file.commit()
}
