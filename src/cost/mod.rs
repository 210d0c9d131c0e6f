//! What model responses cost: per-token list prices, and the rules that turn a response's
//! [`Usage`] into US dollars.
//!
//! The prices are embedded from a pinned copy of litellm's model price file (see
//! `prices.json`, its `source`, and `extract_prices.py` beside it); `agentlog usage --prices FILE`
//! adds or replaces models from a file of the same shape.
//!
//! # Rules
//!
//! - Fresh input, cache reads, cache writes and output are each priced at their own rate.
//!   Codex's cached input is a cache read; reasoning is part of output and priced as output.
//! - Claude cache writes kept for one hour (`cache_write_1h_tokens`) are priced at the one-hour
//!   rate, the rest at the five-minute rate. A model without a one-hour rate prices them at the
//!   five-minute rate.
//! - Long context: where a model has prices for requests above a threshold (litellm's
//!   `*_above_200k_tokens`, `*_above_272k_tokens`), a response whose input (fresh, cache reads
//!   and cache writes together) is above it has *all* its tokens priced at those rates, as the
//!   providers bill such requests. Requests at or below it pay the base rates.
//! - A rate the table lacks falls back: cache reads and writes to the input rate.
//! - A model the table does not know gets no cost (null), never 0.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use serde::Deserialize;

use crate::model::Usage;

/// The embedded price file.
const EMBEDDED: &str = include_str!("prices.json");

/// Per-token prices of one model at one context length, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Fresh input.
    pub input: f64,
    /// Output, reasoning included.
    pub output: f64,
    /// Cache reads; the input rate when absent.
    pub cache_read: Option<f64>,
    /// Cache writes kept five minutes; the input rate when absent.
    pub cache_write: Option<f64>,
    /// Cache writes kept one hour; the five-minute rate when absent.
    pub cache_write_1h: Option<f64>,
}

/// A model's prices: base rates, and rates for requests above a long-context threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    /// Rates of requests up to the threshold, or of all requests without one.
    pub base: Rates,
    /// Input tokens above which a request pays `long` rates on all its tokens.
    pub long: Option<(u64, Rates)>,
}

impl ModelPrice {
    /// What a response with `usage` costs at these prices; `None` when it counts no tokens.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        let counts = [usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens];
        if counts.iter().all(Option::is_none) {
            return None;
        }
        let rates = match self.long {
            Some((threshold, long)) if usage.prompt_tokens() > threshold => long,
            _ => self.base,
        };
        let n = |count: Option<u64>| count.unwrap_or(0) as f64;
        let writes = usage.cache_write_tokens.unwrap_or(0);
        let writes_1h = usage.cache_write_1h_tokens.unwrap_or(0).min(writes);
        let write_rate = rates.cache_write.unwrap_or(rates.input);
        Some(
            n(usage.input_tokens) * rates.input
                + n(usage.cache_read_tokens) * rates.cache_read.unwrap_or(rates.input)
                + (writes - writes_1h) as f64 * write_rate
                + writes_1h as f64 * rates.cache_write_1h.unwrap_or(write_rate)
                + n(usage.output_tokens) * rates.output,
        )
    }

    /// Prices from one entry of a litellm-shaped price file; `None` without input and output
    /// rates.
    fn from_fields(fields: &BTreeMap<String, serde_json::Value>) -> Option<ModelPrice> {
        let rate = |name: &str| fields.get(name).and_then(serde_json::Value::as_f64);
        let rates_with = |suffix: &str| -> Option<Rates> {
            Some(Rates {
                input: rate(&format!("input_cost_per_token{suffix}"))?,
                output: rate(&format!("output_cost_per_token{suffix}"))?,
                cache_read: rate(&format!("cache_read_input_token_cost{suffix}")),
                cache_write: rate(&format!("cache_creation_input_token_cost{suffix}")),
                cache_write_1h: rate(&format!("cache_creation_input_token_cost_above_1hr{suffix}")),
            })
        };
        let base = rates_with("")?;
        let long = fields.keys().filter_map(|k| long_context_threshold(k)).min().map(|threshold| {
            let suffix = format!("_above_{}k_tokens", threshold / 1000);
            let at = |name: &str, base: Option<f64>| rate(&format!("{name}{suffix}")).or(base);
            let long = Rates {
                input: at("input_cost_per_token", Some(base.input)).unwrap_or(base.input),
                output: at("output_cost_per_token", Some(base.output)).unwrap_or(base.output),
                cache_read: at("cache_read_input_token_cost", base.cache_read),
                cache_write: at("cache_creation_input_token_cost", base.cache_write),
                cache_write_1h: at("cache_creation_input_token_cost_above_1hr", base.cache_write_1h),
            };
            (threshold, long)
        });
        Some(ModelPrice { base, long })
    }
}

/// The threshold of a long-context field name: 200 000 for `input_cost_per_token_above_200k_tokens`.
fn long_context_threshold(field: &str) -> Option<u64> {
    let rest = field.strip_prefix("input_cost_per_token_above_")?;
    let thousands: u64 = rest.strip_suffix("k_tokens")?.parse().ok()?;
    Some(thousands * 1000)
}

