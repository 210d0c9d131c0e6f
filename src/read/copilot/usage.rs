//! Copilot CLI token accounting: which record counts which model response, once.
//!
//! Three kinds of record give counts per response; the first one seen for a response id counts
//! and a later one for the same id adds nothing (a `session.usage_record` is then a
//! `usage_snapshot`):
//!
//! - `session.usage_record` (1.0.102 and later), one per response, keyed by `apiCallId`:
//!   `inputTokens` includes `cacheReadTokens` (and `cacheWriteTokens`), `outputTokens` includes
//!   `reasoningTokens`;
//! - the `outputTokens` of an `assistant.message` (older versions), the output alone;
//! - a `/compact` summarisation's `model.model_call_success` (`responseUsage` in Chat Completions
//!   terms, `modelCall.api_id`), and at `session.compaction_complete` whatever its
//!   `compactionTokensUsed` holds beyond that (a compaction whose call left no counts of its own).
//!
//! `session.shutdown` then adds, per model, one `usage` event for what its `modelMetrics` totals
//! hold beyond what was counted: 1.0.102 totals the whole session (`usageAccountingWatermarks`
//! is an object), older versions the process's run since `session.start` or `session.resume`.
//! Output counted without a model (a message before any record names one) is set against the
//! totals of the shutdown's models, so it is not counted twice. A compaction's call is in no
//! shutdown total (1.0.102), so it is not set against them either.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use crate::model::{MAX_COUNT, Usage};

/// Token counts in agentlog's terms: fresh input, cache reads and writes, output (reasoning
/// included) and its reasoning part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Input neither read from nor written to the cache.
    pub fresh: u64,
    /// Input read from the cache.
    pub reads: u64,
    /// Input written to the cache.
    pub writes: u64,
    /// Output, reasoning included.
    pub output: u64,
    /// The reasoning part of the output.
    pub reasoning: u64,
}

impl Counts {
    /// Copilot's own counts (`inputTokens`, `outputTokens`, `cacheReadTokens`,
    /// `cacheWriteTokens`, `reasoningTokens`): the input includes the cache reads and writes.
    pub fn of_copilot(usage: &Value) -> Counts {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        let (reads, writes) = (count("cacheReadTokens"), count("cacheWriteTokens"));
        Counts {
            fresh: count("inputTokens").saturating_sub(reads).saturating_sub(writes),
            reads,
            writes,
            output: count("outputTokens"),
            reasoning: count("reasoningTokens"),
        }
    }

    /// A Chat Completions `usage` (`prompt_tokens` including `prompt_tokens_details.cached_tokens`,
    /// `completion_tokens` including `completion_tokens_details.reasoning_tokens`); `None` for
    /// another shape.
    pub fn of_chat_completions(usage: &Value) -> Option<Counts> {
        let count = |path: &[&str]| path.iter().try_fold(usage, |v, key| v.get(key)).and_then(Value::as_u64);
        let (prompt, completion) = (count(&["prompt_tokens"])?, count(&["completion_tokens"])?);
        let reads = count(&["prompt_tokens_details", "cached_tokens"]).unwrap_or(0);
        Some(Counts {
            fresh: prompt.saturating_sub(reads),
            reads,
            writes: 0,
            output: completion,
            reasoning: count(&["completion_tokens_details", "reasoning_tokens"]).unwrap_or(0),
        })
    }

    /// Output alone (an `assistant.message`'s `outputTokens`).
    pub fn output(output: u64) -> Counts {
        Counts { output, ..Counts::default() }
    }

    /// Whether every count is zero.
    pub fn is_zero(self) -> bool {
        self == Counts::default()
    }

    fn fields(self) -> [u64; 5] {
        [self.fresh, self.reads, self.writes, self.output, self.reasoning]
    }

    fn from_fields([fresh, reads, writes, output, reasoning]: [u64; 5]) -> Counts {
        Counts { fresh, reads, writes, output, reasoning }
    }

    fn zip(self, other: Counts, f: impl Fn(u64, u64) -> u64) -> Counts {
        let (a, b) = (self.fields(), other.fields());
        Counts::from_fields(std::array::from_fn(|i| f(a[i], b[i])))
    }

    /// Field by field, what `self` holds beyond `other` (never below zero).
    pub fn beyond(self, other: Counts) -> Counts {
        self.zip(other, u64::saturating_sub)
    }

    fn add(&mut self, other: Counts) {
        *self = self.zip(other, u64::saturating_add);
    }

