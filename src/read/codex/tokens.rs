//! Codex's token accounting. `token_count` rows carry cumulative counters
//! (`total_token_usage`): the positive difference between two rows is one model call; a row
//! that did not advance re-sends the same counters; a counter that went down is a reset (on
//! context overflow Codex sets input and output to 0 and the total to the context window), and
//! the row's own `last_token_usage` is the call's.
//!
//! A run counting only usage reads the rows that matter to it: [`may_matter_to_usage`].

use std::sync::LazyLock;

use super::raw::TokenUsage;

/// The counters of the last row that had them.
#[derive(Debug, Default)]
pub struct Totals {
    last: Option<TokenUsage>,
}

impl Totals {
    /// Takes one row's cumulative counters (`total`) and its own call's (`last`), and gives the
    /// model call the row reports, if it reports one.
    pub fn call(&mut self, total: TokenUsage, last: Option<TokenUsage>) -> Option<TokenUsage> {
        let call = match self.last.replace(total) {
            None => Some(total),
            Some(p)
                if total.input_tokens < p.input_tokens
                    || total.output_tokens < p.output_tokens
                    || total.total() < p.total() =>
            {
                last
            }
            Some(p) if total.total() > p.total() => Some(TokenUsage {
                input_tokens: total.input_tokens - p.input_tokens,
                cached_input_tokens: total.cached_input_tokens.saturating_sub(p.cached_input_tokens),
                output_tokens: total.output_tokens - p.output_tokens,
                reasoning_output_tokens: total.reasoning_output_tokens.saturating_sub(p.reasoning_output_tokens),
                total_tokens: Some(total.total() - p.total()),
            }),
            // Did not advance: the same counters sent again.
            Some(_) => None,
        };
        // After compaction Codex writes an estimate with no input or output: not a call.
        call.filter(|u| u.input_tokens > 0 || u.output_tokens > 0)
    }
}

/// Whether a line may matter to usage: usage comes from `token_count` rows (and the
/// `token_usage_record` that names each response), read against the
/// session header (id, fork) and the turn context (model); replayed history is told by the
/// times of those rows.
pub(super) fn may_matter_to_usage(line: &[u8]) -> bool {
    static NEEDED: LazyLock<crate::read::literals::Literals> = LazyLock::new(|| {
        crate::read::literals::Literals::new(&[
            "\"token_count\"",
            "\"token_usage_record\"",
            "\"session_meta\"",
            "\"turn_context\"",
        ])
    });
    NEEDED.is_match(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, cached: u64, output: u64, reasoning: u64) -> TokenUsage {
        TokenUsage {
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            reasoning_output_tokens: reasoning,
            total_tokens: Some(input + output),
        }
    }

    #[test]
    fn the_first_row_is_a_call_and_each_advance_is_the_difference() {
        let mut totals = Totals::default();
        assert_eq!(totals.call(usage(100, 20, 10, 4), None), Some(usage(100, 20, 10, 4)));
        assert_eq!(totals.call(usage(250, 120, 30, 9), None), Some(usage(150, 100, 20, 5)));
    }

    #[test]
    fn a_row_that_does_not_advance_is_a_re_emit() {
        let mut totals = Totals::default();
        totals.call(usage(100, 0, 10, 0), None);
        assert_eq!(totals.call(usage(100, 0, 10, 0), Some(usage(100, 0, 10, 0))), None);
        // The next advance is counted from the same counters, not twice.
        assert_eq!(totals.call(usage(160, 0, 15, 0), None), Some(usage(60, 0, 5, 0)));
    }

    #[test]
    fn a_counter_going_down_is_a_reset_that_counts_the_rows_own_call() {
        let mut totals = Totals::default();
        totals.call(usage(90_000, 0, 5_000, 0), None);
        let reset = TokenUsage { total_tokens: Some(128_000), ..usage(0, 0, 0, 0) };
        // A reset row without its own call counts nothing, and becomes the new base.
        assert_eq!(totals.call(reset, None), None);
        let after = TokenUsage { total_tokens: Some(128_500), ..usage(400, 0, 100, 0) };
        assert_eq!(totals.call(after, None), Some(TokenUsage { total_tokens: Some(500), ..usage(400, 0, 100, 0) }));
        // A drop counts the row's own call, not its counters.
        assert_eq!(totals.call(usage(50, 0, 5, 0), Some(usage(30, 0, 3, 0))), Some(usage(30, 0, 3, 0)));
    }

    #[test]
    fn an_estimate_without_input_or_output_is_not_a_call() {
        let mut totals = Totals::default();
        let estimate = TokenUsage { total_tokens: Some(5_000), ..usage(0, 0, 0, 0) };
        assert_eq!(totals.call(estimate, None), None);
    }
}
