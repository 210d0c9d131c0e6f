//! The Gemini CLI and GitHub Copilot CLI readers, on the real samples beside the project
//! (`../shared/other-agents`) and the project's synthetic ones (`corpus/gemini`,
//! `corpus/copilot`). Usage totals are compared with the independent scripts
//! `tests/independent/gemini_usage.py` and `copilot_usage.py`, never with agentlog itself.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentlog::model::{Event, Kind, MetaType, Payload, Role};
use agentlog::read::Reader;
use agentlog::read::copilot::Copilot;
use agentlog::read::gemini::Gemini;
use assert_cmd::cargo::cargo_bin_cmd;

fn usage_events(events: &[Event]) -> Vec<&agentlog::model::Usage> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Meta(m) if m.meta_type == MetaType::Usage => m.usage.as_ref(),
            _ => None,
        })
        .collect()
}

use common::meta_type;

/// Every session file of the two agents: the real samples (when present) and the own ones.
fn files() -> Vec<(PathBuf, &'static dyn Reader)> {
    let mut files = common::session_files(&common::own_corpus().join("gemini"));
    files.extend(common::session_files(&common::own_corpus().join("copilot")));
    if let Some(other) = common::other_agents() {
        files.extend(common::session_files(&other.join("gemini")));
        files.extend(common::session_files(&other.join("copilot")));
    }
    files
}

#[test]
fn usage_totals_equal_the_independent_scripts() {
    let all = files();
    assert!(all.len() >= 4, "{all:?}", all = all.iter().map(|(p, _)| p).collect::<Vec<_>>());
    for (script, reader) in [("gemini_usage.py", "gemini"), ("copilot_usage.py", "copilot")] {
        let mine: Vec<&(PathBuf, &dyn Reader)> = all.iter().filter(|(_, r)| r.name() == reader).collect();
        let paths: Vec<&Path> = mine.iter().map(|(p, _)| p.as_path()).collect();
        let Some(expected) = common::independent(script, &paths) else { return };
        for (path, reader) in mine {
            let (events, report) = common::read_file(*reader, path, &path.display().to_string());
            let want = &expected[path.display().to_string()];
            let sum = |f: fn(&agentlog::model::Usage) -> Option<u64>| -> u64 {
                usage_events(&events).into_iter().filter_map(f).sum()
            };
            let got = BTreeMap::from([
                ("input", sum(|u| u.input_tokens)),
                ("cached", sum(|u| u.cache_read_tokens)),
                ("output", sum(|u| u.output_tokens)),
                ("reasoning", sum(|u| u.reasoning_tokens)),
                ("calls", usage_events(&events).len() as u64),
            ]);
            for (key, value) in &got {
                assert_eq!(want[key].as_u64(), Some(*value), "{}: {key} ({got:?} vs {want})", path.display());
            }
            if reader.name() == "copilot" {
                assert_eq!(want["cache_write"].as_u64(), Some(sum(|u| u.cache_write_tokens)), "{}", path.display());
            } else {
                assert_eq!(want["total"].as_u64(), Some(sum(|u| u.total_tokens)), "{}", path.display());
            }
            assert_eq!(report.lines, report.lines_mapped + report.lines_diagnosed, "{}", path.display());
        }
    }
}

