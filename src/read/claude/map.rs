//! Claude Code records → events.
//!
//! Usage: one assistant response is written as several lines (one content block each) that
//! share `message.id` and `requestId` and are not always adjacent; each repeats the usage with
//! `output_tokens` as it stood when the line was written. The mapper keeps the line with the
//! largest `output_tokens` per response (the last one on ties) and emits one `usage` event per
//! response when the file ends.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::parse::{Parsed, Response, Sidechain, SummaryTitle, meta, uuid_bits};
use super::paths;
use super::usage::usage;
use crate::model::{Event, Json, Meta, MetaType, Payload, Role, USAGE_SLOT};
use crate::read::{Emitter, InMemory, LineMapper};

/// What the Claude reader remembers across the files of one run.
#[derive(Debug, Default)]
pub struct RunState {
    /// Record uuids of the files read before: a later file holding one is a resumed session
    /// that copied it.
    seen: HashSet<u128>,
    /// Responses (`message.id`, `requestId`) whose usage was already counted.
    counted: HashSet<(String, String)>,
    /// The spawning calls a parent session file names, by agent id: the file is read once for
    /// all of its subagent files.
    spawns: HashMap<std::path::PathBuf, HashMap<String, Option<String>>>,
}

/// Maps the parsed lines of one Claude Code file, in order.
pub struct Mapper<'s> {
    path: String,
    /// For a subagent file (`agent-<id>.jsonl`): its agent id.
    file_agent: Option<String>,
    /// The subagent file's spawning call, looked up once the session id is known.
    file_parent_call: Option<Option<String>>,
    run: &'s mut RunState,
    /// The files of the group in memory, where a parent session file is looked for first.
    in_memory: InMemory,
    /// Uuids of this file's records: `summary` leaves are looked up here, and they join
    /// `run.seen` when the file ends.
    uuids: HashSet<u128>,
    responses: Vec<Response>,
    response_index: HashMap<(String, String), usize>,
    /// Tool names by call id, to name outputs.
    tools: HashMap<String, String>,
    /// Prompts of Task/Agent calls, to link 1.0 inline sidechains to the call that spawned them.
    task_prompts: HashMap<String, String>,
    /// 1.0 inline sidechains: record uuid → (agent id, spawning call).
    sidechains: HashMap<String, (String, Option<String>)>,
    /// `summary` titles, emitted at the end once it is known whether they describe this file.
    summaries: Vec<(Event, String, Option<String>)>,
}

impl<'s> Mapper<'s> {
    /// A mapper for the file named `name`, remembering across files in `run`, with the files
    /// of its group `in_memory` holds.
    pub fn new(name: &str, run: &'s mut RunState, in_memory: InMemory) -> Self {
        Mapper {
            path: name.to_owned(),
            file_agent: paths::subagent_id(name).map(str::to_owned),
            file_parent_call: None,
            run,
            in_memory,
            uuids: HashSet::new(),
            responses: Vec::new(),
            response_index: HashMap::new(),
            tools: HashMap::new(),
            task_prompts: HashMap::new(),
            sidechains: HashMap::new(),
            summaries: Vec::new(),
        }
    }

    /// The agent id and spawning call of a 1.0 inline sidechain record, from the chain it hangs on.
    fn chain(&mut self, record: Sidechain) -> (String, Option<String>) {
        let inherited = record.parent.as_deref().and_then(|p| self.sidechains.get(p)).cloned();
        let (agent, call) = inherited.unwrap_or((record.root, None));
        if let Some(uuid) = record.uuid {
            self.sidechains.insert(uuid, (agent.clone(), call.clone()));
        }
        (agent, call)
    }

    /// The spawning call of this subagent file: the sidecar's `toolUseId`, else the Task or
    /// Agent result in the parent session that names this agent.
    fn file_parent_call(&mut self, session_id: &str) -> Option<String> {
        if self.file_parent_call.is_none() {
            let path = Path::new(&self.path);
            let agent = self.file_agent.as_deref().unwrap_or_default();
            let spawns = &mut self.run.spawns;
            let in_memory = &self.in_memory;
            let call = paths::sidecar_call(path).or_else(|| {
                let parent = paths::parent_session_file(path, session_id)?;
                let calls = spawns.entry(parent).or_insert_with_key(|parent| match in_memory.get(parent) {
                    Some(bytes) => paths::spawning_calls_in(bytes),
                    None => paths::spawning_calls(parent),
                });
                calls.get(agent).cloned().flatten()
            });
            self.file_parent_call = Some(call);
        }
        self.file_parent_call.clone().flatten()
    }

