//! Codex rollout lines → events.
//!
//! Three things span lines and are handled here:
//!
//! - **Duplicate channels.** Each visible message is written twice, as a `response_item` and as
//!   an `event_msg` (`user_message` right after its item, `agent_message` and
//!   `agent_reasoning` right before theirs). The item is kept; its twin adds what only it has
//!   (`local_images`, `phase`) and is listed in the item's `extra.merged_lines`. The pairing is
//!   by position, since sanitised files redact the two copies differently.
//! - **Tool results** are enriched by `patch_apply_end` (before the output) and
//!   `exec_command_end` / `mcp_tool_call_end` (right after it).
//! - **Token counts** are cumulative (§7): the positive delta of `total_token_usage` is one
//!   model call; rows that did not advance are re-emits; a drop is a reset that counts the row's
//!   `last_token_usage`.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;

use super::output;
use super::raw::{self, ContentItem, EventMsg, Item, McpResult, SessionMeta, TokenInfo, TokenUsage, TurnContext};
use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, Source, ToolCall, ToolOutput, Usage,
};
use crate::read::{Apart, Emitter, Line, LineMapper, LineParser, Nested, Object, Problem, file_stem, parse_time};

/// Text prefixes of context Codex injects into the conversation (`codex-format.md` §4.1).
const INJECTED_PREFIXES: [&str; 15] = [
    "<user_instructions>",
    "# AGENTS.md instructions for ",
    "<environment_context>",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<permissions instructions>",
    "<model_switch>",
    "<collaboration_mode>",
    "<realtime_conversation>",
    "<personality_spec>",
    "<apps_instructions>",
    "<skills_instructions>",
    "<plugins_instructions>",
];

/// Forked lines are written in one burst at fork time; lines within this window of the
/// replayed parent header belong to the replay.
const REPLAY_WINDOW_MS: i64 = 2000;

/// Parses the lines of one rollout file. What a line holds does not depend on the lines before
/// it; the session, context and pairing it gets from them are settled by the [`Mapper`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Parser;

/// One parsed line: what it is, and the facts the [`Mapper`] takes from it before settling its
/// events.
pub struct Parsed {
    step: Step,
    facts: Facts,
}

/// What a line tells the [`Mapper`] besides its events.
#[derive(Default)]
struct Facts {
    /// The line is in the envelope (0.32+).
    envelope: bool,
    /// A response item outside the envelope, whose record type is prefixed like the envelope's
    /// once the file is known to use it.
    bare_item: bool,
    /// A session header's facts.
    header: Option<Box<Header>>,
    /// A `turn_context`'s model and working directory.
    turn: Option<Box<(Option<String>, Option<String>)>>,
    /// A tool call: call id and tool name.
    call: Option<(String, String)>,
    /// `patch_apply_end` facts for the output of a call.
    end: Option<(String, End)>,
    /// A `token_count` row: its counters, and the row as data.
    tokens: Option<Box<(Option<TokenInfo>, Json)>>,
}

/// The facts of a session header (`session_meta`).
struct Header {
    id: Option<String>,
    cwd: Option<String>,
    cli_version: Option<String>,
    git_branch: Option<String>,
    forked_from_id: Option<String>,
    /// From `source.subagent`: the spawning thread and agent name of a `thread_spawn`, and the
    /// subagent's name when it is a plain string.
    spawn: Option<(Option<String>, Option<String>, Option<String>)>,
    parent_thread_id: Option<String>,
    /// `agent_nickname`, else `agent_path`.
    agent_name: Option<String>,
}

/// Maps the parsed lines of one rollout file, in order.
pub struct Mapper {
    /// The thread id: from `session_meta`, else the UUID at the end of the file name.
    session_id: String,
    /// Context in force: from the session header and the latest `turn_context`.
    context: Context,
    /// Subagent identity, from the session header.
    agent_id: Option<String>,
    parent_session_id: Option<String>,
    /// Whether a session header has been seen: only the first one is canonical.
    seen_meta: bool,
    /// Whether lines come in the envelope (0.32+), where typed prompts have a `user_message` twin.
    envelope: bool,
    /// Set for a forked thread: the parent's history is replayed after a second header.
    forked: bool,
    /// Start of the replay burst while it lasts.
    replay_from: Option<chrono::DateTime<chrono::Utc>>,
    /// Cumulative counters of the last `token_count` row that had them.
    last_total: Option<TokenUsage>,
    held: Option<Held>,
    /// `agent_reasoning` events waiting for the reasoning item they copy.
    pending_reasoning: Vec<Event>,
    /// Tool names by call id, to name outputs.
    tools: HashMap<String, String>,
    /// `patch_apply_end` facts waiting for their output.
    ends: HashMap<String, End>,
    /// The latest turns' events, held so that a rollback can mark them; older turns are emitted.
    turns: std::collections::VecDeque<std::collections::VecDeque<(Event, u32)>>,
    /// Whether the current turn was opened by `task_started` and waits for its typed prompt.
    turn_awaits_prompt: bool,
}

/// Turns held back for a rollback to mark: the current one and the two before it. A rollback of
/// more turns marks those still held and says how many it could not reach.
const HELD_TURNS: usize = 3;

/// Input bytes the held turns may span; beyond it the oldest events are emitted even inside a
/// turn, so that memory stays bounded for rollouts with huge turns or none.
const HELD_BYTES: u64 = 16 << 20;

