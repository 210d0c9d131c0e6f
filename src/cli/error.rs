//! Operational errors: inputs that cannot be found, read or recognised, outputs that cannot be
//! written.

use std::io;
use std::path::PathBuf;

use miette::Diagnostic;

/// An error that stops one input or the whole run.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum CliError {
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
    #[diagnostic(
        code(agentlog::input::unknown_format),
        help(
            "its first lines match none of the formats agentlog reads (claude, codex, unified, interchange); pass --from NAME to read it anyway"
        )
    )]
    UnknownFormat {
        /// The input as given.
        path: String,
    },

    /// A combination of arguments that does not work.
    #[error("{message}")]
    #[diagnostic(code(agentlog::usage::invalid))]
    Usage {
        /// What is wrong.
        message: String,
    },

    /// An output format this build cannot write yet.
    #[error("writing {format} is not available in this version of agentlog")]
    #[diagnostic(code(agentlog::usage::unsupported_output), help("use --to unified for normalised JSONL"))]
    UnsupportedOutput {
        /// The format asked for.
        format: String,
    },

    /// A bug met while reading one input; the other inputs still convert.
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

    /// The output cannot be created or written.
    #[error("cannot write {path}: {source}")]
    #[diagnostic(code(agentlog::output::failed))]
    Output {
        /// The output path (`-` for standard output).
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl CliError {
    /// The output error for `path`.
    pub fn output(path: &Option<PathBuf>, source: io::Error) -> Self {
        let path = path.as_ref().map_or_else(|| "-".to_owned(), |p| p.display().to_string());
        CliError::Output { path, source }
    }
}
