//! `--redact`: secrets planted in real sessions are gone from every output format, exempt
//! fields are untouched, and the real corpus is changed only where the report says.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use assert_cmd::cargo::cargo_bin_cmd;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Value, json};

const CLAUDE: &str =
    "claude/claude-code-log/-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl";
const CODEX: &str = "codex/codemie/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl";

/// Every output format, with the extension of its file.
const FORMATS: &[(&str, &str)] = &[
    ("unified", "jsonl"),
    ("interchange", "json"),
    ("parquet", "parquet"),
    ("arrow", "arrow"),
    ("markdown", "md"),
    ("html", "html"),
    // Agents' own session files, a file per session and a dataset card in a directory.
    ("claude-code", "/"),
    ("codex", "/"),
];

/// Deterministic random strings, so that every planted secret is unique and looks real.
struct Random(u64);

impl Random {
    fn pick(&mut self, alphabet: &str, len: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..len)
            .map(|_| {
                self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                chars[(self.0 >> 33) as usize % chars.len()]
            })
            .collect()
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const HEX: &str = "0123456789abcdef";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The planted secrets and the texts that carry them, by place.
#[derive(Default)]
struct Plant {
    secrets: Vec<String>,
}

impl Plant {
    /// Records `secret` and gives it back, for a text to carry.
    fn s(&mut self, secret: String) -> String {
        assert!(!self.secrets.contains(&secret));
        self.secrets.push(secret.clone());
        secret
    }

    fn pem(&mut self, r: &mut Random, kind: &str, lines: usize, end: bool) -> String {
        let mut text = format!("-----BEGIN {kind}PRIVATE KEY-----\n");
        for _ in 0..lines {
            text.push_str(&self.s(r.pick(B64, 64)));
            text.push('\n');
        }
        if end {
            text.push_str(&format!("-----END {kind}PRIVATE KEY-----\n"));
        }
        text
    }

