//! OpenCode and Kilo CLI: sessions read from their SQLite databases, one session per input,
//! and from `opencode export` documents.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agentlog::model::{Event, MetaType, Payload};
use serde_json::Value;

fn agentlog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentlog")).args(args).output().expect("agentlog runs")
}

fn quirks() -> PathBuf {
    common::own_corpus().join("opencode/opencode-quirks.db")
}

/// The events of every session of `db`, read by the library as a run reads them.
fn events(db: &Path) -> Vec<Event> {
    let found = agentlog::pipeline::events(db).expect("the database is read");
    found
        .filter_map(|found| match found {
            agentlog::pipeline::Found::Event(e) => Some(e),
            agentlog::pipeline::Found::Diagnostic(_) => None,
            agentlog::pipeline::Found::Failed(e) => panic!("{e}"),
        })
        .collect()
}

/// Rows of `table` in the database, counted without agentlog.
fn rows(db: &Path, sql: &str) -> u64 {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as u64
}

/// `--report` of a conversion of `inputs`.
fn report(inputs: &[&str]) -> (Value, Output) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let mut args = vec!["convert", "-o"];
    let out = dir.path().join("out.jsonl");
    args.push(out.to_str().unwrap());
    args.extend(["--report", path.to_str().unwrap()]);
    args.extend(inputs);
    let output = agentlog(&args);
    (serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap(), output)
}

#[test]
fn every_row_of_a_session_is_an_event_or_one_diagnostic() {
    let db = quirks();
    let (report, output) = report(&[db.to_str().unwrap()]);
    // One warning, for the message row whose data is not JSON: exit 1, nothing failed.
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "one input per session");
    for file in files {
        let name = file["file"].as_str().unwrap();
        let (path, session) = name.split_once('#').expect("named <database>#<session>");
        assert_eq!(path, db.to_str().unwrap());
        let count = |table: &str| rows(&db, &format!("SELECT count(*) FROM {table} WHERE session_id = '{session}'"));
        let expected = 1 + count("message") + count("part") + count("todo");
        assert_eq!(file["lines"], expected, "{name}: every row read");
    }
    let diagnostics = &files[0]["diagnostics"];
    assert_eq!(diagnostics.as_array().unwrap().len(), 1);
    assert_eq!(diagnostics[0]["line"], rows(&db, "SELECT rowid FROM message WHERE id = 'msg_q004'"));
    assert!(diagnostics[0]["message"].as_str().unwrap().contains("table `message`, row `msg_q004`"));
    // The part under the damaged message and the part whose message is gone are kept.
    let texts: Vec<String> = events(&db)
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) => Some(m.text.clone()),
            _ => None,
        })
        .collect();
    assert!(texts.contains(&"Written under a damaged message.".to_owned()));
    assert!(texts.contains(&"Left by a removed message.".to_owned()));
}

#[test]
fn usage_is_counted_once_per_response_at_its_step_finish_or_else_its_message() {
    let events = events(&quirks());
    let usages = common::usages(&events);
    // make_v1.py: response 1 counted at its step-finish (its message's own tokens are the
    // same counts again), response 2 at its message (no step-finish), the subagent's one.
    let totals: Vec<(&str, u64, u64, u64, u64, u64)> = usages
        .iter()
        .map(|(e, u)| {
            let at = e.source.record_type.as_deref().unwrap();
            (
                at,
                u.input_tokens.unwrap(),
                u.cache_read_tokens.unwrap(),
                u.cache_write_tokens.unwrap(),
                u.output_tokens.unwrap(),
                u.reasoning_tokens.unwrap(),
            )
        })
        .collect();
    assert_eq!(
        totals,
        [
            ("part/step-finish", 1200, 300, 40, 100, 20),
            ("message/assistant", 1400, 500, 0, 60, 0),
            ("part/step-finish", 900, 0, 0, 30, 0),
        ]
    );
    let snapshots = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::UsageSnapshot)).count();
    assert_eq!(snapshots, 2, "the messages whose step-finish was counted");
}