/// An event held back one line, because the next line may complete it.
enum Held {
    /// A user message item: typed if its `user_message` twin follows, injected otherwise.
    UserItem(Event),
    /// An `agent_message` event: a copy of the assistant message item that follows.
    AgentMessage(Event),
    /// A tool output, which `exec_command_end` or `mcp_tool_call_end` may follow.
    Output(Event),
}

/// Facts about a tool run from the extended events.
#[derive(Debug, Default, Clone, Copy)]
struct End {
    exit_code: Option<i64>,
    duration_ms: Option<u64>,
    is_error: Option<bool>,
}

/// What one line is, decided before anything is emitted.
enum Step {
    /// Events to emit as they are. `transparent` steps (counters, settings) leave pending
    /// reasoning copies waiting.
    Events {
        events: Vec<Event>,
        transparent: bool,
    },
    UserItem(Event),
    UserMessage(Event),
    AgentMessage(Event),
    AssistantItem(Event),
    ReasoningEvent(Event),
    ReasoningItem(Event),
    Output(Event),
    /// An `exec_command_end` or `mcp_tool_call_end`: its own meta event, and facts for the output.
    OutputEnd {
        call_id: String,
        end: End,
        event: Event,
    },
}

impl Step {
    /// The events the step holds.
    fn events_mut(&mut self) -> &mut [Event] {
        match self {
            Step::Events { events, .. } => events,
            Step::UserItem(e)
            | Step::UserMessage(e)
            | Step::AgentMessage(e)
            | Step::AssistantItem(e)
            | Step::ReasoningEvent(e)
            | Step::ReasoningItem(e)
            | Step::Output(e)
            | Step::OutputEnd { event: e, .. } => std::slice::from_mut(e),
        }
    }

    /// The first event the step holds.
    fn first_event_mut(&mut self) -> Option<&mut Event> {
        self.events_mut().first_mut()
    }
}

impl Mapper {
    /// A mapper for the file named `name`.
    pub fn new(name: &str) -> Self {
        Mapper {
            session_id: session_id_from_name(name),
            context: Context::default(),
            agent_id: None,
            parent_session_id: None,
            seen_meta: false,
            envelope: false,
            forked: false,
            replay_from: None,
            last_total: None,
            held: None,
            pending_reasoning: Vec::new(),
            tools: HashMap::new(),
            ends: HashMap::new(),
            turns: std::collections::VecDeque::new(),
            turn_awaits_prompt: false,
        }
    }

    /// Emits an event through the turn buffer: a turn starts at `task_started` or at a typed
    /// prompt; `thread_rolled_back` marks the events of the turns it removes (§5, §13.21).
    fn send(&mut self, out: &mut Emitter<'_>, mut event: Event, slot: u32) -> std::io::Result<()> {
        let new_turn = match &event.payload {
            Payload::Meta(m) if m.meta_type == MetaType::TurnStart => {
                self.turn_awaits_prompt = true;
                true
            }
            Payload::Message(m) if m.role == Role::User && !event.injected && !event.copied => {
                !std::mem::replace(&mut self.turn_awaits_prompt, false)
            }
            _ => false,
        };
        if new_turn || self.turns.is_empty() {
            self.turns.push_back(std::collections::VecDeque::new());
            while self.turns.len() > HELD_TURNS {
                for (e, slot) in self.turns.pop_front().expect("more than one turn") {
                    out.emit(e, slot)?;
                }
            }
        }
        if let Payload::Meta(m) = &mut event.payload
            && m.meta_type == MetaType::Rollback
            && event.source.record_type.as_deref() == Some("event_msg/thread_rolled_back")
        {
            let n = m.data.as_ref().and_then(|d| d.to_value()["num_turns"].as_u64()).unwrap_or(0) as usize;
            // The rollback sits in the turn after the ones it removes, unless a new one began.
            let last =
                self.turns.len() - usize::from(self.turns.back().is_some_and(std::collections::VecDeque::is_empty));
            let reach = n.min(last);
            for turn in self.turns.range_mut(last - reach..last) {
                for (e, _) in turn {
                    e.rolled_back = true;
                }
            }
            if reach < n {
                add_extra(&mut event, "turns_not_marked", Json::from_value(&(n - reach)));
            }
        }
        let end = event.source.byte_offset;
        self.turns.back_mut().expect("a turn was opened above").push_back((event, slot));
        while let Some(first) = self.turns.front().and_then(|t| t.front())
            && end.saturating_sub(first.0.source.byte_offset) > HELD_BYTES
        {
            let front = self.turns.front_mut().expect("checked above");
            let (e, slot) = front.pop_front().expect("a held event");
            if front.is_empty() && self.turns.len() > 1 {
                self.turns.pop_front();
            }
            out.emit(e, slot)?;
        }
        Ok(())
    }

    /// Gives an event what the lines before it established: the session, the context in force,
    /// the subagent identity, and whether it replays a forked thread's parent history.
    fn settle(&mut self, event: &mut Event, bare_item: bool) {
        event.session_id.clone_from(&self.session_id);
        event.context = self.context.clone();
        event.agent_id.clone_from(&self.agent_id);
        event.is_sidechain = self.agent_id.is_some();
        event.parent_session_id.clone_from(&self.parent_session_id);
        event.copied = self.is_replayed(event.timestamp);
        if bare_item
            && self.envelope
            && let Some(record_type) = &mut event.source.record_type
        {
            record_type.insert_str(0, "response_item/");
        }
    }

