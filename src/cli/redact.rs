//! `--redact` and its options: building the run's redactor before anything is written, and its
//! findings report after.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::redact::{Kinds, Options, Redactor, Report};
use crate::write::AtomicFile;

use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// The shortest `--redact-key` accepted, in bytes.
const MIN_KEY_BYTES: usize = 16;

/// Redaction arguments, shared by the commands that write content.
#[derive(Debug, Clone, clap::Args)]
pub struct RedactArgs {
    /// Replace secrets (API keys, tokens, private keys, passwords in URLs and assignments,
    /// Authorization headers, cookies) in every string by `[REDACTED:<rule>]`, in every format.
    #[arg(long, help_heading = "Redaction")]
    pub redact: bool,

    /// Also replace these by stable keyed pseudonyms: user (home directory user names), email,
    /// host (in URLs), path (absolute paths), comma-separated, or all.
    #[arg(long, value_name = "KINDS", requires = "redact", help_heading = "Redaction")]
    pub pseudonymize: Option<String>,

    /// The pseudonyms' key: the bytes of this file (at least 16). Without it, a random key per
    /// run: pseudonyms then join within one run only.
    #[arg(long, value_name = "FILE", requires = "pseudonymize", help_heading = "Redaction")]
    pub redact_key: Option<PathBuf>,

    /// Write what was redacted to this JSON file: rule, session, event id, JSON Pointer and
    /// count of each finding, never the secret.
    #[arg(long, value_name = "FILE", requires = "redact", help_heading = "Redaction")]
    pub redact_report: Option<PathBuf>,
}

/// A run's redaction: the redactor, and the report file opened before anything is written.
pub struct Redaction {
    /// The redactor every event goes through.
    pub redactor: Arc<Redactor>,
    report: Option<(PathBuf, AtomicFile)>,
}

impl RedactArgs {
    /// The redaction asked for; `None` without `--redact`.
    ///
    /// # Errors
    /// When the key cannot be read or is too short, the kinds are unknown or the report file
    /// cannot be created: then nothing may be written.
    pub fn resolve(&self) -> Result<Option<Redaction>, CliError> {
        if !self.redact {
            return Ok(None);
        }
        let pseudonymize = match &self.pseudonymize {
            Some(list) => Kinds::parse(list).map_err(|message| CliError::Usage { message })?,
            None => Kinds::default(),
        };
        let key = match &self.redact_key {
            Some(path) => Some(read_key(path)?),
            None => None,
        };
        let users = home_user().into_iter().collect();
        let redactor = Redactor::new(Options { pseudonymize, key, users })
            .map_err(|message| CliError::Usage { message: format!("cannot redact: {message}") })?;
        let report = match &self.redact_report {
            Some(path) => {
                let file = AtomicFile::create(path).map_err(|e| CliError::output(&Some(path.clone()), e))?;
                Some((path.clone(), file))
            }
            None => None,
        };
        Ok(Some(Redaction { redactor: Arc::new(redactor), report }))
    }
}

impl RedactArgs {
    /// What the redaction asked for does, in a sentence for a dataset card; `None` without
    /// `--redact`.
    pub fn describe(&self) -> Option<String> {
        if !self.redact {
            return None;
        }
        let mut text = "agentlog --redact: API keys, tokens, private keys, passwords in URLs and assignments, \
                        Authorization headers and cookies were replaced by `[REDACTED:<rule>]`."
            .to_owned();
        if let Some(kinds) = &self.pseudonymize {
            text.push_str(&format!(" These were replaced by keyed pseudonyms: {kinds}."));
        }
        text.push_str(" Redaction finds known shapes of secrets, not every secret: review before publishing.");
        Some(text)
    }

    /// [`RedactArgs::resolve`], its error reported.
    ///
    /// # Errors
    /// The exit status: a usage error, an input error for a key that cannot be read, an output
    /// error for a report file that cannot be created.
    pub fn resolve_or_report(&self, reporter: &Reporter) -> Result<Option<Redaction>, Exit> {
        self.resolve().map_err(|e| {
            reporter.error(&e);
            match e {
                CliError::Usage { .. } => Exit::Usage,
                CliError::Output { .. } => Exit::Output,
                _ => Exit::Input,
            }
        })
    }
}

impl Redaction {
    /// Writes the findings report, if one was asked for.
    ///
    /// # Errors
    /// When the report cannot be written.
    pub fn write_report(self) -> Result<(), CliError> {
        let Some((path, mut file)) = self.report else { return Ok(()) };
        let report: Report = self.redactor.report();
        let written = serde_json::to_writer_pretty(&mut file, &report)
            .map_err(std::io::Error::from)
            .and_then(|()| std::io::Write::write_all(&mut file, b"\n"))
            .and_then(|()| file.commit());
        written.map_err(|e| CliError::output(&Some(path), e))
    }

    /// One clause for the run's summary line: what was replaced.
    pub fn summary(&self) -> String {
        let pseudonyms = self.redactor.pseudonymized();
        let mut text = format!("; redacted {} secrets", self.redactor.redacted());
        if pseudonyms > 0 {
            text.push_str(&format!(", {pseudonyms} pseudonyms"));
        }
        text
    }
}

/// The key in `path`.
fn read_key(path: &Path) -> Result<Vec<u8>, CliError> {
    let key = std::fs::read(path).map_err(|source| {
        CliError::Input(crate::pipeline::InputError::Unreadable { path: path.display().to_string(), source })
    })?;
    if key.len() < MIN_KEY_BYTES {
        return Err(CliError::Usage {
            message: format!(
                "--redact-key {} holds {} bytes: a key needs at least {MIN_KEY_BYTES} (for example: head -c 32 /dev/urandom > key)",
                path.display(),
                key.len()
            ),
        });
    }
    Ok(key)
}

/// The user name of the running user's home directory, pseudonymised wherever it stands as a word.
fn home_user() -> Option<String> {
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"))?;
    let name = Path::new(&home).file_name()?.to_str()?.to_owned();
    Some(name)
}
