//! The Aider reader on the histories Aider 0.86.2 wrote against the test server
//! (`corpus/recorded/aider/0.86.2/several/`, with the server's ledgers), on the third-party
//! sample of Aider 0.86.1 (`../shared/other-agents/aider/`) and on the synthetic samples
//! (`corpus/aider/`). Expected values come from the files read as text, the ledgers and the
//! independent script `tests/independent/aider_usage.py`, never from agentlog itself.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, PromptHistory, Role};
use agentlog::read::aider::Aider;
use serde_json::Value;

const CHAT: &str = ".aider.chat.history.md";
const INPUT: &str = ".aider.input.history";

/// The scenarios of the recorded histories, in the order they ran.
const SCENARIOS: [&str; 5] = ["text", "edit", "restore", "shell", "api-error"];

fn recorded() -> PathBuf {
    common::own_corpus().join("recorded/aider/0.86.2/several")
}

fn read(path: &Path) -> (Vec<Event>, agentlog::read::ReadReport) {
    common::read_file(&Aider, path, &path.display().to_string())
}

fn ledger(scenario: &str) -> Value {
    serde_json::from_str(&common::text(&recorded().join(format!("{scenario}.ledger.json")))).unwrap()
}

/// The responses a ledger served, in order.
fn served(ledger: &Value) -> Vec<&Value> {
    ledger["entries"].as_array().unwrap().iter().filter(|e| e["response"]["status"] == 200).collect()
}

/// A count as Aider writes it and a reader gets it back: exact under 1,000, else in thousands
/// to one decimal under 10,000 and whole thousands above (aider/utils.py `format_tokens`).
fn as_written(count: u64) -> u64 {
    match count {
        0..1000 => count,
        1000..10_000 => ((count as f64 / 100.0).round() as u64) * 100,
        _ => ((count as f64 / 1000.0).round() as u64) * 1000,
    }
}

fn texts(events: &[Event], role: Role) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) if m.role == role => Some(m.text.clone()),
            _ => None,
        })
        .collect()
}

fn usages(events: &[Event]) -> Vec<&agentlog::model::Usage> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Meta(m) if m.meta_type == MetaType::Usage => m.usage.as_ref(),
            _ => None,
        })
        .collect()
}

fn data(e: &Event) -> Value {
    match &e.payload {
        Payload::Meta(m) => m.data.as_ref().map(|d| d.to_value()).unwrap_or_default(),
        _ => Value::Null,
    }
}

/// Each line an event comes from or lists in `extra.merged_lines`.
fn lines_of(events: &[Event]) -> BTreeSet<u64> {
    let mut lines: BTreeSet<u64> = events.iter().map(|e| e.source.line).collect();
    for e in events {
        let extra = e.extra.as_ref().map(|x| x.to_value()).unwrap_or_default();
        lines.extend(extra["merged_lines"].as_array().into_iter().flatten().filter_map(Value::as_u64));
    }
    lines
}

/// The prompts of a chat history read as text: runs of adjacent `#### ` lines, each line without
/// the prefix and the two trailing spaces.
fn prompts_in(path: &Path) -> Vec<String> {
    let mut prompts: Vec<(usize, String)> = Vec::new();
    for (i, line) in common::text(path).lines().enumerate() {
        let Some(rest) = line.strip_prefix("####") else { continue };
        let rest = rest.strip_suffix("  ").unwrap_or(rest);
        let rest = rest.strip_prefix(' ').unwrap_or(rest).to_owned();
        match prompts.last_mut() {
            Some((last, text)) if *last + 1 == i => {
                text.push('\n');
                text.push_str(&rest);
                *last = i;
            }
            _ => prompts.push((i, rest)),
        }
    }
    prompts.into_iter().map(|(_, text)| text).collect()
}

