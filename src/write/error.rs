//! Why a writer failed: options that do not fit the format, an event the published schema
//! rejects, or I/O.

use std::io;

use miette::Diagnostic;

/// A writer's error.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum WriteError {
    /// Options or an output path this format cannot take; nothing was written.
    #[error("{message}")]
    #[diagnostic(code(agentlog::usage::invalid))]
    Unsupported {
        /// What does not fit, and what to do instead.
        message: String,
    },

    /// Events that break the published schema, so that the output would not be valid; nothing
    /// is left behind. Events read from an agent's files always follow it; events read back
    /// with `--from unified` or `interchange` pass through as they are.
    #[error("{message}")]
    #[diagnostic(
        code(agentlog::output::schema),
        help(
            "no output was written; events read back from unified JSONL or an interchange document pass through unchanged, so check that input with agentlog validate; otherwise this is a bug, please report it"
        )
    )]
    Schema {
        /// Which event or part of the document, and where it breaks the schema.
        message: String,
    },

    /// Reading or writing failed.
    #[error(transparent)]
    #[diagnostic(code(agentlog::output::failed))]
    Io(#[from] io::Error),
}

impl WriteError {
    /// The writer error an [`io::Error`] from a sink carries ([`WriteError::into_io`]), or the
    /// I/O error itself.
    pub fn from_io(e: io::Error) -> Self {
        if e.get_ref().is_some_and(|inner| inner.is::<WriteError>()) {
            let inner = e.into_inner().expect("checked above");
            return *inner.downcast::<WriteError>().expect("checked above");
        }
        WriteError::Io(e)
    }

    /// This error as an [`io::Error`], for a sink method; [`WriteError::from_io`] gets it
    /// back.
    pub fn into_io(self) -> io::Error {
        match self {
            WriteError::Io(e) => e,
            other => io::Error::other(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_error_carried_through_io_comes_back_as_it_was() {
        let schema = WriteError::Schema { message: "event seq 3 breaks the event schema at /kind".into() };
        let back = WriteError::from_io(schema.into_io());
        assert!(matches!(back, WriteError::Schema { ref message } if message.ends_with("/kind")), "{back:?}");
        let pipe = WriteError::from_io(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(matches!(pipe, WriteError::Io(ref e) if e.kind() == io::ErrorKind::BrokenPipe), "{pipe:?}");
        let other = WriteError::from_io(io::Error::other("disk full"));
        assert!(matches!(other, WriteError::Io(_)), "{other:?}");
    }
}
