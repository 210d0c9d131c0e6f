//! Writers: one per output format, each taking events through an [`EventSink`].
//!
//! A writer is a unit struct implementing [`Writer`], listed once in [`WRITERS`]; `--to`
//! values and the conformance tests walk that list. Writers know nothing of agents: they see
//! only the unified model. Every file a writer creates is written under a temporary name and
//! renamed when complete ([`AtomicFile`]), so a failed run never leaves a file that looks
//! finished.

#[cfg(feature = "arrow")]
pub mod arrow;
pub mod atif;
mod build;
pub mod claude_code;
pub mod codex;
pub mod encode;
mod error;
mod file;
mod held;
pub mod html;
pub mod interchange;
pub mod jsonl;
pub mod markdown;
pub mod native;
pub mod otel;
mod sessions;
pub mod transcript;

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::model::{Diagnostic, Event};

pub use build::{Build, Builders, Piece, Storage};
pub use error::WriteError;
pub(crate) use file::forget_temporary;
pub use file::{AtomicFile, Pending, create_temporary, remove_temporary, remove_temporary_files, temporary_path};
pub(crate) use held::Held;
pub use sessions::Sessions;
pub use transcript::TranscriptOptions;

/// Every writer agentlog has, in the order `--help` lists them.
pub const WRITERS: &[&dyn Writer] = &[
    &jsonl::Jsonl,
    #[cfg(feature = "parquet")]
    &arrow::Parquet,
    #[cfg(feature = "arrow")]
    &arrow::Arrow,
    &interchange::Interchange,
    &atif::Atif,
    &otel::Otel,
    &markdown::Markdown,
    &html::Html,
    &claude_code::ClaudeCode,
    &codex::Codex,
];

/// The writer an output file's extension chooses: the one that lists it (in any case), the
/// first of [`WRITERS`] for a file without an extension, `None` for an extension no writer lists.
pub fn writer_for_extension(extension: Option<&str>) -> Option<&'static dyn Writer> {
    match extension {
        None => Some(WRITERS[0]),
        Some(e) => WRITERS.iter().copied().find(|w| w.extensions().iter().any(|x| x.eq_ignore_ascii_case(e))),
    }
}

/// Looks a writer up by name or alias (`unified`, `jsonl`).
pub fn writer(name: &str) -> Option<&'static dyn Writer> {
    WRITERS.iter().copied().find(|w| w.name() == name || w.aliases().contains(&name))
}

/// Where a writer writes.
pub enum Target<'w> {
    /// A stream, typically standard output: one combined output, no side files.
    Stream(Box<dyn Write + Send + 'w>),
    /// A file path, or a directory for partitioned output.
    Path(PathBuf),
}

/// How to split output into a Hive-style partitioned dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionKey {
    /// `agent=<claude-code|codex>`.
    Agent,
    /// `date=<YYYY-MM-DD>` of the event time (UTC).
    Date,
}

impl PartitionKey {
    /// The name users type in `--partition-by`.
    pub fn name(self) -> &'static str {
        match self {
            PartitionKey::Agent => "agent",
            PartitionKey::Date => "date",
        }
    }
}

/// Options every writer receives; a writer rejects those it does not support.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Partition keys, in path order; empty for one combined output.
    pub partition_by: Vec<PartitionKey>,
    /// Names the files of this run in a partitioned dataset (`part-<run_id>-<n>`); derived
    /// from the inputs, so that the same inputs give the same names.
    pub run_id: String,
    /// The run's threads: with more than one, the writer may work on threads of its own beside
    /// the caller's (a Parquet file encodes its columns there); 0 or 1 writes on the caller's
    /// thread. The output is the same either way.
    pub threads: usize,
    /// What Markdown and HTML transcripts show.
    pub transcript: TranscriptOptions,
    /// Whether OpenTelemetry spans carry message content (`--otel-content`).
    pub otel_content: bool,
    /// The sessions listed by earlier runs into the same directory of transcripts, for an index
    /// of them all (`agentlog watch -o DIR/`).
    pub listing: Option<transcript::Listing>,
    /// Where OpenTelemetry traces are sent in place of being written (`--otlp-endpoint`).
    pub otlp: Option<std::sync::Arc<otel::otlp::Exporter>>,
    /// What the writers of agents' own formats (`claude-code`, `codex`) take.
    pub native: native::NativeOptions,
}

/// An output format.
pub trait Writer: Send + Sync {
    /// The name users type after `--to`.
    fn name(&self) -> &'static str;

    /// Other names accepted after `--to`.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// One line for `--help`.
    fn description(&self) -> &'static str;

