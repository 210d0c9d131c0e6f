//! `--otlp-endpoint`: traces reach an OTLP/HTTP receiver on loopback that fails (errors, 429
//! with Retry-After, a timeout, a restart), every span exactly once once it recovers; a receiver
//! that refuses is reported; `watch` keeps what it could not send in its spool for the next
//! run.

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

/// What the receiver does with one request.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Status(u16),
    /// 429 asking for a wait of this many seconds.
    TooMany(u64),
    /// No answer for this long: longer than the client waits.
    Hang(Duration),
    /// Stops listening for this long, then listens on the same port again.
    Restart(Duration),
    Take,
}

/// The Content-Type and Content-Encoding of each request received.
type Requests = Arc<Mutex<Vec<(Option<String>, Option<String>)>>>;

/// A receiver on 127.0.0.1 that answers requests in turn from a script, then takes every
/// request; it counts the spans of the requests it took, by id, and stops by itself after
/// `lifetime`.
struct Receiver {
    port: u16,
    /// Spans taken: how often, by id; and their names.
    taken: Arc<Mutex<BTreeMap<String, usize>>>,
    names: Arc<Mutex<BTreeMap<String, String>>>,
    requests: Requests,
}

impl Receiver {
    fn start(script: Vec<Answer>, lifetime: Duration) -> Receiver {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let port = server.server_addr().to_ip().unwrap().port();
        let taken = Arc::new(Mutex::new(BTreeMap::new()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let names = Arc::new(Mutex::new(BTreeMap::new()));
        let (t, r, n) = (Arc::clone(&taken), Arc::clone(&requests), Arc::clone(&names));
        std::thread::spawn(move || {
            let until = std::time::Instant::now() + lifetime;
            let mut server = server;
            let mut script = script.into_iter();
            while std::time::Instant::now() < until {
                let Ok(Some(mut request)) = server.recv_timeout(Duration::from_millis(100)) else { continue };
                let header = |name: &'static str| {
                    request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str().to_owned())
                };
                r.lock().unwrap().push((header("Content-Type"), header("Content-Encoding")));
                let gzipped = header("Content-Encoding").as_deref() == Some("gzip");
                let mut body = Vec::new();
                request.as_reader().read_to_end(&mut body).unwrap();
                match script.next().unwrap_or(Answer::Take) {
                    Answer::Status(code) => drop(request.respond(tiny_http::Response::empty(code))),
                    Answer::TooMany(secs) => {
                        let wait = tiny_http::Header::from_bytes("Retry-After", secs.to_string()).unwrap();
                        drop(request.respond(tiny_http::Response::empty(429).with_header(wait)));
                    }
                    Answer::Hang(pause) => {
                        std::thread::sleep(pause);
                        drop(request.respond(tiny_http::Response::empty(503)));
                    }
                    Answer::Restart(pause) => {
                        drop(request);
                        drop(server);
                        std::thread::sleep(pause);
                        server = tiny_http::Server::http(("127.0.0.1", port)).unwrap();
                    }
                    Answer::Take => {
                        if gzipped {
                            let mut plain = Vec::new();
                            flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut plain).unwrap();
                            body = plain;
                        }
                        let export = ExportTraceServiceRequest::decode(&body[..]).unwrap();
                        let mut taken = t.lock().unwrap();
                        for span in export.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans) {
                            *taken.entry(hex(&span.span_id)).or_default() += 1;
                            n.lock().unwrap().insert(hex(&span.span_id), span.name.clone());
                        }
                        drop(request.respond(tiny_http::Response::empty(200)));
                    }
                }
            }
        });
        Receiver { port, taken, names, requests }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1/traces", self.port)
    }

    fn taken(&self) -> BTreeMap<String, usize> {
        self.taken.lock().unwrap().clone()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The span ids of the OTLP/JSON file `convert --to otel` writes for `input`.
fn expected_spans(input: &Path) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.jsonl");
    let status =
        cargo_bin_cmd!("agentlog").args(["convert", "--quiet", "--to", "otel", "-o"]).arg(&out).arg(input).output();
    assert!(status.unwrap().status.code().is_some_and(|c| c <= 1));
    let text = std::fs::read_to_string(out).unwrap();
    let mut ids = Vec::new();
    for line in text.lines() {
        let request: serde_json::Value = serde_json::from_str(line).unwrap();
        for span in request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap() {
            ids.push(span["spanId"].as_str().unwrap().to_owned());
        }
    }
    ids.sort();
    let all = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), all, "a span written twice");
    ids
}

fn once_each(ids: &[String]) -> BTreeMap<String, usize> {
    ids.iter().map(|id| (id.clone(), 1)).collect()
}

#[test]
fn every_span_arrives_once_after_errors_a_timeout_and_a_restart() {
    let input = common::own_corpus().join("codex");
    let expected = expected_spans(&input);
    assert!(expected.len() > 20, "the sample has {} spans", expected.len());
    let script = vec![
        Answer::Status(503),
        Answer::TooMany(1),
        Answer::Hang(Duration::from_millis(2500)),
        Answer::Restart(Duration::from_millis(1500)),
        Answer::Status(500),
    ];
    let receiver = Receiver::start(script, Duration::from_secs(60));
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "--otlp-gzip", "--otlp-timeout", "1", "--otlp-endpoint", &receiver.url()])
        .arg(&input)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 1: the sample holds lines agentlog reports.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "the traces go to the endpoint, not to stdout");
    assert_eq!(receiver.taken(), once_each(&expected));
    for problem in ["HTTP 503", "HTTP 429", "HTTP 500", "tried again"] {
        assert!(stderr.contains(problem), "{problem} not reported in {stderr}");
    }
    assert!(stderr.contains(&format!("{} spans sent", expected.len())), "{stderr}");
    let requests = receiver.requests.lock().unwrap().clone();
    assert!(requests.len() >= 5, "{requests:?}");
    assert!(
        requests.iter().all(|(t, e)| t.as_deref() == Some("application/x-protobuf") && e.as_deref() == Some("gzip")),
        "{requests:?}"
    );
}