    /// Whether a line of a forked thread belongs to the replayed parent history.
    fn is_replayed(&mut self, at: Option<chrono::DateTime<chrono::Utc>>) -> bool {
        let Some(from) = self.replay_from else { return false };
        match at {
            Some(at) if (at - from).num_milliseconds() <= REPLAY_WINDOW_MS => true,
            None => true,
            Some(_) => {
                self.replay_from = None;
                false
            }
        }
    }

    /// Takes the session header's facts into account; only the first header counts, and in a
    /// forked thread a second one starts the replay of the parent's history.
    fn header(&mut self, header: Header, at: Option<chrono::DateTime<chrono::Utc>>) {
        if self.seen_meta {
            if self.forked && self.replay_from.is_none() {
                self.replay_from = at.or(Some(chrono::DateTime::<chrono::Utc>::MIN_UTC));
            }
            return;
        }
        self.seen_meta = true;
        if let Some(id) = header.id {
            self.session_id = id;
        }
        self.context.cwd = header.cwd;
        self.context.agent_version = header.cli_version;
        self.context.git_branch = header.git_branch;
        if let Some(parent) = header.forked_from_id {
            self.forked = true;
            self.parent_session_id = Some(parent);
        }
        if let Some((spawn_parent, spawn_name, name)) = header.spawn {
            self.parent_session_id = spawn_parent.or(self.parent_session_id.take());
            self.agent_id = spawn_name.or(name).or_else(|| Some(self.session_id.clone()));
        }
        if let Some(parent) = header.parent_thread_id {
            self.parent_session_id = Some(parent);
            self.agent_id = header.agent_name.or_else(|| Some(self.session_id.clone()));
        }
    }

    /// One `token_count` row: a `usage` event when it reports a new model call, otherwise a
    /// `usage_snapshot` (a re-emit, an `info: null` row, a synthetic row, or replayed history).
    fn token_count(
        &mut self,
        info: Option<TokenInfo>,
        data: Json,
        at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Payload {
        let (meta_type, usage) = match self.model_call(info, at) {
            Some(u) => (MetaType::Usage, Some(u)),
            None => (MetaType::UsageSnapshot, None),
        };
        Payload::Meta(Meta { meta_type, data: Some(data), usage })
    }

    /// The usage of the model call a `token_count` row reports, if it reports one.
    fn model_call(&mut self, info: Option<TokenInfo>, at: Option<chrono::DateTime<chrono::Utc>>) -> Option<Usage> {
        let info = info?;
        let total = info.total_token_usage?.checked()?;
        let previous = self.last_total.replace(total);
        if self.is_replayed(at) {
            return None;
        }
        let call = match previous {
            None => Some(total),
            // A counter went down: a reset (on context overflow Codex sets input and output to 0
            // and the total to the context window). This row's own usage is the call's.
            Some(p)
                if total.input_tokens < p.input_tokens
                    || total.output_tokens < p.output_tokens
                    || total.total() < p.total() =>
            {
                info.last_token_usage.and_then(|c| c.checked())
            }
            Some(p) if total.total() > p.total() => Some(TokenUsage {
                input_tokens: total.input_tokens - p.input_tokens,
                cached_input_tokens: total.cached_input_tokens.saturating_sub(p.cached_input_tokens),
                output_tokens: total.output_tokens - p.output_tokens,
                reasoning_output_tokens: total.reasoning_output_tokens.saturating_sub(p.reasoning_output_tokens),
                total_tokens: Some(total.total() - p.total()),
            }),
            // Did not advance: the same counters sent again.
            Some(_) => None,
        };
        // After compaction Codex writes an estimate with no input or output: not a call.
        let u = call.filter(|u| u.input_tokens > 0 || u.output_tokens > 0)?;
        if u.total() > crate::model::MAX_COUNT {
            crate::read::lenient::overflow("payload.info");
        }
        let cached = u.cached_input_tokens.min(u.input_tokens);
        Some(Usage {
            input_tokens: Some(u.input_tokens - cached),
            cache_read_tokens: Some(cached),
            cache_write_tokens: None,
            output_tokens: Some(u.output_tokens),
            reasoning_tokens: Some(u.reasoning_output_tokens),
            total_tokens: Some(u.total()).filter(|t| *t <= crate::model::MAX_COUNT),
            model: self.context.model.clone(),
            response_id: None,
        })
    }

    /// Emits what the held slot and the pending reasoning copies hold, as they are.
    fn flush(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        self.flush_held(out)?;
        self.flush_reasoning(out)
    }

    fn flush_held(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        match self.held.take() {
            None => Ok(()),
            // No `user_message` twin: context Codex injected, not something the user typed.
            Some(Held::UserItem(mut event)) => {
                event.injected = true;
                self.send(out, event, 0)
            }
            Some(Held::AgentMessage(event) | Held::Output(event)) => self.send(out, event, 0),
        }
    }

    fn flush_reasoning(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        for event in std::mem::take(&mut self.pending_reasoning) {
            self.send(out, event, 0)?;
        }
        Ok(())
    }

    fn apply(&mut self, step: Step, out: &mut Emitter<'_>) -> std::io::Result<()> {
        match step {
            Step::Events { events, transparent } => {
                self.flush_held(out)?;
                if !transparent {
                    self.flush_reasoning(out)?;
                }
                for (slot, event) in events.into_iter().enumerate() {
                    self.send(out, event, slot as u32)?;
                }
                Ok(())
            }
            Step::UserItem(event) => {
                self.flush(out)?;
                self.held = Some(Held::UserItem(event));
                Ok(())
            }
            Step::UserMessage(twin) => match self.held.take() {
                Some(Held::UserItem(mut item)) => {
                    item.injected |= twin.injected;
                    merge_twin(&mut item, &twin);
                    self.send(out, item, 0)
                }
                other => {
                    self.held = other;
                    self.flush(out)?;
                    self.send(out, twin, 0)
                }
            },
            Step::AgentMessage(event) => {
                self.flush_held(out)?;
                self.held = Some(Held::AgentMessage(event));
                Ok(())
            }
            Step::AssistantItem(mut item) => {
                match self.held.take() {
                    Some(Held::AgentMessage(twin)) => {
                        if let (Payload::Message(m), Payload::Message(t)) = (&mut item.payload, &twin.payload)
                            && m.phase.is_none()
                        {
                            m.phase.clone_from(&t.phase);
                        }
                        merge_twin(&mut item, &twin);
                    }
                    other => {
                        self.held = other;
                        self.flush_held(out)?;
                    }
                }
                self.flush_reasoning(out)?;
                self.send(out, item, 0)
            }
            Step::ReasoningEvent(event) => {
                self.flush_held(out)?;
                self.pending_reasoning.push(event);
                Ok(())
            }
            Step::ReasoningItem(mut item) => {
                self.flush_held(out)?;
                for twin in std::mem::take(&mut self.pending_reasoning) {
                    if let (Payload::Reasoning(r), Payload::Reasoning(t)) = (&mut item.payload, &twin.payload)
                        && r.raw_text.is_none()
                    {
                        r.raw_text.clone_from(&t.raw_text);
                    }
                    merge_twin(&mut item, &twin);
                }
                self.send(out, item, 0)
            }
            Step::Output(event) => {
                self.flush(out)?;
                self.held = Some(Held::Output(event));
                Ok(())
            }
            Step::OutputEnd { call_id, end, event } => {
                // Only a held output takes the facts; anything else held (a prompt waiting for
                // its twin, an assistant message's copy) is flushed below as it is.
                if let Some(Held::Output(output)) = &mut self.held
                    && let Payload::ToolOutput(o) = &mut output.payload
                    && o.call_id.as_deref() == Some(call_id.as_str())
                {
                    o.exit_code = o.exit_code.or(end.exit_code);
                    o.duration_ms = o.duration_ms.or(end.duration_ms);
                    o.is_error = o.is_error.or(end.is_error);
                }
                self.flush(out)?;
                self.send(out, event, 0)
            }
        }
    }
}

impl Parser {
    /// An event of `line` with the fields the line itself holds; the mapper settles the rest.
    fn event(&self, line: Line<'_>, timestamp: Option<&str>, record_type: &str, payload: Payload) -> Event {
        let mut event = Event::new(String::new(), payload);
        event.timestamp = timestamp.and_then(parse_time);
        event.source = Source {
            file: String::new(),
            line: line.number,
            byte_offset: line.offset,
            record_type: Some(record_type.to_owned()),
        };
        event
    }

