//! Operational errors: inputs that cannot be read, arguments that do not work together, outputs
//! that cannot be written.

use std::io;
use std::path::PathBuf;

use crate::pipeline::InputError;
use miette::Diagnostic;

/// An error that stops one input or the whole run.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum CliError {
    /// An input that could not be read at all.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Input(#[from] InputError),

    /// A combination of arguments that does not work.
    #[error("{message}")]
    #[diagnostic(code(agentlog::usage::invalid))]
    Usage {
        /// What is wrong.
        message: String,
    },

    /// A `--prices` file that cannot be used.
    #[error(transparent)]
    #[diagnostic(code(agentlog::input::prices))]
    Prices(#[from] crate::cost::PriceError),

    /// An output format this build cannot write yet.
    #[error("writing {format} is not available in this version of agentlog")]
    #[diagnostic(code(agentlog::usage::unsupported_output), help("use --to unified for normalised JSONL"))]
    UnsupportedOutput {
        /// The format asked for.
        format: String,
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
