//! Every reader over every corpus file: no panic, every line accounted for, the same events on
//! a second run, and ids that do not depend on where the file lives.

mod common;

use common::{all_session_files, non_empty_lines, read_file};

#[test]
fn every_non_empty_line_becomes_events_or_one_diagnostic() {
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (events, report) = read_file(reader, &path, &name);
        let lines = non_empty_lines(&path);
        assert_eq!(report.lines, lines, "{name}: lines read");
        assert_eq!(
            report.lines_mapped + report.diagnosed(),
            lines,
            "{name}: mapped {} + diagnosed {} != {lines} lines",
            report.lines_mapped,
            report.diagnostics.len()
        );
        assert_eq!(report.events, events.len() as u64, "{name}: events counted");
        if report.lines_mapped > 0 {
            assert!(!events.is_empty(), "{name}: mapped lines gave no events");
        }
    }
}

#[test]
fn a_second_read_gives_identical_events() {
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (first, _) = read_file(reader, &path, &name);
        let (second, _) = read_file(reader, &path, &name);
        assert!(first == second, "{name}: two reads differ");
    }
}

#[test]
fn event_ids_do_not_depend_on_the_folder() {
    for (path, reader) in all_session_files() {
        let here = path.display().to_string();
        // A memory file belongs to its project, named by the folder two levels up
        // (`<project>/memory/<name>.md`): that much of the path moves with it.
        // A file under a session's `subagents/` folder whose records name no session (a workflow
        // journal) belongs to the session that folder names: from there the path moves with it.
        let subagents = path.iter().rev().position(|c| c == "subagents");
        // A Cline VS Code task's files have no session id of their own: the task is the folder.
        let task_file =
            path.file_name().is_some_and(|n| n == "api_conversation_history.json" || n == "ui_messages.json");
        let kept = if path.parent().and_then(|p| p.file_name()).is_some_and(|n| n == "memory") {
            3
        } else if task_file {
            2
        } else {
            subagents.map_or(1, |i| i + 2)
        };
        let tail: Vec<_> = path.iter().rev().take(kept).collect();
        let tail: std::path::PathBuf = tail.into_iter().rev().collect();
        let elsewhere = format!("/some/other/place/{}", tail.display());
        let (a, _) = read_file(reader, &path, &here);
        let (b, _) = read_file(reader, &path, &elsewhere);
        let ids = |events: &[agentlog::model::Event]| events.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        // What a side file beside the session adds (Factory Droid's `<id>.settings.json`, Kiro
        // CLI's `<id>.json`: events whose record type names the file) comes last, and only where
        // the session lies beside it.
        let from_side_file =
            |e: &agentlog::model::Event| e.source.record_type.as_deref().is_some_and(|t| t.ends_with(".json"));
        let a: Vec<_> = a.into_iter().filter(|e| !from_side_file(e)).collect();
        assert_eq!(ids(&a), ids(&b), "{here}: ids changed with the folder");
    }
}

#[test]
fn event_ids_are_unique_within_a_file_and_seq_counts_up() {
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (events, _) = read_file(reader, &path, &name);
        let mut ids = std::collections::HashSet::new();
        for (i, e) in events.iter().enumerate() {
            assert!(ids.insert(e.id.clone()), "{name}: duplicate id {} at line {}", e.id, e.source.line);
            assert_eq!(e.seq, i as u64, "{name}: seq");
            assert_eq!(e.source.file, name);
        }
    }
}

#[test]
fn the_jsonl_writer_writes_what_serde_writes() {
    // The JSONL writer encodes events by hand for speed; its lines must be serde's, byte for byte.
    let mut checked = 0;
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (events, _) = read_file(reader, &path, &name);
        for e in &events {
            let mut ours = Vec::new();
            agentlog::write::encode::event(e, &mut ours);
            let mut serde = serde_json::to_vec(e).unwrap();
            serde.push(b'\n');
            assert!(
                ours == serde,
                "{name} line {}:\nours:  {}serde: {}",
                e.source.line,
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&serde)
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} events checked");
}