    /// Reads one line into a [`Step`] (nothing is emitted yet).
    fn step(&self, line: Line<'_>, facts: &mut Facts) -> Result<Step, Problem> {
        let mut outer = Object::parse_with(line.text, PAYLOAD, payload_is_mapped)?;
        let inner = match outer.take_nested("payload") {
            Some(Nested::Object(payload)) => Some(payload),
            _ => None,
        };
        let record: raw::Line<'_> = outer.get()?;
        let payload = inner.map(Body::Fields).or_else(|| outer.raw("payload").map(Body::Raw));
        let ts = record.timestamp.as_deref();
        match (record.line_type.as_deref(), payload) {
            (Some(line_type), Some(payload)) => {
                facts.envelope = true;
                self.envelope_step(line, ts, line_type, payload, facts)
            }
            (None, None) if record.record_type.is_some() => {
                // A legacy state marker (0.8–0.31): a batch boundary, sometimes with the
                // previous response id.
                Ok(self.events(line, ts, "state", meta(MetaType::System, outer.to_json()), false))
            }
            (None, None) if record.id.is_some() => {
                facts.header = Some(header(line.text)?);
                Ok(self.events(line, ts, "session_meta", meta(MetaType::SessionStart, outer.to_json()), false))
            }
            // A response item outside the envelope (0.1–0.31): the line is the item.
            (Some(_), None) => self.item_step(line, None, &outer, facts),
            _ => Ok(self.events(line, ts, "unknown", unknown(outer.to_json()), false)),
        }
    }

    fn events(&self, line: Line<'_>, ts: Option<&str>, record_type: &str, payload: Payload, transparent: bool) -> Step {
        let event = self.event(line, ts, record_type, payload);
        Step::Events { events: vec![event], transparent }
    }

    fn envelope_step(
        &self,
        line: Line<'_>,
        ts: Option<&str>,
        line_type: &str,
        payload: Body<'_>,
        facts: &mut Facts,
    ) -> Result<Step, Problem> {
        Ok(match line_type {
            "session_meta" => {
                let payload = payload.raw()?;
                facts.header = Some(header(payload.get())?);
                self.events(line, ts, "session_meta", meta(MetaType::SessionStart, Json::from_raw(payload)), false)
            }
            "turn_context" => {
                let payload = payload.raw()?;
                let turn: TurnContext<'_> = serde_json::from_str(payload.get())?;
                facts.turn = Some(Box::new((turn.model.map(Cow::into_owned), turn.cwd.map(Cow::into_owned))));
                self.events(line, ts, "turn_context", meta(MetaType::TurnContext, Json::from_raw(payload)), true)
            }
            "compacted" => {
                // `replacement_history` repeats earlier messages: kept as data, never re-emitted.
                self.events(line, ts, "compacted", meta(MetaType::Compaction, Json::from_raw(payload.raw()?)), false)
            }
            "response_item" => self.item_step(line, ts, &payload.object()?, facts)?,
            "event_msg" => self.event_msg_step(line, ts, &payload.object()?, facts)?,
            other => self.events(line, ts, other, unknown(Json::parse(line.text)?), false),
        })
    }

