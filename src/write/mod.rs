//! Writers: one per output format, each taking events through an [`EventSink`].
//!
//! A writer is a unit struct implementing [`Writer`], listed once in [`WRITERS`]; `--to`
//! values and the conformance tests walk that list. Writers know nothing of agents: they see
//! only the unified model. Every file a writer creates is written under a temporary name and
//! renamed when complete ([`AtomicFile`]), so a failed run never leaves a file that looks
//! finished.

pub mod arrow;
pub mod encode;
pub mod interchange;
pub mod jsonl;
mod sessions;

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::thread::{self, JoinHandle};

use crate::model::{Diagnostic, Event};

pub use sessions::Sessions;

/// Every writer agentlog has, in the order `--help` lists them.
pub const WRITERS: &[&dyn Writer] = &[&jsonl::Jsonl, &arrow::Parquet, &arrow::Arrow, &interchange::Interchange];

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
    /// Whether the writer may work on a thread of its own beside the caller's (the run has
    /// more than one job); the output is the same either way.
    pub parallel: bool,
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

    /// Starts writing to `target`.
    ///
    /// # Errors
    /// When the output cannot be created, or the options do not apply to this format.
    fn open<'w>(&self, target: Target<'w>, options: &Options) -> io::Result<Box<dyn EventSink + 'w>>;

    /// Files written beside the output `path` (not inside it), such as a sessions table.
    fn side_files(&self, _path: &Path, _options: &Options) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// Appends the bytes of one event to a buffer, as a sink would write it; see
/// [`EventSink::encoder`].
pub type Encoder = fn(&Event, &mut Vec<u8>);

/// Takes events in order and writes them.
///
/// I/O errors are returned unchanged (a closed pipe is the caller's to judge).
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

    /// How this sink encodes an event, when it writes every event's bytes as they are and
    /// needs nothing else from it; `None` (the default) when it must see the events.
    ///
    /// A caller may run the encoder on other threads and pass runs of encoded events to
    /// [`EventSink::encoded`] in place of [`EventSink::event`].
    fn encoder(&self) -> Option<Encoder> {
        None
    }

    /// Writes events that this sink's [`EventSink::encoder`] encoded, in order.
    ///
    /// # Errors
    /// When writing fails, or when the sink has no encoder.
    fn encoded(&mut self, _bytes: &[u8]) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "this output takes events, not encoded bytes"))
    }

    /// Writes `len` bytes of events that this sink's [`EventSink::encoder`] encoded, kept in
    /// `from` at offset `at`, as [`EventSink::encoded`] would; moves `from`'s position.
    ///
    /// A sink writing to a file copies them from file to file in the kernel.
    ///
    /// # Errors
    /// When reading or writing fails, or when the sink has no encoder.
    fn encoded_from(&mut self, from: &File, at: u64, len: u64) -> io::Result<()> {
        let mut bytes = Vec::new();
        read_range(from, at, len, &mut bytes)?;
        self.encoded(&bytes)
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
fn copy_range(mut from: &File, at: u64, len: u64, to: &mut impl Write) -> io::Result<()> {
    from.seek(SeekFrom::Start(at))?;
    if io::copy(&mut from.take(len), to)? < len {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "a held-back range ends early"));
    }
    Ok(())
}

/// A file written under a temporary name beside its final path and renamed by [`commit`];
/// dropped without a commit, the temporary file is removed.
///
/// A path that already names something other than a regular file (`/dev/null`, a named pipe)
/// is written in place: there is nothing to rename, and replacing it would break it.
///
/// While it is written, what is written is flushed to disk in the background every
/// [`WRITE_BEHIND`] bytes, so that the sync before the rename has little left to wait for.
///
/// [`commit`]: AtomicFile::commit
pub struct AtomicFile {
    file: Option<File>,
    /// The temporary path; `None` when writing in place.
    temp: Option<PathBuf>,
    path: PathBuf,
    /// Bytes written since the last background flush began.
    unsynced: u64,
    /// The background flush, while one runs.
    syncing: Option<JoinHandle<io::Result<()>>>,
    /// Why a background flush failed; the commit fails with it.
    failed: Option<io::Error>,
}

/// Bytes written to an [`AtomicFile`] after which they are flushed to disk in the background.
const WRITE_BEHIND: u64 = 64 << 20;

impl AtomicFile {
    /// Creates the temporary file for `path` (and any missing parent directories).
    ///
    /// # Errors
    /// When the file or its directories cannot be created.
    pub fn create(path: &Path) -> io::Result<Self> {
        if fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let file = fs::OpenOptions::new().write(true).open(path)?;
            return Ok(AtomicFile::new(file, None, path));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
        let temp = temporary_path(path);
        Ok(AtomicFile::new(create_temporary(&temp)?, Some(temp), path))
    }

