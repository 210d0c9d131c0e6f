//! Writes a deterministic benchmark corpus of Claude Code and Codex session files.
//!
//! usage: cargo run --release --example bench_corpus -- OUT_DIR [BYTES] [SEED]
//!        cargo run --release --example bench_corpus -- OUT_DIR xN [SEED]
//!
//! With `xN` in place of BYTES it writes a replica of the real corpus instead: every file of
//! `../shared/corpus/` N times (`OUT/<agent>/replica-<k>/<its path>`), each copy with new UUIDs
//! (one mapping per copy, so links between files hold) and its times shifted by k weeks. Real
//! logs carry large strings and images, the generated corpus millions of small events: their
//! profiles differ, and both are measured.
//!
//! Replicates the session files of `corpus/` and, when present, `../shared/corpus/` until about
//! BYTES (default 1 GiB) are written, half Claude Code and half Codex by bytes, in the agents' own
//! layouts (`OUT/claude/projects/<key>/<session>.jsonl`, `OUT/codex/sessions/YYYY/MM/DD/
//! rollout-….jsonl`). Each copy gets new UUIDs (every UUID in it is replaced by one derived
//! from the seed, the copy and the original) and its times shifted by a whole number of days.
//! Two files per agent are made large (at least 200 MB each when BYTES allows): one long session,
//! made by repeating a session's records with new record ids but the same session id (and, for
//! Codex, one `session_meta` header). The rest are copies of the originals. The same seed gives
//! the same bytes.

use std::collections::HashSet;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// splitmix64: a small, well-mixed, seedable generator; enough to pick templates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// Whether `s` starts with a UUID (8-4-4-4-12 hex digits).
fn is_uuid(s: &[u8]) -> bool {
    s.len() >= 36
        && s[..36].iter().enumerate().all(|(i, &b)| if matches!(i, 8 | 13 | 18 | 23) { b == b'-' } else { is_hex(b) })
}

/// Whether `s` starts with `YYYY-MM-DDTHH:MM:SS`.
fn is_time(s: &[u8]) -> bool {
    s.len() >= 19
        && s[..19].iter().enumerate().all(|(i, &b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            _ => b.is_ascii_digit(),
        })
}

/// The UUID starting `s`, as a number.
fn uuid_value(s: &[u8]) -> u128 {
    u128::from_str_radix(&String::from_utf8_lossy(&s[..36]).replace('-', ""), 16).unwrap_or(0)
}

/// The session id a Codex header line names: `session_meta` (2025-09 on) or the bare header of
/// earlier files (`id` and `timestamp`, no `type`).
fn codex_header(v: &serde_json::Value) -> Option<&str> {
    match v["type"].as_str() {
        Some("session_meta") => v["payload"]["id"].as_str(),
        None if v.get("record_type").is_none() => v["id"].as_str().filter(|_| v.get("timestamp").is_some()),
        _ => None,
    }
}

/// The session ids a file's lines name (Claude's `sessionId`, Codex's headers), and the file
/// without its Codex header lines.
fn sessions_and_body(text: &[u8]) -> (HashSet<u128>, Vec<u8>) {
    let mut ids = HashSet::new();
    let mut body = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|b| *b == b'\n') {
        let v = serde_json::from_slice::<serde_json::Value>(line).unwrap_or_default();
        let header = codex_header(&v);
        if let Some(id) = header.or(v["sessionId"].as_str()).filter(|id| is_uuid(id.as_bytes())) {
            ids.insert(uuid_value(id.as_bytes()));
        }
        if header.is_none() {
            body.extend_from_slice(line);
        }
    }
    (ids, body)
}

/// A copy of `text` with every UUID replaced (consistently within the copy) and every time
/// moved by `days`. UUIDs in `sessions` are replaced by ones derived from `session_salt`, so
/// that repeats of a file can keep one session id.
fn rewrite(text: &[u8], salt: u64, session_salt: u64, sessions: &HashSet<u128>, days: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let boundary = i == 0 || !is_hex(text[i - 1]);
        if boundary && is_uuid(rest) {
            let original = uuid_value(rest);
            let salt = if sessions.contains(&original) { session_salt } else { salt };
            let mut h = Rng(salt ^ (original as u64) ^ ((original >> 64) as u64));
            let id = (u128::from(h.next()) << 64 | u128::from(h.next())) & !(0xF << 76) | (0x4 << 76);
            let hex = format!("{id:032x}");
            out.extend_from_slice(
                format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]).as_bytes(),
            );
            i += 36;
        } else if boundary && is_time(rest) {
            let stamp = String::from_utf8_lossy(&rest[..19]).into_owned();
            match chrono::NaiveDateTime::parse_from_str(&stamp, "%Y-%m-%dT%H:%M:%S") {
                Ok(t) => out.extend_from_slice(
                    (t + chrono::Duration::days(days)).format("%Y-%m-%dT%H:%M:%S").to_string().as_bytes(),
                ),
                Err(_) => out.extend_from_slice(stamp.as_bytes()),
            }
            i += 19;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

/// Session files under `dirs` for one agent, with their bytes: only files whose every line is
/// a JSON object (the samples that are broken on purpose would make the corpus mostly errors).
fn templates(dirs: &[PathBuf]) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for dir in dirs {
        for entry in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !entry.file_type().is_file() || !name.ends_with(".jsonl") {
                continue;
            }
            let text = fs::read(entry.path()).expect("a readable corpus file");
            let valid = text.ends_with(b"\n")
                && text
                    .split(|b| *b == b'\n')
                    .filter(|l| !l.is_empty())
                    .all(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok_and(|v| v.is_object()));
            if valid {
                files.push((name, text));
            }
        }
    }
    files
}

