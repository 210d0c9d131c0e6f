//! HTML transcripts, and what Markdown and HTML transcripts share: headers that know the whole
//! session, subagents under the call that spawned them, the options for reasoning and folding,
//! and pages that run nothing in a real browser.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use agentlog::model::{Event, Payload, Role};
use agentlog::pipeline::{Found, events};
use assert_cmd::cargo::cargo_bin_cmd;

/// Every event under `path`, in the order a run writes them.
fn read(path: &Path) -> Vec<Event> {
    events(path)
        .unwrap()
        .filter_map(|found| match found {
            Found::Event(e) => Some(e),
            Found::Diagnostic(_) => None,
            Found::Failed(e) => panic!("{e:?}"),
        })
        .collect()
}

/// Runs `agentlog convert` with `args`, which must succeed (exit 0, or 1 for warnings).
fn convert(args: &[&str]) -> Vec<u8> {
    let out = cargo_bin_cmd!("agentlog").arg("convert").arg("-q").args(args).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn corpus(relative: &str) -> String {
    common::own_corpus().join(relative).display().to_string()
}

/// The tags and attributes an HTML transcript may hold: those the writer writes itself. Text
/// from the log must never add another.
const TAGS: &[&str] = &[
    "!DOCTYPE",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "article",
    "header",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "dl",
    "dt",
    "dd",
    "section",
    "div",
    "p",
    "pre",
    "code",
    "span",
    "details",
    "summary",
    "ul",
    "ol",
    "li",
    "a",
    "em",
    "strong",
    "del",
    "blockquote",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "input",
    "img",
];
const ATTRIBUTES: &[&str] = &[
    "lang",
    "charset",
    "name",
    "content",
    "http-equiv",
    "class",
    "id",
    "href",
    "title",
    "alt",
    "src",
    "type",
    "disabled",
    "checked",
    "start",
    "style",
];

/// Checks every tag of `html` against [`TAGS`] and [`ATTRIBUTES`], links against safe schemes
/// and images against embedded data; gives the number of tags.
fn check_tags(html: &str) -> usize {
    let mut tags = 0;
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        let end = rest[open..].find('>').map(|e| open + e).expect("every tag is closed");
        let tag = &rest[open + 1..end];
        rest = &rest[end + 1..];
        tags += 1;
        let tag = tag.trim_start_matches('/').trim_end_matches('/');
        let name = tag.split_whitespace().next().unwrap_or_default();
        assert!(TAGS.contains(&name), "tag <{name}> in: <{tag}>");
        // Attributes: name="value", values without `"` (escaped as &quot;).
        let mut attrs = tag[name.len()..].trim();
        while !attrs.is_empty() {
            let (attr, after) = attrs.split_once('=').unwrap_or((attrs, ""));
            let attr = attr.trim();
            if name == "!DOCTYPE" {
                break;
            }
            assert!(ATTRIBUTES.contains(&attr), "attribute {attr} in <{tag}>");
            if after.is_empty() {
                break;
            }
            let after = after.strip_prefix('"').unwrap_or_else(|| panic!("unquoted value in <{tag}>"));
            let (value, next) = after.split_once('"').unwrap();
            match attr {
                "href" => {
                    // A scheme is what comes before a `:` that no `/`, `?` or `#` precedes.
                    let scheme = value.split_once(':').map(|(s, _)| s).filter(|s| !s.contains(['/', '?', '#']));
                    assert!(scheme.is_none_or(|s| ["http", "https", "mailto"].contains(&s)), "link to {value}");
                }
                "src" => assert!(value.starts_with("data:image/"), "image from {value}"),
                "style" => panic!("inline style attribute in <{tag}>"),
                _ => {}
            }
            attrs = next.trim();
        }
    }
    tags
}

#[test]
fn html_of_hostile_text_holds_only_the_tags_the_writer_writes() {
    let html = String::from_utf8(convert(&[&corpus("claude/hostile-text.jsonl"), "--to", "html"])).unwrap();
    let tags = check_tags(&html);
    assert!(tags > 50, "{tags} tags");
    // The text is all there, as text.
    assert!(html.contains("&lt;script&gt;window.pwned=1;document.title=&#39;PWNED&#39;&lt;/script&gt;"), "{html}");
    assert!(html.contains("Bash&lt;b onmouseover=window.pwned=9&gt;"), "tool name");
    assert!(html.contains("/home/dev/&quot;&gt;&lt;script&gt;window.pwned=3&lt;/script&gt;"), "directory");
    // The image whose data would break out of its attribute is a placeholder, even embedded.
    let embedded =
        String::from_utf8(convert(&[&corpus("claude/hostile-text.jsonl"), "--to", "html", "--images", "embed"]))
            .unwrap();
    check_tags(&embedded);
    assert!(embedded.contains("[image: image/png,"), "placeholder");
}