    /// The usage event's counts; the total is null when it would pass [`MAX_COUNT`].
    pub fn usage(self, model: Option<String>, response_id: Option<String>) -> Usage {
        Usage {
            input_tokens: Some(self.fresh),
            cache_read_tokens: Some(self.reads),
            cache_write_tokens: Some(self.writes),
            output_tokens: Some(self.output),
            reasoning_tokens: Some(self.reasoning),
            total_tokens: self.fields()[..4]
                .iter()
                .try_fold(0u64, |sum, n| sum.checked_add(*n))
                .filter(|total| *total <= MAX_COUNT),
            model,
            response_id,
            ..Usage::default()
        }
    }
}

/// One shutdown's usage beyond what was counted, for one model.
pub struct Remainder {
    /// The model the shutdown names.
    pub model: String,
    /// What its totals hold beyond what was counted.
    pub counts: Counts,
    /// The output counted before it for that model (what the totals were set against).
    pub output_counted: u64,
}

/// The compaction under way: what its model calls counted and the response ids they named.
#[derive(Default)]
struct Compaction {
    counted: Counts,
    calls: Vec<String>,
}

/// What has been counted, to count each response once and a shutdown's totals only beyond it.
#[derive(Default)]
pub struct Ledger {
    /// Counted since the session started, by model ("" for none named).
    session: BTreeMap<String, Counts>,
    /// Counted since the process's run started (`session.start` or `session.resume`).
    run: BTreeMap<String, Counts>,
    /// The response ids counted.
    responses: HashSet<String>,
    compaction: Option<Compaction>,
}

impl Ledger {
    /// `session.start`: a new session.
    pub fn start(&mut self) {
        *self = Ledger::default();
    }

    /// `session.resume`: a new process's run of the same session.
    pub fn resume(&mut self) {
        self.run.clear();
        self.compaction = None;
    }

    /// Counts a response, unless its id was counted before: then `false`, and nothing changes.
    pub fn count(&mut self, model: Option<&str>, response_id: Option<&str>, counts: Counts) -> bool {
        if let Some(id) = response_id
            && !self.responses.insert(id.to_owned())
        {
            return false;
        }
        let model = model.unwrap_or_default();
        self.session.entry(model.to_owned()).or_default().add(counts);
        self.run.entry(model.to_owned()).or_default().add(counts);
        true
    }

    /// Whether a response id was counted.
    pub fn counted(&self, response_id: &str) -> bool {
        self.responses.contains(response_id)
    }

    /// `session.compaction_start`.
    pub fn compaction_start(&mut self) {
        self.compaction = Some(Compaction::default());
    }

    /// A `model.*` record of the compaction under way names a response id.
    pub fn compaction_call(&mut self, response_id: &str) {
        if let Some(compaction) = &mut self.compaction
            && !compaction.calls.iter().any(|c| c == response_id)
        {
            compaction.calls.push(response_id.to_owned());
        }
    }

    /// Counts a call of the compaction under way, unless its id was counted before (then
    /// `false`). It is kept apart from what the shutdown totals are set against, which do not
    /// hold it; without a compaction under way it is counted as [`Ledger::count`] does.
    pub fn count_compaction(&mut self, model: Option<&str>, response_id: &str, counts: Counts) -> bool {
        let Some(compaction) = &mut self.compaction else { return self.count(model, Some(response_id), counts) };
        if !self.responses.insert(response_id.to_owned()) {
            return false;
        }
        compaction.counted.add(counts);
        true
    }

    /// `session.compaction_complete` with its `compactionTokensUsed`: what they hold beyond the
    /// compaction's counted calls, and the id of its one call if that was not counted. The
    /// compaction ends.
    pub fn compaction_complete(&mut self, used: Option<&Value>) -> (Counts, Option<String>) {
        let compaction = self.compaction.take().unwrap_or_default();
        let Some(used) = used.filter(|u| u.is_object()) else { return (Counts::default(), None) };
        let rest = Counts::of_copilot(used).beyond(compaction.counted);
        let id = match compaction.calls.as_slice() {
            [one] if !self.counted(one) => Some(one.clone()),
            _ => None,
        };
        if let Some(id) = &id
            && !rest.is_zero()
        {
            self.responses.insert(id.clone());
        }
        (rest, id)
    }

