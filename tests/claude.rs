//! The Claude Code reader on the project's samples (one per quirk) and on the real corpus.
//! Expected values are written from the samples and the format reference, or computed by the
//! independent script `tests/independent/claude_usage.py`, never by agentlog itself.

mod common;

use std::path::{Path, PathBuf};

use agentlog::model::{Event, Kind, MetaType, Payload, Role, SessionSummary, Usage};
use agentlog::read::claude::Claude;
use agentlog::read::{Input, Reader, Shared};

fn sample(rel: &str) -> PathBuf {
    common::own_corpus().join("claude").join(rel)
}

fn read(rel: &str) -> (Vec<Event>, agentlog::read::ReadReport) {
    let path = sample(rel);
    common::read_file(&Claude, &path, &path.display().to_string())
}

use common::usages;

use common::meta_type;

/// (input, cache write, cache read, output) of a usage.
fn counts(u: &Usage) -> [u64; 4] {
    [u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, u.output_tokens].map(|c| c.unwrap_or(0))
}

#[test]
fn streamed_usage_counted_once_per_response_from_the_largest_line() {
    let (events, report) = read("streamed-response-usage.jsonl");
    assert!(report.diagnostics.is_empty());
    let usage = usages(&events);
    // msg_A spans lines 2, 3 and 5 with output 5, 5, 240; msg_B spans lines 7 and 8 with 30, 30
    // (a tie: the last line wins); msg_C is <synthetic> and msg_D an API error: no usage.
    assert_eq!(usage.len(), 2);
    assert_eq!((usage[0].0.source.line, counts(usage[0].1)), (5, [3, 100, 5000, 240]));
    assert_eq!((usage[1].0.source.line, counts(usage[1].1)), (8, [7, 0, 5400, 30]));
    assert_eq!(usage[0].1.response_id.as_deref(), Some("msg_A"));
    assert_eq!(usage[0].1.model.as_deref(), Some("claude-opus-4-5-20251101"));
    assert_eq!(usage[0].1.total_tokens, Some(3 + 100 + 5000 + 240));
    // One event per content block, and each block's event carries its response id.
    let blocks: Vec<(u64, Kind)> = events
        .iter()
        .filter(|e| e.response_id.as_deref() == Some("msg_A") && e.kind() != Kind::Meta)
        .map(|e| (e.source.line, e.kind()))
        .collect();
    assert_eq!(blocks, [(2, Kind::Message), (3, Kind::ToolCall), (5, Kind::ToolCall)]);
}