/// Every event of both corpora, read as `convert` reads them: through the pipeline, each
/// file's reader told from its content, the files of a Claude Code project with one state.
fn corpus_events() -> Vec<agentlog::model::Event> {
    struct Collect(Vec<agentlog::model::Event>);
    impl agentlog::pipeline::Destination for Collect {
        fn begin(&mut self, _: &str) -> std::io::Result<()> {
            Ok(())
        }
        fn event(&mut self, event: agentlog::model::Event) -> std::io::Result<()> {
            self.0.push(event);
            Ok(())
        }
        fn end(&mut self, outcome: agentlog::pipeline::Outcome) -> std::io::Result<()> {
            assert!(outcome.result.is_ok(), "{}: {:?}", outcome.name, outcome.result.err());
            Ok(())
        }
    }
    let mut roots = vec![common::own_corpus().display().to_string()];
    roots.extend(common::shared_corpus().map(|p| p.display().to_string()));
    let (inputs, errors) = agentlog::pipeline::expand(&roots);
    assert!(errors.is_empty(), "{errors:?}");
    let settings = agentlog::read::Settings::default();
    let (groups, errors) = agentlog::pipeline::plan(&inputs, None, &|_| None, &settings);
    assert!(errors.is_empty(), "{errors:?}");
    let mut collect = Collect(Vec::new());
    agentlog::pipeline::run(&groups, &mut collect, &settings, &agentlog::pipeline::Prepare::Nothing).unwrap();
    collect.0
}

#[test]
fn every_writer_takes_the_whole_corpus_and_formats_agentlog_reads_give_it_back() {
    use agentlog::write::{Options, Target, WRITERS};
    let events = corpus_events();
    // The own corpus holds 343 events by itself.
    assert!(events.len() > common::at_least(1000, 300), "only {} events", events.len());
    // Agents' own formats (`--to claude-code`) write a file per session: tests/handoff.rs.
    for writer in WRITERS.iter().filter(|w| agentlog::model::Agent::from_name(w.name()).is_none()) {
        let dir = tempfile::tempdir().unwrap();
        let extension = writer.extensions().first().copied().unwrap_or("jsonl");
        let path = dir.path().join(format!("out.{extension}"));
        let mut sink = writer.open(Target::Path(path.clone()), &Options::default()).unwrap();
        for e in &events {
            sink.event(e).unwrap();
        }
        sink.finish().unwrap();
        let written = std::fs::read(&path).unwrap();
        assert!(!written.is_empty(), "{}: nothing written", writer.name());
        for side in writer.side_files(&path, &Options::default()) {
            assert!(side.is_file(), "{}: {} is missing", writer.name(), side.display());
        }
        // A sink that takes encoded events writes the same bytes from them.
        let encoded_path = dir.path().join(format!("encoded.{extension}"));
        let mut sink = writer.open(Target::Path(encoded_path.clone()), &Options::default()).unwrap();
        if let Some(encoded) = sink.encoded() {
            let mut bytes = Vec::new();
            events.iter().for_each(|e| (encoded.encoder())(e, &mut bytes));
            encoded.write_encoded(&bytes).unwrap();
            sink.finish().unwrap();
            assert!(std::fs::read(&encoded_path).unwrap() == written, "{}: encoded bytes differ", writer.name());
        }
        // What agentlog writes in a format it also reads comes back the same (an interchange
        // document groups events by session).
        if let Some(reader) = agentlog::read::reader(writer.name()) {
            let (mut back, report) = read_file(reader, &path, "out");
            assert!(report.diagnostics.is_empty(), "{}: {:?}", writer.name(), report.diagnostics.first());
            assert_eq!(back.len(), events.len(), "{}: events read back", writer.name());
            let mut sent = events.clone();
            for list in [&mut back, &mut sent] {
                list.sort_by(|a, b| {
                    (a.agent, &a.session_id, &a.source.file, a.seq).cmp(&(
                        b.agent,
                        &b.session_id,
                        &b.source.file,
                        b.seq,
                    ))
                });
            }
            assert!(back == sent, "{}: events read back differ", writer.name());
        }
    }
}

/// The contents of a CommonMark document's code blocks, and of its raw HTML.
fn code_and_html(text: &str) -> (std::collections::HashSet<String>, String) {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let (mut blocks, mut html, mut block) = (std::collections::HashSet::new(), String::new(), None::<String>);
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => block = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => {
                blocks.insert(block.take().unwrap());
            }
            Event::Text(t) if block.is_some() => block.as_mut().unwrap().push_str(&t),
            Event::Html(h) | Event::InlineHtml(h) => html.push_str(&h),
            _ => {}
        }
    }
    (blocks, html)
}

