//! The Crush reader on `corpus/crush/crush.db`, a synthetic database written by
//! `corpus/crush/make.py` as Crush's source writes its rows. Expected values come from the
//! database itself, read here with plain SQL and the parts parsed as plain JSON, never from
//! agentlog.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use agentlog::model::{Event, Kind, MetaType, Part, Payload, Role};
use agentlog::pipeline::InputSpec;
use agentlog::read::store::{Db, Stored};
use agentlog::read::{ReadReport, Shared, StoredInput};
use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

use common::meta_type;

const MAIN: &str = "6f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f";
const CHILD: &str = "a0000000-0000-4000-8000-000000000006$$call_agent_1";
const TITLE: &str = "title-6f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f";
const CANCELED: &str = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

fn database() -> PathBuf {
    common::own_corpus().join("crush/crush.db")
}

/// Every session of the database at `path`, listed as `convert` lists them and read each on its
/// own, in order.
fn read_all(path: &Path) -> Vec<(Stored, Vec<Event>, ReadReport)> {
    let spec = InputSpec::File(path.display().to_string());
    let (groups, errors) = agentlog::pipeline::plan(&[spec], None, &|_| None, &Default::default());
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    let db = Db::open(path.to_str().unwrap()).expect("the database opens");
    let mut read = Vec::new();
    for item in groups.iter().flat_map(|g| &g.items) {
        let InputSpec::Stored(stored) = &item.spec else { panic!("{}: not a session", item.spec.name()) };
        assert_eq!(item.reader.name(), "crush", "{}", stored.name);
        let mut events = Vec::new();
        let input = StoredInput { stored, db: &db, shared: &mut Shared::default() };
        let report = item
            .reader
            .read_stored(input, &mut |e| {
                events.push(e);
                Ok(())
            })
            .expect("reading a database into a Vec does not fail");
        read.push((stored.clone(), events, report));
    }
    read
}

fn events_of(session: &str) -> Vec<Event> {
    let all = read_all(&database());
    all.into_iter().find(|(s, _, _)| s.session == session).map(|(_, events, _)| events).unwrap()
}

