//! How a run reads its inputs: the longest line, the thread pool that parses the lines of
//! large inputs, and the prices of model responses. A run makes its own; nothing is kept
//! process-wide.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cost::Prices;
use crate::redact::Redactor;
use crate::stats::filter::Filter;

/// The default longest line: 256 MiB, far beyond any record the agents write.
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 << 20;

/// Bytes kept of a line longer than the limit, to show in its diagnostic; also the smallest
/// limit.
pub(crate) const KEPT_OF_LONG_LINE: usize = 200;

/// Settings for reading the inputs of one run; cheap to clone (clones share the pool).
#[derive(Clone)]
pub struct Settings {
    max_line_bytes: usize,
    pool: Option<Arc<Pool>>,
    prices: Arc<Prices>,
    usage_only: bool,
    wanted: Option<Wanted>,
    found: Option<Arc<[u64]>>,
    filter: Option<Arc<Filter>>,
    redactor: Option<Arc<Redactor>>,
}

/// Whether a line's raw bytes hold what a run looks for ([`Settings::looking_for`]).
pub type Wanted = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// Threads that parse the lines of large inputs, and what they know of the inputs being read.
struct Pool {
    threads: rayon::ThreadPool,
    /// Inputs being read by [`crate::read::read_lines`] right now.
    reading: AtomicUsize,
    /// Inputs that threads about to be free will read next, as the caller last said.
    waiting: AtomicUsize,
}

impl Default for Settings {
    /// Lines up to [`DEFAULT_MAX_LINE_BYTES`], parsed on the thread that reads them.
    fn default() -> Self {
        Settings {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            pool: None,
            prices: Arc::new(Prices::embedded()),
            usage_only: false,
            wanted: None,
            found: None,
            filter: None,
            redactor: None,
        }
    }
}

