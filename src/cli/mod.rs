//! The `agentlog` command line: arguments, the resolved plan, progress, diagnostics and exit
//! codes. The only module that knows clap, terminals and process exit codes.

mod archive;
mod args;
mod convert;
mod drift;
mod embed;
mod error;
mod exit;
mod filter;
mod guard;
mod handoff;
mod html_report;
mod incremental;
mod ls;
mod mcp;
mod otlp;
mod redact;
mod report;
mod search;
mod sum;
mod table;
mod tools;
mod usage;
mod watch;

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::model::{EVENT_SCHEMA, INTERCHANGE_SCHEMA};
use crate::pipeline::{self, InputError, InputSpec};
use crate::write::transcript::{ImagesShown, ReasoningShown};
use crate::{read, write};

pub use args::Args;
pub use embed::{Problem, Reading, reading, run_keeping};
pub use exit::Exit;

use args::{Command, ConvertArgs, SchemaName};
use error::CliError;
use report::Reporter;

/// Parses the process arguments, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    main_from(std::env::args_os()).into()
}

/// Parses a command line given as its words (the program's name first), runs the command and
/// returns its exit code, as the `agentlog` binary does: the entry point of other programs that
/// carry the command line, such as the Python package's `agentlog` command.
pub fn main_from(arguments: impl IntoIterator<Item = std::ffi::OsString>) -> Exit {
    let args = match Args::from_arguments(arguments) {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { Exit::Usage } else { Exit::Success };
        }
    };
    remove_temporary_files_on_signals();
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            io::stderr(),
            "agentlog: internal error, this is a bug: {info}\nplease report it with the input that caused it"
        );
    }));
    std::panic::catch_unwind(|| run(args)).unwrap_or(Exit::Internal)
}

/// Whether a command that ends cleanly on a signal runs (`watch`): the first SIGINT, SIGTERM or
/// SIGHUP then only sets [`STOP`], for it to see; a second one ends the process at once.
static GRACEFUL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Set by the first signal while [`GRACEFUL`].
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// On SIGINT (Ctrl-C), SIGTERM or SIGHUP, removes the run's temporary files and exits with the
/// shell's status for a command ended by that signal, 128 + its number: 130 for SIGINT, 143 for
/// SIGTERM; a command that ends cleanly on a signal is asked to, first ([`GRACEFUL`]).
/// Installed once per process, however often the command line runs in it.
fn remove_temporary_files_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
        let _ = std::thread::Builder::new().name("agentlog-signals".into()).spawn(move || {
            use std::sync::atomic::Ordering;
            for signal in signals.forever() {
                if GRACEFUL.load(Ordering::SeqCst) && !STOP.swap(true, Ordering::SeqCst) {
                    continue;
                }
                crate::write::remove_temporary_files();
                std::process::exit(128 + signal);
            }
        });
    });
}

/// Runs a parsed command line.
pub fn run(args: Args) -> Exit {
    let reporter = Reporter::new(args.quiet, args.color);
    run_with(args, &reporter)
}