#[test]
fn every_real_sample_converts_to_every_format_with_every_line_accounted() {
    let Some(other) = common::other_agents() else { return };
    let samples: Vec<(PathBuf, &dyn Reader)> = common::session_files(&other.join("gemini"))
        .into_iter()
        .chain(common::session_files(&other.join("copilot")))
        .collect();
    assert_eq!(samples.len(), 3);
    for (path, reader) in &samples {
        let (events, report) = common::read_file(*reader, path, &path.display().to_string());
        assert_eq!(report.lines, common::non_empty_lines(path), "{}", path.display());
        assert_eq!((report.lines_mapped, report.lines_diagnosed), (report.lines, 0), "{}", path.display());
        // Each line has an event, or is a version of a message listed in `merged_lines`.
        let mut lines: std::collections::BTreeSet<u64> = events.iter().map(|e| e.source.line).collect();
        for e in &events {
            let extra = e.extra.as_ref().map(|x| x.to_value()).unwrap_or_default();
            lines.extend(extra["merged_lines"].as_array().into_iter().flatten().filter_map(|m| m["line"].as_u64()));
        }
        let is_document = reader.name() == "gemini";
        if !is_document {
            assert_eq!(lines.len() as u64, report.lines, "{}", path.display());
        }
        let prompt = events
            .iter()
            .find_map(|e| match &e.payload {
                Payload::Message(m) if m.role == Role::User && !m.text.is_empty() => Some(m.text.clone()),
                _ => None,
            })
            .unwrap();
        let prompt: String = prompt.lines().next().unwrap().chars().take(30).collect();
        let dir = tempfile::tempdir().unwrap();
        for (to, file) in [
            ("unified", "out.jsonl"),
            ("parquet", "out.parquet"),
            ("arrow", "out.arrow"),
            ("interchange", "out.json"),
            ("atif", "out.atif.jsonl"),
            ("otel", "out.otlp.jsonl"),
            ("markdown", "out.md"),
            ("html", "out.html"),
        ] {
            let out = dir.path().join(file);
            let done = cargo_bin_cmd!("agentlog")
                .args(["convert", "-q", "--to", to])
                .arg(path)
                .arg("-o")
                .arg(&out)
                .output()
                .unwrap();
            assert_eq!(
                done.status.code(),
                Some(0),
                "{to} of {}: {}",
                path.display(),
                String::from_utf8_lossy(&done.stderr)
            );
            assert!(out.metadata().unwrap().len() > 0, "{to} of {}", path.display());
            if matches!(to, "markdown" | "html") {
                let text = std::fs::read_to_string(&out).unwrap();
                let shown = if to == "html" {
                    prompt.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
                } else {
                    prompt.clone()
                };
                assert!(text.contains(&shown), "{to} of {} lacks the first prompt {prompt:?}", path.display());
            }
        }
        let checked = cargo_bin_cmd!("agentlog").args(["validate"]).arg(dir.path().join("out.jsonl")).output().unwrap();
        assert_eq!(checked.status.code(), Some(0), "{}", String::from_utf8_lossy(&checked.stdout));
    }
}

#[test]
fn the_readers_tell_each_agents_files_apart() {
    // `common::session_files` asserts that the reader told from each file's first lines is the
    // one its folder names, over both corpora, the other agents' samples and the own samples.
    let files = common::all_session_files();
    for agent in ["claude", "codex", "gemini", "copilot"] {
        assert!(files.iter().any(|(_, r)| r.name() == agent), "no {agent} file told");
    }
    let Some(other) = common::other_agents() else { return };
    // The agents agentlog reads; the folder holds samples of others too.
    let listed = cargo_bin_cmd!("agentlog")
        .args(["ls", "--json"])
        .arg(other.join("copilot"))
        .arg(other.join("gemini"))
        .output()
        .unwrap();
    assert_eq!(listed.status.code(), Some(0));
    let agents: Vec<String> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["agent"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(agents, ["copilot-cli", "copilot-cli", "gemini-cli"]);
}

#[test]
fn gemini_jsonl_replaces_patches_and_rewinds_messages() {
    let path = common::own_corpus().join("gemini/home/tmp/shop/chats/session-2026-03-30T10-00-5e3c1a2b.jsonl");
    let (events, report) = common::read_file(&Gemini, &path, &path.display().to_string());
    assert_eq!((report.lines, report.lines_diagnosed), (13, 0));
    assert!(events.iter().all(|e| e.session_id == "5e3c1a2b-0000-4000-8000-000000000001"));
    // The working directory comes from projects.json beside tmp/.
    assert!(events.iter().all(|e| e.context.cwd.as_deref() == Some("/home/dev/shop")));
    // g-a1 was written twice: one call, its output from the second version, line 3 merged.
    let calls: Vec<&Event> = events.iter().filter(|e| e.kind() == Kind::ToolCall).collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].source.line, 4);
    let reasoning = events.iter().find(|e| e.kind() == Kind::Reasoning).unwrap();
    let extra = reasoning.extra.as_ref().unwrap().to_value();
    assert_eq!(extra["merged_lines"][0]["line"], 3);
    let outputs: Vec<&Event> = events.iter().filter(|e| e.kind() == Kind::ToolOutput).collect();
    let failed: Vec<Option<bool>> =
        outputs.iter().map(|e| if let Payload::ToolOutput(o) = &e.payload { o.failed } else { None }).collect();
    assert_eq!(failed, [Some(false), Some(true)]);
    // The rewind to g-u2 flags g-u2 and g-a3, and only them.
    let rolled: Vec<u64> = events.iter().filter(|e| e.rolled_back).map(|e| e.source.line).collect();
    assert_eq!(rolled, [8, 9, 9]);
    assert_eq!(events.iter().filter(|e| meta_type(e) == Some(MetaType::Rollback)).count(), 1);
    // `$set` of a summary titles the session.
    assert!(events.iter().any(|e| meta_type(e) == Some(MetaType::Title)));
    // Input 1200 with 800 cached and 10 of tool-use prompt; output 40 and 25 of thinking.
    let first = usage_events(&events)[0];
    assert_eq!(
        (first.input_tokens, first.cache_read_tokens, first.output_tokens, first.reasoning_tokens, first.total_tokens),
        (Some(410), Some(800), Some(65), Some(25), Some(1275))
    );
}

