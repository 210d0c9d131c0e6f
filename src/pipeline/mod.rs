//! The conversion pipeline: inputs (files, directories, glob patterns, standard input) are
//! expanded ([`inputs`]), opened and told apart by their first lines ([`detect`]), grouped so
//! that files sharing reader state are read in order on one thread ([`plan`]), and read in
//! parallel into one destination in input order ([`engine`]); [`report`] keeps the totals
//! and what became of each input.

pub mod detect;
pub mod engine;
pub mod error;
mod events;
pub mod follow;
pub mod inputs;
pub mod plan;
pub mod report;

pub use detect::{Chosen, choose_reader, file_kind, open, peek};
pub use engine::{Built, Destination, Encoded, Outcome, Prepare, read_group, run};
pub use error::InputError;
pub use events::{Events, Found, events};
pub use inputs::{InputSpec, expand};
pub use plan::{Group, Held, HeldFile, Item, Look, plan, shard};
pub use report::{InputReport, RunReport, Status, Totals};
