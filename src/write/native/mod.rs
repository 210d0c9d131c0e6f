//! What the writers of agents' own session formats share (`--to claude-code`, `--to codex`):
//! each writes a session, from any agent, as a file the target agent resumes itself.
//!
//! A session's events are held until its group of inputs is read, then given to the
//! [`Format`] as a [`Session`]: the main thread only (subagent threads, rolled-back turns and
//! prompts read from a prompt history are left out), with what the format needs to know about
//! where it came from. The file gets a new session id, derived from the source's agent and
//! session, so that the same session handed over twice gets the same file and an original is
//! never overwritten by its copy.
//!
//! Output: one session on standard output or in `-o FILE` (more than one is refused); with
//! `-o DIR/`, one file per session at the place the target agent keeps it under its own folder
//! (`DIR/<project>/<id>.jsonl` as in `~/.claude/projects`, `DIR/YYYY/MM/DD/rollout-….jsonl` as
//! in `~/.codex/sessions`), and a dataset card, `DIR/README.md`.

mod card;
pub mod tools;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::model::{Agent, Event, MetaType, Payload, Role};
use crate::write::{
    AtomicFile, EventSink, Held, Options, Pending, Target, WriteError, is_directory_target, unsupported,
};

use card::Card;

/// A target agent's session format.
pub trait Format: Sync {
    /// The agent that resumes the files.
    fn agent(&self) -> Agent;

    /// The name of the writer (`claude-code`).
    fn name(&self) -> &'static str;

    /// The agent's name for people (`Claude Code`).
    fn label(&self) -> &'static str;

    /// Where the agent keeps its sessions for the user running agentlog
    /// (`~/.claude/projects`), from the environment `env` gives; `None` without a home.
    fn store(&self, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf>;

    /// The command that resumes session `id`, run in its working directory.
    fn resume_command(&self, id: &str) -> String;

    /// The session as the target agent's file: `None` when it holds nothing to carry over (only
    /// metadata).
    ///
    /// # Errors
    /// When the session cannot be written in this format.
    fn render(&self, session: &Session, options: &NativeOptions) -> Result<Option<Rendered>, WriteError>;
}

/// What the native writers take besides the events.
#[derive(Debug, Clone, Default)]
pub struct NativeOptions {
    /// The working directory the session is written for (where the user will resume it);
    /// the session's own when `None`.
    pub cwd: Option<String>,
    /// Refuse to replace a file that exists (writing into an agent's own store).
    pub no_clobber: bool,
    /// What redaction the events went through, for the dataset card (`None`: none).
    pub redaction: Option<String>,
    /// Write only this session (of this agent), not the subagent threads that come with it.
    pub only: Option<(Agent, String)>,
}

/// A session rendered in a target format.
#[derive(Debug)]
pub struct Rendered {
    /// The file, relative to the target agent's folder of sessions.
    pub path: PathBuf,
    /// The new session's id.
    pub id: String,
    /// The whole file.
    pub bytes: Vec<u8>,
    /// What was carried over, for the dataset card.
    pub counts: Carried,
}

/// What a rendered session carries, and what it could not.
#[derive(Debug, Default, Clone, Copy)]
pub struct Carried {
    /// Prompts typed by the user.
    pub prompts: u64,
    /// Answers of the model.
    pub answers: u64,
    /// Tool calls written as the target's own tools (or as they were, between sessions of one
    /// agent).
    pub tool_calls: u64,
    /// Tool calls written as text, for tools the target does not have.
    pub tool_calls_as_text: u64,
    /// Reasoning blocks written.
    pub reasoning: u64,
    /// Reasoning blocks left out (the target cannot carry them).
    pub reasoning_left_out: u64,
    /// Images written.
    pub images: u64,
}

impl Carried {
    /// Adds what `other` carried.
    pub fn add(&mut self, other: &Carried) {
        self.prompts += other.prompts;
        self.answers += other.answers;
        self.tool_calls += other.tool_calls;
        self.tool_calls_as_text += other.tool_calls_as_text;
        self.reasoning += other.reasoning;
        self.reasoning_left_out += other.reasoning_left_out;
        self.images += other.images;
    }
}

/// One session of the source, as a format sees it.
pub struct Session {
    /// The agent that wrote it.
    pub agent: Agent,
    /// Its id there.
    pub id: String,
    /// Its main thread's events, in order.
    pub events: Vec<Event>,
    /// Which part of the session this is: 1, or more for events of a session met again after
    /// the group of inputs that held the first part (each part is a session file of its own).
    pub part: u32,
}

impl Session {
    /// The id of the session written for `target` ([`new_id`]).
    pub fn new_id(&self, target: Agent) -> uuid::Uuid {
        match self.part {
            0 | 1 => new_id(target, self.agent, &self.id),
            n => new_id(target, self.agent, &format!("{}#{n}", self.id)),
        }
    }

