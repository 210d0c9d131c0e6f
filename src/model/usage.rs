//! [`Usage`]: the tokens and cost of one model response.

use serde::{Deserialize, Serialize};

/// Token usage of one model response, and what it cost.
///
/// The four counts `input_tokens`, `cache_read_tokens`, `cache_write_tokens` and
/// `output_tokens` do not overlap; `reasoning_tokens` is part of `output_tokens`, and
/// `cache_write_1h_tokens` part of `cache_write_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Usage {
    /// Input tokens neither read from nor written to the prompt cache.
    pub input_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: Option<u64>,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: Option<u64>,
    /// Of the cache writes, those kept for one hour rather than five minutes (Claude Code);
    /// null when the source does not split them. Added in 1.1.
    #[serde(default)]
    pub cache_write_1h_tokens: Option<u64>,
    /// Output tokens, reasoning included.
    pub output_tokens: Option<u64>,
    /// Output tokens spent on reasoning (part of `output_tokens`).
    pub reasoning_tokens: Option<u64>,
    /// All tokens of the response: input, cache reads, cache writes and output.
    pub total_tokens: Option<u64>,
    /// What the response cost in US dollars at list prices (see `agentlog usage
    /// --prices-info`); null when the model has no known price. Added in 1.1.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Model that served the response; null when the source does not say.
    pub model: Option<String>,
    /// Provider's response id, where recorded.
    pub response_id: Option<String>,
}

impl Usage {
    /// Input tokens of the request: fresh input, cache reads and cache writes.
    pub fn prompt_tokens(&self) -> u64 {
        [self.input_tokens, self.cache_read_tokens, self.cache_write_tokens]
            .into_iter()
            .map(|n| n.unwrap_or(0))
            .fold(0, u64::saturating_add)
    }
}
