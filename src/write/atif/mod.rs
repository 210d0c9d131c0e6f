//! The ATIF writer (`--to atif`): one Agent Trajectory Interchange Format document per session,
//! as Harbor's evaluation framework and dataset tools take them.
//!
//! Wire format: one document per line (JSON Lines) on standard output or in `-o FILE`; with
//! `-o DIR/` one file per session, `DIR/<agent>/<agent>-<session id>.json`. A session's
//! subagents (Claude Code sidechains and subagent files) are embedded in its document as
//! `subagent_trajectories`, each with the `trajectory_id` `<session id>/<agent id>`, and the
//! result of the call that spawned one names it in `subagent_trajectory_ref`. A Codex subagent
//! thread is a session of its own, read before or after its parent: its document goes into the
//! parent's `subagent_trajectories` when the parent is among the inputs (named in the parent's
//! `extra.subagent_trajectory_refs`, since Codex does not record the spawning call), and stands
//! alone with `extra.parent_session_id` otherwise.
//!
//! A session's document is made once the group of inputs it comes from is read (its title and
//! usage come last) and checked against `schema/atif.schema.json`: a document that breaks it
//! stops the writer and leaves no file. Documents wait in a temporary file until the end, when
//! subagent threads are placed in their parents. Sessions with no step (only metadata) get no
//! document.

mod build;

use std::collections::{HashMap, HashSet};
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
        Ok(Box::new(Sink {
            output: Some(output),
            sessions: Held::default(),
            schema: AtifSchema::new(),
            spool: Spool {
                file: BufWriter::with_capacity(256 * 1024, tempfile::tempfile()?),
                offset: 0,
                documents: Vec::new(),
            },
        }))
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
    /// Whether `parent` spawned this session as a subagent (a Codex subagent thread).
    spawned: bool,
}

struct Sink<'w> {
    output: Option<Output<'w>>,
    sessions: Held<Session>,
    schema: AtifSchema,
    spool: Spool,
}

/// Documents written so far, in a temporary file until the end: a subagent thread that is a
/// session of its own (Codex) may be read before or after the session that spawned it, and is
/// embedded in its document.
struct Spool {
    file: BufWriter<std::fs::File>,
    offset: u64,
    /// Each document: its agent and session, the session that spawned it, and where it is.
    documents: Vec<Spooled>,
}

struct Spooled {
    key: (Agent, String),
    spawned_by: Option<String>,
    at: u64,
    len: u64,
}

impl EventSink for Sink<'_> {
    fn event(&mut self, e: &Event) -> io::Result<()> {
        let session = self.sessions.get(e.agent, &e.session_id, || Session {
            agent: e.agent,
            id: e.session_id.clone(),
            main: Thread::default(),
            subagents: Vec::new(),
            parent: None,
            spawned: false,
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
                    session.spawned = e.is_sidechain && session.parent.is_some();
                }
                session.main.add(e);
            }
        }
        Ok(())
    }

    fn end_group(&mut self) -> io::Result<()> {
        for session in self.sessions.take() {
            let key = (session.agent, session.id.clone());
            let spawned_by = session.parent.clone().filter(|_| session.spawned);
            let Some(document) = document(session) else { continue };
            self.check(&document)?;
            let text = serde_json::to_vec(&document)?;
            self.spool.file.write_all(&text)?;
            let spooled = Spooled { key, spawned_by, at: self.spool.offset, len: text.len() as u64 };
            self.spool.offset += spooled.len;
            self.spool.documents.push(spooled);
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_group()?;
        self.spool.file.flush()?;
        let spool = self.spool.file.get_ref().try_clone()?;
        let documents = std::mem::take(&mut self.spool.documents);
        let present: HashSet<&(Agent, String)> = documents.iter().map(|d| &d.key).collect();
        // Subagent sessions whose parent is here go into its document.
        let mut children: HashMap<(Agent, String), Vec<&Spooled>> = HashMap::new();
        for d in &documents {
            if let Some(parent) = &d.spawned_by
                && present.contains(&(d.key.0, parent.clone()))
            {
                children.entry((d.key.0, parent.clone())).or_default().push(d);
            }
        }
        let embedded: HashSet<&(Agent, String)> = children.values().flatten().map(|d| &d.key).collect();
        let mut buf = Vec::new();
        for d in documents.iter().filter(|d| !embedded.contains(&d.key)) {
            crate::write::read_range(&spool, d.at, d.len, &mut buf)?;
            let mut document: Value = serde_json::from_slice(&buf)?;
            if let Some(children) = children.get(&d.key) {
                embed(&mut document, children, &spool)?;
                self.check(&document)?;
            }
            self.write(&document)?;
        }
        match self.output.take().expect("finish is called once") {
            Output::Lines(mut out) => out.flush(),
            Output::File(file) => file.into_inner().map_err(io::IntoInnerError::into_error)?.commit(),
            Output::PerSession(_, files, _) => Pending::rename_all(files),
        }
    }
}

impl Sink<'_> {
    /// Fails the writer when a document breaks the schema.
    fn check(&self, document: &Value) -> io::Result<()> {
        match self.schema.violations(document).first() {
            None => Ok(()),
            Some(v) => {
                let session = document["session_id"].as_str().unwrap_or_default();
                let message = format!("the ATIF document of session {session} breaks schema/atif.schema.json at {v}");
                Err(WriteError::Schema { message }.into_io())
            }
        }
    }

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

/// Embeds the documents of subagent sessions into their parent's `subagent_trajectories` (their
/// `trajectory_id` is their session id), and names them in the parent's
/// `extra.subagent_trajectory_refs`: Codex does not record which call spawned a thread.
fn embed(document: &mut Value, children: &[&Spooled], spool: &std::fs::File) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut refs = Vec::new();
    for child in children {
        crate::write::read_range(spool, child.at, child.len, &mut buf)?;
        let child: Value = serde_json::from_slice(&buf)?;
        refs.push(json!({ "trajectory_id": child["trajectory_id"], "session_id": child["session_id"] }));
        match document.get_mut("subagent_trajectories").and_then(Value::as_array_mut) {
            Some(list) => list.push(child),
            None => document["subagent_trajectories"] = json!([child]),
        }
    }
    match document.get_mut("extra").and_then(Value::as_object_mut) {
        Some(extra) => {
            extra.insert("subagent_trajectory_refs".into(), Value::Array(refs));
        }
        None => document["extra"] = json!({ "subagent_trajectory_refs": refs }),
    }
    Ok(())
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