    /// The first value of a context field the events name.
    fn first<'a>(&'a self, field: impl Fn(&'a Event) -> Option<&'a String>) -> Option<&'a str> {
        self.events.iter().find_map(field).map(String::as_str)
    }

    /// The working directory: `options.cwd`, else the first the session names.
    pub fn cwd<'a>(&'a self, options: &'a NativeOptions) -> Option<&'a str> {
        options.cwd.as_deref().or_else(|| self.first(|e| e.context.cwd.as_ref()))
    }

    /// The first model named.
    pub fn model(&self) -> Option<&str> {
        self.first(|e| e.context.model.as_ref())
    }

    /// The first git branch named.
    pub fn git_branch(&self) -> Option<&str> {
        self.first(|e| e.context.git_branch.as_ref())
    }

    /// The version of the agent that wrote the session, where recorded.
    pub fn agent_version(&self) -> Option<&str> {
        self.first(|e| e.context.agent_version.as_ref())
    }

    /// The time of the first event that has one.
    pub fn started_at(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.events.iter().find_map(|e| e.timestamp)
    }

    /// The ids of the calls whose output the conversation holds: a target writes another agent's
    /// call without one as text, as the agents treat an unanswered call in a history they did
    /// not write badly (Claude Code drops the whole message, Codex makes up an output).
    pub fn answered_calls(&self, target: Agent) -> std::collections::HashSet<String> {
        self.conversation(target)
            .filter_map(|e| match &e.payload {
                Payload::ToolOutput(o) => o.call_id.clone(),
                _ => None,
            })
            .collect()
    }

    /// The events a target agent's model should see again, in order: for a session of another
    /// agent, without the source agent's own context (system and developer messages, text it
    /// injected); meta events stay, for the format to pick from.
    pub fn conversation(&self, target: Agent) -> impl Iterator<Item = &Event> {
        let same = self.agent == target;
        self.events.iter().filter(move |e| match &e.payload {
            Payload::Message(m) => {
                m.prompt_history.is_none() && (same || (!e.injected && matches!(m.role, Role::User | Role::Assistant)))
            }
            Payload::Meta(meta) => meta.meta_type != MetaType::Usage,
            _ => true,
        })
    }
}

/// The id of the session written for `target` from session `id` of `agent`: a UUID derived
/// from them, the same every time.
pub fn new_id(target: Agent, agent: Agent, id: &str) -> uuid::Uuid {
    let name = format!("agentlog-handoff/{}/{}/{id}", target.as_str(), agent.as_str());
    crate::model::uuid_v5(&uuid::Uuid::NAMESPACE_OID, name.as_bytes())
}

/// 24 hexadecimal digits derived from `text`: the same text, the same digits. For ids a
/// format needs where the source has none (`msg_…`, `toolu_…`, `call_…`).
pub fn short_hash(text: &str) -> String {
    let hash = crate::model::uuid_v5(&uuid::Uuid::NAMESPACE_OID, text.as_bytes()).simple().to_string();
    hash[..24].to_owned()
}

/// A folder under the user's home for an agent's files: `$<variable>`, else `~/<folder>`.
pub fn agent_home(env: &dyn Fn(&str) -> Option<std::ffi::OsString>, variable: &str, folder: &str) -> Option<PathBuf> {
    match env(variable).filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(PathBuf::from(env("HOME").filter(|h| !h.is_empty())?).join(folder)),
    }
}

/// Opens the sink of a native format.
///
/// # Errors
/// [`WriteError::Unsupported`] for `--partition-by`; [`WriteError::Io`] when the output cannot
/// be created.
pub fn open<'w>(
    format: &'static dyn Format,
    target: Target<'w>,
    options: &Options,
) -> Result<Box<dyn EventSink + 'w>, WriteError> {
    if !options.partition_by.is_empty() {
        return Err(unsupported("--partition-by", format.name()));
    }
    let output = match target {
        Target::Stream(out) => Output::Stream(out),
        Target::Path(path) if is_directory_target(&path) => {
            // Files written into an agent's own store get no card beside them.
            let card = (!options.native.no_clobber).then(|| Card::new(format, options.native.redaction.clone()));
            Output::Dir { card, root: path, files: Vec::new() }
        }
        Target::Path(path) => Output::File(path),
    };
    Ok(Box::new(Sink {
        format,
        options: options.native.clone(),
        output: Some(output),
        held: Held::default(),
        single: None,
        parts: std::collections::HashMap::new(),
    }))
}

