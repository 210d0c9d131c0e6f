//! Turns INPUT arguments into the list of inputs to read.

use std::path::Path;

use walkdir::WalkDir;

use super::error::InputError;
use crate::read::store::Stored;

/// One input to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSpec {
    /// Standard input.
    Stdin,
    /// A file, named as the user gave it (or as found under a directory they gave).
    File(String),
    /// One session of a database, found when the database was planned.
    Stored(Stored),
}

impl InputSpec {
    /// The name used in diagnostics and provenance.
    pub fn name(&self) -> &str {
        match self {
            InputSpec::Stdin => "-",
            InputSpec::File(path) => path,
            InputSpec::Stored(stored) => &stored.name,
        }
    }

    /// The file the input is read from: the database of a stored session; `None` for standard
    /// input.
    pub fn file(&self) -> Option<&str> {
        match self {
            InputSpec::Stdin => None,
            InputSpec::File(path) => Some(path),
            InputSpec::Stored(stored) => Some(&stored.path),
        }
    }
}

/// Expands INPUT arguments: `-`, files, directories (walked recursively, session files only,
/// sorted) and glob patterns (sorted). Problems are returned next to what could be found.
pub fn expand(args: &[String]) -> (Vec<InputSpec>, Vec<InputError>) {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    for arg in args {
        let path = Path::new(arg);
        if arg == "-" {
            inputs.push(InputSpec::Stdin);
        } else if path.is_dir() {
            walk(arg, &mut inputs, &mut errors);
        } else if path.exists() {
            inputs.push(InputSpec::File(arg.clone()));
        } else if arg.contains(['*', '?', '[']) {
            glob(arg, &mut inputs, &mut errors);
        } else {
            errors.push(InputError::NotFound { path: arg.clone() });
        }
    }
    (inputs, errors)
}

/// Whether a file found under a directory is a session file: one that a reader accepts
/// ([`crate::read::Reader::accepts`]).
pub fn is_session_file(path: &Path) -> bool {
    crate::read::READERS.iter().any(|r| r.accepts(path))
}

fn walk(root: &str, inputs: &mut Vec<InputSpec>, errors: &mut Vec<InputError>) {
    let walker = WalkDir::new(root).follow_links(true).sort_by_file_name();
    for entry in walker {
        match entry {
            Ok(entry) if entry.file_type().is_file() => {
                if is_session_file(entry.path()) {
                    inputs.push(InputSpec::File(entry.path().display().to_string()));
                }
            }
            Ok(_) => {}
            Err(e) => {
                let path = e.path().map_or_else(|| root.to_owned(), |p| p.display().to_string());
                let source = e.into_io_error().unwrap_or_else(|| std::io::Error::other("symbolic link loop"));
                errors.push(InputError::Unreadable { path, source });
            }
        }
    }
}

fn glob(pattern: &str, inputs: &mut Vec<InputSpec>, errors: &mut Vec<InputError>) {
    let paths = match glob::glob(pattern) {
        Ok(paths) => paths,
        Err(e) => {
            errors.push(InputError::BadGlob { pattern: pattern.to_owned(), reason: e.msg.to_owned() });
            return;
        }
    };
    let before = inputs.len();
    for entry in paths {
        match entry {
            Ok(path) if path.is_dir() => walk(&path.display().to_string(), inputs, errors),
            Ok(path) => inputs.push(InputSpec::File(path.display().to_string())),
            Err(e) => errors.push(InputError::Unreadable { path: e.path().display().to_string(), source: e.into() }),
        }
    }
    if inputs.len() == before {
        errors.push(InputError::NotFound { path: pattern.to_owned() });
    }
}