/// Runs a parsed command line, reporting through `reporter`.
fn run_with(args: Args, reporter: &Reporter) -> Exit {
    match args.command {
        Command::Convert(convert) => run_convert(convert, reporter),
        Command::Ls(ls) => run_ls(&ls, reporter),
        Command::Archive(args) => run_archive(&args, reporter),
        Command::Usage(args) => usage::run(args, reporter),
        Command::Tools(args) => tools::run(&args, reporter),
        Command::Report(args) => html_report::run(&args, reporter),
        Command::Search(args) => search::run(&args, reporter),
        Command::Sessions(args) => search::sessions(&args, reporter),
        Command::Mcp(args) => mcp::run(&args, reporter),
        Command::Drift(args) => drift::run(&args, reporter),
        Command::Handoff(args) => handoff::run(args, reporter),
        Command::Watch(args) => watch::run(&args, reporter),
        Command::Validate(validate) => run_validate(&validate, reporter),
        Command::Schema { which } => match which {
            SchemaName::Event => print(EVENT_SCHEMA.as_bytes(), reporter),
            SchemaName::Interchange => print(INTERCHANGE_SCHEMA.as_bytes(), reporter),
            #[cfg(feature = "arrow")]
            SchemaName::Arrow => {
                if io::stdout().is_terminal() {
                    reporter.error(&refused_on_terminal(
                        "an Arrow IPC file",
                        "redirect it, e.g. agentlog schema arrow > event.arrow",
                    ));
                    return Exit::Usage;
                }
                match crate::write::arrow::line_schema_file() {
                    Ok(file) => print(&file, reporter),
                    Err(e) => {
                        reporter.error(&CliError::output(&None, io::Error::other(e)));
                        Exit::Output
                    }
                }
            }
            #[cfg(feature = "arrow")]
            SchemaName::Spark => {
                let ddl = crate::write::arrow::spark_ddl(&crate::write::arrow::line_schema());
                print(format!("{ddl}\n").as_bytes(), reporter)
            }
        },
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Args::command(), "agentlog", &mut script);
            print(&script, reporter)
        }
        Command::Man => {
            let mut page = Vec::new();
            match clap_mangen::Man::new(Args::command()).render(&mut page) {
                Ok(()) => print(&page, reporter),
                Err(e) => {
                    reporter.error(&CliError::output(&None, e));
                    Exit::Output
                }
            }
        }
    }
}

/// The usage error for binary output to a terminal: `what` would be written, `instead` says
/// how to send it elsewhere.
fn refused_on_terminal(what: &str, instead: &str) -> CliError {
    CliError::Usage { message: format!("refusing to write {what} to a terminal: {instead}") }
}

/// Writes `bytes` to standard output; a reader that went away early is no error.
fn print(bytes: &[u8], reporter: &Reporter) -> Exit {
    match mcp::stdout().write_all(bytes) {
        Ok(()) => Exit::Success,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Exit::Success,
        Err(e) => {
            reporter.error(&CliError::output(&None, e));
            Exit::Output
        }
    }
}

fn run_validate(args: &args::ValidateArgs, reporter: &Reporter) -> Exit {
    let validator = crate::validate::Validator::new();
    let mut exit = Exit::Success;
    let mut report = Vec::new();
    for path in &args.files {
        let name = path.display().to_string();
        let result = std::fs::File::open(path)
            .and_then(|f| validator.check(&name, std::io::BufReader::with_capacity(256 * 1024, f)));
        match result {
            Err(source) => {
                reporter.error(&CliError::from(InputError::Unreadable { path: name, source }));
                exit = exit.max(Exit::Input);
            }
            Ok(v) => {
                if args.format == args::ReportFormat::Text {
                    reporter.diagnostics(&name, &v.findings);
                    reporter.info(&format!("{name}: {} events, {} invalid", v.events, v.invalid));
                }
                if v.invalid > 0 {
                    exit = exit.max(Exit::Invalid);
                }
                report.push(report::file_report(&name, &v));
            }
        }
    }
    if args.format == args::ReportFormat::Json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "files": report })).expect("a report serialises");
        if let Err(e) = writeln!(io::stdout(), "{text}")
            && e.kind() != io::ErrorKind::BrokenPipe
        {
            reporter.error(&CliError::output(&None, e));
            return Exit::Output;
        }
    }
    exit
}

/// The inputs named on the command line, or, with none, every session file in the readers'
/// default places (`~/.claude/projects`, `~/.codex/sessions`, …).
fn resolve_inputs(args: &[String], reader: Option<&'static dyn read::Reader>) -> (Vec<InputSpec>, Vec<InputError>) {
    if !args.is_empty() {
        return pipeline::expand(args);
    }
    let env = |name: &str| std::env::var_os(name);
    let readers: Vec<&dyn read::Reader> = match reader {
        Some(r) => vec![r],
        None => read::READERS.to_vec(),
    };
    let files = readers.iter().flat_map(|r| r.discover(&env)).map(|p| InputSpec::File(p.display().to_string()));
    (files.collect(), Vec::new())
}