#[test]
fn user_records_are_classified_by_content() {
    let (events, _) = read("user-record-classes.jsonl");
    let got: Vec<(u64, String, bool)> = events
        .iter()
        .map(|e| {
            let what = match &e.payload {
                Payload::Message(m) => format!("{:?} message", m.role),
                Payload::Meta(m) => format!("{:?}", m.meta_type),
                Payload::ToolCall(c) => format!("call {}", c.name),
                Payload::ToolOutput(o) => format!("output {}", o.name.as_deref().unwrap_or("?")),
                Payload::Reasoning(_) => "reasoning".into(),
            };
            (e.source.line, what, e.injected)
        })
        .collect();
    let expected: Vec<(u64, &str, bool)> = vec![
        (1, "User message", false),
        (2, "User message", true),
        (3, "Command", false),
        (4, "Command", false),
        (5, "call user_shell", false),
        (6, "output user_shell", false),
        (7, "Interrupt", false),
        (8, "User message", true),
        (8, "User message", false),
        (9, "User message", true),
        (10, "TaskNotification", false),
        (11, "Compaction", false),
        (12, "User message", false),
        (13, "User message", true),
    ];
    assert_eq!(got, expected.into_iter().map(|(l, w, i)| (l, w.to_owned(), i)).collect::<Vec<_>>());
    // Bash mode: the output links to the input by the record it answers.
    let call = match &events[4].payload {
        Payload::ToolCall(c) => c,
        _ => unreachable!(),
    };
    let output = match &events[5].payload {
        Payload::ToolOutput(o) => o,
        _ => unreachable!(),
    };
    assert_eq!(call.input.as_ref().unwrap().get(), r#"{"command":"git status --short"}"#);
    assert_eq!(call.call_id, output.call_id);
    assert_eq!(output.text, " M src/cart.rs");
    // The IDE block is split from the typed text; the image stays with its prompt.
    match (&events[8].payload, &events[12].payload) {
        (Payload::Message(typed), Payload::Message(image)) => {
            assert_eq!(typed.text, "Start with the total() function.");
            assert_eq!(image.parts.len(), 2);
            assert!(
                matches!(&image.parts[1], agentlog::model::Part::Image { media_type: Some(t), data: Some(_), .. } if t == "image/png")
            );
        }
        _ => unreachable!(),
    }
    // No injected text is an unflagged user message.
    for e in &events {
        if let Payload::Message(m) = &e.payload
            && m.role == Role::User
            && !e.injected
        {
            assert!(!m.text.starts_with('<') && !m.text.starts_with("Caveat:"), "{}", m.text);
        }
    }
}

#[test]
fn unknown_types_subtypes_and_blocks_are_kept_whole() {
    let (events, report) = read("unknown-and-meta-records.jsonl");
    assert!(report.diagnostics.is_empty());
    let types: Vec<(u64, Option<MetaType>)> = events.iter().map(|e| (e.source.line, meta_type(e))).collect();
    assert_eq!(
        types,
        [
            (1, Some(MetaType::FileSnapshot)),
            (2, None),
            (3, Some(MetaType::System)),
            (4, Some(MetaType::QueueOperation)),
            (5, Some(MetaType::Progress)),
            (6, Some(MetaType::Attachment)),
            (7, Some(MetaType::System)),
            (8, Some(MetaType::Unknown)),
            (9, Some(MetaType::Unknown)),
            (10, Some(MetaType::Unknown)),
            (11, Some(MetaType::System)),
            (9, Some(MetaType::Usage)),
        ]
    );
    let data = |i: usize| match &events[i].payload {
        Payload::Meta(m) => m.data.as_ref().unwrap().to_value(),
        _ => unreachable!(),
    };
    assert_eq!(data(7)["subtype"], "quantum_entanglement");
    assert_eq!(data(8), serde_json::json!({"type": "hologram", "frames": [1, 2, 3]}), "the unknown block, whole");
    let line10 =
        std::fs::read_to_string(sample("unknown-and-meta-records.jsonl")).unwrap().lines().nth(9).unwrap().to_owned();
    assert_eq!(data(9), serde_json::from_str::<serde_json::Value>(&line10).unwrap(), "the unknown record, whole");
}

#[test]
fn title_prefers_custom_then_ai_then_own_summary_then_first_prompt() {
    let (events, _) = read("titles.jsonl");
    let summary = &common::summaries(&events)["7d000000-0000-4000-8000-000000000004"];
    assert_eq!(summary.title.as_deref(), Some("orders pagination"));
    // The summary line whose leaf is in another session does not title this one.
    let titles: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| meta_type(e) == Some(MetaType::Title))
        .map(|e| match &e.payload {
            Payload::Meta(m) => m.data.as_ref().unwrap().to_value(),
            _ => unreachable!(),
        })
        .collect();
    let sources: Vec<&str> = titles.iter().map(|t| t["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["ai", "custom", "summary_of_other_session", "summary"]);

    let (events, _) = read("user-and-assistant-text.jsonl");
    let summary = &common::summaries(&events)["5d0c1a2e-7f3b-4c1d-9e8a-1b2c3d4e5f60"];
    assert_eq!(summary.title.as_deref(), Some("Add a health check endpoint."));
}

#[test]
fn compaction_is_meta_and_history_before_it_is_kept() {
    let (events, _) = read("compaction.jsonl");
    let kinds: Vec<(u64, Option<MetaType>)> = events.iter().map(|e| (e.source.line, meta_type(e))).collect();
    assert_eq!(
        kinds,
        [
            (1, None),
            (2, None),
            (3, Some(MetaType::Compaction)),
            (4, Some(MetaType::Compaction)),
            (5, Some(MetaType::Compaction)),
            (6, None),
            (2, Some(MetaType::Usage)),
        ]
    );
    let boundary = match &events[2].payload {
        Payload::Meta(m) => m.data.as_ref().unwrap().to_value(),
        _ => unreachable!(),
    };
    assert_eq!(boundary["compactMetadata"]["preTokens"], 167094);
    assert_eq!(boundary["logicalParentUuid"], "a2000000-0000-4000-8000-000000000002".replace("a2", "e1"));
}

#[test]
fn resumed_session_copies_are_flagged_and_counted_once() {
    let (events, _) = common::read_tree(&Claude, &sample("resumed-session"));
    let resumed: Vec<&Event> = events.iter().filter(|e| e.source.file.ends_with("07.jsonl")).collect();
    let copied: Vec<(u64, bool)> = resumed.iter().map(|e| (e.source.line, e.copied)).collect();
    // Lines 1 and 2 repeat the first session's records; the usage of line 2 repeats its response.
    assert_eq!(copied, [(1, true), (2, true), (3, false), (4, false), (2, true), (4, false)]);
    let summaries = common::summaries(&events);
    let totals = |id: &str| {
        let u = &summaries[id].usage;
        [u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, u.output_tokens, u.responses]
    };
    assert_eq!(totals("7f000000-0000-4000-8000-000000000006"), [10, 300, 0, 50, 1]);
    assert_eq!(totals("7f000000-0000-4000-8000-000000000007"), [5, 100, 300, 60, 1]);
}

#[test]
fn inline_sidechain_is_a_subagent_linked_to_its_task_call() {
    let (events, _) = read("inline-sidechain.jsonl");
    let side: Vec<&Event> = events.iter().filter(|e| e.is_sidechain).collect();
    assert_eq!(side.iter().map(|e| e.source.line).collect::<Vec<_>>(), [3, 4, 4]);
    for e in &side {
        assert_eq!(e.agent_id.as_deref(), Some("81000000-0000-4000-8000-000000000003"));
        assert_eq!(e.parent_call_id.as_deref(), Some("toolu_G1"));
        assert_eq!(e.parent_session_id.as_deref(), Some("8a000000-0000-4000-8000-000000000008"));
    }
    assert!(events.iter().filter(|e| !e.is_sidechain).all(|e| e.agent_id.is_none()));
}

#[test]
fn subagent_files_of_2_0_and_2_1_link_to_their_spawning_call() {
    for (dir, agent, call) in
        [("subagents-2.0", "a1b2c3d", "toolu_H1"), ("subagents-2.1", "a0123456789abcdef", "toolu_I1")]
    {
        let (events, _) = common::read_tree(&Claude, &sample(dir));
        let sub: Vec<&Event> = events.iter().filter(|e| e.agent_id.is_some()).collect();
        assert_eq!(sub.len(), 3, "{dir}: prompt, answer, usage");
        for e in &sub {
            assert_eq!(e.agent_id.as_deref(), Some(agent), "{dir}");
            assert!(e.is_sidechain);
            assert_eq!(e.parent_call_id.as_deref(), Some(call), "{dir}");
            assert_eq!(e.parent_session_id.as_deref(), Some(e.session_id.as_str()));
        }
        // The subagent's usage is real spend and belongs to the session.
        let summary = common::summaries(&events).into_values().next().unwrap();
        assert_eq!(summary.usage.responses, 2, "{dir}");
        assert_eq!(summary.agent_ids, [agent]);
    }
}

#[test]
fn a_parent_session_held_in_memory_is_read_from_there() {
    use agentlog::pipeline::{Destination, Held, HeldFile, Look, Outcome};
    struct Keep(Vec<Event>);
    impl Destination for Keep {
        fn begin(&mut self, _: &str) -> std::io::Result<()> {
            Ok(())
        }
        fn event(&mut self, event: Event) -> std::io::Result<()> {
            self.0.push(event);
            Ok(())
        }
        fn end(&mut self, _: Outcome) -> std::io::Result<()> {
            Ok(())
        }
    }
    // The parent session on disk has lost the result naming the subagent; the copy held in
    // memory (as a search's look holds the files it read) still has it.
    let dir = tempfile::tempdir().unwrap();
    let parent = "8b000000-0000-4000-8000-000000000009.jsonl";
    let held_bytes = std::fs::read(sample("subagents-2.0").join(parent)).unwrap();
    let text = String::from_utf8(held_bytes.clone()).unwrap();
    let on_disk: Vec<&str> = text.lines().filter(|l| !l.contains("\"agentId\"")).collect();
    assert!(on_disk.len() < text.lines().count());
    std::fs::write(dir.path().join(parent), on_disk.join("\n") + "\n").unwrap();
    std::fs::copy(sample("subagents-2.0/agent-a1b2c3d.jsonl"), dir.path().join("agent-a1b2c3d.jsonl")).unwrap();
    let settings = agentlog::read::Settings::default();
    let (inputs, _) = agentlog::pipeline::expand(&[dir.path().display().to_string()]);
    let (groups, errors) = agentlog::pipeline::plan(&inputs, None, &|_| None, &settings);
    assert!(errors.is_empty() && groups.len() == 1);
    let parent_item = groups[0].items.iter().position(|i| i.spec.name().ends_with(parent)).unwrap();
    let look = |_: &agentlog::pipeline::Group, held: &mut Held| {
        held.bytes = held_bytes.clone().into();
        held.files.push(HeldFile { item: parent_item, range: 0..held_bytes.len(), found: None });
        Look::Read
    };
    let calls = |look: &(dyn Fn(&agentlog::pipeline::Group, &mut Held) -> Look + Sync)| -> Vec<Option<String>> {
        let kept = agentlog::stats::fold(&groups, &settings, look, || Keep(Vec::new())).unwrap();
        kept.into_iter().flat_map(|k| k.0).filter(|e| e.agent_id.is_some()).map(|e| e.parent_call_id).collect()
    };
    assert_eq!(calls(&look), vec![Some("toolu_H1".to_owned()); 3]);
    // Read from disk, the link is lost.
    assert_eq!(calls(&|_, _| Look::Read), [None, None, None]);
}

#[test]
fn malformed_lines_each_get_one_diagnostic_and_the_rest_converts() {
    let (events, report) = read("malformed-lines.jsonl");
    let diagnosed: Vec<(u64, &str)> = report.diagnostics.iter().map(|d| (d.line, d.problem.code)).collect();
    assert_eq!(
        diagnosed,
        [
            (2, "agentlog::input::invalid_json"),
            (3, "agentlog::input::invalid_json"),
            (4, "agentlog::input::invalid_json"),
            (5, "agentlog::input::not_an_object"),
            (6, "agentlog::input::not_an_object"),
            (8, "agentlog::input::truncated_line"),
        ]
    );
    assert_eq!(events.iter().map(|e| e.source.line).collect::<Vec<_>>(), [1, 7]);
    assert_eq!(report.diagnostics[3].problem.message, "expected a JSON object, but found a string");
    assert_eq!(report.diagnostics[4].problem.message, "expected a JSON object, but found an array");
}

#[test]
fn empty_summary_only_and_snapshot_only_files_convert() {
    let (events, report) = read("empty-session.jsonl");
    assert_eq!((events.len(), report.lines), (0, 0));
    let (events, report) = read("summary-only.jsonl");
    assert_eq!((events.len(), report.lines, report.diagnostics.len()), (1, 1, 0));
    assert_eq!(events[0].session_id, "summary-only", "no sessionId: the file's stem");
    let (events, report) = read("snapshot-only.jsonl");
    assert_eq!((events.len(), report.diagnostics.len()), (1, 0));
    assert_eq!(meta_type(&events[0]), Some(MetaType::FileSnapshot));
}

#[test]
fn orphan_calls_and_results_are_kept_and_reported() {
    let (events, _) = read("orphan-call-and-result.jsonl");
    let summary: SessionSummary = common::summaries(&events).into_values().next().unwrap();
    assert_eq!(summary.orphan_calls, ["toolu_J1"]);
    assert_eq!(summary.orphan_outputs, ["toolu_J0"]);
    let output = events.iter().find(|e| e.kind() == Kind::ToolOutput).unwrap();
    match &output.payload {
        Payload::ToolOutput(o) => {
            assert_eq!(o.is_error, Some(true));
            assert_eq!(o.result.as_ref().unwrap().get(), r#""Error: no such tool use""#);
        }
        _ => unreachable!(),
    }
}

#[test]
fn tool_result_without_is_error_is_unknown_not_false() {
    let (events, _) = read("streamed-response-usage.jsonl");
    let outputs: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some(o),
            _ => None,
        })
        .collect();
    assert_eq!(outputs.len(), 2);
    assert!(outputs.iter().all(|o| o.is_error.is_none()));
    assert_eq!(outputs[1].name.as_deref(), Some("Read"), "named after its call");
}

#[test]
fn a_line_over_ten_megabytes_converts() {
    let text = "x".repeat(11 * 1024 * 1024);
    let line = serde_json::json!({"type": "user", "sessionId": "big", "uuid": "u", "message": {"role": "user", "content": text}});
    let bytes = format!("{line}\n").into_bytes();
    let mut events = Vec::new();
    let report = Claude
        .read(Input { name: "big.jsonl", bytes: Box::new(&bytes[..]), shared: &mut Shared::default() }, &mut |e| {
            events.push(e);
            Ok(())
        })
        .unwrap();
    assert_eq!((report.lines_mapped, events.len()), (1, 1));
    match &events[0].payload {
        Payload::Message(m) => assert_eq!(m.text.len(), text.len()),
        _ => unreachable!(),
    }
}

// --- the real corpus -------------------------------------------------------------------------

fn real_claude() -> Option<PathBuf> {
    Some(common::shared_corpus()?.join("claude"))
}

/// Usage per session over the real corpus, the way a run reads it.
fn real_totals(root: &Path) -> std::collections::BTreeMap<String, [u64; 5]> {
    let (events, _) = common::read_tree(&Claude, root);
    common::summaries(&events)
        .into_iter()
        .filter(|(_, s)| s.usage.responses > 0)
        .map(|(id, s)| {
            let u = s.usage;
            (id, [u.input_tokens, u.cache_write_tokens, u.cache_read_tokens, u.output_tokens, u.responses])
        })
        .collect()
}

#[test]
fn usage_totals_match_the_independent_reader_on_real_sessions() {
    let Some(root) = real_claude() else { return };
    let totals = real_totals(&root);
    // [input, cache write, cache read, output, responses], from tests/independent/claude_usage.py.
    let expected: [(&str, [u64; 5]); 6] = [
        // 2.1.39, compaction, a subagent and the compaction agent's file
        ("258c7280-ae70-4798-800f-63464d01a85d", [198, 394137, 14972534, 38908, 156]),
        // 2.1.114, six teammate subagents in <session>/subagents/
        ("ef958aa1-0e93-49f0-bb71-150f63befcd1", [2546, 398573, 2455695, 53458, 83]),
        // 1.0.98, inline sidechains
        ("fe5e1c67-53e7-4862-81ae-d0e013e3270b", [818, 137976, 3647854, 51933, 170]),
        // 2.0.37 with a Task agent file beside it
        ("cb2e607c-c758-415a-8b45-c49e4631906a", [1739, 152097, 3483153, 23762, 81]),
        // 1.0.56, responses split over lines with differing output counts
        ("12a546d1-83a7-49a6-abba-5400db340b43", [206, 29126, 1167066, 6064, 36]),
        // 2.0.74, rewinds and a real Task agent among warmup agents
        ("b3edadab-bca0-4054-9b41-f7ffa6941260", [7486, 45563, 315668, 1823, 23]),
    ];
    for (session, want) in expected {
        assert_eq!(totals.get(session), Some(&want), "{session}");
    }
}

// A subagent without a transcript file of its own leaves its replies only in the session's
// `progress` records. The five claude-haiku-4-5 replies of spotter/subagent.jsonl, summed by
// hand from its agent_progress records: 2+6+6+6+4 input, 3+1+1+1+1 output,
// 15584+17982+18344+20728+22705 cache read, 2398+362+2384+1977+7164 cache write.
#[test]
fn subagent_replies_seen_only_in_progress_records_are_counted_once() {
    let Some(root) = real_claude() else { return };
    let (events, _) = common::read_file(&Claude, &root.join("spotter/subagent.jsonl"), "subagent.jsonl");
    let mut totals = [0u64; 5];
    for e in events.iter().filter(|e| e.is_sidechain && !e.copied) {
        if let Payload::Meta(m) = &e.payload
            && m.meta_type == MetaType::Usage
        {
            let u = m.usage.as_ref().unwrap();
            assert_eq!(u.model.as_deref(), Some("claude-haiku-4-5-20251001"));
            assert_eq!(e.agent_id.as_deref(), Some("afb92ff"));
            totals = [
                totals[0] + 1,
                totals[1] + u.input_tokens.unwrap(),
                totals[2] + u.output_tokens.unwrap(),
                totals[3] + u.cache_read_tokens.unwrap(),
                totals[4] + u.cache_write_tokens.unwrap(),
            ];
        }
    }
    assert_eq!(totals, [5, 24, 7, 95_343, 14_285]);
    // Where the subagent's own file holds the same replies, they count once: the session of
    // spotter/258c7280… has two such replies, and its totals match the independent reader
    // (usage_totals_match_the_independent_reader_on_real_sessions).
}

#[test]
fn usage_totals_match_the_independent_script_for_every_session() {
    let Some(root) = real_claude() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/claude_usage.py");
    let Ok(out) = std::process::Command::new("python3").arg(script).arg(&root).output() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3");
        eprintln!("notice: python3 is not available; skipping");
        return;
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let independent: std::collections::BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&out.stdout).unwrap();
    let independent: std::collections::BTreeMap<String, [u64; 5]> = independent
        .into_iter()
        .map(|(id, t)| {
            let n = |k: &str| t[k].as_u64().unwrap();
            (id, [n("input"), n("cache_write"), n("cache_read"), n("output"), n("responses")])
        })
        .collect();
    assert!(independent.len() > 20);
    assert_eq!(real_totals(&root), independent);
}

