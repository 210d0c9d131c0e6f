//! Micro-benchmarks of the reader hot paths, each beside its baseline on the same bytes:
//! parsing every line into `serde_json::Value`. Run with `cargo bench --bench readers`; the
//! bytes counters give MB/s, and the ratio of the two rows is what to compare across machines.

use std::path::Path;

use agentlog::read::{Input, Reader, Shared};
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    // One thread, like the baseline: readers would otherwise parse large inputs on the whole pool.
    rayon::ThreadPoolBuilder::new().num_threads(1).build_global().expect("the only pool");
    divan::main();
}

/// Every valid line of the samples of one agent (plus the shared corpus when present).
fn lines(agent: &str) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = Vec::new();
    for dir in [root.join("corpus").join(agent), root.join("../shared/corpus").join(agent)] {
        for entry in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().filter_map(Result::ok) {
            if !entry.file_name().to_string_lossy().ends_with(".jsonl") {
                continue;
            }
            for line in std::fs::read(entry.path()).unwrap_or_default().split(|b| *b == b'\n') {
                if serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|v| v.is_object()) {
                    text.extend_from_slice(line);
                    text.push(b'\n');
                }
            }
        }
    }
    text
}

fn read(reader: &dyn Reader, bytes: &[u8]) -> u64 {
    let mut events = 0;
    let input = Input { name: "bench.jsonl", bytes: Box::new(bytes), shared: &mut Shared::default() };
    reader
        .read(input, &mut |e| {
            black_box(e);
            events += 1;
            Ok(())
        })
        .expect("reading memory does not fail");
    events
}

fn baseline(bytes: &[u8]) -> usize {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .map(black_box)
        .count()
}

#[divan::bench(args = ["claude", "codex"])]
fn reader(bencher: Bencher, agent: &str) {
    let bytes = lines(agent);
    let reader = agentlog::read::reader(agent).expect("a reader");
    bencher.counter(BytesCount::new(bytes.len())).bench(|| read(reader, &bytes));
}

#[divan::bench(args = ["claude", "codex"])]
fn value_baseline(bencher: Bencher, agent: &str) {
    let bytes = lines(agent);
    bencher.counter(BytesCount::new(bytes.len())).bench(|| baseline(&bytes));
}

#[divan::bench(args = ["claude", "codex"])]
fn reader_and_jsonl_writer(bencher: Bencher, agent: &str) {
    use agentlog::write::EventSink;
    let bytes = lines(agent);
    let reader = agentlog::read::reader(agent).expect("a reader");
    bencher.counter(BytesCount::new(bytes.len())).bench(|| {
        let mut sink = agentlog::write::jsonl::Writer::new(std::io::sink());
        let input = Input { name: "bench.jsonl", bytes: Box::new(&bytes[..]), shared: &mut Shared::default() };
        reader.read(input, &mut |e| sink.event(&e)).expect("reading memory does not fail");
        sink.finish().expect("a sink does not fail")
    });
}