#[test]
fn html_transcripts_of_the_corpora_show_every_prompt_answer_and_output() {
    let mut roots = vec![common::own_corpus()];
    roots.extend(common::shared_corpus());
    for root in roots {
        let html = String::from_utf8(convert(&[&root.display().to_string(), "--to", "html"])).unwrap();
        check_tags(&html);
        let events = read(&root);
        // Prompts from the prompt history are shown only for sessions without a transcript.
        let shown = |e: &&Event| {
            !e.copied
                && !matches!(&e.payload, Payload::Message(m)
                    if m.prompt_history.is_some_and(|h| h != agentlog::model::PromptHistory::NoTranscript))
        };
        let prompts = events
            .iter()
            .filter(shown)
            .filter(|e| matches!(&e.payload, Payload::Message(m) if m.role == Role::User && !e.injected))
            .count();
        let answers = events
            .iter()
            .filter(shown)
            .filter(|e| {
                matches!(&e.payload, Payload::Message(m)
                    if m.role == Role::Assistant && !e.injected && !(m.text.trim().is_empty() && m.parts.iter().all(|p| p.text().is_some())))
            })
            .count();
        assert_eq!(html.matches("<section class=\"turn user\">").count(), prompts, "{}: prompts", root.display());
        assert_eq!(html.matches("<section class=\"turn assistant\">").count(), answers, "{}: answers", root.display());
        let mut outputs = 0;
        for e in events.iter().filter(shown) {
            if let Payload::ToolOutput(o) = &e.payload
                && !o.text.is_empty()
            {
                let escaped = o.text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
                let escaped = escaped.replace('"', "&quot;").replace('\'', "&#39;");
                assert!(
                    html.contains(&format!("<pre><code>{escaped}</code></pre>")),
                    "{} line {}",
                    e.source.file,
                    e.source.line
                );
                outputs += 1;
            }
        }
        assert!(prompts > 10 && answers > 10 && outputs > 10, "{prompts} {answers} {outputs}");
    }
}

#[test]
fn the_header_knows_what_only_the_end_of_the_session_says() {
    // The custom title is the file's last line; the session runs 09:00 to 09:07.
    let md = String::from_utf8(convert(&[&corpus("claude/titles.jsonl"), "--to", "md"])).unwrap();
    let header = &md[..md.find("### User").expect("a prompt")];
    assert!(header.starts_with("## orders pagination\n"), "{header}");
    assert!(header.contains("- ended: 2026-01-09 12:00:02 UTC (0 min)"), "{header}");
    assert!(header.contains("- activity: 1 prompt, 0 tool calls"), "{header}");
    assert!(header.contains("- tokens: 3 input, 5,000 cache read, 100 cache write, 20 output (1 response"), "{header}");
}

#[test]
fn a_subagent_is_shown_under_the_call_that_spawned_it() {
    for sample in ["claude/subagents-2.1", "claude/subagents-2.0"] {
        let md = String::from_utf8(convert(&[&corpus(sample), "--to", "md"])).unwrap();
        let call = md.find("**subagent** `Task`").or_else(|| md.find("**subagent** `Agent`")).expect(sample);
        let folded = md.find("<details><summary>subagent ").expect(sample);
        let closed = md[folded..].find("</blockquote>\n</details>").expect(sample) + folded;
        assert!(call < folded, "{sample}: the subagent comes after its call");
        // Its prompt is inside the fold, and the main thread's next section after it.
        let subagent_prompt = md[folded..closed].find("### User").expect(sample);
        assert!(subagent_prompt > 0, "{sample}");
        assert_eq!(md.matches("<details><summary>subagent ").count(), 1, "{sample}:\n{md}");
    }
    // A subagent whose spawning call is not in the session still shows, after the rest.
    let dir = tempfile::tempdir().unwrap();
    let sample = common::own_corpus().join("claude/subagents-2.1");
    let session = std::fs::read_dir(&sample).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_dir()).unwrap();
    let copy = dir.path().join(session.file_name().unwrap());
    common::copy_tree(&session, &copy);
    let md = String::from_utf8(convert(&[&dir.path().display().to_string(), "--to", "md"])).unwrap();
    assert!(md.contains("<details><summary>subagent "), "{md}");
}