#[test]
fn one_tool_call_per_tool_use_id_and_outputs_link_to_their_calls() {
    let Some(root) = real_claude() else { return };
    for (path, _) in common::session_files(&root) {
        let name = path.display().to_string();
        // Independent count: distinct tool_use ids in the file, read with serde_json::Value.
        let mut ids = std::collections::BTreeSet::new();
        for line in common::text(&path).lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if v["type"] != "assistant" {
                continue;
            }
            for block in v["message"]["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_use" {
                    ids.insert(block["id"].as_str().unwrap_or_default().to_owned());
                }
            }
        }
        let (events, _) = common::read_file(&Claude, &path, &name);
        let calls: std::collections::BTreeMap<String, String> = events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::ToolCall(c) if c.name != "user_shell" => {
                    Some((c.call_id.clone().unwrap_or_default(), c.name.clone()))
                }
                _ => None,
            })
            .collect();
        let call_events =
            events.iter().filter(|e| matches!(&e.payload, Payload::ToolCall(c) if c.name != "user_shell")).count();
        assert_eq!(call_events, ids.len(), "{name}: tool_call events");
        assert_eq!(calls.keys().cloned().collect::<std::collections::BTreeSet<_>>(), ids, "{name}");
        for e in &events {
            if let Payload::ToolOutput(o) = &e.payload
                && let Some(name_of_call) = o.call_id.as_ref().and_then(|id| calls.get(id))
            {
                assert_eq!(o.name.as_ref(), Some(name_of_call), "{name}: output of {:?} not linked", o.call_id);
            }
        }
    }
}

