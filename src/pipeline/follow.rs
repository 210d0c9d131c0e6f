//! Following session files while the agents write them (`agentlog watch`).
//!
//! Each round looks at every input file's size, modification time and identity (device and
//! inode). The groups of inputs holding a file that changed (a session's files go together) are
//! read again whole, and only the events not given before are given, told apart by their ids,
//! which are stable. A last line still being written gives nothing (a part of a JSON object is
//! never one), and no diagnostic: it is read when it is complete. The usage of a response is
//! given once, when the session's files have settled ([`SETTLE`]): an agent may write a
//! response over several lines with growing counts. A file that shrank or was replaced by
//! another is reported and read again from its start, its events given again.
//!
//! The [`State`] (the files seen, and the events given) is saved by the caller and loaded on the
//! next start, so that a follower stopped and started again neither repeats nor misses an
//! event.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io;
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

use crate::model::{Event, MetaType, Payload};
use crate::read::{InputDiagnostic, Reader, Settings, Unfinished};

use super::{Destination, InputError, InputSpec, Outcome, plan, run};

/// How long a session's files must have stayed unchanged for the usage of its last response to
/// be given: until then the agent may still be writing it.
pub const SETTLE: std::time::Duration = std::time::Duration::from_millis(1500);

/// What a follower has seen and given, to be kept between runs.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    /// Every file read, by name.
    files: BTreeMap<String, Seen>,
    /// The events given, by the first 8 bytes of the SHA-1 of their file's generation and id
    /// (a usage: and its response).
    given: BTreeSet<u64>,
    /// The inputs of sessions whose last response's usage is held back until they settle.
    #[serde(default)]
    holding: BTreeSet<String>,
    /// How often each file was truncated or replaced: its events are given again after that,
    /// under keys of the new generation.
    #[serde(default)]
    generations: BTreeMap<String, u32>,
}

impl State {
    /// Whether nothing has been read yet: a first start.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// A file as it was when last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Seen {
    dev: u64,
    ino: u64,
    len: u64,
    modified_ns: i64,
}

impl Seen {
    fn of(metadata: &std::fs::Metadata) -> Seen {
        Seen {
            dev: metadata.dev(),
            ino: metadata.ino(),
            len: metadata.len(),
            modified_ns: metadata.mtime().saturating_mul(1_000_000_000).saturating_add(metadata.mtime_nsec()),
        }
    }
}

/// Something a round noticed besides events.
#[derive(Debug)]
pub enum Note {
    /// The file is shorter than when it was read last: read again from its start.
    Truncated(String),
    /// Another file has the name now: read again from its start.
    Replaced(String),
    /// The file went away.
    Removed(String),
    /// A problem with a line, reported once.
    Diagnostic(String, InputDiagnostic),
    /// The input could not be read.
    Unreadable(InputError),
}

/// How an event read in a round stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given {
    /// Not given before: new.
    New,
    /// Given in an earlier round; read again with its file.
    Before,
    /// A response's usage held back until the session settles (see [`SETTLE`]).
    Held,
}

/// Follows inputs round by round.
pub struct Follower<'a> {
    state: State,
    reader: Option<&'static dyn Reader>,
    settings: &'a Settings,
    /// Diagnostics reported already, so that a file read again does not report them again.
    reported: HashSet<(String, u64, String)>,
    /// Whether the state changed since [`Follower::take_changed`] was last called.
    changed: bool,
}

impl<'a> Follower<'a> {
    /// A follower that starts from `state` (the default for a first start), reading inputs with
    /// `reader` (`None`: each told from its content) and `settings`.
    pub fn new(state: State, reader: Option<&'static dyn Reader>, settings: &'a Settings) -> Self {
        Follower { state, reader, settings, reported: HashSet::new(), changed: false }
    }

    /// Whether the state changed since the last call: whether it is worth saving.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Whether the usage of a response is held back until its session settles: another round is
    /// due even if no file changes.
    pub fn holding(&self) -> bool {
        !self.state.holding.is_empty()
    }