#[test]
fn a_subagent_read_after_its_session_goes_back_under_its_call() {
    use agentlog::model::{Message, ToolCall, ToolOutput};
    let text = |role, text: &str| {
        Payload::Message(Message { role, text: text.into(), parts: Vec::new(), phase: None, prompt_history: None })
    };
    let call = Payload::ToolCall(ToolCall {
        tool_kind: None,
        call_id: Some("c1".into()),
        name: "Task".into(),
        input: Some(agentlog::model::Json::from_value(&serde_json::json!({ "description": "look around" }))),
        input_text: None,
    });
    let output = Payload::ToolOutput(ToolOutput {
        tool_kind: None,
        failed: None,
        call_id: Some("c1".into()),
        name: None,
        text: "found it".into(),
        parts: Vec::new(),
        is_error: None,
        exit_code: None,
        duration_ms: None,
        result: None,
    });
    let main = [text(Role::User, "go"), call, output, text(Role::Assistant, "main thread goes on")];
    let side = [text(Role::User, "look around"), text(Role::Assistant, "subagent answer")];
    let mut events: Vec<Event> = main.into_iter().map(|p| Event::new("s".into(), p)).collect();
    events.extend(side.into_iter().map(|p| {
        let mut e = Event::new("s".into(), p);
        (e.is_sidechain, e.agent_id, e.parent_call_id) = (true, Some("x".into()), Some("c1".into()));
        e
    }));
    let md = common::markdown(&events);
    let at = |what: &str| md.find(what).unwrap_or_else(|| panic!("{what}:\n{md}"));
    assert!(at("found it") < at("<details><summary>subagent x: look around</summary>"), "{md}");
    assert!(at("subagent answer") < at("main thread goes on"), "{md}");
}

#[test]
fn a_session_whose_subagent_file_comes_after_another_session_is_still_one_transcript() {
    // Name order reads the session, then another session, then the first one's subagent.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    common::copy_tree(&common::own_corpus().join("claude/subagents-2.0"), &project);
    std::fs::copy(common::own_corpus().join("claude/user-and-assistant-text.jsonl"), project.join("9000.jsonl"))
        .unwrap();
    for jobs in ["1", "2"] {
        let out = dir.path().join(format!("out-{jobs}/"));
        convert(&[&project.display().to_string(), "-o", &out.display().to_string(), "--to", "md", "-j", jobs]);
        let files: Vec<PathBuf> = walkdir::WalkDir::new(out.join("claude-code"))
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.is_file())
            .collect();
        assert_eq!(files.len(), 2, "one file per session: {files:?}");
        let main = std::fs::read_to_string(out.join("claude-code/claude-code-8b000000-0000-4000-8000-000000000009.md"))
            .unwrap();
        let call = main.find("**subagent** `Task`").expect("the spawning call");
        let folded = main.find("<details><summary>subagent a1b2c3d").expect("the subagent");
        assert!(call < folded, "{main}");
    }
}

#[test]
fn model_changes_and_rolled_back_turns_are_noted() {
    use agentlog::model::{Message, ToolCall};
    let message = |role, text: &str, model: &str, rolled_back: bool| {
        let payload =
            Payload::Message(Message { role, text: text.into(), parts: Vec::new(), phase: None, prompt_history: None });
        let mut e = Event::new("s".into(), payload);
        e.context.model = Some(model.into());
        e.rolled_back = rolled_back;
        e
    };
    let shell = Event::new(
        "s".into(),
        Payload::ToolCall(ToolCall {
            tool_kind: None,
            call_id: None,
            name: "user_shell".into(),
            input: Some(agentlog::model::Json::from_value(&serde_json::json!({ "command": "ls" }))),
            input_text: None,
        }),
    );
    let events = [
        message(Role::User, "one", "m1", false),
        message(Role::Assistant, "first", "m1", false),
        message(Role::Assistant, "again", "m1", false),
        message(Role::User, "two", "m1", true),
        message(Role::Assistant, "gone", "m2", true),
        message(Role::User, "three", "m2", false),
        message(Role::Assistant, "kept", "m2", false),
        shell,
    ];
    let md = common::markdown(&events);
    let at = |what: &str| md.find(what).unwrap_or_else(|| panic!("{what}:\n{md}"));
    assert_eq!(md.matches("model changed to").count(), 1, "{md}");
    assert!(at("again") < at("model changed to m2") && at("model changed to m2") < at("gone"), "{md}");
    assert!(at("first") < at("rolled back: what follows") && at("rolled back: what follows") < at("two"), "{md}");
    assert!(at("gone") < at("end of the rolled-back turns") && at("end of the rolled-back turns") < at("three"));
    assert!(md.contains("**shell** `user_shell`: `ls`"), "{md}");
}

