//! Token usage in Claude Code files: a response's usage in the unified terms, and what a run
//! counting only usage reads of a file.

use std::sync::LazyLock;

use super::raw;
use crate::model::{Event, Usage};
use crate::read::checked_sum;
use crate::read::literals::Literals;

/// Whether a line may matter to usage: usage is on assistant records and on the subagent
/// replies in `progress` records, each under a `usage` key; every record names its session and
/// place itself, but for the records of 1.0 inline sidechains, whose chain of records names
/// their subagent.
pub(super) fn may_matter_to_usage(line: &[u8]) -> bool {
    static NEEDED: LazyLock<Literals> =
        LazyLock::new(|| Literals::new(&["\"usage\"", "\"isSidechain\":true", "\"isSidechain\": true"]));
    NEEDED.is_match(line)
}

/// Whether an assistant record read for its usage needs its content blocks: only where it may
/// link a 1.0 inline sidechain to the `Task` call whose prompt started it.
pub(super) fn needs_content(line: &str) -> bool {
    static LINKS: LazyLock<Literals> =
        LazyLock::new(|| Literals::new(&["\"isSidechain\":true", "\"isSidechain\": true", "\"Task\""]));
    LINKS.is_match(line.as_bytes())
}

/// One response's usage in the unified terms: the four counts do not overlap.
pub(super) fn usage(u: &raw::Usage, event: &Event) -> Usage {
    let counts = [u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, u.output_tokens];
    Usage {
        input_tokens: u.input_tokens.get(),
        cache_read_tokens: u.cache_read_input_tokens.get(),
        cache_write_tokens: u.cache_creation_input_tokens.get(),
        cache_write_1h_tokens: u.cache_creation.as_ref().and_then(|c| c.ephemeral_1h_input_tokens.get()),
        output_tokens: u.output_tokens.get(),
        reasoning_tokens: u.output_tokens_details.as_ref().and_then(|d| d.thinking_tokens.get()),
        // Past the largest count, the total is unknown rather than wrapped.
        total_tokens: checked_sum(counts.iter().filter_map(|c| c.get())),
        cost_usd: None,
        model: event.context.model.clone(),
        response_id: event.response_id.clone(),
    }
}