    /// Whether the output is binary, unfit for a terminal.
    fn binary(&self) -> bool {
        false
    }

    /// File extensions (without the dot) that choose this format for an output file when no
    /// format is named; see [`writer_for_extension`].
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    /// Starts writing to `target`.
    ///
    /// # Errors
    /// [`WriteError::Unsupported`] when the options or the target do not fit this format;
    /// [`WriteError::Io`] when the output cannot be created.
    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError>;

    /// Files written beside the output `path` (not inside it), such as a sessions table.
    fn side_files(&self, _path: &Path, _options: &Options) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// Appends the bytes of one event to a buffer, as a sink would write it; see
/// [`EventSink::encoder`].
pub type Encoder = fn(&Event, &mut Vec<u8>);

/// Takes events already encoded: a caller may run the sink's [`EncodedSink::encoder`] on other
/// threads and pass runs of encoded events here in place of [`EventSink::event`]. Only sinks
/// that offer it ([`EventSink::encoded`]) see encoded bytes.
pub trait EncodedSink {
    /// How this sink encodes an event.
    fn encoder(&self) -> Encoder;

    /// Writes events that [`EncodedSink::encoder`] encoded, in order.
    ///
    /// # Errors
    /// When writing fails.
    fn write_encoded(&mut self, bytes: &[u8]) -> io::Result<()>;

    /// Writes `len` bytes of encoded events kept in `from` at offset `at`, as
    /// [`EncodedSink::write_encoded`] would; moves `from`'s position. A sink writing to a file
    /// copies them from file to file in the kernel.
    ///
    /// # Errors
    /// When reading or writing fails.
    fn write_encoded_from(&mut self, from: &File, at: u64, len: u64) -> io::Result<()> {
        let mut bytes = Vec::new();
        read_range(from, at, len, &mut bytes)?;
        self.write_encoded(&bytes)
    }
}

/// Takes events in order and writes them.
///
/// I/O errors are returned unchanged (a closed pipe is the caller's to judge); other failures
/// are a [`WriteError`] carried in the [`io::Error`] ([`WriteError::from_io`]).
pub trait EventSink {
    /// Called before the events of each input.
    ///
    /// # Errors
    /// When writing fails.
    fn begin_source(&mut self, _name: &str) -> io::Result<()> {
        Ok(())
    }

    /// Writes one event.
    ///
    /// # Errors
    /// When writing fails.
    fn event(&mut self, event: &Event) -> io::Result<()>;

    /// The faster way in of a sink that writes every event's bytes as they are and needs
    /// nothing else from it; `None` (the default) when it must see the events.
    fn encoded(&mut self) -> Option<&mut dyn EncodedSink> {
        None
    }

    /// Makes builders, when this sink can take its output built on the threads that read
    /// ([`Build`]): a caller that asks for them hands every event to a builder instead of
    /// [`EventSink::event`], and what the builders make to [`EventSink::piece`], in input order;
    /// it still calls [`EventSink::begin_source`], [`EventSink::end_source`] and
    /// [`EventSink::end_group`]. `None` (the default) when the sink must see the events.
    fn builders(&mut self) -> Option<Builders> {
        None
    }

    /// Writes a piece that a builder of [`EventSink::builders`] made.
    ///
    /// # Errors
    /// When writing fails, or the piece was not built for this sink.
    fn piece(&mut self, _piece: Piece) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "this output takes events, not pieces"))
    }

    /// Called after the inputs of each group (files that share reader state, among them every
    /// file of a session): no later event belongs to a session met before. A sink that holds
    /// sessions until they are complete may write them here; a caller that does not know its
    /// groups need not call it, and such a sink then writes them at [`EventSink::finish`].
    ///
    /// # Errors
    /// When writing fails.
    fn end_group(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Called after the events of each input, with the lines it had and the problems met.
    ///
    /// # Errors
    /// When writing fails.
    fn end_source(&mut self, _name: &str, _lines: u64, _diagnostics: &[Diagnostic]) -> io::Result<()> {
        Ok(())
    }

    /// Writes whatever is buffered and completes the output; must be called once after the
    /// last event. Until then, no output file exists under its final name.
    ///
    /// # Errors
    /// When writing fails.
    fn finish(&mut self) -> io::Result<()>;
}

/// `&mut dyn Write` as a sized writer, for APIs that take `impl Write`.
pub(crate) struct SizedWrite<'a>(pub &'a mut dyn Write);

impl Write for SizedWrite<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Reads `len` bytes of `from` at offset `at` into `into`, which is cleared first.
///
/// # Errors
/// When reading fails, or `from` ends before.
pub fn read_range(from: &File, at: u64, len: u64, into: &mut Vec<u8>) -> io::Result<()> {
    into.clear();
    copy_range(from, at, len, into)
}