fn write(path: &Path, parts: &[Vec<u8>]) -> u64 {
    fs::create_dir_all(path.parent().expect("a parent")).expect("a writable output");
    let mut out = BufWriter::new(fs::File::create(path).expect("a writable output"));
    let mut n = 0;
    for p in parts {
        out.write_all(p).expect("a writable output");
        n += p.len() as u64;
    }
    out.flush().expect("a writable output");
    n
}

/// Writes `copies` copies of every file of the real corpus `shared` under `out`.
fn replica(out: &Path, shared: &Path, copies: u64, seed: u64) {
    assert!(shared.is_dir(), "a replica needs the real corpus at {}", shared.display());
    let mut total = 0;
    for agent in ["claude", "codex"] {
        let files: Vec<PathBuf> = walkdir::WalkDir::new(shared.join(agent))
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(walkdir::DirEntry::into_path)
            .collect();
        for k in 1..=copies {
            let salt = seed ^ k.wrapping_mul(0x2545_F491_4F6C_DD1D);
            for file in &files {
                let text = fs::read(file).expect("a readable corpus");
                let relative = file.strip_prefix(shared.join(agent)).expect("under the corpus");
                let path = out.join(agent).join(format!("replica-{k:03}")).join(relative);
                total += write(&path, &[rewrite(&text, salt, salt, &HashSet::new(), 7 * k as i64)]);
            }
        }
    }
    eprintln!("total: {total} bytes in {}", out.display());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = PathBuf::from(args.get(1).expect("usage: bench_corpus OUT_DIR [BYTES|xN] [SEED]"));
    let seed: u64 = args.get(3).map_or(42, |s| s.parse().expect("SEED is a number"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/corpus");
    if let Some(copies) = args.get(2).and_then(|a| a.strip_prefix('x')) {
        return replica(&out, &shared, copies.parse().expect("xN: N is a number"), seed);
    }
    let bytes: u64 = args.get(2).map_or(1 << 30, |b| b.parse().expect("BYTES is a number"));
    let mut rng = Rng(seed);
    let mut total = 0;
    for agent in ["claude", "codex"] {
        let mut dirs = vec![root.join("corpus").join(agent)];
        if shared.is_dir() {
            dirs.push(shared.join(agent));
        }
        let templates = templates(&dirs);
        let budget = bytes / 2;
        let large = if budget >= 450 << 20 { 200 << 20 } else { budget / 8 };
        let mut written = 0;
        let mut copy = 0u64;
        while written < budget {
            copy += 1;
            let (name, text) = &templates[rng.below(templates.len())];
            let salt = seed ^ copy.wrapping_mul(0x2545_F491_4F6C_DD1D);
            let days = (copy % 365) as i64;
            // The first two files of each agent are large: one session's records many times.
            let parts: Vec<Vec<u8>> = if copy <= 2 {
                let mut parts = Vec::new();
                let mut size = 0;
                let mut k = 0;
                let (sessions, repeat) = sessions_and_body(text);
                while size < large {
                    let part = rewrite(if k == 0 { text } else { &repeat }, salt ^ k, salt, &sessions, days);
                    size += part.len() as u64;
                    parts.push(part);
                    k += 1;
                }
                parts
            } else {
                vec![rewrite(text, salt, salt, &HashSet::new(), days)]
            };
            let id = format!("{:016x}{:016x}", Rng(salt).next(), Rng(salt ^ 1).next());
            let id = format!("{}-{}-4{}-8{}-{}", &id[..8], &id[8..12], &id[13..16], &id[17..20], &id[20..32]);
            let path = match agent {
                "claude" => out.join(format!("claude/projects/-bench-p{:03}/{id}.jsonl", copy % 97)),
                _ => {
                    let day =
                        chrono::NaiveDate::from_ymd_opt(2026, 1, 1).expect("a date") + chrono::Duration::days(days);
                    out.join(format!("codex/sessions/{}/rollout-{}T10-00-00-{id}.jsonl", day.format("%Y/%m/%d"), day))
                }
            };
            let _ = name;
            written += write(&path, &parts);
        }
        total += written;
        eprintln!("{agent}: {written} bytes in {copy} files");
    }
    eprintln!("total: {total} bytes in {}", out.display());
}