#[test]
fn a_subagent_session_names_its_parent_and_the_call_that_spawned_it() {
    let events = events(&quirks());
    let child: Vec<&Event> = events.iter().filter(|e| e.session_id == "ses_synthchild001").collect();
    assert_eq!(child.len(), 8);
    for e in &child {
        assert_eq!(e.parent_session_id.as_deref(), Some("ses_synthroot0001"));
        assert_eq!(e.parent_call_id.as_deref(), Some("call_q3"));
        assert!(e.is_sidechain);
    }
    assert!(events.iter().filter(|e| e.session_id == "ses_synthroot0001").all(|e| !e.is_sidechain));
}

#[test]
fn tool_parts_give_calls_and_outputs_with_exit_codes() {
    let events = events(&quirks());
    type Outcome<'e> = (Option<&'e str>, Option<i64>, Option<bool>, Option<bool>);
    let outputs: Vec<Outcome> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some((o.call_id.as_deref(), o.exit_code, o.is_error, o.failed)),
            _ => None,
        })
        .collect();
    assert_eq!(
        outputs,
        [
            (Some("call_q1"), Some(2), Some(false), Some(true)),
            (Some("call_q2"), None, Some(true), Some(true)),
            (Some("call_q3"), None, Some(false), Some(false)),
        ]
    );
    // The call still running has no output yet.
    let calls = events.iter().filter(|e| matches!(&e.payload, Payload::ToolCall(_))).count();
    assert_eq!(calls, 4);
    let unknown = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Unknown)).count();
    assert_eq!(unknown, 1, "the part of an unknown type, kept whole");
}

#[test]
fn event_ids_follow_the_rows_not_the_file_or_the_rowids() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("opencode-copy.db");
    // VACUUM INTO renumbers rows and makes another file.
    let c = rusqlite::Connection::open(quirks()).unwrap();
    c.execute("VACUUM INTO ?1", [copy.to_str().unwrap()]).unwrap();
    let ids = |db: &Path| events(db).into_iter().map(|e| e.id).collect::<Vec<_>>();
    let first = ids(&quirks());
    assert_eq!(first.len(), 31);
    assert_eq!(first, ids(&copy));
    let unique: std::collections::HashSet<&String> = first.iter().collect();
    assert_eq!(unique.len(), first.len());
}

#[test]
fn the_tables_of_opencode_2_read_as_their_source_describes() {
    let db = common::own_corpus().join("opencode/opencode-2.0-synthetic.db");
    let expected: Value = serde_json::from_slice(
        &std::fs::read(common::own_corpus().join("opencode/opencode-2.0-synthetic.expected.json")).unwrap(),
    )
    .unwrap();
    let events = events(&db);
    let rows = expected["rows_in_seq_order"].as_array().unwrap();
    let prompt = rows[0]["prompt_text"].as_str().unwrap();
    assert!(events.iter().any(|e| matches!(&e.payload, Payload::Message(m) if m.text == prompt)));
    let output = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some(o),
            _ => None,
        })
        .expect("the shell call's output");
    assert_eq!(output.exit_code, Some(2));
    assert_eq!(output.failed, Some(true));
    let usages = common::usages(&events);
    let served: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r["type"] == "assistant")
        .map(|r| {
            let t = &r["usage"];
            let out = t["output"].as_u64().unwrap() + t["reasoning"].as_u64().unwrap();
            (t["input"].as_u64().unwrap(), out)
        })
        .collect();
    let read: Vec<(u64, u64)> =
        usages.iter().map(|(_, u)| (u.input_tokens.unwrap(), u.output_tokens.unwrap())).collect();
    assert_eq!(read, served);
}