#[test]
fn real_subagent_files_link_to_the_call_that_spawned_them() {
    let Some(root) = real_claude() else { return };
    let (events, _) = common::read_tree(&Claude, &root.join("claude-code-log/-experiments-worktrees"));
    let calls: std::collections::BTreeSet<String> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) if c.name == "Agent" => c.call_id.clone(),
            _ => None,
        })
        .collect();
    let subagents: std::collections::BTreeMap<String, Option<String>> =
        events.iter().filter_map(|e| Some((e.agent_id.clone()?, e.parent_call_id.clone()))).collect();
    assert_eq!(subagents.len(), 6);
    for (agent, call) in &subagents {
        let call = call.as_ref().unwrap_or_else(|| panic!("{agent} is not linked"));
        assert!(calls.contains(call), "{agent} links to {call}, which is no Agent call");
    }
}

#[test]
fn fields_no_event_field_carries_are_kept_in_extra() {
    let (events, _) = read("streamed-response-usage.jsonl");
    let first_of_line = |line: u64| events.iter().find(|e| e.source.line == line).unwrap();
    let extra = first_of_line(2).extra.as_ref().unwrap().to_value();
    assert_eq!(
        extra,
        serde_json::json!({
            "message": {"type": "message", "stop_reason": null, "stop_sequence": null},
            "requestId": "req_A",
            "userType": "external",
        })
    );
    assert_eq!(first_of_line(1).extra.as_ref().unwrap().to_value(), serde_json::json!({"userType": "external"}));
}