impl Settings {
    /// Lines up to `max_line_bytes` long (a longer line is reported and skipped without being
    /// held whole), parsed on a pool of `threads` threads when there is more than one.
    ///
    /// # Errors
    /// When the threads cannot be started.
    pub fn new(threads: usize, max_line_bytes: usize) -> io::Result<Self> {
        let pool = if threads > 1 {
            let threads = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("agentlog-parse-{i}"))
                .build()
                .map_err(io::Error::other)?;
            Some(Arc::new(Pool { threads, reading: AtomicUsize::new(0), waiting: AtomicUsize::new(0) }))
        } else {
            None
        };
        Ok(Settings {
            max_line_bytes: max_line_bytes.max(KEPT_OF_LONG_LINE),
            pool,
            prices: Arc::new(Prices::embedded()),
            usage_only: false,
            wanted: None,
            found: None,
            filter: None,
            redactor: None,
        })
    }

    /// These settings pricing model responses with `prices` instead of the embedded prices.
    #[must_use]
    pub fn with_prices(mut self, prices: Arc<Prices>) -> Self {
        self.prices = prices;
        self
    }

    /// These settings for a run that counts only token usage: readers may skip, unparsed, the
    /// lines that cannot matter to it ([`crate::read::LineParser::may_matter_to_usage`]), and
    /// give only some of their other events. Usage events are those of a full run, but for `seq`.
    #[must_use]
    pub fn only_usage(mut self) -> Self {
        self.usage_only = true;
        self
    }

    /// These settings for a run that looks for some text, say a search for some words: readers
    /// may skip, unparsed, the lines of bulk text (a tool's output, say) whose raw bytes
    /// `wanted` says lack it ([`crate::read::LineParser::is_bulk_text`]). The events of the
    /// lines read are those of a full run, but for `seq`.
    #[must_use]
    pub fn looking_for(mut self, wanted: Wanted) -> Self {
        self.wanted = Some(wanted);
        self
    }

    /// Whether a run that looks for some text knows that the line at `offset` of the input
    /// being read, `content`, lacks it: where the text lies in the input is known
    /// ([`Settings::found_at`]), else `wanted` says of the line's bytes.
    pub fn lacks_wanted(&self, offset: u64, content: &[u8]) -> bool {
        match (&self.found, &self.wanted) {
            (Some(found), _) => {
                let end = offset + content.len() as u64;
                found.get(found.partition_point(|&at| at < offset)).is_none_or(|&at| at >= end)
            }
            (None, Some(wanted)) => !wanted(content),
            (None, None) => false,
        }
    }

    /// These settings for reading an input in which the text a run looks for
    /// ([`Settings::looking_for`]) is known to start at the offsets `found`, in order, and
    /// nowhere else (`None`: not known, the lines are looked through).
    #[must_use]
    pub fn found_at(mut self, found: Option<Arc<[u64]>>) -> Self {
        self.found = found;
        self
    }

    /// These settings handing on only the events `filter` keeps (see
    /// [`crate::stats::filter::Gate`]); each session is still read whole.
    #[must_use]
    pub fn with_filter(mut self, filter: Filter) -> Self {
        self.filter = (!filter.keeps_all()).then(|| Arc::new(filter));
        self
    }

    /// These settings redacting every event with `redactor` before it is handed on.
    #[must_use]
    pub fn with_redactor(mut self, redactor: Arc<Redactor>) -> Self {
        self.redactor = Some(redactor);
        self
    }

    /// The redactor of the events handed on, if any.
    pub fn redactor(&self) -> Option<&Redactor> {
        self.redactor.as_deref()
    }

    /// The filter of the events handed on, if any.
    pub fn filter(&self) -> Option<&Filter> {
        self.filter.as_deref()
    }

    /// Whether this run counts only token usage.
    pub fn usage_only(&self) -> bool {
        self.usage_only
    }

    /// The prices that give usage events their `cost_usd`.
    pub fn prices(&self) -> &Prices {
        &self.prices
    }

    /// The longest line read, in bytes.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// Threads of the pool; 1 without one.
    pub fn threads(&self) -> usize {
        self.pool.as_ref().map_or(1, |p| p.threads.current_num_threads())
    }

    /// `f` of every item, in order: on the pool's threads, or on this one without a pool.
    pub fn map<T: Sync, R: Send>(&self, items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
        use rayon::prelude::*;
        match &self.pool {
            Some(pool) => pool.threads.install(|| items.par_iter().map(f).collect()),
            None => items.iter().map(f).collect(),
        }
    }

    /// Tells the readers that `n` inputs wait for threads about to be free (a caller reading
    /// several inputs at once): until none do, [`Settings::parse_on_pool`] leaves the pool's
    /// threads to them.
    pub fn set_inputs_waiting(&self, n: usize) {
        if let Some(pool) = &self.pool {
            pool.waiting.store(n, Ordering::Relaxed);
        }
    }

    /// Whether a reader called now would parse its next lines on the pool: only while the pool
    /// has threads that no other input keeps busy or is about to. Moving parsed events between
    /// threads costs, so inputs read side by side are each parsed on their own thread, and a
    /// file read alone is parsed on them all.
    ///
    /// A run counting only usage never does: most lines are skipped after a scan for a few
    /// words, and handing chunks between threads then costs more than the parsing left, and
    /// grows the allocator's memory with blocks freed on threads other than their own.
    pub fn parse_on_pool(&self) -> bool {
        let Some(pool) = self.pool.as_ref().filter(|_| !self.usage_only) else { return false };
        let threads = pool.threads.current_num_threads();
        // Waiting for the pool from inside it could leave no thread to do the work.
        threads > 1
            && pool.threads.current_thread_index().is_none()
            && pool.reading.load(Ordering::Relaxed) < threads
            && pool.waiting.load(Ordering::Relaxed) == 0
    }

    /// Runs `work` on one of the pool's threads (here, without a pool).
    pub(crate) fn spawn(&self, work: impl FnOnce() + Send + 'static) {
        match &self.pool {
            Some(pool) => pool.threads.spawn(work),
            None => work(),
        }
    }

    /// Counts an input as being read until the guard is dropped.
    pub(crate) fn reading(&self) -> Reading {
        if let Some(pool) = &self.pool {
            pool.reading.fetch_add(1, Ordering::Relaxed);
        }
        Reading(self.pool.clone())
    }
}

/// An input being read, counted while it lives.
pub(crate) struct Reading(Option<Arc<Pool>>);

impl Drop for Reading {
    fn drop(&mut self) {
        if let Some(pool) = &self.0 {
            pool.reading.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_lacks_the_text_when_no_place_found_lies_in_it() {
        let settings = Settings::default().looking_for(Arc::new(|_| true)).found_at(Some(Arc::from([10, 25])));
        // Lines of 5 bytes at 5, 10, 20, 25 and 30.
        let lacks: Vec<bool> = [5, 10, 20, 25, 30].iter().map(|&at| settings.lacks_wanted(at, b"12345")).collect();
        assert_eq!(lacks, [true, false, true, false, true]);
        assert!(settings.lacks_wanted(15, b"1234"));
        // Without places, the line's bytes are asked.
        let settings = settings.found_at(None);
        assert!(!settings.lacks_wanted(5, b"12345"));
        assert!(!Settings::default().lacks_wanted(5, b"12345"));
    }
}