/// Copies `len` bytes of `from` at offset `at` to `to` (from file to file in the kernel, where
/// `to` is a file); moves `from`'s position.
///
/// # Errors
/// When reading or writing fails, or `from` ends before.
pub(crate) fn copy_range(mut from: &File, at: u64, len: u64, to: &mut impl Write) -> io::Result<()> {
    from.seek(SeekFrom::Start(at))?;
    if io::copy(&mut from.take(len), to)? < len {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a held-back range ends early"));
    }
    Ok(())
}

/// The path of a side file beside `path`: `out.parquet` → `out.sessions.parquet`.
pub fn beside(path: &Path, infix: &str) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    match path.extension() {
        Some(ext) => path.with_file_name(format!("{stem}.{infix}.{}", ext.to_string_lossy())),
        None => path.with_file_name(format!("{stem}.{infix}")),
    }
}

/// Where the sessions table of an events file at `path` goes: beside it, unless `path` names a
/// device or pipe (`/dev/null`), which gets the events only.
pub fn sessions_beside(path: &Path) -> Option<PathBuf> {
    let special = fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    (!special).then(|| beside(path, "sessions"))
}

/// The error for an output directory given to a format that writes one file.
pub fn not_a_directory(path: &Path, format: &str) -> WriteError {
    WriteError::Unsupported {
        message: format!(
            "--to {format} writes one file, but {} names a directory; name a file (out.{format}){}",
            path.display(),
            if format == "parquet" { ", or add --partition-by agent,date for a dataset" } else { "" }
        ),
    }
}

/// The error for options a format does not support.
pub fn unsupported(what: &str, format: &str) -> WriteError {
    WriteError::Unsupported { message: format!("{what} is not supported for --to {format}") }
}

/// Whether a path names a directory for one output per session: an existing directory, or a
/// path ending in `/`.
pub fn is_directory_target(path: &Path) -> bool {
    path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/')
}

/// A file name for a session's output that stays inside its directory whatever the id holds:
/// `<agent>-<id>.<extension>`, the id reduced to ASCII letters, digits, `-`, `_` and `.` and
/// shortened. An id that had to be changed gets a hash of the whole id after it, so that two ids
/// never share a name however the runs that write them are split (`--incremental`); a name
/// already in `used` gets a counter.
pub fn session_file_name(
    agent: crate::model::Agent,
    session_id: &str,
    extension: &str,
    used: &mut std::collections::HashSet<String>,
) -> String {
    let mut safe: String = session_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .take(120)
        .collect();
    // Runs of dots are harmless after the agent prefix, but read as traversal; collapse them.
    while safe.contains("..") {
        safe = safe.replace("..", "_");
    }
    if safe != session_id {
        let hash = crate::model::uuid_v5(&uuid::Uuid::NAMESPACE_OID, session_id.as_bytes());
        safe.push('-');
        safe.push_str(&hash.simple().to_string()[..8]);
    }
    let base = format!("{}-{safe}", agent.as_str());
    let mut name = format!("{base}.{extension}");
    let mut n = 1;
    while !used.insert(name.clone()) {
        n += 1;
        name = format!("{base}-{n}.{extension}");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Agent;

    #[test]
    fn session_file_names_stay_inside_the_directory() {
        let mut used = std::collections::HashSet::new();
        for id in ["../../etc/passwd", "a/b", "..", "x\u{0}y\nz", "/abs", "ok-id_1.2"] {
            let name = session_file_name(Agent::Codex, id, "json", &mut used);
            assert!(!name.contains('/') && !name.contains("..") && !name.chars().any(char::is_control), "{name}");
            assert!(name.starts_with("codex-") && name.ends_with(".json"), "{name}");
        }
        assert_eq!(session_file_name(Agent::ClaudeCode, "ok-id_1.2", "json", &mut used), "claude-code-ok-id_1.2.json");
        // Ids that reduce to the same characters keep names of their own, in any order.
        let a = session_file_name(Agent::Codex, "a/b", "json", &mut std::collections::HashSet::new());
        let b = session_file_name(Agent::Codex, "a:b", "json", &mut std::collections::HashSet::new());
        assert!(a.starts_with("codex-a_b-") && b.starts_with("codex-a_b-") && a != b, "{a} {b}");
        assert_eq!(
            session_file_name(Agent::ClaudeCode, "ok-id_1.2", "json", &mut used),
            "claude-code-ok-id_1.2-2.json",
            "unique"
        );
    }
}