/// Where a price table comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct PriceSource {
    /// The package the file was taken from (`litellm`).
    pub package: String,
    /// Its version.
    pub version: String,
    /// The file inside the package.
    pub file: String,
    /// sha256 of that file.
    pub sha256: String,
    /// Where the package is published.
    pub url: String,
}

/// The shape of a price file: litellm's, optionally with agentlog's `source` and a `models` map.
#[derive(Deserialize)]
struct PriceFile {
    source: Option<PriceSource>,
    models: BTreeMap<String, BTreeMap<String, serde_json::Value>>,
}

/// Why a price file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    /// The file could not be read.
    #[error("cannot read price file {path}: {source}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a price file.
    #[error("{path} is not a price file: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, with line and column.
        message: String,
    },
}

/// Prices of the models, and the models met without one.
#[derive(Debug)]
pub struct Prices {
    models: HashMap<String, ModelPrice>,
    source: Option<PriceSource>,
    files: Vec<String>,
    unpriced: Mutex<BTreeMap<String, u64>>,
}

impl Prices {
    /// The embedded prices (parsed once per process), with no model met yet.
    pub fn embedded() -> Prices {
        static TABLE: OnceLock<Prices> = OnceLock::new();
        let table = TABLE.get_or_init(|| {
            let file: PriceFile = serde_json::from_str(EMBEDDED).expect("the embedded price file is valid");
            let mut prices =
                Prices { models: HashMap::new(), source: file.source, files: Vec::new(), unpriced: Mutex::default() };
            prices.add(file.models);
            prices
        });
        Prices {
            models: table.models.clone(),
            source: table.source.clone(),
            files: Vec::new(),
            unpriced: Mutex::default(),
        }
    }

    /// The embedded prices with the models of `path` added or replaced. `path` holds either
    /// litellm's price file as published (model name → fields) or a `{"models": {…}}` object of
    /// the same entries.
    ///
    /// # Errors
    /// When the file cannot be read or is not of that shape.
    pub fn with_file(path: &Path) -> Result<Prices, PriceError> {
        let name = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|source| PriceError::Unreadable { path: name.clone(), source })?;
        let invalid = |e: serde_json::Error| PriceError::Invalid { path: name.clone(), message: e.to_string() };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(invalid)?;
        let models = if value.get("models").is_some_and(serde_json::Value::is_object) {
            serde_json::from_value::<PriceFile>(value).map_err(invalid)?.models
        } else {
            // litellm's own file: skip its `sample_spec` and any entry that is not an object.
            let serde_json::Value::Object(entries) = value else {
                return Err(PriceError::Invalid { path: name, message: "expected a JSON object".into() });
            };
            entries.into_iter().filter_map(|(k, v)| serde_json::from_value(v).ok().map(|fields| (k, fields))).collect()
        };
        let mut prices = Prices { files: vec![name.clone()], ..Prices::embedded() };
        if prices.add(models) == 0 {
            return Err(PriceError::Invalid { path: name, message: "no model with input and output prices".into() });
        }
        Ok(prices)
    }

    /// Adds the entries that have input and output prices; how many.
    fn add(&mut self, models: BTreeMap<String, BTreeMap<String, serde_json::Value>>) -> usize {
        let before = self.models.len();
        let mut replaced = 0;
        for (name, fields) in models {
            if let Some(price) = ModelPrice::from_fields(&fields) {
                replaced += usize::from(self.models.insert(name, price).is_some());
            }
        }
        self.models.len() - before + replaced
    }

    /// The prices of `model`: by its name, or by its name without a provider prefix
    /// (`anthropic/claude-opus-4-6`).
    pub fn get(&self, model: &str) -> Option<&ModelPrice> {
        self.models.get(model).or_else(|| {
            let (_, name) = model.split_once('/')?;
            self.models.get(name)
        })
    }

    /// What a response cost, or `None` when its model has no price (the model is then counted
    /// among [`Prices::unpriced`]) or it counts no tokens.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        let model = usage.model.as_deref()?;
        match self.get(model) {
            Some(price) => price.cost(usage),
            None => {
                if let Ok(mut unpriced) = self.unpriced.lock() {
                    *unpriced.entry(model.to_owned()).or_default() += 1;
                }
                None
            }
        }
    }

    /// Sets `usage.cost_usd` from these prices. A cost already there (agentlog's own output read
    /// back) is kept when the model has no price here.
    pub fn price(&self, usage: &mut Usage) {
        if usage.cost_usd.is_none() || usage.model.as_deref().is_some_and(|m| self.get(m).is_some()) {
            usage.cost_usd = self.cost(usage);
        }
    }

    /// Models met without a price, with how many responses each.
    pub fn unpriced(&self) -> BTreeMap<String, u64> {
        self.unpriced.lock().map(|u| u.clone()).unwrap_or_default()
    }

    /// Where the embedded table comes from.
    pub fn source(&self) -> Option<&PriceSource> {
        self.source.as_ref()
    }

    /// Files whose prices were added to the embedded ones.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// Names of the priced models, sorted.
    pub fn models(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.models.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

#[cfg(test)]
mod tests;