    fn jwt(&mut self, r: &mut Random) -> String {
        self.s(format!("eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}", r.pick(URLSAFE, 40), r.pick(URLSAFE, 43)))
    }
}

/// A copy of a real Claude Code and a real Codex session with secrets planted where they
/// turn up in practice; returns the directory and the secrets.
fn planted(corpus: &Path, dir: &Path) -> Plant {
    let mut p = Plant::default();
    let mut r = Random(42);
    let pw = |r: &mut Random| format!("{}9x{}", r.pick(ALNUM, 10), r.pick(ALNUM, 6));

    let env_dump = format!(
        "HOME=/Users/dain\nAWS_ACCESS_KEY_ID={}\nAWS_SECRET_ACCESS_KEY={}\nGITHUB_TOKEN={}\nGITLAB_TOKEN={}\n\
         SLACK_BOT_TOKEN={}\nSTRIPE_SECRET_KEY={}\nTWILIO_API_KEY={}\nSENDGRID_API_KEY={}\nNPM_TOKEN={}\n\
         PYPI_TOKEN={}\nDOCKERHUB_TOKEN={}\nGOOGLE_API_KEY={}\nOPENAI_API_KEY={}\nANTHROPIC_API_KEY={}\n\
         HF_TOKEN={}\nDATABASE_PASSWORD={}\nSHELL=/bin/zsh\n",
        p.s(format!("AKIA{}", r.pick(UPPER32, 16))),
        p.s(r.pick(B64, 40)),
        p.s(format!("ghp_{}", r.pick(ALNUM, 36))),
        p.s(format!("glpat-{}", r.pick(URLSAFE, 20))),
        p.s(format!("xoxb-{}-{}-{}", r.pick("0123456789", 12), r.pick("0123456789", 13), r.pick(ALNUM, 24))),
        p.s(format!("sk_live_{}", r.pick(ALNUM, 24))),
        p.s(format!("SK{}", r.pick(HEX, 32))),
        p.s(format!("SG.{}.{}", r.pick(URLSAFE, 22), r.pick(URLSAFE, 43))),
        p.s(format!("npm_{}", r.pick(ALNUM, 36))),
        p.s(format!("pypi-AgEIcHlwaS5vcmc{}", r.pick(URLSAFE, 60))),
        p.s(format!("dckr_pat_{}", r.pick(URLSAFE, 27))),
        p.s(format!("AIza{}", r.pick(URLSAFE, 35))),
        p.s(format!("sk-proj-{}", r.pick(URLSAFE, 64))),
        p.s(format!("sk-ant-api03-{}AA", r.pick(URLSAFE, 93))),
        p.s(format!("hf_{}", r.pick(LETTERS, 34))),
        p.s(pw(&mut r)),
    );
    let dot_env = [
        format!("DATABASE_URL=postgres://app:{}@db.internal:5432/app", p.s(pw(&mut r))),
        format!("REDIS_URL=redis://default:{}@cache:6379/0", p.s(pw(&mut r))),
        format!(
            "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={}==;EndpointSuffix=core.windows.net",
            p.s(r.pick(B64, 86))
        ),
        format!("AZURE_CLIENT_SECRET={}", p.s(format!("{}8Q~{}", r.pick(ALNUM, 3), r.pick(ALNUM, 34)))),
        format!("SESSION_SECRET={}", p.s(r.pick(HEX, 32))),
        format!("JWT_SECRET={}", p.s(r.pick(ALNUM, 24))),
        format!(
            "SLACK_WEBHOOK=https://hooks.slack.com/services/T0{}/B0{}/{}",
            r.pick(UPPER32, 8),
            r.pick(UPPER32, 8),
            p.s(r.pick(ALNUM, 24))
        ),
        format!("GOOGLE_CLIENT_SECRET={}", p.s(format!("GOCSPX-{}", r.pick(URLSAFE, 28)))),
        format!("GOOGLE_ACCESS_TOKEN={}", p.s(format!("ya29.{}", r.pick(URLSAFE, 40)))),
    ];
    // A file read by the Read tool shows its lines numbered.
    let read_output: String = dot_env.iter().enumerate().map(|(i, line)| format!("{:>6}→{line}\n", i + 1)).collect();
    let curl = format!(
        "curl -s -H \"Authorization: Bearer {}\" -H \"X-Api-Key: {}\" -H 'Cookie: session={}; theme=dark' \
         https://deploy:{}@api.example.com/v1/items && curl 'https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sig={}%3D'",
        p.jwt(&mut r),
        p.s(r.pick(ALNUM, 32)),
        p.s(r.pick(ALNUM, 32)),
        p.s(pw(&mut r)),
        p.s(r.pick(B64, 43)),
    );
    let rsa = p.pem(&mut r, "RSA ", 4, true);
    let service_account = format!(
        "{{\n  \"type\": \"service_account\",\n  \"private_key\": \"{}\"\n}}\n",
        p.pem(&mut r, "", 3, true).replace('\n', "\\n")
    );
    let openssh = p.pem(&mut r, "OPENSSH ", 3, false);
    let prompt = format!(
        "Here is my fine-grained token {} and the admin key {}; the database is postgres://admin:{}@10.0.0.5/prod, \
         password: {} and api_key = {}",
        p.s(format!("github_pat_{}", r.pick(ALNUM, 82))),
        p.s(format!("sk-ant-admin01-{}", r.pick(URLSAFE, 60))),
        p.s(pw(&mut r)),
        p.s(pw(&mut r)),
        p.s(r.pick(ALNUM, 32)),
    );
    let thinking = format!(
        "The key {} and the token {} should not be committed.",
        p.s(format!("ASIA{}", r.pick(UPPER32, 16))),
        p.s(format!("glpat-{}", r.pick(URLSAFE, 24))),
    );
    let note = format!(
        "token={} slack {} npm {}",
        p.s(r.pick(ALNUM, 28)),
        p.s(format!("xoxp-{}-{}", r.pick("0123456789", 12), r.pick(ALNUM, 30))),
        p.s(format!("npm_{}", r.pick(ALNUM, 36))),
    );
    let codex_output = format!(
        "Chunk ID: 1\nProcess exited with code 0\nOutput:\nAWS_ACCESS_KEY_ID={}\naws_secret_access_key = {}\nGH_TOKEN={}\n\
         STRIPE_KEY={}\nHUGGINGFACE_TOKEN={}\nSENDGRID={}\nID_TOKEN={}\nOPENAI_API_KEY={}\nCI_TOKEN={}\nPASSWORD={}\n",
        p.s(format!("AKIA{}", r.pick(UPPER32, 16))),
        p.s(r.pick(B64, 40)),
        p.s(format!("ghs_{}", r.pick(ALNUM, 36))),
        p.s(format!("sk_test_{}", r.pick(ALNUM, 30))),
        p.s(format!("hf_{}", r.pick(LETTERS, 34))),
        p.s(format!("SG.{}.{}", r.pick(URLSAFE, 22), r.pick(URLSAFE, 43))),
        p.jwt(&mut r),
        p.s(format!("sk-svcacct-{}", r.pick(URLSAFE, 60))),
        p.s(format!("glpat-{}", r.pick(URLSAFE, 22))),
        p.s(pw(&mut r)),
    );
    let codex_cmd = format!(
        "export GITHUB_TOKEN={} && curl -H 'Authorization: Bearer {}' -H \"x-api-key: {}\" && mysql mysql://root:{}@db/app",
        p.s(format!("gho_{}", r.pick(ALNUM, 36))),
        p.s(r.pick(ALNUM, 40)),
        p.s(format!("sk-ant-api03-{}AA", r.pick(URLSAFE, 93))),
        p.s(pw(&mut r)),
    );
    let codex_user = format!(
        "deploy with {} and {}, SECRET_KEY={} user token {} jwt {}\n{}",
        p.s(format!("AKIA{}", r.pick(UPPER32, 16))),
        p.s(format!("dckr_pat_{}", r.pick(URLSAFE, 27))),
        p.s(pw(&mut r)),
        p.s(format!("ghu_{}", r.pick(ALNUM, 36))),
        p.jwt(&mut r),
        p.pem(&mut r, "EC ", 2, true),
    );

    // The Claude Code session: line numbers are those of the real file.
    let mut claude = lines(&corpus.join(CLAUDE));
    append_text(&mut claude[15]["message"]["content"], &prompt);
    claude[17]["plantedNote"] = json!(note);
    claude[21]["message"]["content"][0]["input"]["command"] = json!(curl);
    set_tool_result(&mut claude[22], &env_dump);
    claude[22]["toolUseResult"]["stdout"] = json!(env_dump);
    claude[23]["message"]["content"][0]["input"]["content"] = json!(format!("{rsa}\n{service_account}\n{openssh}"));
    set_tool_result(&mut claude[38], &read_output);
    claude[38]["toolUseResult"]["file"]["content"] = json!(dot_env.join("\n"));
    assert_eq!(claude[48]["message"]["content"][0]["type"], "thinking");
    claude[48]["message"]["content"][0]["thinking"] = json!(thinking);
    // Exempt places hold text that looks like secrets and must come out unchanged.
    claude[48]["message"]["content"][0]["signature"] = json!(EXEMPT_SIGNATURE);
    claude[47]["message"]["content"] = json!([
        {"type": "text", "text": claude[47]["message"]["content"].as_str().unwrap()},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": EXEMPT_IMAGE}},
    ]);
    write_lines(&dir.join("claude.jsonl"), &claude);

    let mut codex = lines(&corpus.join(CODEX));
    assert_eq!(codex[1]["payload"]["type"], "user_message");
    codex[1]["payload"]["message"] = json!(codex_user);
    assert_eq!(codex[3]["payload"]["type"], "function_call");
    codex[3]["payload"]["arguments"] = json!(json!({"cmd": codex_cmd, "yield_time_ms": 1000}).to_string());
    assert_eq!(codex[4]["payload"]["type"], "function_call_output");
    codex[4]["payload"]["output"] = json!(codex_output);
    write_lines(&dir.join("rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"), &codex);
    p
}

/// Text in exempt fields that rules would otherwise match.
const EXEMPT_SIGNATURE: &str =
    "EqQBCkgIBhABGAIiQAKIAZZZZZZZZZZZZZZZZQ+eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl";
const EXEMPT_IMAGE: &str =
    "iVBORw0KGgoAAAANSUhEUgAKIAQRSTUVWXYZ2345ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaAAAASUVORK5CYII=";

fn lines(path: &Path) -> Vec<Value> {
    common::text(path).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn write_lines(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Adds `text` to a user message's content, a string or a list of blocks.
fn append_text(content: &mut Value, text: &str) {
    match content {
        Value::String(s) => s.push_str(&format!("\n\n{text}")),
        Value::Array(blocks) => blocks.push(json!({"type": "text", "text": text})),
        _ => panic!("unexpected content {content}"),
    }
}

fn set_tool_result(line: &mut Value, text: &str) {
    let block = &mut line["message"]["content"][0];
    assert_eq!(block["type"], "tool_result");
    block["content"] = json!(text);
}

fn convert(inputs: &Path, to: &str, out: &Path, extra: &[&str]) {
    let output = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "--to", to])
        .arg(inputs)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{to}: {}", String::from_utf8_lossy(&output.stderr));
}

/// Every string value in an Arrow IPC or Parquet file, nested columns included, one per line.
fn columnar_text(path: &Path, parquet: bool) -> String {
    let batches: Vec<RecordBatch> = if parquet {
        ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap()
            .map(Result::unwrap)
            .collect()
    } else {
        arrow_ipc::reader::FileReader::try_new(File::open(path).unwrap(), None).unwrap().map(Result::unwrap).collect()
    };
    let mut text = String::new();
    for batch in &batches {
        for column in batch.columns() {
            strings_of(column, &mut text);
        }
    }
    assert!(!text.is_empty());
    text
}

fn strings_of(array: &ArrayRef, out: &mut String) {
    use arrow_array::cast::AsArray;
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().flatten().for_each(|s| (out.push_str(s), out.push('\n')).1),
        DataType::LargeUtf8 => {
            array.as_string::<i64>().iter().flatten().for_each(|s| (out.push_str(s), out.push('\n')).1)
        }
        DataType::Utf8View => array.as_string_view().iter().flatten().for_each(|s| (out.push_str(s), out.push('\n')).1),
        DataType::Binary => {
            array.as_binary::<i32>().iter().flatten().for_each(|b| out.push_str(&String::from_utf8_lossy(b)))
        }
        DataType::LargeBinary => {
            array.as_binary::<i64>().iter().flatten().for_each(|b| out.push_str(&String::from_utf8_lossy(b)));
        }
        DataType::List(_) => strings_of(array.as_list::<i32>().values(), out),
        DataType::LargeList(_) => strings_of(array.as_list::<i64>().values(), out),
        DataType::Struct(_) => array.as_struct().columns().iter().for_each(|c| strings_of(c, out)),
        DataType::Dictionary(_, _) => strings_of(array.as_any_dictionary().values(), out),
        DataType::Map(_, _) => strings_of(&(Arc::new(array.as_map().entries().clone()) as ArrayRef), out),
        _ => {}
    }
}