#[test]
fn a_corrupt_file_keeps_a_bounded_number_of_diagnostics_and_counts_the_rest() {
    let text = "not json\n".repeat(1500);
    let mut events = 0;
    let report = Claude
        .read(
            Input { name: "corrupt.jsonl", bytes: Box::new(text.as_bytes()), shared: &mut Shared::default() },
            &mut |_| {
                events += 1;
                Ok(())
            },
        )
        .unwrap();
    assert_eq!((report.lines, report.lines_mapped, events), (1500, 0, 0));
    assert_eq!(report.diagnostics.len(), agentlog::read::MAX_DIAGNOSTICS);
    assert_eq!(report.more_diagnostics, 500);
    assert_eq!(report.diagnosed(), 1500);
}

#[test]
fn an_assistant_line_without_blocks_is_still_an_event() {
    let text = r#"{"type":"assistant","uuid":"a1","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","message":{"id":"m1","role":"assistant","model":"claude-x","content":[]}}"#;
    let mut events = Vec::new();
    let input = Input { name: "s1.jsonl", bytes: Box::new(text.as_bytes()), shared: &mut Shared::default() };
    let report = Claude
        .read(input, &mut |e| {
            events.push(e);
            Ok(())
        })
        .unwrap();
    assert_eq!((report.lines, report.lines_mapped), (1, 1));
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(&events[0].payload, Payload::Message(m) if m.role == Role::Assistant && m.parts.is_empty()));
    assert_eq!(events[0].record_id.as_deref(), Some("a1"));
}

