//! Files that get their final name only once complete: [`AtomicFile`], [`Pending`], and the
//! registry of temporary files that a signal handler or a later run removes.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread::{self, JoinHandle};

use super::copy_range;

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

/// Forgets a temporary file that was renamed.
pub(crate) fn forget_temporary(temp: &Path) {
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
    /// The name the file will have.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Gives the file its final name only if no file has it: never replaces one.
    ///
    /// # Errors
    /// [`io::ErrorKind::AlreadyExists`] when a file has the name; when linking fails.
    pub fn rename_new(mut self) -> io::Result<()> {
        match self.temp.take() {
            Some(temp) => {
                // A hard link fails if the name is taken, where a rename would replace the file.
                let linked = fs::hard_link(&temp, &self.path);
                remove_temporary(&temp);
                linked
            }
            None => Ok(()),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

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
