//! Sending traces to an OTLP/HTTP endpoint (`--otlp-endpoint`): a collector, or a backend that
//! takes OTLP itself (Phoenix, Langfuse, …).
//!
//! Requests are gathered into batches of up to [`BATCH_SPANS`] spans, encoded as protobuf or
//! OTLP/JSON, gzipped if asked, and posted by a thread of their own, so that reading never
//! waits for the network. A batch is retried, with a backoff that doubles up to
//! [`MAX_BACKOFF`] (or as long as the server's `Retry-After` asks), on 429, on any 5xx, on a
//! timeout and when the server cannot be reached. Other answers reject it: it is reported, and
//! kept in the spool's `rejected/` folder when there is a spool.
//!
//! The queue is bounded in memory ([`MEMORY_BYTES`]): past that, batches wait in files of a
//! spool folder. With a spool folder of the caller's ([`Endpoint::spool`]), every batch is
//! written there before it is sent and removed once the server took it, so that batches not
//! yet sent when the process stops are sent by the next one.

use std::collections::VecDeque;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use prost::Message as _;
use serde::Deserialize as _;

/// The most spans a batch holds.
pub const BATCH_SPANS: usize = 512;
/// The most bytes of batches held in memory; more wait on disk.
pub const MEMORY_BYTES: usize = 16 << 20;
/// The longest wait between two tries of a batch.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The first wait after a failed try.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// How a request is encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// `application/x-protobuf`: what every OTLP/HTTP receiver takes.
    #[default]
    Protobuf,
    /// `application/json` (OTLP/JSON): not taken by all receivers.
    Json,
}

impl Protocol {
    fn content_type(self) -> &'static str {
        match self {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Protocol::Protobuf => "pb",
            Protocol::Json => "json",
        }
    }
}

/// Where and how to send.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The URL requests are posted to (`…/v1/traces`).
    pub url: String,
    /// The wire encoding.
    pub protocol: Protocol,
    /// Whether request bodies are gzipped.
    pub gzip: bool,
    /// Headers sent with every request (authentication).
    pub headers: Vec<(String, String)>,
    /// How long one request may take.
    pub timeout: Duration,
    /// A folder that holds every batch until the server took it, kept between runs; `None`
    /// keeps batches in memory, and in a temporary folder past [`MEMORY_BYTES`].
    pub spool: Option<PathBuf>,
    /// How long the endpoint may fail (since it last took a batch) before batches are given up;
    /// `None`: they are tried as long as the process runs.
    pub give_up_after: Option<Duration>,
}

impl Endpoint {
    /// An endpoint at `url` with the defaults: protobuf, no gzip, no headers, a 10 s timeout,
    /// no spool, batches given up after 5 minutes of failures.
    pub fn new(url: &str) -> Self {
        Endpoint {
            url: url.to_owned(),
            protocol: Protocol::Protobuf,
            gzip: false,
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
            spool: None,
            give_up_after: Some(Duration::from_secs(300)),
        }
    }
}

/// Something the sending thread reports, for the caller to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A try failed and the batch will be tried again after `wait`.
    Retrying { spans: usize, problem: String, wait: Duration },
    /// The server took a batch after earlier tries failed.
    Recovered { spans: usize, tries: u32 },
    /// The server refused a batch for good, or it was given up.
    Rejected { spans: usize, problem: String, kept: Option<PathBuf> },
    /// The server took a batch but dropped some of its spans.
    Partial { rejected: i64, message: String },
}

/// What was sent, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Spans the server took.
    pub sent: usize,
    /// Spans refused or given up.
    pub rejected: usize,
    /// Spans still waiting when the exporter was closed: in the spool, for the next run, when
    /// there is one, else lost.
    pub left: usize,
    /// Requests posted, retries included.
    pub requests: usize,
}

/// A batch waiting to be sent: its encoded body (not yet gzipped), in memory or in a file.
enum Batch {
    Memory { body: Vec<u8>, spans: usize },
    File { path: PathBuf, spans: usize },
}

impl Batch {
    fn spans(&self) -> usize {
        match self {
            Batch::Memory { spans, .. } | Batch::File { spans, .. } => *spans,
        }
    }
}

#[derive(Default)]
struct Queue {
    batches: VecDeque<Batch>,
    memory: usize,
    /// Set once no more batches come: the thread sends what is left and ends, or ends at once
    /// once `deadline` passed.
    closing: bool,
    deadline: Option<Instant>,
    /// Whether the thread holds a batch it is trying.
    busy: bool,
    summary: Summary,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the thread (a batch, closing) and the closer (the queue emptied).
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Sends requests to an endpoint from a thread of its own.
pub struct Exporter {
    endpoint: Endpoint,
    shared: Arc<Shared>,
    /// The request being filled.
    open: Mutex<ExportTraceServiceRequest>,
    /// The spool folder: the caller's, or a temporary one made when memory runs out.
    spool: Mutex<Option<Spool>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter").field("endpoint", &self.endpoint.url).finish_non_exhaustive()
    }
}