// Issue 42: Claude Code 2.1.328 writes `api-request-shape`, `api-request`, `api-request-blob`,
// `cost-state` and `tools-used` records, which stayed `unknown`; the system prompt and tool
// definitions they carry are what dataset builders want most.
#[test]
fn claude_code_2_1_328_request_records_are_mapped_and_the_shape_carries_prompt_and_tools() {
    let path = common::own_corpus().join("recorded/claude/2.1.328/tools.jsonl");
    let (events, report) = common::read_file(&Claude, &path, "tools.jsonl");
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let unknown: Vec<_> = events.iter().filter(|e| meta_type(e) == Some(MetaType::Unknown)).collect();
    assert!(unknown.is_empty(), "{:?}", unknown.iter().map(|e| &e.source.record_type).collect::<Vec<_>>());
    // The file, read as plain JSON: what each new record kind becomes.
    let records: Vec<serde_json::Value> =
        common::text(&path).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let kind_of = |line: u64| events.iter().find(|e| e.source.line == line).and_then(meta_type);
    for (n, record) in records.iter().enumerate() {
        let expected = match record["type"].as_str().unwrap() {
            "api-request-shape" => MetaType::RequestShape,
            "api-request" => MetaType::Request,
            "api-request-blob" => MetaType::RequestMessage,
            "cost-state" => MetaType::AgentTotals,
            "tools-used" => MetaType::System,
            _ => continue,
        };
        assert_eq!(kind_of(n as u64 + 1), Some(expected), "line {}", n + 1);
    }
    // The shape: the system prompt and the tools as the harness gave them (`--tools Bash,Agent`).
    let shape = events.iter().find(|e| meta_type(e) == Some(MetaType::RequestShape)).unwrap();
    let Payload::Meta(meta) = &shape.payload else { unreachable!() };
    let data = meta.data.as_ref().unwrap().to_value();
    let source = records.iter().find(|r| r["type"] == "api-request-shape").unwrap();
    assert_eq!(data["shape_hash"], source["shapeHash"]);
    assert_eq!(data["system"], source["shape"]["system"]);
    let tools: Vec<&str> = data["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["Agent", "Bash"]);
    assert!(data["tools"][1]["input_schema"]["properties"]["command"].is_object());
}

// Issue 42: Claude Code's workflow journals (`<session>/subagents/workflows/<id>/journal.jsonl`,
// records `started` and `result`) made a plain run of a Claude Code home exit 3, "cannot tell
// which agent wrote …"; with `--from claude` they became a session named `journal`. A file in
// an agent's own places is that agent's, even when its first lines are new.
#[test]
fn a_new_kind_of_file_in_claude_codes_places_is_read_as_its_with_one_warning() {
    let home = sample("workflow-journal");
    let out = assert_cmd::cargo::cargo_bin_cmd!("agentlog")
        .args(["convert", "--color", "never"])
        .arg(&home)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("agentlog::input::new_kind").count(), 1, "{stderr}");
    assert!(stderr.contains("(started)") && stderr.contains("journal.jsonl"), "{stderr}");
    let session = "6f2a9c1e-4b7d-4e21-9a3f-2c8d1e0b7a55";
    let events: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let journal: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["source"]["file"].as_str().unwrap().ends_with("journal.jsonl")).collect();
    assert_eq!(journal.len(), 2, "both journal lines");
    assert!(journal.iter().all(|e| e["session_id"] == session), "the session its folder names");
    assert!(events.iter().all(|e| e["session_id"] == session));
    // The same file elsewhere names no agent: it is still an input error.
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("journal.jsonl");
    let journal_file = home.join(format!("projects/-home-dev-shop/{session}/subagents/workflows/wf_01/journal.jsonl"));
    std::fs::copy(journal_file, &elsewhere).unwrap();
    let out = assert_cmd::cargo::cargo_bin_cmd!("agentlog").args(["convert", "-q"]).arg(&elsewhere).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
}
