//! The limit baseline for agentlog's throughput: parse every line of every session file under
//! a directory into `serde_json::Value`, on N threads (one file per task), and print MB/s.
//!
//! usage: cargo run --release --example parse_baseline -- DIR [THREADS]

use std::io::{BufRead, BufReader};
use std::time::Instant;

use rayon::prelude::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).expect("usage: parse_baseline DIR [THREADS]");
    let threads: usize = args.get(2).map_or(1, |t| t.parse().expect("THREADS is a number"));
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global().expect("one pool");
    let mut files: Vec<(u64, std::path::PathBuf)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name().to_string_lossy().ends_with(".jsonl"))
        .map(|e| (e.metadata().map_or(0, |m| m.len()), e.into_path()))
        .collect();
    // Largest first, one file per task: the few large files spread over the threads.
    files.sort_by(|a, b| b.cmp(a));
    let started = Instant::now();
    let (bytes, lines): (u64, u64) = files
        .par_iter()
        .with_max_len(1)
        .map(|(size, path)| {
            let mut reader = BufReader::new(std::fs::File::open(path).expect("a readable file"));
            let mut line = Vec::new();
            let mut lines = 0;
            while reader.read_until(b'\n', &mut line).expect("a readable file") > 0 {
                if let Ok(text) = std::str::from_utf8(&line)
                    && serde_json::from_str::<serde_json::Value>(text).is_ok()
                {
                    lines += 1;
                }
                line.clear();
            }
            (*size, lines)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{:.1} MB/s ({} bytes, {} lines, {:.2} s, {} threads)",
        bytes as f64 / 1e6 / secs,
        bytes,
        lines,
        secs,
        threads
    );
}