struct Spool {
    dir: PathBuf,
    next: u64,
    /// A temporary folder, removed when the exporter is dropped.
    _temporary: Option<tempfile::TempDir>,
}

impl Spool {
    fn open(dir: &Path) -> io::Result<(Spool, Vec<Batch>)> {
        fs::create_dir_all(dir)?;
        let mut waiting: Vec<(u64, PathBuf, usize)> = Vec::new();
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            // <sequence>-<spans>.<pb|json>; anything else (a temporary file of a write that was
            // cut short, rejected/) is left alone.
            let Some((stem, _)) = name.split_once('.') else { continue };
            let Some((seq, spans)) = stem.split_once('-') else { continue };
            if let (Ok(seq), Ok(spans)) = (seq.parse(), spans.parse()) {
                waiting.push((seq, path, spans));
            }
        }
        waiting.sort();
        let next = waiting.last().map_or(0, |(seq, ..)| seq + 1);
        let batches = waiting.into_iter().map(|(_, path, spans)| Batch::File { path, spans }).collect();
        Ok((Spool { dir: dir.to_owned(), next, _temporary: None }, batches))
    }

    /// Writes a batch under a temporary name first, so that a write cut short leaves no batch.
    fn put(&mut self, body: &[u8], spans: usize, protocol: Protocol) -> io::Result<PathBuf> {
        let path = self.dir.join(format!("{:012}-{spans}.{}", self.next, protocol.extension()));
        self.next += 1;
        let temp = self.dir.join(format!(".{}.tmp", self.next));
        let mut file = fs::File::create(&temp)?;
        file.write_all(body)?;
        file.sync_data()?;
        fs::rename(&temp, &path)?;
        Ok(path)
    }
}

