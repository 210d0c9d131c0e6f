//! `--images files`: each inline image written once to a folder beside the transcript, named by
//! a hash of its bytes, and linked from the transcript by a relative path.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use sha1::{Digest, Sha1};

use crate::write::{AtomicFile, Pending};

use super::view::Attachment;

/// The images of a run, and where they go.
pub struct ImageFiles {
    dir: PathBuf,
    /// How a transcript reaches `dir`: `out.files/` beside `out.md`, `../files/` from a
    /// session's file of a directory output.
    prefix: String,
    written: HashSet<String>,
    done: Vec<Pending>,
}

impl ImageFiles {
    /// Images written to `dir`, linked as `prefix` + file name.
    pub fn new(dir: PathBuf, prefix: String) -> Self {
        ImageFiles { dir, prefix, written: HashSet::new(), done: Vec::new() }
    }

    /// For a transcript written to the file `path`: the folder `<stem>.files/` beside it.
    pub fn beside(path: &Path) -> Self {
        let name = format!("{}.files", path.file_stem().unwrap_or_default().to_string_lossy());
        ImageFiles::new(path.with_file_name(&name), format!("{name}/"))
    }

    /// The folder the images go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the inline raster images among `attachments` (once each) and links them; others
    /// stay as they are.
    ///
    /// # Errors
    /// When an image file cannot be written.
    pub fn link(&mut self, attachments: &mut [Attachment]) -> io::Result<()> {
        for a in attachments.iter_mut() {
            let (Some(_), Some(data), Some(media_type)) = (a.data_url(), a.data, a.media_type) else { continue };
            let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else { continue };
            let extension = media_type.strip_prefix("image/").unwrap_or("bin").replace("jpeg", "jpg");
            let hash = Sha1::digest(&bytes);
            let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
            let name = format!("{hex}.{extension}");
            if self.written.insert(name.clone()) {
                let mut file = AtomicFile::create(&self.dir.join(&name))?;
                file.write_all(&bytes)?;
                self.done.push(file.close()?);
            }
            a.link = Some(format!("{}{name}", self.prefix));
        }
        Ok(())
    }

    /// Gives every image file its final name.
    ///
    /// # Errors
    /// When a file cannot be renamed.
    pub fn finish(self) -> io::Result<()> {
        Pending::rename_all(self.done)
    }
}