#[test]
fn every_run_is_a_session_with_its_prompts_and_answers() {
    let (events, report) = read(&recorded().join(CHAT));
    let path = recorded().join(CHAT);
    assert_eq!(
        (report.lines, report.lines_mapped, report.lines_diagnosed),
        (common::non_empty_lines(&path), report.lines, 0)
    );
    assert_eq!(lines_of(&events).len() as u64, report.lines, "every line is an event's or merged into one");
    let sessions: BTreeSet<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
    let headers = common::text(&path).lines().filter(|l| l.starts_with("# aider chat started at ")).count();
    assert_eq!((sessions.len(), headers), (6, 6));
    let typed: Vec<String> = SCENARIOS
        .iter()
        .flat_map(|s| {
            ledger(s)["meta"]["typed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["text"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(texts(&events, Role::User), typed);
    let answers: Vec<String> = SCENARIOS
        .iter()
        .flat_map(|s| {
            served(&ledger(s))
                .iter()
                .map(|e| e["response"]["text"].as_str().unwrap().trim().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(texts(&events, Role::Assistant), answers);
    let versions: BTreeSet<_> = events.iter().map(|e| e.context.agent_version.as_deref()).collect();
    let models: BTreeSet<_> = events.iter().map(|e| e.context.model.as_deref()).collect();
    assert_eq!((versions, models), (BTreeSet::from([Some("0.86.2")]), BTreeSet::from([Some("openai/gpt-4.1")])));
}

#[test]
fn usage_is_what_the_server_served_as_aider_rounds_it() {
    let (events, _) = read(&recorded().join(CHAT));
    let want: Vec<(u64, u64)> = SCENARIOS
        .iter()
        .flat_map(|s| {
            served(&ledger(s))
                .iter()
                .map(|e| {
                    let u = &e["response"]["usage"];
                    (
                        as_written(u["prompt_tokens"].as_u64().unwrap()),
                        as_written(u["completion_tokens"].as_u64().unwrap()),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let got: Vec<(u64, u64)> =
        usages(&events).iter().map(|u| (u.input_tokens.unwrap(), u.output_tokens.unwrap())).collect();
    assert_eq!(got, want);
    for u in usages(&events) {
        // Aider writes no cache figure for the OpenAI API, nor reasoning, nor a response id.
        assert_eq!(
            (u.cache_read_tokens, u.cache_write_tokens, u.reasoning_tokens, &u.response_id),
            (None, None, None, &None)
        );
        assert_eq!(u.model.as_deref(), Some("openai/gpt-4.1"));
    }
    let first = events.iter().find(|e| common::meta_type(e) == Some(MetaType::Usage)).unwrap();
    let d = data(first);
    assert_eq!(
        (d["sent"].as_str(), d["received"].as_str(), d["rounded"].as_bool()),
        (Some("1.3k"), Some("50"), Some(true))
    );
    assert_eq!(d["message_cost_usd"].as_f64(), Some(0.0026));
    assert!(d["text"].as_str().unwrap().starts_with("Tokens: 1.3k sent, 50 received. Cost: $0.0026 message"));
}

#[test]
fn edits_and_shell_commands_are_tool_calls() {
    let (events, _) = read(&recorded().join(CHAT));
    let calls: Vec<(&str, Value, Option<&str>)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => Some((c.name.as_str(), c.input.as_ref().unwrap().to_value(), c.call_id.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!((calls[0].0, &calls[0].1["path"]), ("edit", &Value::from("hello.py")));
    assert_eq!((calls[1].0, &calls[1].1["command"]), ("shell", &Value::from("echo hello-from-aider")));
    let outputs: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolOutput(o) => Some(o),
            _ => None,
        })
        .collect();
    // Aider writes that an edit was applied; a command's output it shows, but does not write.
    assert_eq!(outputs.len(), 1);
    assert_eq!((outputs[0].call_id.as_deref(), outputs[0].text.as_str()), (calls[0].2, "Applied edit to hello.py"));
    assert_eq!(outputs[0].failed, Some(false));
    let kinds: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) => c.tool_kind,
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [agentlog::model::ToolFamily::Edit, agentlog::model::ToolFamily::Shell]);
}

#[test]
fn notices_keep_their_text_and_questions_their_answers() {
    let path = recorded().join(CHAT);
    let (events, _) = read(&path);
    let notices = common::text(&path).lines().filter(|l| l.starts_with("> ")).count();
    let from_notices =
        events.iter().filter(|e| e.source.record_type.as_deref() == Some("notice")).map(|e| e.source.line);
    assert_eq!(from_notices.collect::<BTreeSet<_>>().len(), notices);
    let error =
        events.iter().find(|e| data(e)["text"].as_str().is_some_and(|t| t.contains("InternalServerError"))).unwrap();
    assert_eq!(
        error.session_id,
        events.iter().rev().find(|e| common::meta_type(e) == Some(MetaType::SessionStart)).unwrap().session_id
    );
    let question = events
        .iter()
        .map(data)
        .find(|d| d["question"].as_str().is_some_and(|q| q.starts_with("Run shell command?")))
        .unwrap();
    assert_eq!(question["answer"], "y");
}

#[test]
fn a_run_that_restored_the_history_names_the_run_before_it() {
    let (events, _) = read(&recorded().join(CHAT));
    let starts: Vec<&Event> = events.iter().filter(|e| common::meta_type(e) == Some(MetaType::SessionStart)).collect();
    let restored: Vec<(usize, Value)> =
        starts.iter().enumerate().map(|(i, e)| (i, data(e))).filter(|(_, d)| d["restored_history"] == true).collect();
    assert_eq!(restored.len(), 1, "one run was started with --restore-chat-history");
    let (i, d) = &restored[0];
    assert_eq!(d["restored_from"].as_str(), Some(starts[i - 1].session_id.as_str()));
    assert!(starts.iter().all(|e| e.parent_session_id.is_none() && e.timestamp.is_some()));
}

#[test]
fn the_prompt_history_is_placed_in_the_runs_and_looked_up_there() {
    let (chat, _) = read(&recorded().join(CHAT));
    let path = recorded().join(INPUT);
    let (events, report) = read(&path);
    let entries = common::text(&path).lines().filter(|l| l.starts_with("# ")).count();
    assert_eq!(events.len(), entries);
    assert_eq!((report.lines_diagnosed, lines_of(&events).len() as u64), (0, common::non_empty_lines(&path)));
    let sessions: BTreeSet<&str> = chat.iter().map(|e| e.session_id.as_str()).collect();
    for e in &events {
        assert!(sessions.contains(e.session_id.as_str()), "{} is a run of the chat history", e.session_id);
        match &e.payload {
            Payload::Message(m) => {
                assert_eq!(m.prompt_history, Some(PromptHistory::InTranscript), "{}", m.text);
                let prompt = chat
                    .iter()
                    .find(|c| matches!(&c.payload, Payload::Message(p) if p.role == Role::User && p.text == m.text));
                assert_eq!(prompt.map(|p| p.session_id.as_str()), Some(e.session_id.as_str()));
            }
            // What Aider ran for the user when it was let run the answer's command.
            Payload::Meta(m) => {
                assert_eq!(m.meta_type, MetaType::Command);
                assert_eq!(data(e)["text"], "/run echo hello-from-aider");
                assert_eq!(data(e)["prompt_history"], "not_in_transcript");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn the_third_party_sample_reads_whole() {
    let Some(other) = common::other_agents() else { return };
    let dir = other.join("aider/metadata-aider");
    let chat = dir.join(CHAT);
    let (events, report) = read(&chat);
    assert_eq!((report.lines, report.lines_mapped), (common::non_empty_lines(&chat), common::non_empty_lines(&chat)));
    assert_eq!(lines_of(&events).len() as u64, report.lines);
    let prompts = prompts_in(&chat);
    assert_eq!(prompts.len(), 12);
    assert_eq!(texts(&events, Role::User), prompts);
    assert_eq!(texts(&events, Role::Assistant).len(), 12);
    assert_eq!(usages(&events).len(), 12);
    // The prompt of many lines is the same in the prompt history, read as text.
    let history = common::text(&dir.join(INPUT));
    let entry: Vec<&str> = history
        .split("\n# ")
        .find(|e| e.contains("+Please create a clean project structure"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix('+'))
        .collect();
    // Aider drops the trailing spaces of a prompt's last line only.
    let multi = texts(&events, Role::User).into_iter().find(|t| t.starts_with("Please create a clean")).unwrap();
    assert_eq!(multi, entry.join("\n").trim_end());
    let (side, side_report) = read(&dir.join(INPUT));
    assert_eq!(side_report.lines_diagnosed, 0);
    let flags: BTreeMap<String, usize> = side.iter().fold(BTreeMap::new(), |mut m, e| {
        if let Payload::Message(msg) = &e.payload {
            *m.entry(format!("{:?}", msg.prompt_history)).or_default() += 1;
        }
        m
    });
    // Twelve prompts; the other eight entries are answers typed to Aider's questions (y, N).
    assert_eq!(flags, BTreeMap::from([("Some(InTranscript)".into(), 12), ("Some(NotInTranscript)".into(), 8)]));
}

#[test]
fn usage_totals_equal_the_independent_script() {
    let mut files: Vec<PathBuf> =
        common::session_files(&common::own_corpus().join("aider")).into_iter().map(|(p, _)| p).collect();
    files.extend(common::session_files(&common::own_corpus().join("recorded/aider")).into_iter().map(|(p, _)| p));
    if let Some(other) = common::other_agents() {
        files.extend(common::session_files(&other.join("aider")).into_iter().map(|(p, _)| p));
    }
    files.retain(|p| p.file_name().is_some_and(|n| n == CHAT));
    assert!(files.len() >= 3, "{files:?}");
    let Some(expected) = common::independent("aider_usage.py", &files) else { return };
    for path in &files {
        let (events, _) = read(path);
        let want = &expected[path.display().to_string()];
        let sum =
            |f: fn(&agentlog::model::Usage) -> Option<u64>| -> u64 { usages(&events).into_iter().filter_map(f).sum() };
        let got = BTreeMap::from([
            ("input", sum(|u| u.input_tokens)),
            ("cache_read", sum(|u| u.cache_read_tokens)),
            ("cache_write", sum(|u| u.cache_write_tokens)),
            ("output", sum(|u| u.output_tokens)),
            ("total", sum(|u| u.total_tokens)),
            ("calls", usages(&events).len() as u64),
        ]);
        for (key, value) in &got {
            assert_eq!(want[key].as_u64(), Some(*value), "{}: {key} ({got:?} vs {want})", path.display());
        }
        let cost: f64 = usages(&events).iter().filter_map(|u| u.cost_usd).sum();
        assert!((cost - want["cost"].as_f64().unwrap()).abs() < 1e-9, "{}: cost {cost} vs {want}", path.display());
        let rounded = events
            .iter()
            .filter(|e| common::meta_type(e) == Some(MetaType::Usage) && data(e)["rounded"] == true)
            .count();
        assert_eq!(want["rounded"].as_u64(), Some(rounded as u64), "{}", path.display());
    }
}

#[test]
fn answers_keep_their_headings_and_quotes_where_the_line_breaks_tell_them_apart() {
    let (events, _) = read(&common::own_corpus().join("aider/cache-commands-and-headings").join(CHAT));
    let answers = texts(&events, Role::Assistant);
    assert!(
        answers[0].starts_with("#### Plan\n\nHere is the change:\n\n> a quote in the answer\n\nREADME.md\n```markdown")
    );
    assert_eq!(texts(&events, Role::User), ["Add a heading to the README.\n\nKeep it short.", "/ask what changed?"]);
    let commands: Vec<Value> =
        events.iter().filter(|e| common::meta_type(e) == Some(MetaType::Command)).map(data).collect();
    assert_eq!(commands.len(), 1);
    assert_eq!((commands[0]["command"].as_str(), commands[0]["args"].as_str()), (Some("/add"), Some("src/app.py")));
    // The question answered "all" earlier, written as a prompt line.
    assert!(
        events.iter().map(data).any(|d| d["question"] == "Create new file? (Y)es/(N)o [Yes]" && d["answer"] == "a")
    );
    // A notice of two lines: the second without `> `.
    assert!(events.iter().map(data).any(|d| d["text"] == "mkdir docs \nmkdir tests"));
    let u = usages(&events);
    assert_eq!(
        (u[0].input_tokens, u[0].cache_write_tokens, u[0].cache_read_tokens),
        (Some(2800), Some(1200), Some(8000))
    );
    assert_eq!((u[0].cost_usd, u[1].cost_usd, u[1].input_tokens), (Some(0.01), None, Some(950)));
    assert_eq!(u[0].model.as_deref(), Some("claude-3-5-sonnet-20240620"));
    let (plain, _) = read(&common::own_corpus().join("aider/no-line-breaks").join(CHAT));
    // Without the line breaks, an answer's heading reads as a prompt and its quote as a notice.
    assert_eq!(texts(&plain, Role::User), ["Explain main.py\nin two lines.", "Overview"]);
    assert_eq!(texts(&plain, Role::Assistant), ["It prints a greeting."]);
}

#[test]
fn a_prompt_history_line_that_is_no_entry_is_reported_once() {
    let path = common::own_corpus().join("aider/cache-commands-and-headings").join(INPUT);
    let (events, report) = read(&path);
    assert_eq!(
        (report.lines, report.lines_diagnosed, report.diagnostics.len()),
        (common::non_empty_lines(&path), 1, 1)
    );
    assert_eq!(report.diagnostics[0].line, 10);
    let sessions: Vec<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
    assert_eq!(
        sessions,
        ["2024-06-01T09:00:00-L2", "2024-06-01T09:00:00-L2", "2024-06-01T09:30:00-L39", "prompt-history-2024-05-31"]
    );
}

#[test]
fn aider_files_are_told_by_name_or_first_line() {
    let dir = common::own_corpus().join("aider");
    let found: Vec<_> =
        common::session_files(&dir).into_iter().map(|(p, r)| (p.file_name().unwrap().to_owned(), r.name())).collect();
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|(_, r)| *r == "aider"));
    let renamed = std::env::temp_dir().join(format!("aider-sniff-{}.md", std::process::id()));
    std::fs::copy(dir.join("no-line-breaks").join(CHAT), &renamed).unwrap();
    let (inputs, _) = agentlog::pipeline::expand(&[renamed.display().to_string()]);
    let (groups, errors) = agentlog::pipeline::plan(&inputs, None, &|_| None, &Default::default());
    std::fs::remove_file(&renamed).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(groups[0].items[0].reader.name(), "aider");
}