impl Exporter {
    /// Starts the sending thread; `notify` hears what it has to report. Batches a spool folder
    /// holds from an earlier run are sent first.
    ///
    /// # Errors
    /// When the spool folder cannot be made or read.
    pub fn start(endpoint: Endpoint, notify: Box<dyn Fn(Notice) + Send>) -> io::Result<Exporter> {
        let mut queue = Queue::default();
        let spool = match &endpoint.spool {
            Some(dir) => {
                let (spool, waiting) = Spool::open(dir)?;
                queue.batches.extend(waiting);
                Some(spool)
            }
            None => None,
        };
        let shared = Arc::new(Shared { queue: Mutex::new(queue), changed: Condvar::new() });
        let thread = {
            let (shared, endpoint) = (Arc::clone(&shared), endpoint.clone());
            std::thread::Builder::new()
                .name("otlp".into())
                .spawn(move || Sender::new(endpoint, shared, notify).run())?
        };
        Ok(Exporter {
            endpoint,
            shared,
            open: Mutex::new(ExportTraceServiceRequest::default()),
            spool: Mutex::new(spool),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Takes one request in OTLP/JSON (as the OpenTelemetry writer makes them), into the batch
    /// being filled; a full batch is queued.
    ///
    /// # Errors
    /// When the request is not OTLP/JSON, or a batch cannot be written to the spool.
    pub fn send(&self, request: &serde_json::Value) -> io::Result<()> {
        let request = ExportTraceServiceRequest::deserialize(request).map_err(io::Error::other)?;
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        open.resource_spans.extend(request.resource_spans);
        if spans(&open) >= BATCH_SPANS {
            let full = std::mem::take(&mut *open);
            drop(open);
            self.queue(&full)?;
        }
        Ok(())
    }

    /// Queues the batch being filled, however small.
    ///
    /// # Errors
    /// When the batch cannot be written to the spool.
    pub fn flush(&self) -> io::Result<()> {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        if open.resource_spans.is_empty() { Ok(()) } else { self.queue(&open) }
    }

    fn queue(&self, request: &ExportTraceServiceRequest) -> io::Result<()> {
        let body = match self.endpoint.protocol {
            Protocol::Protobuf => request.encode_to_vec(),
            Protocol::Json => serde_json::to_vec(request).map_err(io::Error::other)?,
        };
        let count = spans(request);
        let durable = self.endpoint.spool.is_some();
        let over = self.shared.lock().memory + body.len() > MEMORY_BYTES;
        let batch = if durable || over {
            let mut spool = self.spool.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if spool.is_none() {
                let temporary = tempfile::Builder::new().prefix("agentlog-otlp-").tempdir()?;
                *spool = Some(Spool { dir: temporary.path().to_owned(), next: 0, _temporary: Some(temporary) });
            }
            let path = spool.as_mut().expect("made above").put(&body, count, self.endpoint.protocol)?;
            Batch::File { path, spans: count }
        } else {
            Batch::Memory { body, spans: count }
        };
        let mut queue = self.shared.lock();
        if let Batch::Memory { body, .. } = &batch {
            queue.memory += body.len();
        }
        queue.batches.push_back(batch);
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Spans queued and not yet taken by the server.
    pub fn waiting(&self) -> usize {
        let queue = self.shared.lock();
        queue.batches.iter().map(Batch::spans).sum()
    }

    /// Queues what is being filled, waits up to `wait` for the queue to empty, and stops the
    /// thread. What is left is in the spool for the next run, when there is a spool folder of
    /// the caller's, else lost: [`Summary::left`] counts it.
    ///
    /// # Errors
    /// When the last batch cannot be written to the spool.
    pub fn close(&self, wait: Duration) -> io::Result<Summary> {
        let flushed = self.flush();
        {
            let mut queue = self.shared.lock();
            queue.closing = true;
            queue.deadline = Instant::now().checked_add(wait);
            self.shared.changed.notify_all();
        }
        if let Some(thread) = self.thread.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            let _ = thread.join();
        }
        flushed?;
        let mut queue = self.shared.lock();
        queue.summary.left = queue.batches.iter().map(Batch::spans).sum();
        // Batches only in memory go to the spool folder of the caller's, for the next run.
        if let Some(spool) = self.spool.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_mut()
            && spool._temporary.is_none()
        {
            for batch in &queue.batches {
                if let Batch::Memory { body, spans } = batch {
                    spool.put(body, *spans, self.endpoint.protocol)?;
                }
            }
        }
        Ok(queue.summary)
    }
}

fn spans(request: &ExportTraceServiceRequest) -> usize {
    request.resource_spans.iter().flat_map(|r| &r.scope_spans).map(|s| s.spans.len()).sum()
}

/// The sending thread.
struct Sender {
    endpoint: Endpoint,
    shared: Arc<Shared>,
    notify: Box<dyn Fn(Notice) + Send>,
    agent: ureq::Agent,
    /// When the endpoint last took a batch (or the thread started): batches are given up once
    /// it has failed for [`Endpoint::give_up_after`].
    last_taken: std::cell::Cell<Instant>,
}

/// How one try ended.
enum Tried {
    Taken,
    Again { problem: String, wait: Option<Duration> },
    Refused(String),
}

impl Sender {
    fn new(endpoint: Endpoint, shared: Arc<Shared>, notify: Box<dyn Fn(Notice) + Send>) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(endpoint.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("agentlog/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Sender { endpoint, shared, notify, agent, last_taken: std::cell::Cell::new(Instant::now()) }
    }

    fn run(self) {
        loop {
            let batch = {
                let mut queue = self.shared.lock();
                loop {
                    if queue.closing && (queue.batches.is_empty() || self.past_deadline(&queue)) {
                        return;
                    }
                    if !queue.batches.is_empty() {
                        break;
                    }
                    queue = self.shared.changed.wait(queue).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
                queue.busy = true;
                queue.batches.pop_front().expect("not empty")
            };
            let put_back = self.deliver(&batch);
            let mut queue = self.shared.lock();
            queue.busy = false;
            match put_back {
                true => queue.batches.push_front(batch),
                false => {
                    if let Batch::Memory { body, .. } = &batch {
                        queue.memory -= body.len();
                    }
                }
            }
            self.shared.changed.notify_all();
        }
    }

    fn past_deadline(&self, queue: &Queue) -> bool {
        queue.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Tries a batch until the server takes or refuses it; `true` when the exporter is closing
    /// past its deadline and the batch is still to be sent.
    fn deliver(&self, batch: &Batch) -> bool {
        let spans = batch.spans();
        let body = match batch {
            Batch::Memory { body, .. } => std::borrow::Cow::Borrowed(body),
            Batch::File { path, .. } => match fs::read(path) {
                Ok(body) => std::borrow::Cow::Owned(body),
                Err(e) => {
                    let problem = format!("{}: {e}", path.display());
                    (self.notify)(Notice::Rejected { spans, problem, kept: None });
                    self.count(|s| s.rejected += spans);
                    return false;
                }
            },
        };
        let wire = match self.endpoint.gzip {
            true => std::borrow::Cow::Owned(gzip(&body)),
            false => std::borrow::Cow::Borrowed(&*body),
        };
        let mut backoff = FIRST_BACKOFF;
        let mut tries = 0u32;
        loop {
            tries += 1;
            self.count(|s| s.requests += 1);
            let problem = match self.post(&wire) {
                Tried::Taken => {
                    self.last_taken.set(Instant::now());
                    self.count(|s| s.sent += spans);
                    if tries > 1 {
                        (self.notify)(Notice::Recovered { spans, tries });
                    }
                    self.remove(batch);
                    return false;
                }
                Tried::Refused(problem) => problem,
                Tried::Again { problem, wait } => {
                    let failing = self.last_taken.get().elapsed();
                    let given_up = self.endpoint.give_up_after.is_some_and(|limit| failing >= limit);
                    if !given_up {
                        let wait = wait.unwrap_or(backoff).min(MAX_BACKOFF * 2);
                        (self.notify)(Notice::Retrying { spans, problem, wait });
                        if self.sleep(wait) {
                            return true;
                        }
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        continue;
                    }
                    format!("{problem}; given up, the endpoint has failed for {} s", failing.as_secs())
                }
            };
            let kept = self.keep_rejected(batch, &body);
            (self.notify)(Notice::Rejected { spans, problem, kept });
            self.count(|s| s.rejected += spans);
            return false;
        }
    }

    fn count(&self, f: impl FnOnce(&mut Summary)) {
        f(&mut self.shared.lock().summary);
    }

    /// Waits `wait`, or less if the exporter closes and its deadline passes first; `true` then.
    fn sleep(&self, wait: Duration) -> bool {
        let until = Instant::now() + wait;
        let mut queue = self.shared.lock();
        loop {
            if queue.closing && self.past_deadline(&queue) {
                return true;
            }
            let now = Instant::now();
            if now >= until {
                return false;
            }
            let mut left = until - now;
            if let Some(deadline) = queue.deadline {
                left = left.min(deadline.saturating_duration_since(now));
            }
            queue = self.shared.changed.wait_timeout(queue, left).unwrap_or_else(std::sync::PoisonError::into_inner).0;
        }
    }

    fn post(&self, body: &[u8]) -> Tried {
        let mut request =
            self.agent.post(&self.endpoint.url).header("Content-Type", self.endpoint.protocol.content_type());
        if self.endpoint.gzip {
            request = request.header("Content-Encoding", "gzip");
        }
        for (name, value) in &self.endpoint.headers {
            request = request.header(name, value);
        }
        let mut response = match request.send(body) {
            Ok(response) => response,
            // Not reached, timed out, cut off: all worth another try.
            Err(e) => return Tried::Again { problem: e.to_string(), wait: None },
        };
        let status = response.status().as_u16();
        let wait = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let answer = response.body_mut().with_config().limit(1 << 20).read_to_vec().unwrap_or_default();
        match status {
            200..=299 => {
                self.partial(&answer);
                Tried::Taken
            }
            429 | 500..=599 => Tried::Again { problem: format!("HTTP {status}{}", excerpt(&answer)), wait },
            _ => Tried::Refused(format!("HTTP {status}{}", excerpt(&answer))),
        }
    }

    /// Reports the spans a server that took a batch says it dropped.
    fn partial(&self, answer: &[u8]) {
        let response = match self.endpoint.protocol {
            Protocol::Protobuf => ExportTraceServiceResponse::decode(answer).ok(),
            Protocol::Json => serde_json::from_slice::<ExportTraceServiceResponse>(answer).ok(),
        };
        if let Some(partial) = response.and_then(|r| r.partial_success)
            && (partial.rejected_spans > 0 || !partial.error_message.is_empty())
        {
            (self.notify)(Notice::Partial { rejected: partial.rejected_spans, message: partial.error_message });
        }
    }

    fn remove(&self, batch: &Batch) {
        if let Batch::File { path, .. } = batch {
            let _ = fs::remove_file(path);
        }
    }

    /// Moves a refused batch of the caller's spool into its `rejected/` folder, to be looked at.
    fn keep_rejected(&self, batch: &Batch, body: &[u8]) -> Option<PathBuf> {
        let dir = self.endpoint.spool.as_ref()?.join("rejected");
        fs::create_dir_all(&dir).ok()?;
        match batch {
            Batch::File { path, .. } => {
                let kept = dir.join(path.file_name()?);
                fs::rename(path, &kept).ok().map(|()| kept)
            }
            Batch::Memory { .. } => {
                let at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                let kept = dir.join(format!("memory-{}.{}", at.as_nanos(), self.endpoint.protocol.extension()));
                fs::write(&kept, body).ok().map(|()| kept)
            }
        }
    }
}

/// The first bytes of a server's answer, to show with its status.
fn excerpt(answer: &[u8]) -> String {
    let text = String::from_utf8_lossy(&answer[..answer.len().min(200)]);
    let text = text.trim();
    if text.is_empty() || !text.chars().all(|c| !c.is_control() || c == '\n') {
        String::new()
    } else {
        format!(": {}", text.replace('\n', " "))
    }
}

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 4), flate2::Compression::fast());
    encoder.write_all(body).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}
