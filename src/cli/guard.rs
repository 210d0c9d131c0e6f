//! Refuses outputs that would overwrite an input or be read back as one on the next run.
//!
//! Files are compared by device and inode, never by path text, so that an input named through a
//! symbolic link, a relative path or a glob is recognised however the output is named.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::pipeline::InputSpec;

/// A file's identity: device and inode.
type Id = (u64, u64);

fn id(path: &Path) -> Option<Id> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// What the inputs of a run are: the files read, the directories walked and the glob patterns.
pub struct Inputs {
    files: HashSet<Id>,
    /// Directories given (or matched by a glob) and walked, by identity, with their names.
    dirs: Vec<(Id, String)>,
    /// Glob patterns given, made absolute, with the pattern as given.
    patterns: Vec<(glob::Pattern, String)>,
}

/// Why an output is refused.
pub enum Refusal {
    /// The output is an input file.
    Overwrites,
    /// The output lies inside an input directory, or matches an input glob: a later run would
    /// read it back.
    ReadBack(String),
    /// An input lies inside the output directory, where it could be overwritten.
    Covers(String),
}

impl Inputs {
    /// The inputs of a run, from the arguments as given and the files they expanded to.
    pub fn new(args: &[String], expanded: &[InputSpec]) -> Self {
        let files = expanded.iter().filter_map(|i| id(Path::new(i.file()?))).collect();
        let mut dirs = Vec::new();
        let mut patterns = Vec::new();
        for arg in args {
            let path = Path::new(arg);
            if path.is_dir() {
                dirs.extend(id(path).map(|i| (i, arg.clone())));
            } else if !path.exists() && arg.contains(['*', '?', '[']) {
                let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
                patterns.extend(glob::Pattern::new(&absolute.to_string_lossy()).ok().map(|p| (p, arg.clone())));
                let matched = glob::glob(arg).into_iter().flatten().flatten();
                dirs.extend(matched.filter(|p| p.is_dir()).filter_map(|p| Some((id(&p)?, p.display().to_string()))));
            }
        }
        Inputs { files, dirs, patterns }
    }

    /// Checks one output path; `directory` when the output is a directory of files.
    pub fn check(&self, output: &Path, directory: bool, expanded: &[InputSpec]) -> Result<(), Refusal> {
        if !directory
            && let Some(out) = id(output)
            && self.files.contains(&out)
            && std::fs::metadata(output).is_ok_and(|m| m.is_file())
        {
            return Err(Refusal::Overwrites);
        }
        for dir in existing_ancestors(output) {
            if let Some(dir_id) = id(&dir)
                && let Some((_, name)) = self.dirs.iter().find(|(i, _)| *i == dir_id)
            {
                return Err(Refusal::ReadBack(name.clone()));
            }
        }
        let absolute = std::path::absolute(output).unwrap_or_else(|_| output.to_owned());
        if let Some((_, given)) = self.patterns.iter().find(|(p, _)| p.matches_path(&absolute)) {
            return Err(Refusal::ReadBack(given.clone()));
        }
        if directory && let Some(out) = id(output) {
            let mut seen = HashSet::new();
            for input in expanded {
                let Some(path) = input.file() else { continue };
                let parent = Path::new(path).parent().unwrap_or(Path::new("."));
                if seen.insert(parent.to_owned()) && existing_ancestors(parent).iter().any(|a| id(a) == Some(out)) {
                    return Err(Refusal::Covers(path.to_owned()));
                }
            }
        }
        Ok(())
    }
}

/// `path` (or its nearest existing ancestor) and every directory above it, as they exist.
fn existing_ancestors(path: &Path) -> Vec<PathBuf> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    absolute.ancestors().filter(|a| a.exists()).filter_map(|a| a.canonicalize().ok()).collect()
}

impl Refusal {
    /// The message for an output named `output`.
    pub fn message(&self, output: &Path) -> String {
        let output = output.display();
        match self {
            Refusal::Overwrites => {
                format!("the output {output} is also an input; writing it would destroy the input: choose another path")
            }
            Refusal::ReadBack(input) => format!(
                "the output {output} is inside the input {input}, so the next run would read it back; choose another place or pass --force"
            ),
            Refusal::Covers(input) => format!(
                "the input {input} is inside the output directory {output}, where it could be overwritten; choose another output directory"
            ),
        }
    }

    /// Whether `--force` lifts the refusal.
    pub fn is_forcible(&self) -> bool {
        matches!(self, Refusal::ReadBack(_))
    }
}