    fn item_step(
        &self,
        line: Line<'_>,
        ts: Option<&str>,
        object: &Object<'_>,
        facts: &mut Facts,
    ) -> Result<Step, Problem> {
        let mut step = self.item_step_inner(line, ts, object, facts)?;
        // Fields no event field carries (item ids, `encrypted_content`, `status`, …) go with the
        // item's first event; meta events hold the whole item already.
        const CARRIED: [&str; 11] = [
            "type",
            "role",
            "content",
            "phase",
            "summary",
            "name",
            "arguments",
            "call_id",
            "input",
            "output",
            "action",
        ];
        if let Some(first) = step.first_event_mut()
            && first.kind() != crate::model::Kind::Meta
        {
            first.extra = object.leftovers(&CARRIED, None);
        }
        Ok(step)
    }

    fn item_step_inner(
        &self,
        line: Line<'_>,
        ts: Option<&str>,
        object: &Object<'_>,
        facts: &mut Facts,
    ) -> Result<Step, Problem> {
        let item: Item<'_> = object.get()?;
        let record_type = if ts.is_some() || facts.envelope {
            ["response_item/", &item.item_type].concat()
        } else {
            facts.bare_item = true;
            item.item_type.clone().into_owned()
        };
        let data = || object.to_json();
        let one = |this: &Self, payload| Ok(this.events(line, ts, &record_type, payload, false));
        match item.item_type.as_ref() {
            "message" => {
                let Some((message, injected)) = message_item(&item) else { return one(self, unknown(data())) };
                let role = message.role;
                let mut event = self.event(line, ts, &record_type, Payload::Message(message));
                event.injected = injected;
                Ok(match role {
                    // Outside the envelope there is no twin to wait for; the mapper knows.
                    Role::User => Step::UserItem(event),
                    Role::Assistant => Step::AssistantItem(event),
                    _ => Step::Events { events: vec![event], transparent: false },
                })
            }
            "reasoning" => {
                let text = join(item.summary.iter().flatten());
                let raw_text = item.content.as_ref().map(|c| join(c.iter())).filter(|t| !t.is_empty());
                let encrypted = object.raw("encrypted_content").is_some();
                let reasoning = Reasoning {
                    omitted: text.is_empty() && raw_text.is_none(),
                    text,
                    raw_text,
                    encrypted,
                    signature: None,
                };
                Ok(Step::ReasoningItem(self.event(line, ts, &record_type, Payload::Reasoning(reasoning))))
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let name = match item.item_type.as_ref() {
                    "local_shell_call" => "local_shell".to_owned(),
                    _ => item.name.as_deref().unwrap_or_default().to_owned(),
                };
                let (input, input_text) = match item.item_type.as_ref() {
                    "function_call" => arguments(object.raw("arguments"))?,
                    "custom_tool_call" => match item.input.as_deref() {
                        Some(text) => json_or_text(text),
                        None => (None, None),
                    },
                    _ => (object.raw("action").map(Json::from_raw), None),
                };
                let call_id =
                    item.call_id.as_deref().or(item.id.as_deref().filter(|_| item.item_type == "local_shell_call"));
                let call_id = call_id.map(str::to_owned);
                if let Some(id) = &call_id {
                    facts.call = Some((id.clone(), name.clone()));
                }
                one(self, Payload::ToolCall(ToolCall { call_id, name, input, input_text }))
            }
            "function_call_output" | "custom_tool_call_output" => {
                let out = match object.raw("output") {
                    None => output::Output::default(),
                    Some(raw) => output::parse(raw)?,
                };
                // The mapper names the tool from its call and adds what `patch_apply_end` said.
                let payload = Payload::ToolOutput(ToolOutput {
                    call_id: item.call_id.as_deref().map(str::to_owned),
                    name: item.name.map(Cow::into_owned),
                    text: out.text,
                    parts: out.parts,
                    is_error: None,
                    exit_code: out.exit_code,
                    duration_ms: out.duration_ms,
                    result: None,
                });
                Ok(Step::Output(self.event(line, ts, &record_type, payload)))
            }
            // Run by the provider, not by Codex: no call id or output to pair with (§4.3).
            "web_search_call" | "image_generation_call" | "tool_search_call" | "tool_search_output" => {
                one(self, meta(MetaType::ServerTool, data()))
            }
            "ghost_snapshot" => one(self, meta(MetaType::FileSnapshot, data())),
            "compaction" | "compaction_summary" | "context_compaction" => one(self, meta(MetaType::Compaction, data())),
            "agent_message" => one(self, meta(MetaType::System, data())),
            _ => one(self, unknown(data())),
        }
    }