    /// `session.shutdown`: per model of its `modelMetrics`, what the totals hold beyond what was
    /// counted; counted from then on.
    pub fn shutdown(&mut self, data: &Map<String, Value>) -> Vec<Remainder> {
        let whole_session = data.get("usageAccountingWatermarks").is_some_and(Value::is_object);
        let counted = if whole_session { &self.session } else { &self.run };
        let mut unnamed = counted.get("").copied().unwrap_or_default();
        let mut remainders = Vec::new();
        for (model, metrics) in data.get("modelMetrics").and_then(Value::as_object).into_iter().flatten() {
            let totals = Counts::of_copilot(metrics.get("usage").unwrap_or(&Value::Null));
            let before = counted.get(model).copied().unwrap_or_default();
            let rest = totals.beyond(before);
            // Counts of no named model go against the totals that have room for them, the
            // shutdown's models taken in name order.
            let taken = rest.zip(unnamed, u64::min);
            unnamed = unnamed.beyond(taken);
            remainders.push(Remainder {
                model: model.clone(),
                counts: rest.beyond(taken),
                output_counted: before.output.saturating_add(taken.output),
            });
        }
        for remainder in &remainders {
            for ledger in [&mut self.session, &mut self.run] {
                ledger.entry(remainder.model.clone()).or_default().add(remainder.counts);
            }
        }
        remainders
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shutdown(metrics: Value, watermarks: Value) -> Map<String, Value> {
        let data = json!({ "modelMetrics": metrics, "usageAccountingWatermarks": watermarks });
        data.as_object().unwrap().clone()
    }

    fn totals(input: u64, reads: u64, output: u64) -> Value {
        json!({ "usage": { "inputTokens": input, "cacheReadTokens": reads, "outputTokens": output } })
    }

    #[test]
    fn output_of_no_model_goes_against_the_shutdown_models_totals_once() {
        let mut ledger = Ledger::default();
        ledger.count(None, None, Counts::output(30));
        ledger.count(Some("b"), None, Counts::output(5));
        let rest = ledger.shutdown(&shutdown(json!({ "a": totals(100, 40, 20), "b": totals(50, 0, 20) }), Value::Null));
        let got: Vec<(&str, Counts, u64)> =
            rest.iter().map(|r| (r.model.as_str(), r.counts, r.output_counted)).collect();
        // `a` takes 20 of the 30 unnamed, `b` the other 10 beside its own 5.
        assert_eq!(
            got,
            [
                ("a", Counts { fresh: 60, reads: 40, ..Counts::default() }, 20),
                ("b", Counts { fresh: 50, output: 5, ..Counts::default() }, 15)
            ]
        );
    }

    #[test]
    fn whole_session_totals_count_only_beyond_earlier_runs() {
        let mut ledger = Ledger::default();
        ledger.count(Some("a"), Some("r1"), Counts { fresh: 10, output: 1, ..Counts::default() });
        let first = ledger.shutdown(&shutdown(json!({ "a": totals(10, 0, 1) }), json!({ "s": 1 })));
        assert!(first[0].counts.is_zero());
        ledger.resume();
        ledger.count(Some("a"), Some("r2"), Counts { fresh: 20, output: 2, ..Counts::default() });
        assert!(!ledger.count(Some("a"), Some("r2"), Counts::output(2)), "a response is counted once");
        let second = ledger.shutdown(&shutdown(json!({ "a": totals(30, 0, 3) }), json!({ "s": 2 })));
        assert!(second[0].counts.is_zero());
        // The same totals as one process's run's: the earlier run is not subtracted.
        ledger.resume();
        let third = ledger.shutdown(&shutdown(json!({ "a": totals(30, 0, 3) }), Value::Null));
        assert_eq!(third[0].counts, Counts { fresh: 30, output: 3, ..Counts::default() });
    }

    #[test]
    fn a_compaction_without_counts_of_its_call_is_counted_from_its_totals() {
        let mut ledger = Ledger::default();
        ledger.compaction_start();
        ledger.compaction_call("c1");
        let used = json!({ "inputTokens": 1360, "cacheReadTokens": 323, "outputTokens": 61 });
        let (rest, id) = ledger.compaction_complete(Some(&used));
        assert_eq!(
            (rest, id.as_deref()),
            (Counts { fresh: 1037, reads: 323, output: 61, ..Counts::default() }, Some("c1"))
        );
        assert!(ledger.counted("c1"));
        // Counted from its call: nothing left, and no shutdown total holds it.
        ledger.compaction_start();
        assert!(ledger.count_compaction(None, "c2", Counts::of_copilot(&used)));
        assert!(ledger.compaction_complete(Some(&used)).0.is_zero());
        let rest = ledger.shutdown(&shutdown(json!({ "a": totals(0, 0, 0) }), json!({})));
        assert!(rest[0].counts.is_zero());
    }
}