    fn new(file: File, temp: Option<PathBuf>, path: &Path) -> Self {
        let path = path.to_owned();
        AtomicFile { file: Some(file), temp, path, unsynced: 0, syncing: None, failed: None }
    }

    /// The path the file will have once committed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the file to disk and gives it its final name.
    ///
    /// # Errors
    /// When syncing or renaming fails.
    pub fn commit(self) -> io::Result<()> {
        self.close()?.rename()
    }

    /// Flushes the file to disk and closes it, still under its temporary name: outputs made of
    /// several files get their final names together, once all are complete ([`Pending`]).
    ///
    /// # Errors
    /// When syncing fails.
    pub fn close(mut self) -> io::Result<Pending> {
        self.wait_for_sync();
        let mut file = self.file.take().expect("an uncommitted file is open");
        let temp = self.temp.take();
        let pending = Pending { temp, path: std::mem::take(&mut self.path) };
        if pending.temp.is_none() {
            file.flush()?;
            return Ok(pending);
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        file.sync_all()?;
        Ok(pending)
    }

    /// Appends `len` bytes of `from` at offset `at`, copied from file to file in the kernel
    /// where it can; moves `from`'s position.
    ///
    /// # Errors
    /// When reading or writing fails, or `from` ends before.
    pub fn copy_from(&mut self, from: &File, at: u64, len: u64) -> io::Result<()> {
        copy_range(from, at, len, self.file.as_mut().expect("an uncommitted file is open"))?;
        self.wrote(len);
        Ok(())
    }

    /// Counts bytes written, and begins a background flush every [`WRITE_BEHIND`] bytes.
    fn wrote(&mut self, bytes: u64) {
        if self.temp.is_some() {
            self.unsynced += bytes;
            if self.unsynced >= WRITE_BEHIND {
                self.sync_behind();
            }
        }
    }

    /// Begins flushing what is written so far to disk on a thread of its own, unless the last
    /// flush still runs.
    fn sync_behind(&mut self) {
        if self.syncing.as_ref().is_some_and(|s| !s.is_finished()) {
            return;
        }
        self.wait_for_sync();
        // Counted from here even if no flush can begin, so that a failure is not retried on
        // every write.
        self.unsynced = 0;
        let Some(file) = self.file.as_ref().and_then(|f| f.try_clone().ok()) else { return };
        self.syncing = thread::Builder::new().name("agentlog-sync".into()).spawn(move || file.sync_data()).ok();
    }

    /// Waits for the background flush, keeping its error: a failed flush is reported once, so
    /// the sync at commit would not see it again.
    fn wait_for_sync(&mut self) {
        let Some(syncing) = self.syncing.take() else { return };
        let result = syncing.join().unwrap_or_else(|_| Err(io::Error::other("the background flush panicked")));
        if let Err(e) = result {
            self.failed.get_or_insert(e);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.file.as_mut().expect("an uncommitted file is open").write(buf)?;
        self.wrote(written as u64);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("an uncommitted file is open").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some()
            && let Some(temp) = &self.temp
        {
            remove_temporary(temp);
        }
    }
}

/// The suffix of every temporary file, followed by the id of the process writing it.
const TEMPORARY: &str = ".agentlog-tmp-";

/// Temporary files this process has made and not yet renamed or removed.
static TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Directories whose stale temporary files this process has looked for.
static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The temporary path beside `path`: `out.jsonl.agentlog-tmp-<pid>`.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!("{TEMPORARY}{}", std::process::id()));
    path.with_file_name(name)
}

/// Creates (or empties) the temporary file `temp` and registers it for
/// [`remove_temporary_files`]; first removes, once per directory, temporary files that
/// processes no longer running left there (killed with `kill -9`, or a power cut).
///
/// # Errors
/// When the file cannot be created.
pub fn create_temporary(temp: &Path) -> io::Result<File> {
    if let Some(dir) = temp.parent() {
        sweep_stale(if dir.as_os_str().is_empty() { Path::new(".") } else { dir });
    }
    let file = File::create(temp)?;
    if let Ok(mut live) = TEMPORARIES.lock() {
        live.push(temp.to_owned());
    }
    Ok(file)
}

/// Removes a temporary file and forgets it.
pub fn remove_temporary(temp: &Path) {
    let _ = fs::remove_file(temp);
    forget_temporary(temp);
}