    fn event_msg_step(
        &self,
        line: Line<'_>,
        ts: Option<&str>,
        object: &Object<'_>,
        facts: &mut Facts,
    ) -> Result<Step, Problem> {
        let msg: EventMsg<'_> = object.get()?;
        let record_type = ["event_msg/", &msg.event_type].concat();
        let data = || object.to_json();
        let meta_type = match msg.event_type.as_ref() {
            "user_message" => {
                let mut parts = vec![Part::Text { text: msg.message.as_deref().unwrap_or_default().to_owned() }];
                parts.extend(msg.images.iter().flatten().map(|url| image_part(url)));
                let mut event =
                    self.event(line, ts, &record_type, Payload::Message(Message::from_parts(Role::User, parts)));
                let kind_injected = msg.kind.as_deref().is_some_and(|k| k != "plain");
                event.injected = kind_injected || is_injected_text(msg.message.as_deref().unwrap_or_default());
                event.extra = object.leftovers(&["type", "message", "images"], None);
                return Ok(Step::UserMessage(event));
            }
            "agent_message" => {
                let text = msg.message.as_deref().unwrap_or_default().to_owned();
                let mut message = Message::from_parts(Role::Assistant, vec![Part::Text { text }]);
                message.phase = msg.phase.map(|p| p.into_owned());
                let mut event = self.event(line, ts, &record_type, Payload::Message(message));
                event.extra = object.leftovers(&["type", "message", "phase"], None);
                return Ok(Step::AgentMessage(event));
            }
            "agent_reasoning" | "agent_reasoning_raw_content" => {
                let text = msg.text.as_deref().unwrap_or_default().to_owned();
                let raw_content = msg.event_type == "agent_reasoning_raw_content";
                let reasoning = Reasoning {
                    text: if raw_content { String::new() } else { text.clone() },
                    raw_text: raw_content.then_some(text),
                    encrypted: false,
                    omitted: false,
                    signature: None,
                };
                return Ok(Step::ReasoningEvent(self.event(line, ts, &record_type, Payload::Reasoning(reasoning))));
            }
            "token_count" => {
                // The mapper tells a model call from a re-emit.
                facts.tokens = Some(Box::new((msg.info, data())));
                return Ok(self.events(line, ts, &record_type, placeholder(), true));
            }
            "exec_command_end" | "mcp_tool_call_end" => {
                let duration_ms = msg.duration.map(|d| d.secs * 1000 + d.nanos / 1_000_000);
                let is_error = object
                    .raw("result")
                    .and_then(|r| serde_json::from_str::<McpResult>(r.get()).ok())
                    .and_then(|r| match r {
                        McpResult::Ok(ok) => ok.is_error,
                        McpResult::Err(_) => Some(true),
                    });
                let end = End { exit_code: msg.exit_code, duration_ms, is_error };
                let event = self.event(line, ts, &record_type, meta(MetaType::System, data()));
                return Ok(match msg.call_id {
                    Some(call_id) => Step::OutputEnd { call_id: call_id.into_owned(), end, event },
                    None => Step::Events { events: vec![event], transparent: false },
                });
            }
            "patch_apply_end" => {
                if let Some(call_id) = &msg.call_id {
                    let end = End { exit_code: None, duration_ms: None, is_error: msg.success.map(|ok| !ok) };
                    facts.end = Some((call_id.clone().into_owned(), end));
                }
                MetaType::System
            }
            "task_started" | "turn_started" => MetaType::TurnStart,
            "task_complete" | "turn_complete" => MetaType::TurnEnd,
            "turn_aborted" => MetaType::Interrupt,
            "thread_rolled_back" | "undo_completed" => MetaType::Rollback,
            "thread_name_updated" => {
                let title = serde_json::json!({ "title": msg.thread_name, "source": "custom", "record": data() });
                return Ok(self.events(line, ts, &record_type, meta(MetaType::Title, Json::from_value(&title)), false));
            }
            "context_compacted"
            | "error"
            | "warning"
            | "web_search_end"
            | "item_completed"
            | "entered_review_mode"
            | "exited_review_mode"
            | "image_generation_end"
            | "view_image_tool_call"
            | "guardian_assessment"
            | "dynamic_tool_call_request"
            | "dynamic_tool_call_response"
            | "thread_goal_updated"
            | "sub_agent_activity"
            | "turn_moderation_metadata"
            | "thread_settings_applied"
            | "stream_error"
            | "model_reroute" => MetaType::System,
            t if t.starts_with("collab_") => MetaType::System,
            _ => MetaType::Unknown,
        };
        let payload =
            if meta_type == MetaType::Unknown { unknown(Json::parse(line.text)?) } else { meta(meta_type, data()) };
        Ok(self.events(line, ts, &record_type, payload, false))
    }
}

impl Mapper {
    /// Maps a TypeScript-era document `{session, items}` (`codex-format.md` §9); `None` when
    /// `text` is not one, so that it is read line by line instead.
    ///
    /// # Errors
    /// When `out` fails.
    pub fn document<'t>(&mut self, text: &'t str, out: &mut Emitter<'_>) -> std::io::Result<Option<()>> {
        let Ok(doc) = serde_json::from_str::<raw::Document<'t>>(text) else { return Ok(None) };
        // Items are placed by the line on which they start in the pretty-printed file.
        let mut counted = (0usize, 1u64);
        let mut place = |raw: &'t RawValue| -> Line<'t> {
            let offset = raw.get().as_ptr() as usize - text.as_ptr() as usize;
            counted.1 += text[counted.0..offset].bytes().filter(|b| *b == b'\n').count() as u64;
            counted.0 = offset;
            Line { number: counted.1, offset: offset as u64, text: raw.get() }
        };
        let line = place(doc.session);
        let Ok(session) = header(doc.session.get()) else { return Ok(None) };
        let event = Parser.event(line, None, "session", meta(MetaType::SessionStart, Json::from_raw(doc.session)));
        let step = Step::Events { events: vec![event], transparent: false };
        let mut lines = vec![Parsed { step, facts: Facts { header: Some(session), ..Facts::default() } }];
        for item in doc.items {
            let mut facts = Facts::default();
            let step = Object::from_raw(item)
                .map_err(Problem::from)
                .and_then(|object| Parser.item_step(place(item), None, &object, &mut facts));
            match step {
                Ok(step) => lines.push(Parsed { step, facts }),
                Err(_) => return Ok(None),
            }
        }
        for parsed in lines {
            self.map(parsed, out)?;
        }
        LineMapper::finish(self, out)?;
        Ok(Some(()))
    }
}