#[test]
fn images_are_placeholders_embedded_or_files_beside_the_transcript() {
    let sample = corpus("claude/user-record-classes.jsonl");
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";
    let placeholder = String::from_utf8(convert(&[&sample, "--to", "html"])).unwrap();
    assert!(placeholder.contains("[image: image/png, 0 KB]") && !placeholder.contains("<img"), "{placeholder}");
    let embedded = String::from_utf8(convert(&[&sample, "--to", "html", "--images", "embed"])).unwrap();
    assert!(embedded.contains(&format!("src=\"data:image/png;base64,{png}")), "embedded");
    let dir = tempfile::tempdir().unwrap();
    for (out, folder) in [("t.md", "t.files"), ("pages/", "pages/files")] {
        let out = dir.path().join(out);
        convert(&[&sample, "--images", "files", "--to", "md", "-o", &out.display().to_string()]);
        let files: Vec<PathBuf> =
            std::fs::read_dir(dir.path().join(folder)).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let bytes = std::fs::read(&files[0]).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG file");
        // The transcript links it by a path relative to itself.
        let transcript = if out.is_dir() {
            let folder = out.join("claude-code");
            std::fs::read_dir(folder).unwrap().next().unwrap().unwrap().path()
        } else {
            out.clone()
        };
        let text = std::fs::read_to_string(&transcript).unwrap();
        let link = text.split("![image](<").nth(1).and_then(|l| l.split(">)").next()).expect("an image link");
        assert_eq!(transcript.parent().unwrap().join(link).canonicalize().unwrap(), files[0].canonicalize().unwrap());
    }
    // Standard output has no beside.
    let out = cargo_bin_cmd!("agentlog")
        .args(["convert", "-q", &sample, "--to", "md", "--images", "files"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_subagent_thread_of_its_own_links_to_the_session_that_spawned_it() {
    use agentlog::model::{Agent, Message};
    use agentlog::write::{Options, Target, writer};
    let message = |session: &str, role, text: &str| {
        let payload =
            Payload::Message(Message { role, text: text.into(), parts: Vec::new(), phase: None, prompt_history: None });
        let mut e = Event::new(session.into(), payload);
        e.agent = Agent::Codex;
        if session == "child" {
            (e.is_sidechain, e.agent_id, e.parent_session_id) = (true, Some("reviewer".into()), Some("parent".into()));
        }
        e
    };
    let events = [
        message("parent", Role::User, "review it"),
        message("parent", Role::Assistant, "spawning a reviewer"),
        message("child", Role::User, "look for injections"),
        message("child", Role::Assistant, "none found"),
    ];
    let render = |format: &str, target: Target| {
        let mut sink = writer(format).unwrap().open(target, &Options::default()).unwrap();
        for e in &events {
            sink.event(e).unwrap();
            sink.end_group().unwrap();
        }
        sink.finish().unwrap();
    };
    let mut page = Vec::new();
    render("html", Target::Stream(Box::new(&mut page)));
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("<article class=\"session\" id=\"session-codex-parent\">"), "{page}");
    assert!(page.contains("<dt>subagent of</dt><dd><a href=\"#session-codex-parent\"><code>parent</code></a></dd>"));
    // The thread's own prompt is its session's, not a fold of a subagent inside it.
    assert!(page.contains("1 prompt, 0 tool calls") && !page.contains("<details class=\"subagent\">"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    render("markdown", Target::Path(dir.path().join("out/")));
    let child = std::fs::read_to_string(dir.path().join("out/codex/codex-child.md")).unwrap();
    assert!(child.contains("- subagent of: [`parent`](<codex-parent.md>)"), "{child}");
}

#[test]
fn reasoning_is_folded_shown_in_full_or_left_out_and_outputs_fold_where_asked() {
    let sample = corpus("claude/user-and-assistant-text.jsonl");
    let thinking = "A GET /health route returning 200 is enough.";
    let folded = String::from_utf8(convert(&[&sample, "--to", "md"])).unwrap();
    assert!(folded.contains(&format!("<details><summary>reasoning</summary>\n\n{thinking}")), "{folded}");
    let full = String::from_utf8(convert(&[&sample, "--to", "md", "--reasoning", "full"])).unwrap();
    assert!(full.contains(&format!("*reasoning*\n\n{thinking}")), "{full}");
    let omitted = String::from_utf8(convert(&[&sample, "--to", "md", "--reasoning", "omit"])).unwrap();
    assert!(!omitted.contains(thinking) && !omitted.contains("reasoning"), "{omitted}");
    // Every output folds at one line.
    let outputs = folded.matches("*output, ").count();
    assert!(outputs > 0, "{folded}");
    let tight = String::from_utf8(convert(&[&sample, "--to", "md", "--fold-lines", "0"])).unwrap();
    assert_eq!(tight.matches("*output, ").count(), 0, "{tight}");
    assert_eq!(tight.matches("<details><summary>output, ").count(), outputs, "{tight}");
}

#[test]
fn a_directory_of_html_transcripts_has_an_index_linking_each() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pages/");
    convert(&[&common::own_corpus().display().to_string(), "-o", &out.display().to_string(), "--to", "html"]);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    check_tags(&index);
    let links: BTreeSet<String> =
        index.split("<a href=\"").skip(1).map(|l| l[..l.find('"').unwrap()].replace("&amp;", "&")).collect();
    let files: BTreeSet<String> = walkdir::WalkDir::new(&out)
        .into_iter()
        .map(Result::unwrap)
        .filter(|f| f.file_type().is_file() && f.file_name() != "index.html")
        .map(|f| f.path().strip_prefix(&out).unwrap().display().to_string())
        .collect();
    assert!(files.len() > 10, "{files:?}");
    assert_eq!(links, files);
    for file in &files {
        let page = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"), "{file}");
        check_tags(&page);
    }
}

/// Loads transcripts in headless Chromium: the hostile one (with and without its Content
/// Security Policy), one Claude Code session and one Codex session; nothing may run, folded
/// sections must open. Screenshots go to `target/transcript-screenshots/`. Needs Debian's
/// chromium and chromium-driver and Python's selenium (CI installs them); elsewhere the test
/// skips with a notice.
#[test]
fn html_transcripts_run_nothing_in_a_real_browser() {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromedriver"].iter().all(|p| Path::new(p).exists());
    if !chromium {
        let excused = std::env::var_os("AGENTLOG_NO_BROWSER").is_some();
        assert!(
            std::env::var_os("CI").is_none() || excused,
            "CI must install chromium and chromium-driver (see .ci/run)"
        );
        eprintln!("notice: chromium or chromedriver is not installed; skipping the browser check");
        return;
    }
    if !common::python_has("selenium") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page_with = |input: String, name: &str, args: &[&str]| {
        let path = dir.path().join(name);
        convert(&[&[input.as_str(), "-o", &path.display().to_string()], args].concat());
        path.display().to_string()
    };
    let page = |input: String, name: &str| page_with(input, name, &[]);
    let mut pages = vec![page(corpus("claude/hostile-text.jsonl"), "hostile.html")];
    pages.push(page_with(corpus("claude/user-record-classes.jsonl"), "images.html", &["--images", "files"]));
    pages.push(page_with(corpus("claude/user-record-classes.jsonl"), "embedded.html", &["--images", "embed"]));
    pages.push(page(corpus("claude/subagents-2.1"), "claude-subagents.html"));
    pages.push(page(corpus("codex/compacted-and-rolled-back.jsonl"), "codex-compaction.html"));
    if let Some(shared) = common::shared_corpus() {
        let claude = shared.join("claude/claude-code-log/-experiments-worktrees");
        pages.push(page(claude.display().to_string(), "claude-code.html"));
        let codex = shared.join("codex/acidicsoil-session-view");
        pages.push(page(codex.display().to_string(), "codex.html"));
    }
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/transcript-screenshots");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/browser.py");
    let out = Command::new("python3").arg(script).arg(&shots).args(&pages).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("browser checks passed"), "{stdout}");
    assert_eq!(stdout.matches("nothing ran").count(), pages.len() + 1, "{stdout}");
}

/// Every prompt and assistant text that claude-code-log (from PyPI) renders for a session of
/// the shared corpus is in agentlog's Markdown and HTML transcripts of it
/// (`tests/independent/compare_claude_code_log.py`, which names the differences by design).
#[test]
fn every_text_claude_code_log_renders_is_in_our_transcripts() {
    let Some(shared) = common::shared_corpus() else { return };
    if !common::python_has("claude_code_log") {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/compare_claude_code_log.py");
    let agentlog = assert_cmd::cargo::cargo_bin!("agentlog");
    let out = Command::new("python3").arg(script).arg(agentlog).arg(shared.join("claude")).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let summary = stdout.lines().last().unwrap_or_default();
    let checked: u64 = summary.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(checked > 500 && summary.contains(", 0 missing"), "{summary}");
}