#[test]
fn a_gemini_subagent_names_its_parent_and_a_checkpoint_rewrites_its_messages() {
    let dir = common::own_corpus().join("gemini/home/tmp/shop/chats/5e3c1a2b-0000-4000-8000-000000000001");
    let path = dir.join("5e3c1a2b-0000-4000-8000-0000000000a1.jsonl");
    let (events, _) = common::read_file(&Gemini, &path, &path.display().to_string());
    assert!(events.iter().all(|e| e.parent_session_id.as_deref() == Some("5e3c1a2b-0000-4000-8000-000000000001")));
    let texts: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) => Some((m.text.clone(), e.rolled_back)),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("Investigate the build layout.".to_owned(), false),
            ("A first draft.".to_owned(), true),
            ("Cargo workspace with one crate.".to_owned(), false),
        ]
    );
}

#[test]
fn copilot_links_subagents_and_adds_shutdown_totals_once() {
    let root = common::own_corpus().join("copilot/session-state");
    let path = root.join("c0c0a000-0000-4000-8000-000000000001/events.jsonl");
    let (events, _) = common::read_file(&Copilot, &path, &path.display().to_string());
    // The subagent's events carry the id of the `task` call that started it.
    let side: Vec<&Event> = events.iter().filter(|e| e.is_sidechain).collect();
    assert_eq!(side.len(), 8);
    assert!(side.iter().all(|e| e.parent_call_id.as_deref() == Some("tc-2") && e.agent_id.as_deref() == Some("tc-2")));
    // Context from session.start; tool families by Copilot's names.
    assert_eq!(events[0].context.git_branch.as_deref(), Some("main"));
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => c.tool_kind.map(|k| k.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["shell", "subagent", "search"]);
    // Sonnet's messages reported 260 output tokens before the shutdown, whose total says 300:
    // the shutdown adds 40, with the input and cache counts; haiku's messages had all 45.
    let sonnet_output: u64 = usage_events(&events)
        .iter()
        .filter(|u| u.model.as_deref() == Some("claude-sonnet-4.5"))
        .filter_map(|u| u.output_tokens)
        .sum();
    assert_eq!(sonnet_output, 300 + 25);
    let flat = root.join("c0c0a000-0000-4000-8000-000000000002.jsonl");
    let (events, report) = common::read_file(&Copilot, &flat, &flat.display().to_string());
    assert_eq!(report.lines_diagnosed, 1, "the cut-off last line");
    assert!(events.iter().all(|e| e.session_id == "c0c0a000-0000-4000-8000-000000000002"));
    // An event type this reader does not know is kept whole.
    let (events, _) = common::read_file(&Copilot, &path, "events.jsonl");
    assert!(events.iter().any(|e| meta_type(e) == Some(MetaType::Unknown)));
}