impl LineParser for Parser {
    type Parsed = Parsed;

    fn parse(&self, line: Line<'_>) -> Result<Parsed, Problem> {
        let mut facts = Facts::default();
        let step = self.step(line, &mut facts)?;
        Ok(Parsed { step, facts })
    }
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let Parsed { mut step, facts } = parsed;
        self.envelope |= facts.envelope;
        let at = step.events_mut().first().and_then(|e| e.timestamp);
        if let Some(header) = facts.header {
            self.header(*header, at);
        }
        if let Some(turn) = facts.turn {
            let (model, cwd) = *turn;
            if model.is_some() {
                self.context.model = model;
            }
            if cwd.is_some() {
                self.context.cwd = cwd;
            }
        }
        if let Some((call_id, name)) = facts.call {
            self.tools.insert(call_id, name);
        }
        if let Some((call_id, end)) = facts.end {
            self.ends.insert(call_id, end);
        }
        if let Some(tokens) = facts.tokens {
            let (info, data) = *tokens;
            let payload = self.token_count(info, data, at);
            if let Some(event) = step.first_event_mut() {
                event.payload = payload;
            }
        }
        for event in step.events_mut() {
            self.settle(event, facts.bare_item);
        }
        if let Step::Output(event) = &mut step
            && let Payload::ToolOutput(o) = &mut event.payload
            && let Some(call_id) = &o.call_id
        {
            let end = self.ends.remove(call_id).unwrap_or_default();
            if let Some(name) = self.tools.get(call_id) {
                o.name = Some(name.clone());
            }
            o.is_error = end.is_error;
            o.exit_code = o.exit_code.or(end.exit_code);
            o.duration_ms = o.duration_ms.or(end.duration_ms);
        }
        let step = match step {
            Step::UserItem(event) if !self.envelope => Step::Events { events: vec![event], transparent: false },
            step => step,
        };
        self.apply(step, out)
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        self.flush(out)?;
        for (event, slot) in self.turns.drain(..).flatten() {
            out.emit(event, slot)?;
        }
        Ok(())
    }
}

/// An envelope's payload: read as fields in the line's pass, or kept whole.
enum Body<'a> {
    Fields(Object<'a>),
    Raw(&'a RawValue),
}

impl<'a> Body<'a> {
    /// The payload's fields.
    fn object(self) -> Result<Object<'a>, serde_json::Error> {
        match self {
            Body::Fields(object) => Ok(object),
            Body::Raw(raw) => Object::from_raw(raw),
        }
    }

    /// The payload whole.
    fn raw(&self) -> Result<&'a RawValue, serde_json::Error> {
        match self {
            Body::Fields(object) => serde_json::from_str(object.text()),
            Body::Raw(raw) => Ok(raw),
        }
    }
}

/// The envelope's payload, read apart from the line in its pass where [`payload_is_mapped`].
const PAYLOAD: &[Apart] = &[Apart { key: "payload", list: false, inner: &[] }];