    /// What has been seen and given so far.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// One round over `inputs` (the files there are now): gives the events not given before to
    /// `out`, in input order, and says what else it noticed.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn round(
        &mut self,
        inputs: &[InputSpec],
        out: &mut dyn FnMut(Event) -> io::Result<()>,
    ) -> io::Result<Vec<Note>> {
        self.look(inputs, &mut |e, given| if given == Given::New { out(e) } else { Ok(()) }, false)
    }

    /// A round that gives every event of the files it reads again, each with how it stands:
    /// for outputs that write whole sessions again when they change.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn round_all(
        &mut self,
        inputs: &[InputSpec],
        out: &mut dyn FnMut(Event, Given) -> io::Result<()>,
    ) -> io::Result<Vec<Note>> {
        self.look(inputs, out, false)
    }

    /// A round that takes in what `inputs` hold now as given, without giving it: a follower that
    /// starts from now.
    ///
    /// # Errors
    /// When reading fails.
    pub fn catch_up(&mut self, inputs: &[InputSpec]) -> io::Result<Vec<Note>> {
        self.look(inputs, &mut |_, _| Ok(()), true)
    }

    fn look(
        &mut self,
        inputs: &[InputSpec],
        out: &mut dyn FnMut(Event, Given) -> io::Result<()>,
        all_settled: bool,
    ) -> io::Result<Vec<Note>> {
        let mut notes = Vec::new();
        let mut changed: HashMap<String, Seen> = HashMap::new();
        let mut present = HashSet::new();
        for spec in inputs {
            let InputSpec::File(name) = spec else { continue };
            present.insert(name.clone());
            let Ok(metadata) = std::fs::metadata(name) else { continue };
            let now = Seen::of(&metadata);
            let before = self.state.files.get(name).copied();
            if before == Some(now) {
                continue;
            }
            if let Some(before) = before {
                if (before.dev, before.ino) != (now.dev, now.ino) {
                    notes.push(Note::Replaced(name.clone()));
                    *self.state.generations.entry(name.clone()).or_default() += 1;
                } else if now.len < before.len {
                    notes.push(Note::Truncated(name.clone()));
                    *self.state.generations.entry(name.clone()).or_default() += 1;
                }
            }
            changed.insert(name.clone(), now);
        }
        let gone: Vec<String> = self.state.files.keys().filter(|f| !present.contains(*f)).cloned().collect();
        for name in gone {
            self.state.files.remove(&name);
            self.changed = true;
            notes.push(Note::Removed(name));
        }
        if changed.is_empty() && self.state.holding.is_empty() {
            return Ok(notes);
        }
        let (groups, errors) = plan(inputs, self.reader, &|_| None, self.settings);
        notes.extend(errors.into_iter().map(Note::Unreadable));
        // The groups read: those with a file that changed, and those holding back a usage whose
        // files have settled since.
        let now = std::time::SystemTime::now();
        let quiet = |name: &str| {
            std::fs::metadata(name)
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age >= SETTLE))
        };
        let mut unsettled = HashSet::new();
        let groups: Vec<_> = groups
            .into_iter()
            .filter(|g| {
                let settled = all_settled || g.items.iter().all(|i| quiet(i.spec.name()));
                if !settled {
                    unsettled.extend(g.items.iter().map(|i| i.spec.name().to_owned()));
                }
                g.items.iter().any(|i| changed.contains_key(i.spec.name()))
                    || (settled && g.items.iter().any(|i| self.state.holding.contains(i.spec.name())))
            })
            .collect();
        // The last complete line of each unsettled file: for agents that write an item over two
        // lines, what it gives waits for the next line, or for the file to settle.
        let last_lines: HashMap<String, u64> = unsettled
            .iter()
            .filter(|name| changed.contains_key(*name))
            .filter_map(|name| Some((name.clone(), complete_lines(name)?)))
            .collect();
        let mut given = Giving {
            last_lines: &last_lines,
            given: &mut self.state.given,
            generations: &self.state.generations,
            out,
            outcomes: Vec::new(),
            unsettled: &unsettled,
            settled: true,
            last_response: HashMap::new(),
            holding: BTreeSet::new(),
            current: String::new(),
        };
        run(&groups, &mut given, self.settings, &super::Prepare::Nothing)?;
        let (holding, outcomes) = (given.holding, given.outcomes);
        // A last line still being written is no problem of the file's.
        let partial: HashMap<&str, u64> = changed.keys().filter_map(|n| Some((n.as_str(), partial_line(n)?))).collect();
        for name in groups.iter().flat_map(|g| &g.items).map(|i| i.spec.name()) {
            self.state.holding.remove(name);
        }
        self.state.holding.extend(holding);
        self.report(outcomes, &partial, &mut notes);
        for (name, seen) in changed {
            self.state.files.insert(name, seen);
        }
        self.changed |= !groups.is_empty();
        Ok(notes)
    }

    /// Notes the problems of the inputs read that were not reported before.
    fn report(&mut self, outcomes: Vec<Outcome>, partial: &HashMap<&str, u64>, notes: &mut Vec<Note>) {
        for outcome in outcomes {
            match outcome.result {
                Ok(report) => {
                    for d in report.diagnostics {
                        if partial.get(outcome.name.as_str()) == Some(&d.line) {
                            continue;
                        }
                        if self.reported.insert((outcome.name.clone(), d.line, d.problem.message.clone())) {
                            notes.push(Note::Diagnostic(outcome.name.clone(), d));
                        }
                    }
                }
                Err(e) => notes.push(Note::Unreadable(e)),
            }
        }
    }
}

