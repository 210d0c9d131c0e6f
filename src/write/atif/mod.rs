//! The ATIF writer (`--to atif`): one Agent Trajectory Interchange Format document per session,
//! as Harbor's evaluation framework and dataset tools take them.
//!
//! Wire format: one document per line (JSON Lines) on standard output or in `-o FILE`; with
//! `-o DIR/` one file per session, `DIR/<agent>/<agent>-<session id>.json`. A session's
//! subagents (Claude Code sidechains and subagent files) are embedded in its document as
//! `subagent_trajectories`, each with the `trajectory_id` `<session id>/<agent id>`, and the
//! result of the call that spawned one names it in `subagent_trajectory_ref`. A Codex subagent
//! thread is a session of its own: its document says its parent in `extra.parent_session_id`.
//!
//! Sessions are written once the group of inputs they come from is read (their title and
//! usage come last), each checked against `schema/atif.schema.json` first: a document that
//! breaks it stops the writer and leaves no file. Sessions with no step (only metadata) get no
//! document.

mod build;

use std::collections::HashSet;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::model::{Agent, AtifSchema, Event};
use crate::write::{
    AtomicFile, EventSink, Held, Options, Pending, Target, WriteError, Writer, is_directory_target, session_file_name,
    unsupported,
};

pub use build::ATIF_VERSION;
use build::Thread;

/// The ATIF writer.
pub struct Atif;

impl Writer for Atif {
    fn name(&self) -> &'static str {
        "atif"
    }

    fn description(&self) -> &'static str {
        "ATIF v1.7 trajectories (Harbor), one schema-checked document per session per line, or a file each with -o DIR/"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        if !options.partition_by.is_empty() {
            return Err(unsupported("--partition-by", self.name()));
        }
        let output = match target {
            Target::Stream(out) => Output::Lines(out),
            Target::Path(path) if is_directory_target(&path) => Output::PerSession(path, Vec::new(), HashSet::new()),
            Target::Path(path) => Output::File(BufWriter::new(AtomicFile::create(&path)?)),
        };
        Ok(Box::new(Sink { output: Some(output), sessions: Held::default(), schema: AtifSchema::new() }))
    }
}

enum Output<'w> {
    /// One document per line on a stream.
    Lines(Box<dyn Write + Send + 'w>),
    /// One document per line in a file, which gets its name when complete.
    File(BufWriter<AtomicFile>),
    /// One file per session, renamed into place at the end.
    PerSession(PathBuf, Vec<Pending>, HashSet<String>),
}

/// One session's threads, until its group ends.
struct Session {
    agent: Agent,
    id: String,
    main: Thread,
    subagents: Vec<(String, Thread)>,
    /// The session that spawned or forked this one, when it is another session.
    parent: Option<String>,
}

struct Sink<'w> {
    output: Option<Output<'w>>,
    sessions: Held<Session>,
    schema: AtifSchema,
}

impl EventSink for Sink<'_> {
    fn event(&mut self, e: &Event) -> io::Result<()> {
        let session = self.sessions.get(e.agent, &e.session_id, || Session {
            agent: e.agent,
            id: e.session_id.clone(),
            main: Thread::default(),
            subagents: Vec::new(),
            parent: None,
        });
        let own_subagent = e.parent_session_id.as_deref() == Some(e.session_id.as_str());
        match (&e.agent_id, own_subagent) {
            (Some(agent_id), true) => {
                let at = session.subagents.iter().position(|(id, _)| id == agent_id);
                let at = at.unwrap_or_else(|| {
                    session.subagents.push((agent_id.clone(), Thread::default()));
                    session.subagents.len() - 1
                });
                session.subagents[at].1.add(e);
            }
            _ => {
                if session.parent.is_none() && !own_subagent {
                    session.parent.clone_from(&e.parent_session_id);
                }
                session.main.add(e);
            }
        }
        Ok(())
    }

    fn end_group(&mut self) -> io::Result<()> {
        for session in self.sessions.take() {
            let Some(document) = document(session) else { continue };
            if let Some(v) = self.schema.violations(&document).first() {
                let session = document["session_id"].as_str().unwrap_or_default();
                let message = format!("the ATIF document of session {session} breaks schema/atif.schema.json at {v}");
                return Err(WriteError::Schema { message }.into_io());
            }
            self.write(&document)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_group()?;
        match self.output.take().expect("finish is called once") {
            Output::Lines(mut out) => out.flush(),
            Output::File(file) => file.into_inner().map_err(io::IntoInnerError::into_error)?.commit(),
            Output::PerSession(_, files, _) => Pending::rename_all(files),
        }
    }
}

impl Sink<'_> {
    fn write(&mut self, document: &Value) -> io::Result<()> {
        match self.output.as_mut().expect("not finished") {
            Output::Lines(out) => {
                serde_json::to_writer(&mut *out, document)?;
                out.write_all(b"\n")
            }
            Output::File(out) => {
                serde_json::to_writer(&mut *out, document)?;
                out.write_all(b"\n")
            }
            Output::PerSession(dir, files, used) => {
                let agent = Agent::from_name(document["agent"]["name"].as_str().unwrap_or_default());
                let agent = agent.unwrap_or(Agent::ClaudeCode);
                let session = document["session_id"].as_str().unwrap_or_default();
                let path = dir.join(agent.as_str()).join(session_file_name(agent, session, "json", used));
                let mut file = BufWriter::new(AtomicFile::create(&path)?);
                serde_json::to_writer(&mut file, document)?;
                file.write_all(b"\n")?;
                files.push(file.into_inner().map_err(io::IntoInnerError::into_error)?.close()?);
                Ok(())
            }
        }
    }
}

/// The document of a session; `None` when no thread of it has a step.
fn document(mut session: Session) -> Option<Value> {
    let agent = session.agent.as_str();
    session.subagents.retain(|(_, thread)| !thread.is_empty());
    if session.main.is_empty() && session.subagents.is_empty() {
        return None;
    }
    let trajectory_id = |agent_id: &str| format!("{}/{agent_id}", session.id);
    for (agent_id, thread) in &session.subagents {
        if let Some(call) = &thread.spawned_by {
            session.main.link_subagent(call, &trajectory_id(agent_id), &session.id);
        }
    }
    let mut root = if session.main.is_empty() {
        // Only subagents were read: the main thread's file is not among the inputs.
        let mut root = Thread::default().document(agent, &session.id, &session.id);
        root["steps"] = json!([{ "step_id": 1, "source": "system", "message": "", "extra": { "note": "the main thread is not in the inputs" } }]);
        root["final_metrics"]["total_steps"] = 1.into();
        root
    } else {
        session.main.document(agent, &session.id, &session.id)
    };
    if let Some(parent) = &session.parent {
        root["extra"] = json!({ "parent_session_id": parent });
    }
    if !session.subagents.is_empty() {
        let subagents: Vec<Value> = session
            .subagents
            .iter()
            .map(|(agent_id, thread)| {
                let mut sub = thread.document(agent, &session.id, &trajectory_id(agent_id));
                sub["extra"] = json!({ "agent_id": agent_id, "spawned_by_call_id": thread.spawned_by });
                sub
            })
            .collect();
        root["subagent_trajectories"] = Value::Array(subagents);
    }
    Some(root)
}