#[test]
fn markdown_transcripts_hold_every_prompt_answer_and_tool_output_of_the_corpus() {
    use agentlog::model::{Payload, Role};
    let events = corpus_events();
    let text = common::markdown(&events);
    let (blocks, _) = code_and_html(&text);
    let (mut messages, mut outputs) = (0, 0);
    for e in events.iter().filter(|e| !e.copied) {
        match &e.payload {
            // A prompt from the prompt history that the transcript holds is shown there.
            Payload::Message(m)
                if m.prompt_history.is_some_and(|h| h != agentlog::model::PromptHistory::NoTranscript) => {}
            Payload::Message(m)
                if !e.injected && matches!(m.role, Role::User | Role::Assistant) && !m.text.trim().is_empty() =>
            {
                assert!(text.contains(m.text.trim_end()), "{} line {}", e.source.file, e.source.line);
                messages += 1;
            }
            // Each output is one code block of its own, whatever it holds.
            Payload::ToolOutput(o) if !o.text.is_empty() => {
                // CommonMark reads `\r\n` and a lone `\r` as line endings.
                let lines = o.text.replace("\r\n", "\n").replace('\r', "\n");
                let content = if lines.ends_with('\n') { lines } else { format!("{lines}\n") };
                assert!(
                    blocks.contains(&content),
                    "{} line {}: output not one code block",
                    e.source.file,
                    e.source.line
                );
                outputs += 1;
            }
            _ => {}
        }
    }
    // The own corpus holds 98 such messages and 23 outputs by itself.
    let (least_messages, least_outputs) = (common::at_least(1000, 90), common::at_least(1000, 20));
    assert!(messages > least_messages && outputs > least_outputs, "{messages} messages, {outputs} outputs");
}

#[test]
fn markdown_from_hostile_text_stays_in_its_code_blocks() {
    use agentlog::model::{Event, Message, Payload, Role, ToolCall, ToolOutput};
    let hostile = "```\n<script>alert(1)</script>\n# not a heading\n`````` <img src=x onerror=alert(1)>";
    let call = ToolCall {
        call_id: Some("c1".into()),
        name: "Bash`<b>".into(),
        tool_kind: None,
        input: None,
        input_text: Some(hostile.into()),
    };
    let output = ToolOutput {
        tool_kind: None,
        failed: None,
        call_id: Some("c1".into()),
        name: None,
        text: hostile.into(),
        parts: Vec::new(),
        is_error: Some(true),
        exit_code: Some(1),
        duration_ms: None,
        result: None,
    };
    let events = [
        Event::new("s".into(), Payload::Message(Message::from_parts(Role::User, Vec::new()))),
        Event::new("s".into(), Payload::ToolCall(call)),
        Event::new("s".into(), Payload::ToolOutput(output)),
        Event::new(
            "s".into(),
            Payload::Message(Message {
                role: Role::Assistant,
                text: "```\nleft open".into(),
                parts: Vec::new(),
                phase: None,
                prompt_history: None,
            }),
        ),
        Event::new(
            "s".into(),
            Payload::Message(Message {
                role: Role::User,
                text: "after".into(),
                parts: Vec::new(),
                phase: None,
                prompt_history: None,
            }),
        ),
    ];
    let text = common::markdown(&events);
    let (blocks, html) = code_and_html(&text);
    assert!(blocks.contains(&format!("{hostile}\n")), "{text}");
    assert!(!html.contains("<script") && !html.contains("<img") && !html.contains("<b>"), "raw HTML: {html}");
    // The fence the answer left open is closed: the next prompt is a heading again.
    let headings = pulldown_cmark::Parser::new(&text)
        .filter(|e| matches!(e, pulldown_cmark::Event::Start(pulldown_cmark::Tag::Heading { .. })))
        .count();
    assert_eq!(headings, 4, "session, two prompts, one answer:\n{text}");
}