#[test]
fn an_export_document_reads_with_the_same_usage_as_an_independent_count() {
    let Some(other) = common::other_agents() else { return };
    let export = other.join("opencode/reglint-entire/32/9c04ec69fc/0/full.jsonl");
    let (report, output) = report(&[export.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(report["totals"]["warnings"], 0);
    // Entire CLI's own count of the session, in the metadata beside it.
    let metadata: Value =
        serde_json::from_slice(&std::fs::read(export.with_file_name("metadata.json")).unwrap()).unwrap();
    let counted = &metadata["token_usage"];
    let events = events(&export);
    let usages = common::usages(&events);
    let sum = |f: fn(&agentlog::model::Usage) -> u64| usages.iter().map(|(_, u)| f(u)).sum::<u64>();
    assert_eq!(usages.len() as u64, counted["api_call_count"].as_u64().unwrap());
    assert_eq!(sum(|u| u.input_tokens.unwrap()), counted["input_tokens"].as_u64().unwrap());
    assert_eq!(sum(|u| u.cache_read_tokens.unwrap()), counted["cache_read_tokens"].as_u64().unwrap());
    // Entire sums OpenCode's own `output`, which in 1.2.16 includes reasoning (each record's
    // `total` says so), as agentlog's output does.
    assert!(sum(|u| u.reasoning_tokens.unwrap()) > 0, "the sample has reasoning to tell by");
    assert_eq!(sum(|u| u.output_tokens.unwrap()), counted["output_tokens"].as_u64().unwrap());
}

#[test]
fn a_database_of_unknown_tables_or_damaged_is_an_error_and_other_inputs_still_convert() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = dir.path().join("other.db");
    rusqlite::Connection::open(&unknown).unwrap().execute_batch("CREATE TABLE notes(id, body)").unwrap();
    let partial = dir.path().join("opencode.db");
    rusqlite::Connection::open(&partial)
        .unwrap()
        .execute_batch("CREATE TABLE session(id); CREATE TABLE message(id); CREATE TABLE part(id);")
        .unwrap();
    let (report, output) = report(&[unknown.to_str().unwrap(), partial.to_str().unwrap(), quirks().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("cannot tell which agent wrote") && stderr.contains("other.db"), "{stderr}");
    assert!(stderr.contains("unknown schema: table `session` has no column `parent_id`"), "{stderr}");
    assert_eq!(report["totals"]["sessions"], 2, "the good database still converts");
}

#[test]
fn incremental_runs_reread_only_the_sessions_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(quirks(), &db).unwrap();
    let out = dir.path().join("out/");
    let run = || {
        let output = agentlog(&["convert", "--incremental", "-o", out.to_str().unwrap(), db.to_str().unwrap()]);
        String::from_utf8_lossy(&output.stderr).lines().last().unwrap_or_default().to_owned()
    };
    assert!(run().contains("agentlog: 2 files (0 unchanged, skipped), 2 sessions"));
    assert!(run().contains("agentlog: 0 files (2 unchanged, skipped), 0 sessions"));
    // One more message lands in the subagent's session.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "INSERT INTO message VALUES ('msg_q103', 'ses_synthchild001', 1795000006000, 1795000006000,
            '{\"role\":\"user\",\"time\":{\"created\":1795000006000}}');
         INSERT INTO part VALUES ('prt_q103a', 'msg_q103', 'ses_synthchild001', 1795000006000, 1795000006000,
            '{\"type\":\"text\",\"text\":\"And now?\"}');",
    )
    .unwrap();
    assert!(run().contains("agentlog: 1 files (1 unchanged, skipped), 1 sessions"));
    let child = std::fs::read_to_string(out.join("opencode/opencode-ses_synthchild001.jsonl")).unwrap();
    assert!(child.contains("And now?"));
}