/// The text of an output file in which a secret would show: the file's text, or every string
/// of a columnar file.
fn output_text(path: &Path, format: &str) -> String {
    match format {
        "parquet" => columnar_text(path, true),
        "arrow" => columnar_text(path, false),
        _ if path.is_dir() => {
            // A file per session: all of them, the dataset card last.
            let mut files: Vec<PathBuf> = Vec::new();
            let mut dirs = vec![path.to_owned()];
            while let Some(dir) = dirs.pop() {
                for entry in std::fs::read_dir(dir).unwrap().flatten() {
                    if entry.path().is_dir() { dirs.push(entry.path()) } else { files.push(entry.path()) }
                }
            }
            files.sort();
            files.iter().map(|f| common::text(f)).collect::<Vec<_>>().join("\n")
        }
        _ => common::text(path),
    }
}

fn shared() -> Option<PathBuf> {
    common::shared_corpus()
}

#[test]
fn planted_secrets_are_gone_from_every_output_format() {
    let Some(corpus) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    let plant = planted(&corpus, &inputs);
    assert!(plant.secrets.len() >= 60, "{} secrets", plant.secrets.len());

    // Without --redact every secret is there: the planting worked.
    let plain = dir.path().join("plain.jsonl");
    convert(&inputs, "unified", &plain, &[]);
    let plain_text = common::text(&plain);
    let missing: Vec<&String> = plant.secrets.iter().filter(|s| !plain_text.contains(s.as_str())).collect();
    assert!(missing.is_empty(), "planted but not converted: {missing:?}");

    for (format, ext) in FORMATS {
        let out = match *ext {
            "/" => dir.path().join(format!("redacted-{format}/")),
            ext => dir.path().join(format!("redacted.{ext}")),
        };
        let report = dir.path().join(format!("{format}.report.json"));
        convert(&inputs, format, &out, &["--redact", "--redact-report", report.to_str().unwrap()]);
        let text = output_text(&out, format);
        let left: Vec<&String> = plant.secrets.iter().filter(|s| text.contains(s.as_str())).collect();
        assert!(left.is_empty(), "{format}: {} of {} secrets left: {left:?}", left.len(), plant.secrets.len());
        assert!(text.contains("[REDACTED:"), "{format}: no placeholder");
        if *ext == "/" {
            assert!(text.contains("## Redaction\n\nagentlog --redact:"), "{format}: the dataset card says nothing");
        }
        // The exempt fields kept their look-alikes (transcripts show neither).
        if matches!(*format, "unified" | "interchange" | "parquet" | "arrow") {
            assert!(text.contains(EXEMPT_SIGNATURE), "{format}: signature changed");
            assert!(text.contains(EXEMPT_IMAGE), "{format}: image data changed");
        }
        let report_text = common::text(&report);
        let leaked: Vec<&String> = plant.secrets.iter().filter(|s| report_text.contains(s.as_str())).collect();
        assert!(leaked.is_empty(), "the report holds secrets: {leaked:?}");
        let report: Value = serde_json::from_str(&report_text).unwrap();
        assert!(report["redacted"].as_u64().unwrap() >= plant.secrets.len() as u64 - 16, "{report}");
    }
}

