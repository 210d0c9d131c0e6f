//! `agentlog handoff`: a session of any agent written where another agent resumes it, and the
//! command that resumes it.
//!
//! The session is found by its id or the start of it among the inputs (the agents' default
//! places by default): exactly one session must match. It is written by the target's native
//! writer into the target agent's own store, for the working directory asked (the session's own
//! by default), never replacing a file; writing into an agent's store needs `--write`, and
//! adding the session to Codex's thread index `--register` besides ([`crate::write::codex::register`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::model::Agent;
use crate::stats::Sums;
use crate::stats::filter::Filter;
use crate::write::native::{self, Format, NativeOptions};
use crate::write::{self, Writer};

use super::args::HandoffArgs;
use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;

/// The sessions whose id starts with what was asked, by agent, with the first working
/// directory each names.
#[derive(Default)]
struct Matches(BTreeMap<(Agent, String), Option<String>>);

impl Sums for Matches {
    fn merge(&mut self, other: Self) {
        for (session, cwd) in other.0 {
            let known = self.0.entry(session).or_default();
            if known.is_none() {
                *known = cwd;
            }
        }
    }
}

/// Runs `agentlog handoff`.
pub fn run(args: HandoffArgs, reporter: &Reporter) -> Exit {
    let (writer, format): (&'static dyn Writer, &'static dyn Format) = match args.to.as_str() {
        "codex" => (&write::codex::Codex, &write::codex::Codex),
        _ => (&write::claude_code::ClaudeCode, &write::claude_code::ClaudeCode),
    };
    let usage = |message: String| {
        reporter.error(&CliError::Usage { message });
        Exit::Usage
    };
    let cwd = match &args.cwd {
        Some(dir) => match std::path::absolute(dir) {
            Ok(dir) => Some(dir.display().to_string()),
            Err(e) => return usage(format!("--cwd {}: {e}", dir.display())),
        },
        None => None,
    };
    let prefix = args.session.trim().to_owned();
    if prefix.is_empty() {
        return usage("give the id of the session to hand over, or the start of it".into());
    }
    let find = Filter { sessions: vec![prefix.clone()], ..Filter::default() };
    let jobs = super::sum::threads(None);
    let settings = super::convert::settings(jobs, crate::read::DEFAULT_MAX_LINE_BYTES, find, None);
    let found = super::sum::sum::<Matches>(&args.inputs, "auto", &settings, reporter, |found, e| {
        // Subagent threads go with their session, but are not what was asked for.
        if !e.session_id.starts_with(&prefix) || e.is_sidechain || e.agent_id.is_some() {
            return;
        }
        match found.0.iter_mut().find(|((a, id), _)| *a == e.agent && *id == e.session_id) {
            Some((_, cwd)) => {
                if cwd.is_none() {
                    cwd.clone_from(&e.context.cwd);
                }
            }
            None => {
                found.0.insert((e.agent, e.session_id.clone()), e.context.cwd.clone());
            }
        }
    });
    let matches = match found {
        Ok((matches, _)) => matches.0,
        Err(exit) => return exit,
    };
    let ((agent, id), cwd) = match matches.len() {
        0 => {
            let places =
                if args.inputs.is_empty() { "the agents' default places".to_owned() } else { args.inputs.join(", ") };
            reporter.error(&CliError::Usage {
                message: format!("no session in {places} has an id starting with `{prefix}`"),
            });
            return Exit::Input;
        }
        1 => {
            let (session, own_cwd) = matches.into_iter().next().expect("one match");
            match cwd.or(own_cwd) {
                Some(cwd) => (session, cwd),
                None => {
                    return usage(format!(
                        "session {} names no working directory, and the agent looks its sessions up by one: add --cwd DIR",
                        session.1
                    ));
                }
            }
        }
        n => {
            let listed: Vec<String> = matches.keys().take(10).map(|(a, id)| format!("{id} ({})", a.as_str())).collect();
            let more = if n > 10 { format!(", and {} more", n - 10) } else { String::new() };
            return usage(format!(
                "{n} sessions have an id starting with `{prefix}`: {}{more}; give more of the id",
                listed.join(", ")
            ));
        }
    };
    let env = |name: &str| std::env::var_os(name);
    let Some(store) = format.store(&env) else {
        return usage(format!("no home directory to find {}'s sessions in: set HOME", format.agent().as_str()));
    };
    if args.register && format.agent() != Agent::Codex {
        return usage("--register adds the session to Codex's thread index: it goes with --to codex".into());
    }
    let new_id = native::new_id(format.agent(), agent, &id).to_string();
    if !args.write {
        return usage(format!(
            "handing session {id} ({}) over to {} writes session {new_id} into {}, {}'s own store; add --write to do so",
            agent.as_str(),
            format.agent().as_str(),
            store.display(),
            format.agent().as_str()
        ));
    }
    let redaction = match args.redact.resolve_or_report(reporter) {
        Ok(redaction) => redaction,
        Err(exit) => return exit,
    };
    let (inputs, _) = super::resolve_inputs(&args.inputs, None);
    let options = write::Options {
        run_id: String::new(),
        threads: jobs,
        native: NativeOptions {
            cwd: Some(cwd.clone()),
            no_clobber: true,
            redaction: args.redact.describe(),
            only: Some((agent, id.clone())),
        },
        ..write::Options::default()
    };
    let mut root = store.clone().into_os_string();
    root.push("/");
    let plan = super::convert::Plan {
        inputs,
        reader: None,
        writer,
        output: Some(PathBuf::from(root)),
        options,
        jobs,
        max_line_bytes: crate::read::DEFAULT_MAX_LINE_BYTES,
        shard: None,
        report: None,
        incremental: false,
        filter: Filter { sessions: vec![id.clone()], agents: vec![agent], ..Filter::default() },
    };
    let exit = super::convert::run(&plan, redaction, reporter);
    if exit > Exit::Warnings {
        return exit;
    }
    let Some(written) = find_written(&store, &new_id) else {
        reporter.error(&CliError::Usage {
            message: format!("session {id} has nothing to hand over (no prompt, answer or tool call)"),
        });
        return Exit::Input;
    };
    reporter.info(&format!("agentlog: wrote {}", written.display()));
    if args.register {
        let codex_home = store.parent().unwrap_or(&store);
        match write::codex::register(codex_home, &written) {
            Ok(write::codex::Registered::Added(index)) => {
                reporter.info(&format!("agentlog: added session {new_id} to {}", index.display()));
            }
            Ok(write::codex::Registered::NoIndex) => reporter.info(&format!(
                "agentlog: {} has no thread index yet; Codex indexes the session when it starts",
                codex_home.display()
            )),
            Err(message) => {
                reporter.error(&CliError::Usage { message });
                return Exit::Output;
            }
        }
    }
    super::print(format!("cd {} && {}\n", shell_word(&cwd), format.resume_command(&new_id)).as_bytes(), reporter)
        .max(exit)
}

/// The file of session `id` written under `store`.
fn find_written(store: &Path, id: &str) -> Option<PathBuf> {
    let pattern = format!("{}/**/*{id}.jsonl", glob::Pattern::escape(&store.display().to_string()));
    glob::glob(&pattern).ok()?.flatten().next()
}

/// `text` as one shell word.
fn shell_word(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c)) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