/// [`resolve_inputs`], reporting the inputs that cannot be found, and saying so when there is
/// nothing to read.
fn inputs_or_report(
    args: &[String],
    reader: Option<&'static dyn read::Reader>,
    reporter: &Reporter,
) -> (Vec<InputSpec>, Vec<InputError>) {
    let (inputs, errors) = resolve_inputs(args, reader);
    for e in &errors {
        reporter.error(e);
    }
    if inputs.is_empty() && errors.is_empty() {
        say_none_found(args, reporter);
    }
    (inputs, errors)
}

/// Says on stderr that the INPUT arguments, or the default places, hold no session file.
fn say_none_found(args: &[String], reporter: &Reporter) {
    reporter.info(&if args.is_empty() {
        "agentlog: no session files found in the agents' default places; give INPUT paths".to_owned()
    } else {
        format!("agentlog: no session files found in {} (no file there has a name a reader accepts)", args.join(", "))
    });
}

fn run_archive(args: &args::ArchiveArgs, reporter: &Reporter) -> Exit {
    let reader = reader_named(&args.from);
    let (inputs, errors) = inputs_or_report(&args.inputs, reader, reporter);
    if let Err(refusal) = guard::Inputs::new(&args.inputs, &inputs).check(&args.dir, true, &inputs) {
        reporter.error(&CliError::Usage { message: refusal.message(&args.dir) });
        return Exit::Usage;
    }
    let jobs = jobs(args.jobs);
    let run = archive::Run { inputs, reader, jobs, max_line_bytes: args.max_line_bytes, index: args.index, reporter };
    let exit = archive::run(&args.dir, &run);
    if errors.is_empty() { exit } else { exit.max(Exit::Input) }
}

fn run_ls(args: &args::LsArgs, reporter: &Reporter) -> Exit {
    let style = if args.json {
        ls::Style::Json
    } else if io::stdout().is_terminal() {
        ls::Style::Table
    } else {
        ls::Style::Tabs
    };
    if let [dir] = &args.inputs[..]
        && archive::is_archive(std::path::Path::new(dir))
    {
        let listed = archive::sessions(std::path::Path::new(dir));
        return match archive::write_sessions(&listed, style, &mut io::stdout().lock()) {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                reporter.error(&CliError::output(&None, e));
                Exit::Output
            }
            _ => Exit::Success,
        };
    }
    let reader =
        args.from.as_deref().filter(|f| *f != "auto").map(|f| read::reader(f).expect("clap only accepts known names"));
    let (inputs, missing) = resolve_inputs(&args.inputs, reader);
    for e in &missing {
        reporter.error(e);
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let settings = read::Settings::new(cores, read::DEFAULT_MAX_LINE_BYTES).unwrap_or_default();
    let (groups, errors) = pipeline::plan(&inputs, reader, &|_| None, &settings);
    for e in &errors {
        reporter.error(e);
    }
    let errors = missing.len() + errors.len();
    let items = groups.iter().flat_map(|g| &g.items);
    if let Err(e) = ls::write(items, style, &mut io::stdout().lock()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Exit::Success;
        }
        reporter.error(&CliError::output(&None, e));
        return Exit::Output;
    }
    if errors == 0 { Exit::Success } else { Exit::Input }
}

/// A short id for this run's output files, derived from the inputs and the shard: the same
/// inputs give the same names, and shards of one dataset never write the same file.
fn run_id(inputs: &[InputSpec], shard: Option<(u32, u32)>) -> String {
    let mut names: Vec<String> = inputs.iter().map(|i| i.name().to_owned()).collect();
    if let Some((k, n)) = shard {
        names.push(format!("shard {k}/{n}"));
    }
    let id = crate::model::uuid_v5(&uuid::Uuid::NAMESPACE_OID, names.join("\n").as_bytes());
    id.simple().to_string()[..12].to_owned()
}

