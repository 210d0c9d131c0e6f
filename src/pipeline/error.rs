//! Why an input could not be read at all; problems with single lines are diagnostics instead
//! ([`crate::read::InputDiagnostic`]).

use std::io;

use miette::Diagnostic;

/// An input that could not be found, opened, recognised or read to its end.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum InputError {
    /// An input path that matches nothing.
    #[error("cannot find input {path}")]
    #[diagnostic(
        code(agentlog::input::not_found),
        help("give a file, a directory, a quoted glob pattern, or - for standard input")
    )]
    NotFound {
        /// The input as given.
        path: String,
    },

    /// A glob pattern that is not valid.
    #[error("invalid glob pattern {pattern}: {reason}")]
    #[diagnostic(code(agentlog::input::bad_glob))]
    BadGlob {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },

    /// An input that cannot be opened or read.
    #[error("cannot read {path}: {source}")]
    #[diagnostic(code(agentlog::input::unreadable))]
    Unreadable {
        /// The input as given.
        path: String,
        /// The underlying error.
        source: io::Error,
    },

    /// An input whose agent cannot be told from its content.
    #[error("cannot tell which agent wrote {path}")]
    #[diagnostic(code(agentlog::input::unknown_format))]
    UnknownFormat {
        /// The input as given.
        path: String,
        /// The formats tried, and how to read the input anyway.
        #[help]
        help: String,
    },

    /// A database (or one session in it) that cannot be read: locked, damaged, or of a schema
    /// the reader does not know.
    #[error("{source}")]
    #[diagnostic(
        code(agentlog::input::database),
        help("agentlog opens databases read-only and waits for a writer; the other inputs were converted")
    )]
    Database {
        /// The input as given (`<database>#<session id>` for one session).
        path: String,
        /// What SQLite said, with the file and table.
        source: Box<crate::read::store::StoreError>,
    },

    /// A bug met while reading one input; the other inputs are still read.
    #[error("internal error while reading {path}, this is a bug: {message}")]
    #[diagnostic(
        code(agentlog::internal),
        help("please report it with the input that caused it; the other inputs were converted")
    )]
    Internal {
        /// The input as given.
        path: String,
        /// What went wrong.
        message: String,
    },
}

impl InputError {
    /// The input (or glob pattern) it is about, as given.
    pub fn path(&self) -> &str {
        match self {
            InputError::NotFound { path }
            | InputError::Unreadable { path, .. }
            | InputError::UnknownFormat { path, .. }
            | InputError::Database { path, .. }
            | InputError::Internal { path, .. } => path,
            InputError::BadGlob { pattern, .. } => pattern,
        }
    }

    /// The error for an input whose format none of [`crate::read::READERS`] recognises.
    pub fn unknown_format(path: &str) -> Self {
        let names: Vec<&str> = crate::read::READERS.iter().map(|r| r.name()).collect();
        let help = format!(
            "its first lines match none of the formats agentlog reads ({}); pass --from NAME to read it anyway",
            names.join(", ")
        );
        InputError::UnknownFormat { path: path.to_owned(), help }
    }
}
