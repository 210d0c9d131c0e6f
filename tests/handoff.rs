//! Sessions written as another agent's files (`--to claude-code`, `--to codex`) and handed over
//! with `agentlog handoff`: every session of every corpus becomes a file the target's reader
//! reads without a problem, with the source's prompts and answers in order; the command refuses
//! what it must. That the agents themselves resume the files is checked with the real agents in
//! `tests/agents/test_handoff.py`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentlog::model::{Event, MetaType, Payload, Role};
use agentlog::write::{Options, Target};
use assert_cmd::cargo::cargo_bin_cmd;

/// Every event of the own corpus, the shared corpus and the other agents' samples.
fn all_events() -> Vec<Event> {
    struct Collect(Vec<Event>);
    impl agentlog::pipeline::Destination for Collect {
        fn begin(&mut self, _name: &str) -> std::io::Result<()> {
            Ok(())
        }
        fn event(&mut self, event: Event) -> std::io::Result<()> {
            self.0.push(event);
            Ok(())
        }
        fn end(&mut self, _outcome: agentlog::pipeline::Outcome) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut roots = vec![common::own_corpus().display().to_string()];
    roots.extend(common::shared_corpus().map(|p| p.display().to_string()));
    roots.extend(common::other_agents().map(|p| p.display().to_string()));
    let (inputs, _) = agentlog::pipeline::expand(&roots);
    let settings = agentlog::read::Settings::default();
    let (groups, _) = agentlog::pipeline::plan(&inputs, None, &|_| None, &settings);
    let mut collect = Collect(Vec::new());
    agentlog::pipeline::run(&groups, &mut collect, &settings, &agentlog::pipeline::Prepare::Nothing).unwrap();
    collect.0
}

/// The texts of the prompts the user typed and of the model's answers in a session's main
/// thread, in order, each marked with who said it.
fn said(events: &[&Event]) -> Vec<(Role, String)> {
    events
        .iter()
        .filter(|e| e.agent_id.is_none() && !e.is_sidechain && !e.rolled_back && !e.injected)
        .filter_map(|e| match &e.payload {
            // (A message with nothing but a file the source did not keep has no text to carry.)
            Payload::Message(m)
                if m.prompt_history.is_none()
                    && !m.text.is_empty()
                    && matches!(m.role, Role::User | Role::Assistant) =>
            {
                Some((m.role, m.text.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The session a written file was made from: (agent, session id), from the mark agentlog puts
/// in it.
fn source_of(path: &Path) -> (String, String) {
    let text = common::text(path);
    let first: serde_json::Value =
        serde_json::from_str(text.lines().next().unwrap_or_else(|| panic!("{} is empty", path.display()))).unwrap();
    let mark = first.get("agentlogSource").or_else(|| first["payload"].get("agentlog_source")).unwrap();
    (mark["agent"].as_str().unwrap().to_owned(), mark["session"].as_str().unwrap().to_owned())
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        walkdir(dir).into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    files.sort();
    files
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walkdir(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn every_session_becomes_a_file_the_target_agents_reader_reads_with_its_prompts_and_answers() {
    let events = all_events();
    let mut sessions: BTreeMap<(String, String), Vec<&Event>> = BTreeMap::new();
    for e in &events {
        sessions.entry((e.agent.as_str().to_owned(), e.session_id.clone())).or_default().push(e);
    }
    for (target, reader) in [("claude-code", "claude"), ("codex", "codex")] {
        let writer = agentlog::write::writer(target).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("out/");
        let mut sink = writer.open(Target::Path(root.clone()), &Options::default()).unwrap();
        for e in &events {
            sink.event(e).unwrap();
        }
        sink.finish().unwrap();
        let files = jsonl_files(&root);
        assert!(files.len() > common::at_least(100, 40), "{target}: only {} files", files.len());
        let reader = agentlog::read::reader(reader).unwrap();
        let mut carried = 0;
        for file in &files {
            let (back, report) = common::read_file(reader, file, "written");
            assert!(report.diagnostics.is_empty(), "{target} {}: {:?}", file.display(), report.diagnostics.first());
            // Read back, the file says what the source session said, in the same order.
            let source = source_of(file);
            let from = &sessions[&source];
            // Nothing unknown, but what the source did not know either (records of one agent's
            // session copied as they were).
            let unknown = |events: &mut dyn Iterator<Item = &Event>| {
                events.filter(|e| common::meta_type(e) == Some(MetaType::Unknown)).count()
            };
            let limit = if source.0 == target { unknown(&mut from.iter().copied()) } else { 0 };
            assert!(unknown(&mut back.iter()) <= limit, "{target} {}: unknown records", file.display());
            // (Calls of tools the target does not have, and their outputs, are text of their own.)
            let mut back_said = said(&back.iter().collect::<Vec<_>>());
            back_said.retain(|(_, text)| !text.starts_with("[Called the ") && !text.starts_with("[Output of `"));
            assert_eq!(back_said, said(from), "{target} {}: from {source:?}", file.display());
            // Token usage stays the source's.
            assert!(common::usages(&back).is_empty(), "{target} {}: usage written", file.display());
            carried += 1;
        }
        let card = common::text(&root.join("README.md"));
        assert!(card.contains("tags:\n- agent-traces"), "{card}");
        assert!(card.contains(&format!("| **total** | {carried} |")), "{target}: {card}");
    }
}

/// A temporary HOME holding nothing, and the `agentlog handoff` command run with it.
fn handoff(home: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = cargo_bin_cmd!("agentlog");
    cmd.env("HOME", home).env_remove("CODEX_HOME").env_remove("CLAUDE_CONFIG_DIR").arg("handoff").args(args);
    cmd.output().unwrap()
}

fn recorded(rel: &str) -> String {
    common::own_corpus().join("recorded").join(rel).display().to_string()
}

#[test]
fn handoff_writes_into_the_store_only_when_asked_and_never_replaces_a_file() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    let codex = recorded("codex/0.169.0");
    // The recorded Codex sessions: one whose id starts with 019ac8 ... found by the start of it.
    let sessions = cargo_bin_cmd!("agentlog").args(["convert", &codex]).output().unwrap();
    let first: serde_json::Value =
        serde_json::from_str(std::str::from_utf8(&sessions.stdout).unwrap().lines().next().unwrap()).unwrap();
    let id = first["session_id"].as_str().unwrap().to_owned();
    let prefix = &id[..13];

    // Without --write nothing is written, and the error says where it would go.
    let out = handoff(home.path(), &[prefix, &codex, "--to", "claude-code", "--cwd", project.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--write") && stderr.contains(".claude/projects"), "{stderr}");
    assert!(!home.path().join(".claude").exists());

    // With it, the file goes into the project's folder and the resume command is printed.
    let args = [prefix, &codex, "--to", "claude-code", "--cwd", project.to_str().unwrap(), "--write"];
    let out = handoff(home.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let new_id = stdout.trim().rsplit(' ').next().unwrap().to_owned();
    assert_eq!(stdout, format!("cd {} && claude --resume {new_id}\n", project.display()));
    let key: String =
        project.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let file = home.path().join(".claude/projects").join(key).join(format!("{new_id}.jsonl"));
    assert_eq!(source_of(&file), ("codex".to_owned(), id.clone()));
    let written = std::fs::read(&file).unwrap();

    // Handing it over again refuses, and leaves the file as it was.
    let out = handoff(home.path(), &args);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exists already"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&file).unwrap(), written);

    // An id that matches nothing, and one that matches several sessions.
    let out = handoff(home.path(), &["ffffffff", &codex, "--to", "codex", "--write"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = handoff(home.path(), &[&id[..1], &codex, "--to", "codex", "--write"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sessions have an id starting with"));
    assert!(!home.path().join(".codex").exists(), "nothing written for a refused handoff");

    // A session that names no working directory needs one given: the agents look sessions up by it.
    let aider = common::own_corpus().join("aider/no-line-breaks").display().to_string();
    let out = handoff(home.path(), &["2025-02-10T18:05:11", &aider, "--to", "claude-code", "--write"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cwd"), "{}", String::from_utf8_lossy(&out.stderr));
    let out =
        handoff(home.path(), &["2025-02-10T18:05:11", &aider, "--to", "claude-code", "--write", "--cwd", "/srv/app"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("cd /srv/app && claude --resume "));
    assert!(home.path().join(".claude/projects/-srv-app").is_dir());

    // To Codex: a rollout under sessions/YYYY/MM/DD, named by its id, resumed by `codex resume`.
    let out = handoff(home.path(), &[prefix, &codex, "--to", "codex", "--cwd", project.to_str().unwrap(), "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let codex_id = stdout.trim().rsplit(' ').next().unwrap();
    assert!(stdout.contains("codex resume"), "{stdout}");
    let rollouts = jsonl_files(&home.path().join(".codex/sessions"));
    assert_eq!(rollouts.len(), 1);
    assert!(rollouts[0].file_name().unwrap().to_string_lossy().ends_with(&format!("-{codex_id}.jsonl")));
    // No dataset card in an agent's own store.
    assert!(!home.path().join(".codex/sessions/README.md").exists());
}

#[test]
fn one_session_goes_to_standard_output_and_more_need_a_directory() {
    let claude = recorded("claude/2.1.328");
    let out = cargo_bin_cmd!("agentlog").args(["convert", &claude, "--to", "codex"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "several sessions to one stream are refused");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("name a directory"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gemini = common::own_corpus().join("recorded/gemini/0.61.0").display().to_string();
    let all = cargo_bin_cmd!("agentlog").args(["convert", &gemini]).output().unwrap();
    let first: serde_json::Value =
        serde_json::from_str(std::str::from_utf8(&all.stdout).unwrap().lines().next().unwrap()).unwrap();
    let id = first["session_id"].as_str().unwrap();
    let out = cargo_bin_cmd!("agentlog").args(["convert", &gemini, "--session", id, "--to", "codex"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> =
        std::str::from_utf8(&out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "session_meta");
    assert_eq!(lines[0]["payload"]["agentlog_source"]["session"], id);
    assert!(lines.iter().all(|l| l["timestamp"].is_string()), "Codex drops lines without a timestamp");
    // The same input gives the same bytes.
    let again =
        cargo_bin_cmd!("agentlog").args(["convert", &gemini, "--session", id, "--to", "codex"]).output().unwrap();
    assert_eq!(again.stdout, out.stdout);
}

#[test]
fn reading_a_session_and_its_copy_counts_each_response_once() {
    let dir = tempfile::tempdir().unwrap();
    for (source, target) in
        [("claude/2.1.328", "claude-code"), ("codex/0.169.0", "claude-code"), ("claude/2.1.328", "codex")]
    {
        let source = recorded(source);
        let copies = dir.path().join(format!("{target}-{}/", source.len()));
        let out = cargo_bin_cmd!("agentlog")
            .args(["convert", "-q", &source, "--to", target, "-o", copies.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let totals = |inputs: &[&str]| -> serde_json::Value {
            let out = cargo_bin_cmd!("agentlog").args(["usage", "--json", "-q"]).args(inputs).output().unwrap();
            let usage: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            usage["totals"].clone()
        };
        let alone = totals(&[&source]);
        assert!(alone["responses"].as_u64().unwrap() > 0, "{alone}");
        assert_eq!(totals(&[&source, copies.to_str().unwrap()]), alone, "{source} and its {target} copy");
    }
}