/// The output format: as given, else from the output file's extension (a directory or a file
/// without one gets unified JSONL); an extension no format owns is a usage error.
fn output_format(args: &ConvertArgs) -> Result<String, CliError> {
    if args.otlp.otlp_endpoint.is_some() {
        return match (&args.to, &args.output) {
            (Some(to), _) if to != "otel" => Err(CliError::Usage {
                message: format!("--otlp-endpoint sends OpenTelemetry traces: it does not go with --to {to}"),
            }),
            (_, Some(_)) => Err(CliError::Usage {
                message: "--otlp-endpoint sends the traces instead of writing them: it does not go with -o".into(),
            }),
            _ => Ok("otel".into()),
        };
    }
    if let Some(to) = &args.to {
        return Ok(to.clone());
    }
    let path = args.output.as_ref().filter(|p| !write::is_directory_target(p));
    let extension = path.and_then(|p| p.extension()).map(|e| e.to_string_lossy());
    if let Some(writer) = write::writer_for_extension(extension.as_deref()) {
        return Ok(writer.name().to_owned());
    }
    let owned = write::WRITERS.iter().filter(|w| !w.extensions().is_empty()).map(|w| {
        let extensions: Vec<String> = w.extensions().iter().map(|e| format!(".{e}")).collect();
        format!("{} ({})", w.name(), extensions.join(", "))
    });
    Err(CliError::Usage {
        message: format!(
            "no output format owns the extension of {}: name one with --to, or use an extension of {}",
            path.map_or_else(String::new, |p| p.display().to_string()),
            owned.collect::<Vec<_>>().join(", ")
        ),
    })
}

/// What transcripts show, from the command line.
fn transcript_options(args: &ConvertArgs) -> write::TranscriptOptions {
    write::TranscriptOptions {
        reasoning: match args.reasoning {
            args::ReasoningArg::Folded => ReasoningShown::Folded,
            args::ReasoningArg::Full => ReasoningShown::Full,
            args::ReasoningArg::Omit => ReasoningShown::Omitted,
        },
        images: match args.images {
            args::ImagesArg::Placeholder => ImagesShown::Placeholder,
            args::ImagesArg::Embed => ImagesShown::Embedded,
            args::ImagesArg::Files => ImagesShown::Files,
        },
        fold_lines: args.fold_lines,
        fold_bytes: args.fold_bytes,
    }
}

/// Refuses every output path of a convert run (the output, files beside it, the report) that
/// is an input, lies inside one, or holds one.
fn check_outputs(args: &ConvertArgs, writer: &dyn write::Writer, inputs: &[InputSpec]) -> Result<(), String> {
    let guard = guard::Inputs::new(&args.inputs, inputs);
    let options = write::Options {
        partition_by: vec![write::PartitionKey::Agent; args.partition_by.len()],
        transcript: transcript_options(args),
        ..write::Options::default()
    };
    let mut outputs = Vec::new();
    if let Some(output) = &args.output {
        let directory = write::is_directory_target(output) || !args.partition_by.is_empty();
        outputs.push((output.clone(), directory));
        outputs.extend(writer.side_files(output, &options).into_iter().map(|p| (p, false)));
    }
    outputs.extend(args.report.iter().map(|p| (p.clone(), false)));
    for (path, directory) in outputs {
        match guard.check(&path, directory, inputs) {
            Err(refusal) if !(args.force && refusal.is_forcible()) => return Err(refusal.message(&path)),
            _ => {}
        }
    }
    Ok(())
}

/// The reader a `--from` value names; `None` for `auto`, which tells each input's format from
/// its content.
/// The reading threads for `--jobs`: one per core unless fewer are asked for; more reading
/// threads than cores only contend for them.
fn jobs(asked: Option<usize>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    asked.unwrap_or(cores).clamp(1, cores)
}

fn reader_named(from: &str) -> Option<&'static dyn read::Reader> {
    match from {
        "auto" => None,
        name => Some(read::reader(name).expect("clap only accepts known reader names")),
    }
}

