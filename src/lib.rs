//! agentlog converts coding-agent session logs into one unified event model.
//!
//! Readers ([`read`]) turn each agent's files into [`model::Event`]s; writers ([`write`]) turn
//! events into output formats. The two sides meet only in the model; the [`pipeline`] finds
//! the inputs, tells their formats, groups them and runs them in parallel. The shortest way in
//! is [`events`], every event of a file or directory in order; one reader can also be used
//! alone:
//!
//! ```
//! use agentlog::read::{Input, Reader, Shared, claude::Claude};
//! use agentlog::model::Kind;
//!
//! let line = r#"{"type":"user","sessionId":"s1","uuid":"u1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hello"}}"#;
//! let mut events = Vec::new();
//! let report = Claude.read(
//!     Input { name: "s1.jsonl", bytes: Box::new(line.as_bytes()), shared: &mut Shared::default() },
//!     &mut |event| { events.push(event); Ok(()) },
//! )?;
//! assert_eq!(report.lines, 1);
//! assert_eq!(events[0].kind(), Kind::Message);
//! # Ok::<(), std::io::Error>(())
//! ```

#[cfg(feature = "cli")]
pub mod cli;
pub mod cost;
pub mod model;
pub mod pipeline;
pub mod read;
pub mod redact;
pub mod stats;
pub mod validate;
pub mod write;

pub use pipeline::{Found, events};