fn forget_temporary(temp: &Path) {
    if let Ok(mut live) = TEMPORARIES.lock()
        && let Some(at) = live.iter().position(|p| p == temp)
    {
        live.swap_remove(at);
    }
}

/// Removes every temporary file this process has not yet renamed: what a signal handler calls
/// before the process exits.
pub fn remove_temporary_files() {
    if let Ok(mut live) = TEMPORARIES.lock() {
        for temp in live.drain(..) {
            let _ = fs::remove_file(temp);
        }
    }
}

/// Removes the temporary files in `dir` whose process is no longer running.
fn sweep_stale(dir: &Path) {
    let Ok(mut swept) = SWEPT.lock() else { return };
    if swept.iter().any(|d| d == dir) {
        return;
    }
    swept.push(dir.to_owned());
    drop(swept);
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((_, pid)) = name.to_str().and_then(|n| n.rsplit_once(TEMPORARY)) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() && Path::new("/proc/self").exists()
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// A complete file, synced and closed under its temporary name, waiting for its final name;
/// dropped without [`Pending::rename`], the temporary file is removed.
#[must_use = "a pending file is removed unless it is renamed"]
pub struct Pending {
    /// The temporary path; `None` for a file written in place.
    temp: Option<PathBuf>,
    path: PathBuf,
}

impl Pending {
    /// Gives the file its final name.
    ///
    /// # Errors
    /// When renaming fails.
    pub fn rename(mut self) -> io::Result<()> {
        match self.temp.take() {
            Some(temp) => {
                let renamed = fs::rename(&temp, &self.path);
                if renamed.is_ok() {
                    forget_temporary(&temp);
                } else {
                    remove_temporary(&temp);
                }
                renamed
            }
            None => Ok(()),
        }
    }

    /// Gives every file its final name, in order; the first failure stops and is returned (the
    /// files not yet renamed are removed).
    ///
    /// # Errors
    /// When renaming fails.
    pub fn rename_all(files: Vec<Pending>) -> io::Result<()> {
        // A directory in the way is the one reason a rename in place fails that can be told
        // before any file is renamed.
        if let Some(blocked) = files.iter().find(|f| f.temp.is_some() && f.path.is_dir()) {
            let message = format!("{} is a directory", blocked.path.display());
            return Err(io::Error::new(io::ErrorKind::IsADirectory, message));
        }
        files.into_iter().try_for_each(Pending::rename)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(temp) = &self.temp {
            remove_temporary(temp);
        }
    }
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
pub fn not_a_directory(path: &Path, format: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "--to {format} writes one file, but {} names a directory; name a file (out.{format}){}",
            path.display(),
            if format == "parquet" { ", or add --partition-by agent,date for a dataset" } else { "" }
        ),
    )
}

/// The error for options a format does not support.
pub fn unsupported(what: &str, format: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("{what} is not supported for --to {format}"))
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

    #[test]
    fn bytes_copied_from_a_file_count_towards_the_background_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("copied.jsonl");
        let mut from = tempfile::tempfile().unwrap();
        from.write_all(&vec![b'x'; WRITE_BEHIND as usize + 2]).unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"a").unwrap();
        file.copy_from(&from, 1, WRITE_BEHIND).unwrap();
        assert!(file.syncing.is_some(), "a background flush began");
        file.commit().unwrap();
        let written = fs::read(&path).unwrap();
        assert_eq!(written.len() as u64, WRITE_BEHIND + 1);
        assert!(written.starts_with(b"ax") && written.ends_with(b"x"));
    }

    #[test]
    fn a_range_is_copied_into_a_device_written_in_place() {
        let mut from = tempfile::tempfile().unwrap();
        from.write_all(b"{\"a\":1}\n").unwrap();
        let mut file = AtomicFile::create(Path::new("/dev/null")).unwrap();
        file.copy_from(&from, 0, 8).unwrap();
        file.commit().unwrap();
        let kind = fs::metadata("/dev/null").unwrap().file_type();
        assert!(std::os::unix::fs::FileTypeExt::is_char_device(&kind), "the device is left in place");
    }

    #[test]
    fn a_file_flushed_in_the_background_while_written_commits_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let mut file = AtomicFile::create(&path).unwrap();
        let block: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let blocks = WRITE_BEHIND as usize / block.len() * 2 + 1;
        for _ in 0..blocks {
            file.write_all(&block).unwrap();
        }
        assert!(file.syncing.is_some(), "a background flush began");
        assert!(!path.exists(), "not there before the commit");
        file.commit().unwrap();
        let written = fs::read(&path).unwrap();
        assert_eq!(written.len(), blocks * block.len());
        assert!(written.chunks(block.len()).all(|b| b == block));
    }
}