fn run_convert(mut args: ConvertArgs, reporter: &Reporter) -> Exit {
    // `-o -` is standard output, as for most tools that take an output path.
    if args.output.as_deref() == Some(Path::new("-")) {
        args.output = None;
    }
    let format = match output_format(&args) {
        Ok(format) => format,
        Err(e) => {
            reporter.error(&e);
            return Exit::Usage;
        }
    };
    let Some(writer) = write::writer(&format) else {
        reporter.error(&CliError::UnsupportedOutput { format });
        return Exit::Usage;
    };
    let reader = reader_named(&args.from);
    let (inputs, errors) = inputs_or_report(&args.inputs, reader, reporter);
    if let Err(message) = check_outputs(&args, writer, &inputs) {
        reporter.error(&CliError::Usage { message });
        return Exit::Usage;
    }
    let otlp = match otlp::endpoint(&args.otlp, None, false) {
        Ok(endpoint) => endpoint,
        Err(e) => {
            reporter.error(&e);
            return Exit::Usage;
        }
    };
    if args.output.is_none() && otlp.is_none() && io::stdout().is_terminal() {
        if writer.binary() {
            reporter.error(&refused_on_terminal(
                &format!("{} bytes", writer.name()),
                "add -o FILE, or redirect standard output",
            ));
            return Exit::Usage;
        }
        if args.inputs.is_empty() {
            reporter.info(
                "agentlog: writing every session as JSON to the terminal; add -o FILE, or pipe it (agentlog convert | jq)",
            );
        }
    }
    if !args.partition_by.is_empty() && args.output.is_none() {
        reporter.error(&CliError::Usage { message: "--partition-by needs an output directory: add -o DIR".into() });
        return Exit::Usage;
    }
    let partition_by = args
        .partition_by
        .iter()
        .map(|k| match k {
            args::PartitionBy::Agent => write::PartitionKey::Agent,
            args::PartitionBy::Date => write::PartitionKey::Date,
        })
        .collect();
    let shard = args.shard.map(|s| (s.k, s.n));
    let jobs = jobs(args.jobs);
    let transcript = transcript_options(&args);
    let options = write::Options {
        partition_by,
        run_id: run_id(&inputs, shard),
        threads: jobs,
        transcript,
        otel_content: args.otel_content,
        listing: None,
        otlp: None,
        native: write::native::NativeOptions { redaction: args.redact.describe(), ..Default::default() },
    };
    if args.incremental && incremental::directory(&args.output).is_none() {
        reporter.error(&CliError::Usage {
            message: "--incremental needs an output directory for one file per session: add -o DIR/".into(),
        });
        return Exit::Usage;
    }
    let Some((filter, _)) = filter::resolve(&args.filter).inspect_err(|e| reporter.error(e)).ok() else {
        return Exit::Usage;
    };
    if args.incremental && !filter.keeps_all() {
        reporter.error(&CliError::Usage {
            message: "--incremental writes every session of its inputs: it cannot be combined with filters".into(),
        });
        return Exit::Usage;
    }
    // Redaction that cannot run fails the run before anything is written.
    let redaction = match args.redact.resolve_or_report(reporter) {
        Ok(redaction) => redaction,
        Err(exit) => return exit,
    };
    let mut options = options;
    if let Some(endpoint) = otlp {
        match otlp::start(endpoint, reporter.quiet()) {
            Ok(exporter) => options.otlp = Some(exporter),
            Err(e) => {
                reporter.error(&e);
                return Exit::Output;
            }
        }
    }
    let exporter = options.otlp.clone();
    let plan = convert::Plan {
        inputs,
        reader,
        writer,
        output: args.output,
        options,
        jobs,
        max_line_bytes: args.max_line_bytes,
        shard,
        report: args.report,
        incremental: args.incremental,
        filter,
    };
    let mut exit = convert::run(&plan, redaction, reporter);
    if let Some(exporter) = exporter {
        // The endpoint is given as long as it keeps failing for less than --otlp-retry-for.
        exit = exit.max(otlp::finish(&exporter, std::time::Duration::MAX, None, reporter));
    }
    if errors.is_empty() { exit } else { exit.max(Exit::Input) }
}