/// The database's rows, read with plain SQL: `(session, rowid, id, role, parts)` of every
/// message, in rowid order.
fn messages() -> Vec<(String, i64, String, String, String)> {
    let db = rusqlite::Connection::open_with_flags(database(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut statement = db.prepare("SELECT session_id, rowid, id, role, parts FROM messages ORDER BY rowid").unwrap();
    statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn sessions() -> Vec<(String, Option<String>, String, i64, i64, f64)> {
    let db = rusqlite::Connection::open_with_flags(database(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut statement = db
        .prepare("SELECT id, parent_session_id, title, prompt_tokens, completion_tokens, cost FROM sessions")
        .unwrap();
    statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The parts of every message whose `parts` is a JSON array, read as plain JSON.
fn parts() -> Vec<Value> {
    messages()
        .iter()
        .filter_map(|(_, _, _, _, parts)| serde_json::from_str::<Vec<Value>>(parts).ok())
        .flatten()
        .collect()
}

fn data(e: &Event) -> Value {
    match &e.payload {
        Payload::Meta(m) => m.data.as_ref().map(|d| d.to_value()).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

#[test]
fn every_row_becomes_events_or_one_diagnostic_naming_it() {
    let read = read_all(&database());
    let names: Vec<&str> = read.iter().map(|(s, _, _)| s.session.as_str()).collect();
    assert_eq!(names, [MAIN, TITLE, CHILD, CANCELED], "sessions by creation time");
    let (mut lines, mut diagnostics) = (0, Vec::new());
    for (stored, events, report) in &read {
        assert_eq!(report.lines, report.lines_mapped + report.lines_diagnosed, "{}", stored.name);
        assert_eq!(report.events, events.len() as u64, "{}", stored.name);
        assert_eq!(report.diagnostics.len() as u64, report.lines_diagnosed, "{}", stored.name);
        lines += report.lines;
        diagnostics.extend(report.diagnostics.iter().map(|d| (stored.name.clone(), d.to_record())));
        // Every row mapped gives at least one event, which names the row.
        let rows: HashSet<&str> = events.iter().filter_map(|e| e.record_id.as_deref()).collect();
        assert_eq!(rows.len() as u64, report.lines_mapped, "{}", stored.name);
    }
    // One line per session row and per message row.
    assert_eq!(lines, (sessions().len() + messages().len()) as u64);
    // The one row whose parts are not JSON, named by its session and rowid.
    let bad: Vec<_> = messages().into_iter().filter(|m| serde_json::from_str::<Value>(&m.4).is_err()).collect();
    assert_eq!(bad.len(), 1);
    let (session, rowid, id, _, _) = &bad[0];
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let (name, diagnostic) = &diagnostics[0];
    assert_eq!(name, &format!("{}#{session}", database().display()));
    assert_eq!(diagnostic.file, *name);
    assert_eq!(diagnostic.line, Some(*rowid as u64));
    assert!(diagnostic.message.contains(&format!("(table `messages`, row `{id}`)")), "{}", diagnostic.message);
}

#[test]
fn each_part_gives_the_events_of_its_kind() {
    let events: Vec<Event> = read_all(&database()).into_iter().flat_map(|(_, events, _)| events).collect();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &events {
        *kinds.entry(e.kind().as_str()).or_default() += 1;
    }
    let parts = parts();
    let of = |types: &[&str]| parts.iter().filter(|p| types.contains(&p["type"].as_str().unwrap())).count();
    let sessions = sessions();
    let titled = sessions
        .iter()
        .filter(|s| !["Untitled Session", "New Agent Session", "Generate a title"].contains(&s.2.as_str()))
        .count();
    let with_todos = 1;
    // Text and attachments next to each other in a message are one message.
    let content = ["text", "image_url", "binary"];
    let runs: usize = messages()
        .iter()
        .filter_map(|m| serde_json::from_str::<Vec<Value>>(&m.4).ok())
        .map(|parts| {
            let is_content: Vec<bool> = parts.iter().map(|p| content.contains(&p["type"].as_str().unwrap())).collect();
            (0..is_content.len()).filter(|&i| is_content[i] && (i == 0 || !is_content[i - 1])).count()
        })
        .sum();
    assert!(runs < of(&content), "the sample has a message with an attachment");
    let expected = BTreeMap::from([
        ("message", runs),
        ("reasoning", of(&["reasoning"])),
        ("tool_call", of(&["tool_call", "shell_command"])),
        ("tool_output", of(&["tool_result", "shell_command"])),
        // Sessions, their titles and todo lists, finish parts and the part of an unknown type.
        ("meta", sessions.len() + titled + with_todos + of(&["finish"]) + of(&["citation"])),
    ]);
    assert_eq!(kinds, expected);
    // What a finish part says is kept, and its reason chooses the meta type.
    let finishes: Vec<(MetaType, String)> = events
        .iter()
        .filter(|e| e.source.record_type.as_deref() == Some("part/finish"))
        .map(|e| (meta_type(e).unwrap(), data(e)["reason"].as_str().unwrap().to_owned()))
        .collect();
    for (meta, reason) in &finishes {
        let expected = match reason.as_str() {
            "canceled" => MetaType::Interrupt,
            "end_turn" => MetaType::TurnEnd,
            _ => MetaType::Progress,
        };
        assert_eq!(*meta, expected, "{reason}");
    }
    assert!(finishes.iter().any(|(m, _)| *m == MetaType::Interrupt));
    // The first prompt and its image.
    let prompt = events.iter().find(|e| e.kind() == Kind::Message).unwrap();
    let Payload::Message(m) = &prompt.payload else { unreachable!() };
    let image = parts.iter().find(|p| p["type"] == "binary").unwrap();
    assert_eq!(m.role, Role::User);
    assert_eq!(
        m.parts[1],
        Part::Image {
            media_type: image["data"]["MIMEType"].as_str().map(str::to_owned),
            data: image["data"]["Data"].as_str().map(str::to_owned),
            url: None
        }
    );
    assert_eq!(prompt.extra.as_ref().unwrap().to_value()["parts"][1]["Path"], image["data"]["Path"]);
    let unknown = events.iter().find(|e| meta_type(e) == Some(MetaType::Unknown)).unwrap();
    assert_eq!(data(unknown)["data"]["url"], "https://example.com/go-testing", "the unknown part kept whole");
}

#[test]
fn a_bash_call_pairs_with_its_output_whose_exit_code_fails_it() {
    let events = events_of(MAIN);
    let call = |id: &str| {
        events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolCall(c) if c.call_id.as_deref() == Some(id) => Some((e, c)),
                _ => None,
            })
            .unwrap()
    };
    let output = |id: &str| {
        events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::ToolOutput(o) if o.call_id.as_deref() == Some(id) => Some((e, o)),
                _ => None,
            })
            .unwrap()
    };
    let (call_event, bash) = call("call_bash_1");
    let (output_event, result) = output("call_bash_1");
    assert!(call_event.seq < output_event.seq);
    assert_eq!(bash.name, "bash");
    let input = bash.input.as_ref().unwrap().to_value();
    assert_eq!(input["command"], "make test", "the input's JSON string, parsed");
    assert_eq!(result.name.as_deref(), Some("bash"));
    assert!(result.text.contains("\nExit code 2\n"));
    assert_eq!((result.is_error, result.exit_code, result.failed), (Some(false), Some(2), Some(true)));
    assert_eq!(result.duration_ms, Some(1750), "from the tool's own start and end times");
    assert_eq!(output_event.response_id, None);
    assert_eq!(call_event.response_id.as_deref(), Some("a0000000-0000-4000-8000-000000000002"));
    // A tool that reported an error fails without an exit code.
    let (_, view) = output("call_view_1");
    assert_eq!((view.is_error, view.exit_code, view.failed), (Some(true), None, Some(true)));
    // The user's own `!command`: a call and its output, with its exit code.
    let shell: Vec<&Event> =
        events.iter().filter(|e| e.source.record_type.as_deref() == Some("part/shell_command")).collect();
    match (&shell[0].payload, &shell[1].payload) {
        (Payload::ToolCall(c), Payload::ToolOutput(o)) => {
            assert_eq!(c.call_id, o.call_id);
            assert_eq!(c.input.as_ref().unwrap().to_value()["command"], "git status --short");
            assert_eq!((o.exit_code, o.failed), (Some(0), Some(false)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_sub_agent_session_names_its_parent_and_the_call_that_ran_it() {
    let child = events_of(CHILD);
    assert!(!child.is_empty());
    for e in &child {
        assert_eq!(e.parent_session_id.as_deref(), Some(MAIN));
        assert_eq!(e.parent_call_id.as_deref(), Some("call_agent_1"));
        assert_eq!(e.agent_id.as_deref(), Some(CHILD));
        assert!(e.is_sidechain);
    }
    let extra = child[0].extra.as_ref().unwrap().to_value();
    assert_eq!(extra["session_kind"], "tool");
    assert_eq!(extra["parent_message_id"], "a0000000-0000-4000-8000-000000000006");
    // The call is in the parent, by the id the child's own id ends with.
    let parent = events_of(MAIN);
    assert!(parent.iter().any(|e| matches!(&e.payload,
        Payload::ToolCall(c) if c.call_id.as_deref() == Some("call_agent_1") && c.name == "agent")));
    assert!(parent.iter().all(|e| !e.is_sidechain && e.parent_session_id.is_none()));
    // A title session is a child too, of no call; its prompt is Crush's, not the user's.
    let title = events_of(TITLE);
    for e in &title {
        assert_eq!((e.parent_session_id.as_deref(), e.parent_call_id.as_deref()), (Some(MAIN), None));
        assert!(e.is_sidechain);
    }
    assert_eq!(title[0].extra.as_ref().unwrap().to_value()["session_kind"], "title");
    let prompt = title.iter().find(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User)).unwrap();
    assert!(prompt.injected);
}

#[test]
fn no_usage_is_made_up_and_the_sessions_own_figures_stay_in_its_start() {
    let read = read_all(&database());
    for (stored, events, _) in &read {
        for e in events {
            if let Payload::Meta(m) = &e.payload {
                assert!(m.usage.is_none(), "{} line {}", stored.name, e.source.line);
                assert!(!matches!(m.meta_type, MetaType::Usage | MetaType::UsageSnapshot));
            }
        }
        let start = &events[0];
        assert_eq!(meta_type(start), Some(MetaType::SessionStart));
        let (_, _, _, prompt, completion, cost) = sessions().into_iter().find(|s| s.0 == stored.session).unwrap();
        let data = data(start);
        assert_eq!(
            (data["prompt_tokens"].as_i64(), data["completion_tokens"].as_i64()),
            (Some(prompt), Some(completion))
        );
        assert_eq!(data["cost"].as_f64(), Some(cost));
    }
    // Titles: the one the model wrote, not the placeholders.
    let titles: Vec<String> = read
        .iter()
        .flat_map(|(_, events, _)| events)
        .filter(|e| meta_type(e) == Some(MetaType::Title))
        .map(|e| data(e)["title"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(titles, ["Fix the failing build"]);
}

#[test]
fn event_ids_are_the_same_on_every_read_and_wherever_the_database_lies() {
    let first = read_all(&database());
    let second = read_all(&database());
    let events = |read: &[(Stored, Vec<Event>, ReadReport)]| -> Vec<Event> {
        read.iter().flat_map(|(_, events, _)| events.clone()).collect()
    };
    assert!(events(&first) == events(&second), "two reads differ");
    let ids: Vec<String> = events(&first).iter().map(|e| e.id.clone()).collect();
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "ids are unique");
    for (_, events, _) in &first {
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.seq, i as u64);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("elsewhere.db");
    std::fs::copy(database(), &copy).unwrap();
    let moved: Vec<String> = events(&read_all(&copy)).iter().map(|e| e.id.clone()).collect();
    assert_eq!(moved, ids, "ids are keyed by the rows' own ids, not the file");
}

#[test]
fn convert_reads_each_session_of_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.jsonl");
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-o"])
        .arg(&out_path)
        .arg(database())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    // One row is reported: the documented exit code for warnings.
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("row `a0000000-0000-4000-8000-000000000009`"), "{stderr}");
    let text = std::fs::read_to_string(&out_path).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let expected: usize = read_all(&database()).iter().map(|(_, events, _)| events.len()).sum();
    assert_eq!(lines.len(), expected);
    let prefix = format!("{}#", database().display());
    let mut sessions = Vec::new();
    for line in &lines {
        assert_eq!(line["agent"], "crush");
        assert!(line["source"]["file"].as_str().unwrap().starts_with(&prefix), "{line}");
        let session = line["session_id"].as_str().unwrap().to_owned();
        if sessions.last() != Some(&session) {
            sessions.push(session);
        }
    }
    assert_eq!(sessions, [MAIN, TITLE, CHILD, CANCELED]);
    let kinds: HashSet<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.len(), [Kind::Message, Kind::Reasoning, Kind::ToolCall, Kind::ToolOutput, Kind::Meta].len());
    let checked = cargo_bin_cmd!("agentlog").arg("validate").arg(&out_path).output().unwrap();
    assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stdout));
}