#[test]
fn tools_and_transcripts_use_the_family_each_agent_gives_its_tools() {
    let root = common::own_corpus().join("copilot/session-state");
    let out = cargo_bin_cmd!("agentlog").args(["tools", "--json", "--by", "tool"]).arg(&root).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr)); // the cut-off line
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let family = |tool: &str| {
        table["rows"].as_array().unwrap().iter().find(|r| r["tool"] == tool).map(|r| r["family"].clone()).unwrap()
    };
    // Copilot's `bash`, `view` and `grep`, which Claude Code and Codex do not name so.
    assert_eq!((family("bash"), family("view"), family("grep")), ("shell".into(), "read".into(), "search".into()));
    assert_eq!(table["by"], serde_json::json!(["tool"]));
    let out = cargo_bin_cmd!("agentlog").args(["convert", "-q", "--to", "markdown"]).arg(&root).output().unwrap();
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(markdown.contains("cargo test"), "the shell call's command is shown");
}

#[test]
fn odd_gemini_records_are_kept_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let lines = [
        r#"{"sessionId":"s1","projectHash":"h","startTime":"2026-03-30T10:00:00.000Z","messages":"not a list"}"#,
        r#"{"id":"a","timestamp":"2026-03-30T10:00:01.000Z","type":"user","content":"first"}"#,
        r#"{"type":"user","timestamp":"2026-03-30T10:00:02.000Z","content":"no id"}"#,
        r#"{"$set":"not an object"}"#,
        r#"{"$set":{"messages":[{"id":"a","timestamp":"2026-03-30T10:00:01.000Z","type":"user","content":"first"},42]}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (events, report) = common::read_file(&Gemini, &path, "session.jsonl");
    assert_eq!((report.lines, report.lines_diagnosed), (5, 0));
    let unknown: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| meta_type(e) == Some(MetaType::Unknown))
        .map(|e| if let Payload::Meta(m) = &e.payload { m.data.as_ref().unwrap().to_value() } else { unreachable!() })
        .collect();
    assert!(unknown.contains(&serde_json::json!({ "messages": "not a list" })), "{unknown:?}");
    assert!(unknown.contains(&serde_json::json!({ "message": 42 })), "{unknown:?}");
    assert!(unknown.iter().any(|u| u["$set"] == "not an object"), "{unknown:?}");
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| if let Payload::Message(m) = &e.payload { Some(m.text.as_str()) } else { None })
        .collect();
    // gemini-cli itself skips a record without an id; it is kept whole here.
    assert_eq!(texts, ["first"]);
    assert!(unknown.iter().any(|u| u["content"] == "no id"), "{unknown:?}");
}

#[test]
fn a_copilot_record_of_unexpected_shape_is_kept_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let lines = [
        r#"{"type":"session.start","data":{"sessionId":"s1","copilotVersion":"1.0.80"},"id":"e1","timestamp":"2026-08-01T09:00:00.000Z","parentId":null}"#,
        r#"{"type":"user.message","data":"hello as a string","id":"e2","timestamp":"2026-08-01T09:00:01.000Z","parentId":"e1"}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (events, report) = common::read_file(&Copilot, &path, "events.jsonl");
    assert_eq!((report.lines, report.lines_diagnosed), (2, 0));
    let kept = events.iter().find(|e| e.source.line == 2).unwrap();
    assert_eq!(meta_type(kept), Some(MetaType::Unknown));
    let Payload::Meta(meta) = &kept.payload else { unreachable!() };
    assert_eq!(meta.data.as_ref().unwrap().to_value()["data"], "hello as a string");
}