/// Whether an envelope whose fields before `payload` are `fields` holds a record this reader maps
/// from the payload's fields (an item or an event), so that the payload is read as fields.
fn payload_is_mapped(fields: &[(Cow<'_, str>, &RawValue)]) -> bool {
    fields.iter().any(|(key, value)| key == "type" && matches!(value.get(), r#""response_item""# | r#""event_msg""#))
}

/// Reads a session header (`session_meta`).
fn header(text: &str) -> Result<Box<Header>, Problem> {
    let meta: SessionMeta<'_> = serde_json::from_str(text)?;
    let spawn = meta
        .source
        .and_then(|s| serde_json::from_str::<raw::SubagentSource<'_>>(s.get()).ok())
        .and_then(|s| s.subagent)
        .map(|sub| {
            let spawn = serde_json::from_str::<raw::ThreadSpawn<'_>>(sub.get()).ok().and_then(|t| t.thread_spawn);
            let name = serde_json::from_str::<String>(sub.get()).ok();
            let spawn_parent = spawn.as_ref().and_then(|s| s.parent_thread_id.as_deref().map(str::to_owned));
            let spawn_name =
                spawn.as_ref().and_then(|s| s.agent_nickname.as_deref().or(s.agent_path.as_deref()).map(str::to_owned));
            (spawn_parent, spawn_name, name)
        });
    Ok(Box::new(Header {
        id: meta.id.map(Cow::into_owned),
        cwd: meta.cwd.map(Cow::into_owned),
        cli_version: meta.cli_version.map(Cow::into_owned),
        git_branch: meta.git.and_then(|g| g.branch).map(Cow::into_owned),
        forked_from_id: meta.forked_from_id.map(Cow::into_owned),
        spawn,
        parent_thread_id: meta.parent_thread_id.map(Cow::into_owned),
        agent_name: meta.agent_nickname.or(meta.agent_path).map(Cow::into_owned),
    }))
}

/// A message item's payload and whether it is injected context; `None` for items with content
/// this reader does not know (kept whole instead).
fn message_item(item: &Item<'_>) -> Option<(Message, bool)> {
    let role = match item.role.as_deref()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "developer" => Role::Developer,
        "system" => Role::System,
        _ => return None,
    };
    let mut parts = Vec::new();
    for c in item.content.iter().flatten() {
        match (c.item_type.as_ref(), &c.text, &c.image_url) {
            // `<image>` wrappers around image parts are not text anyone wrote.
            (_, Some(text), _) if is_image_wrapper(text) => {}
            ("input_text" | "output_text" | "text", text, _) => {
                parts.push(Part::Text { text: text.as_deref().unwrap_or_default().to_owned() });
            }
            ("input_image", _, Some(url)) => parts.push(image_part(url)),
            _ => return None,
        }
    }
    let mut message = Message::from_parts(role, parts);
    message.phase = item.phase.as_deref().map(str::to_owned);
    // Developer and system text is never typed by the user.
    let injected =
        matches!(role, Role::Developer | Role::System) || (role == Role::User && is_injected_text(&message.text));
    Some((message, injected))
}

fn is_injected_text(text: &str) -> bool {
    let t = text.trim_start();
    INJECTED_PREFIXES.iter().any(|p| t.starts_with(p))
}

fn is_image_wrapper(text: &str) -> bool {
    let t = text.trim();
    t == "<image>" || t == "</image>" || (t.starts_with("<image name=") && t.ends_with('>'))
}

/// An image part from a URL; `data:` URLs are split into media type and base64 data.
pub fn image_part(url: &str) -> Part {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((media_type, data)) = rest.split_once(";base64,")
    {
        return Part::Image { media_type: Some(media_type.to_owned()), data: Some(data.to_owned()), url: None };
    }
    Part::Image { media_type: None, data: None, url: Some(url.to_owned()) }
}

/// `function_call.arguments`: a string holding JSON (parsed), or text that is not JSON (kept).
fn arguments(raw: Option<&RawValue>) -> Result<(Option<Json>, Option<String>), Problem> {
    let Some(raw) = raw else { return Ok((None, None)) };
    if !raw.get().starts_with('"') {
        return Ok((Some(Json::from_raw(raw)), None));
    }
    let text: std::borrow::Cow<'_, str> = serde_json::from_str(raw.get())?;
    Ok(json_or_text(&text))
}

fn json_or_text(text: &str) -> (Option<Json>, Option<String>) {
    match Json::parse(text) {
        Ok(json) => (Some(json), None),
        Err(_) => (None, Some(text.to_owned())),
    }
}

fn join<'a>(parts: impl Iterator<Item = &'a ContentItem<'a>>) -> String {
    parts.filter_map(|p| p.text.as_deref()).collect::<Vec<_>>().join("\n")
}

/// Records on `item` that `twin` (its copy on the other channel) was folded into it.
fn merge_twin(item: &mut Event, twin: &Event) {
    // Only the two objects' fields are merged; their values are kept as they are.
    let mut extra: BTreeMap<String, Json> = extra_fields(&item.extra).collect();
    extra.extend(extra_fields(&twin.extra));
    let entry =
        Json::from_value(&serde_json::json!({ "line": twin.source.line, "record_type": twin.source.record_type }));
    let mut lines =
        extra.get("merged_lines").and_then(|l| serde_json::from_str::<Vec<Json>>(l.get()).ok()).unwrap_or_default();
    lines.push(entry);
    extra.insert("merged_lines".to_owned(), Json::from_value(&lines));
    item.extra = Some(Json::from_value(&extra));
}

/// The fields of an event's `extra` object.
fn extra_fields(extra: &Option<Json>) -> impl Iterator<Item = (String, Json)> {
    let fields = extra.as_ref().and_then(|e| serde_json::from_str::<BTreeMap<String, &RawValue>>(e.get()).ok());
    fields.into_iter().flatten().map(|(key, value)| (key, Json::from_raw(value)))
}

/// Sets `key` in the event's `extra` object.
fn add_extra(event: &mut Event, key: &str, value: Json) {
    let mut extra = event.extra.as_ref().map(Json::to_value).unwrap_or_else(|| serde_json::json!({}));
    extra[key] = value.to_value();
    event.extra = Some(Json::from_value(&extra));
}

fn meta(meta_type: MetaType, data: Json) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(data), usage: None })
}

fn unknown(data: Json) -> Payload {
    meta(MetaType::Unknown, data)
}

/// The payload of a `token_count` event until the mapper has read its counters.
fn placeholder() -> Payload {
    Payload::Meta(Meta { meta_type: MetaType::Unknown, data: None, usage: None })
}

/// The thread id in a rollout's file name (`rollout-2025-05-07T17-24-21-<uuid>.jsonl`), or the
/// file's stem when it holds none.
pub fn session_id_from_name(name: &str) -> String {
    let stem = file_stem(name);
    // A UUID is 36 characters: 8-4-4-4-12 hex digits.
    match stem.len().checked_sub(36).and_then(|i| stem.get(i..)) {
        Some(tail) if uuid::Uuid::parse_str(tail).is_ok() => tail.to_owned(),
        _ => stem.to_owned(),
    }
}