#[test]
fn a_refused_batch_is_reported_and_fails_the_run() {
    let receiver = Receiver::start(vec![Answer::Status(400)], Duration::from_secs(30));
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "--otlp-endpoint", &receiver.url()])
        .arg(common::own_corpus().join("codex"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("spans not sent: HTTP 400"), "{stderr}");
    assert!(receiver.taken().is_empty());
}

#[test]
fn an_endpoint_that_stays_down_is_given_up() {
    // Nothing listens on the port of a receiver already gone.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "--otlp-retry-for", "2", "--otlp-endpoint", &format!("http://127.0.0.1:{port}")])
        .arg(common::own_corpus().join("codex"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("given up"), "{stderr}");
}

#[test]
fn watch_keeps_what_it_could_not_send_for_its_next_run() {
    let input = common::own_corpus().join("codex");
    let expected = expected_spans(&input);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("watch.state");
    let spool = dir.path().join("watch.otlp");
    let watch = |url: &str| {
        cargo_bin_cmd!("agentlog")
            .args(["watch", "--once", "--otlp-endpoint", url, "--state"])
            .arg(&state)
            .arg(&input)
            .output()
            .unwrap()
    };
    // A receiver that only fails: the batches wait in the spool beside the state.
    let failing = Receiver::start(vec![Answer::Status(503); 1000], Duration::from_secs(30));
    let out = watch(&failing.url());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains(&format!("{} waiting in {}", expected.len(), spool.display())), "{stderr}");
    assert!(failing.taken().is_empty());
    // The next run sends them, and nothing else: the sessions did not change.
    let receiver = Receiver::start(Vec::new(), Duration::from_secs(30));
    let out = watch(&receiver.url());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(receiver.taken(), once_each(&expected));
    let left: Vec<_> = std::fs::read_dir(&spool).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "{left:?}");
    // A third run has nothing to send.
    let out = watch(&receiver.url());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(receiver.taken(), once_each(&expected));
}

#[test]
fn a_running_watch_sends_each_span_once_as_soon_as_it_is_complete() {
    let expected = expected_spans(&common::own_corpus().join("recorded/claude/2.1.328/tools.jsonl"));
    let mut session = common::Growing::claude();
    session.write_to(session.lines.len() / 2);
    let project = session.folder.clone();
    let receiver = Receiver::start(Vec::new(), Duration::from_secs(60));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("agentlog"))
        .args(["watch", "--interval", "100", "--session-quiet", "4", "--otlp-endpoint", &receiver.url()])
        .arg(&project)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let wait_for = |done: &dyn Fn(&BTreeMap<String, String>) -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline && !done(&receiver.names.lock().unwrap()) {
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let named =
        |names: &BTreeMap<String, String>, prefix: &str| names.values().filter(|n| n.starts_with(prefix)).count();
    // The first half's responses go as soon as their usage is final; the session's own span
    // waits for it to be quiet.
    wait_for(&|names| named(names, "chat") > 0);
    let names = receiver.names.lock().unwrap().clone();
    assert!(named(&names, "chat") > 0, "no response's span while the session went on");
    assert_eq!(named(&names, "invoke_agent"), 0, "the session's span before it was quiet: {names:?}");
    session.finish();
    wait_for(&|names| named(names, "invoke_agent") > 0);
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(receiver.taken(), once_each(&expected));
}

#[test]
fn a_session_that_grows_between_two_runs_has_each_span_sent_once() {
    let expected = expected_spans(&common::own_corpus().join("recorded/claude/2.1.328/tools.jsonl"));
    let mut session = common::Growing::claude();
    session.write_to(session.lines.len() / 2);
    let (project, state) = (session.folder.clone(), session.path("watch.state"));
    let receiver = Receiver::start(Vec::new(), Duration::from_secs(60));
    let watch = |quiet: &str| {
        // Files unchanged for 1.5 s have settled: the usage of their last response is final.
        std::thread::sleep(Duration::from_millis(1700));
        let out = cargo_bin_cmd!("agentlog")
            .args(["watch", "--once", "--session-quiet", quiet, "--otlp-endpoint", &receiver.url(), "--state"])
            .arg(&state)
            .arg(&project)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let roots = || receiver.names.lock().unwrap().values().filter(|n| n.starts_with("invoke_agent")).count();
    // A run that stops while the session is not quiet sends its complete spans; the session's
    // own span waits ...
    watch("60");
    assert!(!receiver.taken().is_empty());
    assert_eq!(roots(), 0);
    // ... for a later run, after the session went on, to send the rest once it is quiet.
    session.finish();
    watch("60");
    assert_eq!(roots(), 0);
    watch("1");
    assert_eq!(receiver.taken(), once_each(&expected));
    // Nothing more comes after that.
    watch("1");
    assert_eq!(receiver.taken(), once_each(&expected));
}