    /// Links the root of a 1.0 inline sidechain to the Task call whose prompt it received.
    fn link_sidechain_root(&mut self, event: &mut Event, prompt: &str) {
        if self.file_agent.is_some() || !event.is_sidechain || event.parent_call_id.is_some() {
            return;
        }
        if let Some(call) = self.task_prompts.get(prompt).cloned() {
            event.parent_call_id = Some(call.clone());
            if let Some(uuid) = &event.record_id
                && let Some(entry) = self.sidechains.get_mut(uuid)
            {
                entry.1 = Some(call);
            }
        }
    }

    /// Keeps, per response, the line with the largest output count.
    fn track_usage(&mut self, line: Response) {
        match self.response_index.get(&line.key) {
            Some(&i) => {
                let r = &mut self.responses[i];
                r.all_copied &= line.head.copied;
                if line.output >= r.output {
                    r.head = line.head;
                    r.usage = line.usage;
                    r.output = line.output;
                }
            }
            None => {
                self.response_index.insert(line.key.clone(), self.responses.len());
                self.responses.push(Response { all_copied: line.head.copied, ..line });
            }
        }
    }
}

impl LineMapper<Parsed> for Mapper<'_> {
    fn map(&mut self, mut parsed: Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let copied = parsed.uuid.is_some_and(|uuid| {
            self.uuids.insert(uuid);
            self.run.seen.contains(&uuid)
        });
        let chain = parsed.sidechain.take().map(|record| self.chain(*record));
        let file_call = parsed.file_session.take().map(|session| self.file_parent_call(&session));
        let settle = |event: &mut Event| {
            event.copied = copied;
            if let Some((agent, call)) = &chain {
                event.agent_id = Some(agent.clone());
                event.parent_call_id.clone_from(call);
            }
            if let Some(call) = &file_call {
                event.parent_call_id.clone_from(call);
            }
        };
        if let Some(mut summary) = parsed.summary {
            settle(&mut summary.0);
            self.summaries.push(*summary);
            return Ok(());
        }
        parsed.events.iter_mut().for_each(settle);
        // Only user records give user messages; a prompt may start a 1.0 inline sidechain.
        if let Some(first) = parsed.events.first_mut()
            && let Payload::Message(m) = &first.payload
            && m.role == Role::User
        {
            let prompt = m.text.clone();
            self.link_sidechain_root(first, &prompt);
        }
        for (id, name, prompt) in parsed.calls {
            if let Some(prompt) = prompt {
                self.task_prompts.insert(prompt, id.clone());
            }
            self.tools.insert(id, name);
        }
        for event in &mut parsed.events {
            if let Payload::ToolOutput(output) = &mut event.payload
                && output.name.is_none()
                && let Some(id) = &output.call_id
            {
                output.name = self.tools.get(id).cloned();
            }
        }
        if let Some(mut usage) = parsed.usage {
            settle(&mut usage.head);
            self.track_usage(*usage);
        }
        for (slot, event) in parsed.events.into_iter().enumerate() {
            out.emit(event, slot as u32)?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        for response in std::mem::take(&mut self.responses) {
            let mut event = response.head;
            let counted_before = !self.run.counted.insert(response.key);
            event.copied = response.all_copied || counted_before;
            event.payload = Payload::Meta(Meta {
                meta_type: MetaType::Usage,
                data: None,
                usage: Some(usage(&response.usage, &event)),
            });
            out.emit(event, USAGE_SLOT)?;
        }
        for (mut event, title, leaf) in std::mem::take(&mut self.summaries) {
            // `summary` lines title the conversation that ends at `leafUuid`, often another
            // session's (the resume picker's cache); only a leaf in this file titles this session.
            let own = leaf.as_deref().and_then(uuid_bits).is_some_and(|l| self.uuids.contains(&l));
            let source = if own { "summary" } else { "summary_of_other_session" };
            let data = SummaryTitle { leaf_uuid: leaf.as_deref(), source, title: &title };
            event.payload = meta(MetaType::Title, Json::from_value(&data));
            out.emit(event, 0)?;
        }
        self.run.seen.extend(self.uuids.drain());
        Ok(())
    }
}