/// The number of the last line of a file whose last line has no newline yet (an agent is
/// writing it); `None` for a file that ends its last line.
fn partial_line(name: &str) -> Option<u64> {
    use std::io::{Read, Seek, SeekFrom};
    // Most files end their last line: one byte tells.
    let mut file = std::fs::File::open(name).ok()?;
    file.seek(SeekFrom::End(-1)).ok()?;
    let mut last = [0u8];
    file.read_exact(&mut last).ok()?;
    if last[0] == b'\n' {
        return None;
    }
    let bytes = std::fs::read(name).ok()?;
    Some(memchr::memchr_iter(b'\n', &bytes).count() as u64 + 1)
}

/// The number of complete lines of a file: its newlines.
fn complete_lines(name: &str) -> Option<u64> {
    let bytes = std::fs::read(name).ok()?;
    Some(memchr::memchr_iter(b'\n', &bytes).count() as u64)
}

/// Whether a follower holds `event` back while its file is being written ([`Reader::unfinished`]).
fn unfinished(event: &Event) -> Unfinished {
    crate::read::READERS.iter().find(|r| r.agent() == Some(event.agent)).map_or(Unfinished::No, |r| r.unfinished(event))
}

/// The key an event is remembered by: the first 8 bytes of the SHA-1 of its id.
fn key(id: &str) -> u64 {
    use sha1::Digest as _;
    let hash = sha1::Sha1::digest(id.as_bytes());
    u64::from_be_bytes(hash[..8].try_into().expect("a SHA-1 hash has 20 bytes"))
}

/// Gives the events not given before.
///
/// The usage of a model response is given once per response, by its response id: an agent may
/// write a response over several lines, each with the counts so far (Claude Code), and the
/// reader takes the largest. The usage of the last response of a session read while its files
/// still change is held back until they have settled ([`Follower::round`] reads them once more
/// then), so that it is given with its final counts.
struct Giving<'o> {
    /// The last complete line of the unsettled files read.
    last_lines: &'o HashMap<String, u64>,
    given: &'o mut BTreeSet<u64>,
    generations: &'o BTreeMap<String, u32>,
    out: &'o mut dyn FnMut(Event, Given) -> io::Result<()>,
    outcomes: Vec<Outcome>,
    /// The inputs of groups whose files have not settled.
    unsettled: &'o HashSet<String>,
    /// Whether the input being read has settled: the last response's usage may be given.
    settled: bool,
    /// The last response each session named so far, by agent and session id.
    last_response: HashMap<(crate::model::Agent, String), String>,
    /// The inputs whose last response's usage was held back.
    holding: BTreeSet<String>,
    /// The input being read.
    current: String,
}

impl Destination for Giving<'_> {
    fn begin(&mut self, name: &str) -> io::Result<()> {
        self.settled = !self.unsettled.contains(name);
        name.clone_into(&mut self.current);
        Ok(())
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        let usage = matches!(&event.payload, Payload::Meta(m) if m.meta_type == MetaType::Usage);
        let generation = self.generations.get(&event.source.file).copied().unwrap_or(0);
        let by_id = key(&format!("{generation}/{}", event.id));
        // An event of a file still being written that a later line may change (an agent that
        // writes an item over two lines, or counts a response further on): it waits for that
        // line, or for the file to settle.
        let held = !self.settled
            && !self.given.contains(&by_id)
            && match unfinished(&event) {
                Unfinished::No => false,
                Unfinished::UntilNextLine => {
                    self.last_lines.get(&event.source.file).is_some_and(|last| event.source.line >= *last)
                }
                Unfinished::UntilSettled => true,
            };
        if held {
            self.holding.insert(self.current.clone());
            return (self.out)(event, Given::Held);
        }
        let fresh = |new: bool| if new { Given::New } else { Given::Before };
        let Some(response) = event.response_id.as_deref() else {
            let given = fresh(self.given.insert(by_id));
            return (self.out)(event, given);
        };
        let session = (event.agent, event.session_id.clone());
        if !usage {
            self.last_response.insert(session, response.to_owned());
            let given = fresh(self.given.insert(by_id));
            return (self.out)(event, given);
        }
        let by_response = key(&format!("{generation}/usage/{}/{}/{response}", event.agent.as_str(), event.session_id));
        if self.given.contains(&by_response) {
            return (self.out)(event, Given::Before);
        }
        if !self.settled && self.last_response.get(&session).is_some_and(|last| last == response) {
            self.holding.insert(self.current.clone());
            return (self.out)(event, Given::Held);
        }
        self.given.insert(by_response);
        (self.out)(event, Given::New)
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        self.outcomes.push(outcome);
        Ok(())
    }
}