#[test]
fn a_database_being_written_reads_as_consistent_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    let c = rusqlite::Connection::open(quirks()).unwrap();
    c.execute("VACUUM INTO ?1", [db.to_str().unwrap()]).unwrap();
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("PRAGMA journal_mode = WAL").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writing = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            // Each transaction adds a message and its part together, as the agent does.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                let t = 1795000100000 + n;
                writer
                    .execute_batch(&format!(
                        "BEGIN;
                         INSERT INTO message VALUES ('msg_w{n:06}', 'ses_synthroot0001', {t}, {t},
                            '{{\"role\":\"user\",\"time\":{{\"created\":{t}}}}}');
                         INSERT INTO part VALUES ('prt_w{n:06}', 'msg_w{n:06}', 'ses_synthroot0001', {t}, {t},
                            '{{\"type\":\"text\",\"text\":\"written {n}\"}}');
                         COMMIT;"
                    ))
                    .expect("the writer is never held up");
            }
            n
        })
    };
    for _ in 0..20 {
        let output = agentlog(&["convert", db.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
        let lines: Vec<Value> = output
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        let turns = lines.iter().filter(|e| e["payload"]["meta_type"] == "turn_start").count();
        let written =
            lines.iter().filter(|e| e["payload"]["text"].as_str().is_some_and(|t| t.starts_with("written "))).count();
        // Every message read came with its part: the session is one snapshot. (Each session
        // of the sample has one prompt of its own.)
        assert_eq!(turns, written + 2);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writing.join().unwrap() > 0);
}

#[test]
fn listing_names_each_session_of_a_database() {
    let output = agentlog(&["ls", quirks().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("opencode\tses_synthroot0001\t"), "{text}");
    assert!(lines[0].ends_with(&format!("{}#ses_synthroot0001\tsession", quirks().display())), "{text}");
    assert!(lines[1].contains("\t1.18.33\t"), "{text}");
}

#[test]
fn the_archive_keeps_each_session_of_a_database_and_rereads_only_a_changed_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(quirks(), &db).unwrap();
    let archive = dir.path().join("archive");
    let run = || {
        let output = agentlog(&["archive", archive.to_str().unwrap(), db.to_str().unwrap()]);
        String::from_utf8_lossy(&output.stderr).lines().last().unwrap_or_default().to_owned()
    };
    assert!(run().contains("2 files (0 unchanged, skipped)"));
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE session SET title = 'Renamed', time_updated = time_updated + 1 WHERE id = 'ses_synthroot0001'",
        [],
    )
    .unwrap();
    // A session the agent deleted stays in the archive.
    c.execute_batch("DELETE FROM part WHERE session_id = 'ses_synthchild001'; DELETE FROM message WHERE session_id = 'ses_synthchild001'; DELETE FROM session WHERE id = 'ses_synthchild001';").unwrap();
    assert!(run().contains("1 files (0 unchanged, skipped)"));
    let sessions = archive.join("sessions/opencode");
    assert!(std::fs::read_to_string(sessions.join("opencode-ses_synthroot0001.jsonl")).unwrap().contains("Renamed"));
    assert!(sessions.join("opencode-ses_synthchild001.jsonl").is_file());
}

/// The usage counts each model response of a recorded run was served with (fresh input, cache
/// reads, cache writes, output), from the test server's ledger; the title requests, whose usage
/// OpenCode keeps nowhere, left out.
fn served(ledger: &Path) -> Vec<(u64, u64, u64, u64)> {
    let ledger: Value = serde_json::from_slice(&std::fs::read(ledger).unwrap()).unwrap();
    let mut served: Vec<(u64, u64, u64, u64)> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["channel"] != "side:title" && e["response"]["status"] == 200)
        .map(|e| {
            let u = &e["response"]["usage"];
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            if u.get("prompt_tokens").is_some() {
                let cached = n(&u["prompt_tokens_details"]["cached_tokens"]);
                (n(&u["prompt_tokens"]) - cached, cached, 0, n(&u["completion_tokens"]))
            } else {
                let (read, write) = (n(&u["cache_read_input_tokens"]), n(&u["cache_creation_input_tokens"]));
                (n(&u["input_tokens"]), read, write, n(&u["output_tokens"]))
            }
        })
        .collect();
    served.sort_unstable();
    served
}

#[test]
fn the_json_files_of_versions_before_the_database_read_with_the_usage_served() {
    let recorded = common::own_corpus().join("recorded/opencode");
    let mut runs = 0;
    for version in ["1.1.65", "1.0.185", "0.5.29"] {
        for run in std::fs::read_dir(recorded.join(version)).unwrap().map(|e| e.unwrap().path()) {
            if !run.join("ledger.json").is_file() {
                continue;
            }
            runs += 1;
            let (report, output) = report(&[run.to_str().unwrap()]);
            assert_eq!(output.status.code(), Some(0), "{}: {}", run.display(), String::from_utf8_lossy(&output.stderr));
            // Every file of each session is read: its info, messages and parts.
            let json_files = walkdir::WalkDir::new(&run)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| {
                    let p = e.path().to_string_lossy();
                    p.ends_with(".json") && ["/session/", "/message/", "/part/"].iter().any(|d| p.contains(d))
                })
                .count() as u64;
            let lines: u64 = report["files"].as_array().unwrap().iter().map(|f| f["lines"].as_u64().unwrap()).sum();
            assert_eq!(lines, json_files, "{}", run.display());
            let events = events(&run);
            let mut read: Vec<(u64, u64, u64, u64)> = common::usages(&events)
                .iter()
                .map(|(_, u)| {
                    let n = |v: Option<u64>| v.unwrap();
                    (n(u.input_tokens), n(u.cache_read_tokens), n(u.cache_write_tokens), n(u.output_tokens))
                })
                .collect();
            read.sort_unstable();
            assert_eq!(read, served(&run.join("ledger.json")), "{}", run.display());
        }
    }
    assert_eq!(runs, 7);
}

