//! `--incremental`: a manifest in the output directory records every input converted (path,
//! size, modification time, SHA-1 of its content, the reader that read it) and the agentlog and
//! schema versions; the next run skips groups whose inputs all have the same size and time,
//! without opening them, and redoes the rest. A different agentlog or schema version redoes
//! everything.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::model::SCHEMA_VERSION;
use serde::{Deserialize, Serialize};

use crate::pipeline::InputSpec;
use crate::read::store::Stored;

/// The manifest's file name inside the output directory.
const FILE: &str = ".agentlog-manifest.json";

/// What one run converted.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// agentlog version that wrote the outputs.
    pub agentlog_version: String,
    /// Unified schema version of the outputs.
    pub schema_version: String,
    /// Inputs by path as given.
    pub files: BTreeMap<String, Entry>,
}

/// One input as it was when converted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since 1970.
    pub modified_ns: u128,
    /// SHA-1 of the content, hex.
    pub sha1: String,
    /// Name of the reader that read it.
    pub reader: String,
    /// The sessions its events belong to, as `[agent, session id]`: a session's output file is
    /// rewritten from every input that holds it.
    #[serde(default)]
    pub sessions: Vec<[String; 2]>,
    /// For a session of a database (`<database>#<session id>`), its fingerprint: the latest
    /// update time and row counts its reader lists. Size, time and hash are then the database's
    /// and not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl Manifest {
    /// The manifest of `dir`, or an empty one when there is none or it was written by another
    /// version (everything is redone then).
    pub fn load(dir: &Path) -> Self {
        let current =
            |m: &Manifest| m.agentlog_version == env!("CARGO_PKG_VERSION") && m.schema_version == SCHEMA_VERSION;
        std::fs::read_to_string(dir.join(FILE))
            .ok()
            .and_then(|text| serde_json::from_str::<Manifest>(&text).ok())
            .filter(current)
            .unwrap_or_else(|| Manifest {
                agentlog_version: env!("CARGO_PKG_VERSION").into(),
                schema_version: SCHEMA_VERSION.into(),
                files: BTreeMap::new(),
            })
    }

    /// The reader that read `input` last time, if it has not changed since (same size and
    /// modification time); nothing is read to tell.
    pub fn unchanged(&self, input: &InputSpec) -> Option<&str> {
        if let InputSpec::Stored(stored) = input {
            let entry = self.files.get(&stored.name)?;
            return (entry.fingerprint.as_ref() == Some(&stored.fingerprint)).then_some(entry.reader.as_str());
        }
        let InputSpec::File(path) = input else { return None };
        let entry = self.files.get(path)?;
        let (size, modified_ns) = stat(Path::new(path)).ok()?;
        (entry.size == size && entry.modified_ns == modified_ns).then_some(entry.reader.as_str())
    }

    /// Records an input as converted now.
    ///
    /// # Errors
    /// When the file cannot be read to hash it.
    pub fn record(&mut self, path: &str, reader: &str, sessions: Vec<[String; 2]>) -> io::Result<()> {
        let (size, modified_ns) = stat(Path::new(path))?;
        use sha1::Digest as _;
        let mut hasher = sha1::Sha1::new();
        let mut file = std::fs::File::open(path)?;
        let mut buf = vec![0; 256 * 1024];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        let sha1 = hex(&hasher.finalize());
        let entry = Entry { size, modified_ns, sha1, reader: reader.to_owned(), sessions, fingerprint: None };
        self.files.insert(path.to_owned(), entry);
        Ok(())
    }

    /// Records a session of a database as converted now, by its fingerprint.
    pub fn record_stored(&mut self, stored: &Stored, reader: &str, sessions: Vec<[String; 2]>) {
        let entry = Entry {
            size: stored.size,
            modified_ns: 0,
            sha1: String::new(),
            reader: reader.to_owned(),
            sessions,
            fingerprint: Some(stored.fingerprint.clone()),
        };
        self.files.insert(stored.name.clone(), entry);
    }

    /// The sessions `input` held when it was last converted.
    pub fn sessions(&self, input: &InputSpec) -> &[[String; 2]] {
        match input {
            InputSpec::File(path) => self.files.get(path).map_or(&[], |e| e.sessions.as_slice()),
            InputSpec::Stored(stored) => self.files.get(&stored.name).map_or(&[], |e| e.sessions.as_slice()),
            InputSpec::Stdin => &[],
        }
    }

    /// Writes the manifest into `dir`, replacing the old one whole.
    ///
    /// # Errors
    /// When it cannot be written.
    pub fn save(&self, dir: &Path) -> io::Result<()> {
        let mut file = crate::write::AtomicFile::create(&dir.join(FILE))?;
        serde_json::to_writer_pretty(&mut file, self)?;
        file.commit()
    }
}

fn stat(path: &Path) -> io::Result<(u64, u128)> {
    let meta = std::fs::metadata(path)?;
    let modified = meta.modified()?.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    Ok((meta.len(), modified))
}

/// The output directory of an incremental run.
pub fn directory(output: &Option<PathBuf>) -> Option<&Path> {
    output.as_deref().filter(|p| crate::write::is_directory_target(p))
}

/// Bytes as lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