#[test]
fn markdown_into_a_directory_gives_each_session_a_file_and_an_index_that_links_them_all() {
    use agentlog::model::{Payload, Role};
    use agentlog::write::{Options, Target, writer};
    let events = corpus_events();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("transcripts/");
    let mut sink = writer("markdown").unwrap().open(Target::Path(root.clone()), &Options::default()).unwrap();
    for e in &events {
        sink.event(e).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    let index = std::fs::read_to_string(root.join("index.md")).unwrap();
    // Every link of the index names a file that exists; every file is linked once.
    let links: Vec<&str> = index.split("](<").skip(1).map(|l| &l[..l.find(">)").unwrap()]).collect();
    let mut files: Vec<String> = walkdir::WalkDir::new(&root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|f| f.file_type().is_file() && f.file_name() != "index.md")
        .map(|f| f.path().strip_prefix(&root).unwrap().display().to_string())
        .collect();
    files.sort();
    let mut linked: Vec<String> = links.iter().map(|l| (*l).to_owned()).collect();
    linked.sort();
    assert_eq!(linked, files);
    // Sessions with nothing to show get no file, and the index counts them.
    use agentlog::model::MetaType;
    let shown = |e: &&agentlog::model::Event| {
        !e.copied
            && match &e.payload {
                Payload::Meta(m) => matches!(
                    m.meta_type,
                    MetaType::Compaction | MetaType::Interrupt | MetaType::Rollback | MetaType::Memory
                ),
                Payload::Message(m) => {
                    m.prompt_history.is_none_or(|h| h == agentlog::model::PromptHistory::NoTranscript)
                }
                _ => true,
            }
    };
    let all: std::collections::HashSet<(&str, &str)> =
        events.iter().map(|e| (e.agent.as_str(), e.session_id.as_str())).collect();
    let with_something: std::collections::HashSet<(&str, &str)> =
        events.iter().filter(shown).map(|e| (e.agent.as_str(), e.session_id.as_str())).collect();
    let empty = all.len() - with_something.len();
    assert!(empty > 0 && index.contains(&format!("*{empty} more sessions have nothing to show")), "{empty}: {index}");
    assert!(files.len() >= with_something.len(), "{} files for {} sessions", files.len(), with_something.len());
    // Each prompt is in a file of its session.
    let texts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(root.join(f)).unwrap()).collect();
    for e in events.iter().filter(|e| !e.copied && !e.injected) {
        if let Payload::Message(m) = &e.payload
            && m.role == Role::User
            && !m.text.trim().is_empty()
            && m.prompt_history.is_none_or(|h| h == agentlog::model::PromptHistory::NoTranscript)
        {
            let ours = files.iter().zip(&texts).filter(|(f, _)| f.starts_with(&format!("{}/", e.agent.as_str())));
            assert!(
                ours.filter(|(_, t)| t.contains(&format!("`{}`", e.session_id)) || t.contains(&e.session_id))
                    .any(|(_, t)| t.contains(m.text.trim_end())),
                "{} line {}",
                e.source.file,
                e.source.line
            );
        }
    }
}

#[test]
fn markdown_shows_edits_as_diffs_and_plans_as_checklists() {
    use agentlog::model::Payload;
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let events = corpus_events();
    let text = common::markdown(&events);
    let mut diffs: Vec<String> = Vec::new();
    let mut block: Option<String> = None;
    for event in Parser::new(&text) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) if &*info == "diff" => {
                block = Some(String::new())
            }
            Event::Text(t) if block.is_some() => block.as_mut().unwrap().push_str(&t),
            Event::End(TagEnd::CodeBlock) => diffs.extend(block.take()),
            _ => {}
        }
    }
    let added: std::collections::HashSet<&str> = diffs
        .iter()
        .flat_map(|d| d.lines())
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| &l[1..])
        .collect();
    let mut edits = 0;
    for e in events.iter().filter(|e| !e.copied) {
        let Payload::ToolCall(c) = &e.payload else { continue };
        let Some(input) = c.input.as_ref().and_then(|i| serde_json::from_str::<serde_json::Value>(i.get()).ok()) else {
            continue;
        };
        if let (Some(old), Some(new)) = (input["old_string"].as_str(), input["new_string"].as_str()) {
            // Every line the edit adds is a `+` line of a diff.
            let old: std::collections::HashSet<&str> = old.lines().collect();
            for line in new.lines().filter(|l| !old.contains(l)) {
                assert!(added.contains(line), "{} line {}: {line:?} not in a diff", e.source.file, e.source.line);
            }
            edits += 1;
        }
    }
    // The own corpus holds one edit (`claude/hostile-text.jsonl`).
    assert!(edits >= common::at_least(20, 1), "{edits} edits");
    assert!(text.contains("\n- [x] ") && text.contains("\n- [ ] "), "plans as checklists");
}

#[test]
fn markdown_notes_a_compaction_that_opens_each_of_two_sessions() {
    use agentlog::model::{Event, Meta, MetaType, Payload};
    let compaction = |session: &str| {
        Event::new(session.into(), Payload::Meta(Meta { meta_type: MetaType::Compaction, data: None, usage: None }))
    };
    let text = common::markdown(&[compaction("a"), compaction("b")]);
    assert_eq!(text.matches("context compacted").count(), 2, "{text}");
}