enum Output<'w> {
    /// One session, on a stream.
    Stream(Box<dyn Write + Send + 'w>),
    /// One session, in a file.
    File(PathBuf),
    /// A file per session under a directory, and a dataset card.
    Dir { root: PathBuf, files: Vec<Pending>, card: Option<Card> },
}

struct Sink<'w> {
    format: &'static dyn Format,
    options: NativeOptions,
    output: Option<Output<'w>>,
    held: Held<Session>,
    /// The one session of a stream or file output, until the end.
    single: Option<Rendered>,
    /// The parts of each session written so far.
    parts: std::collections::HashMap<(Agent, String), u32>,
}

impl EventSink for Sink<'_> {
    fn event(&mut self, e: &Event) -> io::Result<()> {
        // Subagent threads and abandoned turns are not part of what the model saw last.
        if e.agent_id.is_some() || e.is_sidechain || e.rolled_back {
            return Ok(());
        }
        if let Some((agent, id)) = &self.options.only
            && (*agent != e.agent || *id != e.session_id)
        {
            return Ok(());
        }
        let parts = &self.parts;
        let session = self.held.get(e.agent, &e.session_id, || Session {
            agent: e.agent,
            id: e.session_id.clone(),
            events: Vec::new(),
            part: parts.get(&(e.agent, e.session_id.clone())).map_or(1, |n| n + 1),
        });
        session.events.push(e.clone());
        Ok(())
    }

    fn end_group(&mut self) -> io::Result<()> {
        for session in self.held.take() {
            self.parts.insert((session.agent, session.id.clone()), session.part);
            let Some(rendered) = self.format.render(&session, &self.options).map_err(WriteError::into_io)? else {
                continue;
            };
            match self.output.as_mut().expect("not finished") {
                Output::Dir { root, files, card } => {
                    let mut file = AtomicFile::create(&root.join(&rendered.path))?;
                    file.write_all(&rendered.bytes)?;
                    files.push(file.close()?);
                    if let Some(card) = card {
                        card.add(&session, &rendered);
                    }
                }
                Output::Stream(_) | Output::File(_) => {
                    if let Some(first) = &self.single {
                        let message = format!(
                            "--to {} writes one session per file, but the inputs hold more than one ({} and {} of {}); \
                             name a directory (-o DIR/) or choose one session (--session ID)",
                            self.format.name(),
                            first.id,
                            rendered.id,
                            session.agent.as_str()
                        );
                        return Err(WriteError::Unsupported { message }.into_io());
                    }
                    self.single = Some(rendered);
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_group()?;
        match self.output.take().expect("finish is called once") {
            Output::Stream(mut out) => {
                if let Some(rendered) = &self.single {
                    out.write_all(&rendered.bytes)?;
                }
                out.flush()
            }
            Output::File(path) => {
                let mut file = AtomicFile::create(&path)?;
                if let Some(rendered) = &self.single {
                    file.write_all(&rendered.bytes)?;
                }
                self.place(vec![file.close()?])
            }
            Output::Dir { root, mut files, card } => {
                if let Some(card) = card {
                    let mut readme = AtomicFile::create(&root.join("README.md"))?;
                    card.write(&mut readme)?;
                    files.push(readme.close()?);
                }
                self.place(files)
            }
        }
    }
}

impl Sink<'_> {
    /// Gives the files their final names: never replacing one with `no_clobber`.
    fn place(&self, files: Vec<Pending>) -> io::Result<()> {
        if !self.options.no_clobber {
            return Pending::rename_all(files);
        }
        if let Some(taken) = files.iter().find(|f| f.path().exists()) {
            return Err(exists(taken.path()));
        }
        files.into_iter().try_for_each(|f| {
            let path = f.path().to_owned();
            f.rename_new().map_err(|e| if e.kind() == io::ErrorKind::AlreadyExists { exists(&path) } else { e })
        })
    }
}

/// The error for a session file that is there already.
fn exists(path: &Path) -> io::Error {
    let message = format!("{} exists already; agentlog never replaces a session file", path.display());
    WriteError::Unsupported { message }.into_io()
}