#[test]
fn redaction_changes_nothing_but_the_secrets() {
    let Some(corpus) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    planted(&corpus, &inputs);
    let plain = dir.path().join("plain.jsonl");
    let redacted = dir.path().join("redacted.jsonl");
    let report = dir.path().join("report.json");
    convert(&inputs, "unified", &plain, &[]);
    convert(&inputs, "unified", &redacted, &["--redact", "--redact-report", report.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&common::text(&report)).unwrap();
    let reported: std::collections::BTreeSet<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["event_id"].as_str().unwrap().to_owned(), f["path"].as_str().unwrap().to_owned()))
        .collect();
    let plain = common::text(&plain);
    let redacted = common::text(&redacted);
    assert_eq!(plain.lines().count(), redacted.lines().count());
    let mut changed = std::collections::BTreeSet::new();
    for (a, b) in plain.lines().zip(redacted.lines()) {
        let (a, b): (Value, Value) = (serde_json::from_str(a).unwrap(), serde_json::from_str(b).unwrap());
        let id = a["id"].as_str().unwrap().to_owned();
        diff(&a, &b, &mut String::new(), &mut |path| {
            changed.insert((id.clone(), path.to_owned()));
        });
    }
    assert!(!changed.is_empty());
    // Every changed string is a reported finding, and every finding changed its string.
    assert_eq!(changed, reported);
}

