//! `agentlog convert`: read every input with its reader and push the events into one writer.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::PathBuf;

use super::error::CliError;
use super::exit::Exit;
use super::inputs::InputSpec;
use super::report::Reporter;
use agentlog::read::{self, Input, Reader};
use agentlog::write::{Options, Target, Writer};

/// Lines looked at to tell a file's agent.
const SNIFF_LINES: usize = 8;

/// A convert run, resolved from the arguments.
pub struct Plan {
    /// The inputs, in the order they are read.
    pub inputs: Vec<InputSpec>,
    /// The reader for every input; `None` tells each input's agent from its content.
    pub reader: Option<&'static dyn Reader>,
    /// The output format.
    pub writer: &'static dyn Writer,
    /// The output file or directory; standard output when `None`.
    pub output: Option<PathBuf>,
    /// Options for the writer.
    pub options: Options,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Totals {
    /// Inputs converted.
    pub files: u64,
    /// Events written.
    pub events: u64,
    /// Input lines reported.
    pub warnings: u64,
    /// Inputs that could not be read at all.
    pub failed: u64,
}

/// Runs the conversion; problems with single inputs are reported and the run goes on.
pub fn run(plan: &Plan, reporter: &Reporter) -> Exit {
    let target = match &plan.output {
        None => Target::Stream(Box::new(io::stdout())),
        Some(path) => Target::Path(path.clone()),
    };
    let mut sink = match plan.writer.open(target, &plan.options) {
        Ok(sink) => sink,
        Err(e) if e.kind() == io::ErrorKind::Unsupported => {
            reporter.error(&CliError::Usage { message: e.to_string() });
            return Exit::Usage;
        }
        Err(e) => {
            reporter.error(&CliError::output(&plan.output, e));
            return Exit::Output;
        }
    };
    let mut totals = Totals::default();
    let mut write_error: Option<io::Error> = None;
    let mut shared = read::Shared::default();
    for input in &plan.inputs {
        let name = input.name();
        let bytes = match open(input) {
            Ok(bytes) => bytes,
            Err(e) => {
                reporter.error(&CliError::Unreadable { path: name.to_owned(), source: e });
                totals.failed += 1;
                continue;
            }
        };
        let (bytes, reader) = match choose_reader(plan.reader, bytes) {
            Ok(Some(found)) => found,
            Ok(None) => {
                reporter.error(&CliError::UnknownFormat { path: name.to_owned() });
                totals.failed += 1;
                continue;
            }
            Err(e) => {
                reporter.error(&CliError::Unreadable { path: name.to_owned(), source: e });
                totals.failed += 1;
                continue;
            }
        };
        if let Err(e) = sink.begin_source(name) {
            write_error = Some(e);
            break;
        }
        let mut push =
            |event| sink.event(&event).inspect_err(|e| write_error = Some(io::Error::new(e.kind(), e.to_string())));
        match reader.read(Input { name, bytes, shared: &mut shared }, &mut push) {
            Ok(report) => {
                totals.files += 1;
                totals.events += report.events;
                totals.warnings += report.diagnostics.len() as u64;
                reporter.diagnostics(name, &report.diagnostics);
                let records: Vec<_> = report.diagnostics.iter().map(|d| d.to_record()).collect();
                if let Err(e) = sink.end_source(name, report.lines, &records) {
                    write_error = Some(e);
                    break;
                }
            }
            Err(_) if write_error.is_some() => break,
            Err(e) => {
                reporter.error(&CliError::Unreadable { path: name.to_owned(), source: e });
                totals.failed += 1;
            }
        }
    }
    if write_error.is_none()
        && let Err(e) = sink.finish()
    {
        write_error = Some(e);
    }
    // Dropping an unfinished sink removes its temporary files.
    drop(sink);
    if let Some(e) = write_error {
        // A reader closing the pipe (`agentlog convert … | head`) is not an error.
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Exit::Success;
        }
        reporter.error(&CliError::output(&plan.output, e));
        return Exit::Output;
    }
    reporter.info(&format!(
        "agentlog: {} files, {} events, {} warnings{}",
        totals.files,
        totals.events,
        totals.warnings,
        if totals.failed > 0 { format!(", {} inputs not read", totals.failed) } else { String::new() }
    ));
    if totals.failed > 0 {
        Exit::Input
    } else if totals.warnings > 0 {
        Exit::Warnings
    } else {
        Exit::Success
    }
}

/// Opens an input for reading; `*.zst` files (Codex's compressed cold rollouts) are
/// decompressed as they are read.
fn open(input: &InputSpec) -> io::Result<Box<dyn BufRead>> {
    const CAPACITY: usize = 256 * 1024;
    Ok(match input {
        InputSpec::Stdin => Box::new(BufReader::with_capacity(CAPACITY, io::stdin())),
        InputSpec::File(path) if path.ends_with(".zst") => {
            Box::new(BufReader::with_capacity(CAPACITY, zstd::stream::read::Decoder::new(File::open(path)?)?))
        }
        InputSpec::File(path) => Box::new(BufReader::with_capacity(CAPACITY, File::open(path)?)),
    })
}

type Chosen = (Box<dyn BufRead>, &'static dyn Reader);

/// The reader for an input: the one given, or the one whose format the first lines match.
///
/// The lines read to decide are put back in front of the rest, so nothing is read twice from
/// the source (which may be a pipe).
fn choose_reader(given: Option<&'static dyn Reader>, mut bytes: Box<dyn BufRead>) -> io::Result<Option<Chosen>> {
    if let Some(reader) = given {
        return Ok(Some((bytes, reader)));
    }
    let mut head = Vec::new();
    let mut records = Vec::new();
    let mut first_line = None;
    for _ in 0..SNIFF_LINES {
        let start = head.len();
        if bytes.read_until(b'\n', &mut head)? == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&head[start..]).trim().to_owned();
        if line.is_empty() {
            continue;
        }
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) {
            records.push(value);
        }
        first_line.get_or_insert(line);
    }
    let Some(first_line) = first_line else {
        // An empty file: any reader turns it into no events.
        return Ok(Some((Box::new(Cursor::new(head)), read::READERS[0])));
    };
    let rest: Box<dyn BufRead> = Box::new(BufReader::new(Cursor::new(head).chain(bytes)));
    Ok(read::sniff(&records, &first_line).map(|reader| (rest, reader)))
}
