//! serde_json against the serde-compatible SIMD JSON parsers (sonic-rs, simd-json) on the
//! lines of agent session files, in the shapes agentlog parses them: validating and skipping a
//! line (`IgnoredAny`), a record's top-level fields kept raw (what the readers' `Object` does
//! before they take the fields they map), and a whole document (`Value`). One thread; the
//! lines are read and their UTF-8 checked beforehand; best of five rounds.
//!
//! usage: cargo run --release --manifest-path benches/parsers/Cargo.toml -- DIR…

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::de::IgnoredAny;

fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

fn main() {
    let mut paths = Vec::new();
    for dir in std::env::args().skip(1) {
        files(std::path::Path::new(&dir), &mut paths);
    }
    paths.sort();
    let mut text = String::new();
    for path in &paths {
        if let Ok(file) = String::from_utf8(std::fs::read(path).expect("readable")) {
            text.push_str(&file);
            text.push('\n');
        }
    }
    // Lines every parser takes: JSON objects.
    let lines: Vec<&str> =
        text.lines().filter(|l| l.starts_with('{') && serde_json::from_str::<IgnoredAny>(l).is_ok()).collect();
    let bytes: usize = lines.iter().map(|l| l.len()).sum();
    println!("{} files, {} lines, {:.1} MB\n", paths.len(), lines.len(), bytes as f64 / 1e6);
    println!("| shape | serde_json | sonic-rs | simd-json |");
    println!("|---|---|---|---|");
    let rate = |run: &dyn Fn() -> usize| {
        let mut best = Duration::MAX;
        let mut taken = 0;
        for _ in 0..5 {
            let start = Instant::now();
            taken = run();
            best = best.min(start.elapsed());
        }
        // Lines serde_json takes that the other refuses (lone surrogates, say) are said.
        let refused = lines.len() - taken;
        let refused = if refused > 0 { format!(" ({refused} lines refused)") } else { String::new() };
        format!("{:.0} MB/s{refused}", bytes as f64 / best.as_secs_f64() / 1e6)
    };
    // simd-json parses in place: each line is copied into a buffer first.
    let simd = |parse: &dyn Fn(&mut Vec<u8>) -> bool| {
        let mut buffer = Vec::new();
        lines
            .iter()
            .filter(|l| {
                buffer.clear();
                buffer.extend_from_slice(l.as_bytes());
                parse(&mut buffer)
            })
            .count()
    };
    println!(
        "| validate and skip (`IgnoredAny`) | {} | {} | {} |",
        rate(&|| lines.iter().filter(|l| serde_json::from_str::<IgnoredAny>(l).is_ok()).count()),
        rate(&|| lines.iter().filter(|l| sonic_rs::from_str::<IgnoredAny>(l).is_ok()).count()),
        rate(&|| simd(&|b| simd_json::serde::from_slice::<IgnoredAny>(b).is_ok())),
    );
    println!(
        "| top-level fields, values raw | {} | {} | — |",
        rate(&|| lines
            .iter()
            .filter(|l| serde_json::from_str::<HashMap<Cow<str>, &serde_json::value::RawValue>>(l).is_ok())
            .count()),
        rate(&|| lines
            .iter()
            .filter(|l| sonic_rs::from_str::<HashMap<Cow<str>, sonic_rs::LazyValue>>(l).is_ok())
            .count()),
    );
    println!(
        "| document into `serde_json::Value` | {} | {} | {} |",
        rate(&|| lines.iter().filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()).count()),
        rate(&|| lines.iter().filter(|l| sonic_rs::from_str::<serde_json::Value>(l).is_ok()).count()),
        rate(&|| simd(&|b| simd_json::serde::from_slice::<serde_json::Value>(b).is_ok())),
    );
    println!(
        "| document into the parser's own DOM | {} | {} | {} |",
        rate(&|| lines.iter().filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()).count()),
        rate(&|| lines.iter().filter(|l| sonic_rs::from_str::<sonic_rs::Value>(l).is_ok()).count()),
        rate(&|| simd(&|b| simd_json::to_borrowed_value(b).is_ok())),
    );
}