/// Calls `found` with the JSON Pointer of every string that differs between `a` and `b`, and
/// fails on any other difference; JSON text inside strings (a Codex call's arguments) is not
/// looked into.
fn diff(a: &Value, b: &Value, path: &mut String, found: &mut dyn FnMut(&str)) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "keys at {path}");
            for (k, v) in x {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                diff(v, &y[k], path, found);
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "length at {path}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                diff(v, w, path, found);
                path.truncate(len);
            }
        }
        (Value::String(x), Value::String(y)) if x != y => {
            assert!(y.contains("[REDACTED:"), "{path} changed without a placeholder");
            found(path);
        }
        _ => assert_eq!(a, b, "at {path}"),
    }
}

#[test]
fn the_real_corpus_is_changed_only_where_the_report_says() {
    let Some(corpus) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.jsonl");
    let redacted = dir.path().join("redacted.jsonl");
    let report = dir.path().join("report.json");
    convert(&corpus, "unified", &plain, &[]);
    convert(&corpus, "unified", &redacted, &["--redact", "--redact-report", report.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&common::text(&report)).unwrap();
    let plain = common::text(&plain);
    let redacted = common::text(&redacted);
    let mut changed = 0;
    for (a, b) in plain.lines().zip(redacted.lines()) {
        if a != b {
            let (a, b): (Value, Value) = (serde_json::from_str(a).unwrap(), serde_json::from_str(b).unwrap());
            diff(&a, &b, &mut String::new(), &mut |_| changed += 1);
        }
    }
    assert_eq!(changed, report["findings"].as_array().unwrap().len());
    // The corpus holds no real credential: what the rules find there are false positives,
    // kept few (listed with examples in the documentation of the rules).
    assert!(report["redacted"].as_u64().unwrap() <= 5, "{}", report["by_rule"]);
}

#[test]
fn a_redaction_that_cannot_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let short_key = dir.path().join("key");
    std::fs::write(&short_key, "short").unwrap();
    let output = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "--redact", "--pseudonymize", "user", "--redact-key"])
        .arg(&short_key)
        .arg(common::own_corpus().join("claude"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!out.exists());
    // A report that cannot be created (its folder is a file) stops the run before the output
    // is written.
    let output = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", "--redact", "--redact-report"])
        .arg(short_key.join("report.json"))
        .arg(common::own_corpus().join("claude"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(!out.exists());
}
