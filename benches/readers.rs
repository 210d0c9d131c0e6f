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

/// A database of OpenCode's tables holding `copies` copies of every session of the OpenCode
/// samples, each under new ids, in a temporary directory.
fn opencode_database(copies: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("opencode.db");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/opencode/opencode-quirks.db");
    std::fs::copy(&sample, &path).expect("the sample copies");
    let c = rusqlite::Connection::open(&path).expect("the copy opens");
    let mut sql = String::from("BEGIN;");
    for n in 1..copies {
        // Every id gets the copy's number; parents and the parts' messages follow their rows.
        let s = |column: &str| format!("{column} || '~{n}'");
        sql += &format!(
            "INSERT INTO session SELECT {}, project_id, workspace_id, CASE WHEN parent_id IS NULL THEN NULL ELSE {} END,
                slug, directory, path, title, version, share_url, summary_additions, summary_deletions, summary_files,
                summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read,
                tokens_cache_write, revert, permission, agent, model, time_created + {n}, time_updated, time_compacting,
                time_archived FROM session WHERE id NOT LIKE '%~%';
             INSERT INTO message SELECT {}, {}, time_created, time_updated, data FROM message WHERE session_id NOT LIKE '%~%';
             INSERT INTO part SELECT {}, {}, {}, time_created, time_updated, data FROM part WHERE session_id NOT LIKE '%~%';",
            s("id"),
            s("parent_id"),
            s("id"),
            s("session_id"),
            s("id"),
            s("message_id"),
            s("session_id"),
        );
    }
    sql += "COMMIT;";
    c.execute_batch(&sql).expect("the copies are written");
    (dir, path)
}

/// Reading every session of a database with the OpenCode reader, beside parsing every row's
/// `data` into a `Value` straight from SQLite.
#[divan::bench]
fn database_reader(bencher: Bencher) {
    let (_dir, path) = opencode_database(300);
    read_database(bencher, &path, "opencode");
}

/// The Crush reader over its sample as it is (a few sessions: the figure is per-session work).
#[divan::bench]
fn database_reader_crush(bencher: Bencher) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/crush/crush.db");
    read_database(bencher, &path, "crush");
}

fn read_database(bencher: Bencher, path: &Path, name: &str) {
    let db = agentlog::read::store::Db::open(path.to_str().unwrap()).expect("the database opens");
    let reader = agentlog::read::reader(name).expect("a reader");
    let sessions = reader.stored_sessions(&db).expect("the agent's tables").expect("listed");
    let bytes: u64 = sessions.iter().map(|s| s.size).sum();
    bencher.counter(BytesCount::new(bytes)).bench_local(|| {
        let mut events = 0;
        for stored in &sessions {
            let input = agentlog::read::StoredInput { stored, db: &db, shared: &mut Shared::default() };
            reader
                .read_stored(input, &mut |e| {
                    black_box(e);
                    events += 1;
                    Ok(())
                })
                .expect("the session reads");
        }
        events
    });
}

#[divan::bench]
fn database_value_baseline(bencher: Bencher) {
    let (_dir, path) = opencode_database(300);
    let c = rusqlite::Connection::open(&path).expect("the database opens");
    let bytes: u64 = c
        .query_row(
            "SELECT (SELECT sum(octet_length(data)) FROM message) + (SELECT sum(octet_length(data)) FROM part)",
            [],
            |r| r.get::<_, i64>(0),
        )
        .expect("a size") as u64;
    bencher.counter(BytesCount::new(bytes)).bench_local(|| {
        let mut rows = 0;
        for table in ["message", "part"] {
            let mut statement = c.prepare(&format!("SELECT data FROM {table}")).expect("a query");
            let mut found = statement.query([]).expect("rows");
            while let Some(row) = found.next().expect("a row") {
                let text: String = row.get(0).expect("text");
                black_box(serde_json::from_str::<serde_json::Value>(&text).ok());
                rows += 1;
            }
        }
        rows
    });
}

/// The session files of one agent's samples (`corpus/<reader>/`, `corpus/recorded/<reader>/`),
/// each as its own input, as `convert` reads them: the reader the pipeline tells for the file
/// must be `reader`'s (side files such as prompt histories are left out).
fn sample_files(reader: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut files = Vec::new();
    for dir in [root.join(reader), root.join("recorded").join(reader)] {
        if !dir.is_dir() {
            continue;
        }
        let (inputs, _) = agentlog::pipeline::expand(&[dir.display().to_string()]);
        let (groups, _) = agentlog::pipeline::plan(&inputs, None, &|_| None, &Default::default());
        for item in groups.iter().flat_map(|g| &g.items) {
            let name = item.spec.name().to_owned();
            let session = agentlog::pipeline::file_kind(item) == agentlog::read::FileKind::Session;
            if item.reader.name() == reader && session && Path::new(&name).is_file() {
                files.push((name.clone(), std::fs::read(&name).expect("a sample reads")));
            }
        }
    }
    assert!(!files.is_empty(), "no samples of {reader}");
    files
}

/// The readers of the agents whose sessions are files, over their samples, each file read as a
/// run reads it. The samples are small: the figure includes the per-file work.
#[divan::bench(args = ["gemini", "copilot", "qwen", "pi", "aider", "cline", "openhands", "droid", "cursor", "kiro"])]
fn file_reader(bencher: Bencher, agent: &str) {
    let files = sample_files(agent);
    let reader = agentlog::read::reader(agent).expect("a reader");
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        let mut events = 0;
        for (name, bytes) in &files {
            let input = Input { name, bytes: Box::new(&bytes[..]), shared: &mut Shared::default() };
            reader
                .read(input, &mut |e| {
                    black_box(e);
                    events += 1;
                    Ok(())
                })
                .expect("reading memory does not fail");
        }
        events
    });
}

/// Beside [`file_reader`]: the same files parsed into `serde_json::Value`s, a document whole
/// and JSON Lines line by line (a Markdown file's lines fail to parse, quickly).
#[divan::bench(args = ["gemini", "copilot", "qwen", "pi", "aider", "cline", "openhands", "droid", "cursor", "kiro"])]
fn file_value_baseline(bencher: Bencher, agent: &str) {
    let files = sample_files(agent);
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        files
            .iter()
            .map(|(_, bytes)| match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(value) => usize::from(black_box(value).is_object()),
                Err(_) => baseline(bytes),
            })
            .sum::<usize>()
    });
}