#[test]
fn exports_of_both_generations_read_with_the_usage_served() {
    let recorded = common::own_corpus().join("recorded/opencode");
    let cases = [
        (vec!["1.18.33/export/tools.json"], "1.18.33/export/tools.ledger.json"),
        (
            vec!["1.18.33/export/subagent.json", "1.18.33/export/subagent-child.json"],
            "1.18.33/export/subagent.ledger.json",
        ),
        (vec!["1.1.65/export/tools.json"], "1.1.65/tools/ledger.json"),
        (vec!["1.1.65/export/subagent.json", "1.1.65/export/subagent-child.json"], "1.1.65/subagent/ledger.json"),
    ];
    for (exports, ledger) in cases {
        let mut read = Vec::new();
        for export in &exports {
            let path = recorded.join(export);
            let (report, output) = report(&[path.to_str().unwrap()]);
            assert_eq!(output.status.code(), Some(0), "{export}: {}", String::from_utf8_lossy(&output.stderr));
            assert_eq!(report["totals"]["sessions"], 1, "{export}");
            let events = events(&path);
            assert!(events.iter().all(|e| e.agent == agentlog::model::Agent::OpenCode));
            read.extend(common::usages(&events).iter().map(|(_, u)| {
                let n = |v: Option<u64>| v.unwrap();
                (n(u.input_tokens), n(u.cache_read_tokens), n(u.cache_write_tokens), n(u.output_tokens))
            }));
        }
        read.sort_unstable();
        assert_eq!(read, served(&recorded.join(ledger)), "{exports:?}");
    }
}

#[test]
fn what_an_export_holds_besides_messages_and_parts_is_kept_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export.json");
    let document = serde_json::json!({
        "info": {"id": "ses_x1", "version": "1.18.33", "title": "t", "time": {"created": 1}},
        "messages": [
            {"info": {"id": "msg_x1", "role": "user", "time": {"created": 2}},
             "parts": [{"id": "prt_x1", "type": "text", "text": "hello"}, "a stray string"],
             "pinned": true},
            42
        ]
    });
    std::fs::write(&path, serde_json::to_string_pretty(&document).unwrap()).unwrap();
    let events = events(&path);
    let unknown: Vec<String> = events
        .iter()
        .filter(|e| common::meta_type(e) == Some(MetaType::Unknown))
        .map(|e| match &e.payload {
            Payload::Meta(m) => m.data.as_ref().unwrap().get().to_owned(),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(unknown, [r#"{"part":"a stray string"}"#, r#"{"message":{"pinned":true}}"#, r#"{"message":42}"#]);
    assert!(events.iter().any(|e| matches!(&e.payload, Payload::Message(m) if m.text == "hello")));
}

#[test]
fn content_of_a_2_0_row_that_is_not_an_item_is_kept_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    std::fs::copy(common::own_corpus().join("opencode/opencode-2.0-synthetic.db"), &db).unwrap();
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "INSERT INTO session_message SELECT 'msg_stray', session_id, 'assistant', 99, time_created, time_updated,
            '{\"time\":{\"created\":1790000009000},\"content\":[\"a stray string\",{\"type\":\"text\",\"text\":\"fine\"}]}'
         FROM session_message LIMIT 1",
        [],
    )
    .unwrap();
    drop(c);
    let events = events(&db);
    let stray: Vec<&Event> = events.iter().filter(|e| e.record_id.as_deref() == Some("msg_stray")).collect();
    let kinds: Vec<Option<MetaType>> = stray.iter().map(|e| common::meta_type(e)).collect();
    // The stray string, the text, and the row's own event.
    assert_eq!(kinds, [Some(MetaType::Unknown), None, Some(MetaType::System)]);
}
