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
//! - **Token counts** are cumulative: see [`super::tokens`].

use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;

use super::parse::{End, Facts, Header, Parsed, Parser, Step, header, meta};
use super::raw::{self, TokenInfo, TokenUsage};
use super::tokens;
use crate::model::{Context, Event, Json, Meta, MetaType, Payload, Role, Usage};
use crate::read::{Emitter, Line, LineMapper, Object, Problem, file_stem};

/// Forked lines are written in one burst at fork time; lines within this window of the
/// replayed parent header belong to the replay.
const REPLAY_WINDOW_MS: i64 = 2000;

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
    totals: tokens::Totals,
    /// A `token_usage_record` waiting for the `token_count` row that counts its response.
    pending_usage: Option<Event>,
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
            totals: tokens::Totals::default(),
            pending_usage: None,
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
        let last = info.last_token_usage.and_then(|c| c.checked());
        // The totals move on with every row, replayed ones too.
        let call = self.totals.call(total, last);
        if self.is_replayed(at) {
            return None;
        }
        Some(self.usage_of(call?))
    }

    /// A model call's counters as agentlog's usage, with the model in force.
    fn usage_of(&self, u: TokenUsage) -> Usage {
        if u.total() > crate::model::MAX_COUNT {
            crate::read::lenient::overflow("payload.info");
        }
        let cached = u.cached_input_tokens.min(u.input_tokens);
        Usage {
            input_tokens: Some(u.input_tokens - cached),
            cache_read_tokens: Some(cached),
            cache_write_tokens: None,
            cache_write_1h_tokens: None,
            output_tokens: Some(u.output_tokens),
            reasoning_tokens: Some(u.reasoning_output_tokens),
            total_tokens: Some(u.total()).filter(|t| *t <= crate::model::MAX_COUNT),
            cost_usd: None,
            model: self.context.model.clone(),
            response_id: None,
        }
    }

    /// Holds a `token_usage_record` until the `token_count` row that counts its response (see
    /// [`Mapper::name_response`]); one still held when another comes, or when the file ends,
    /// is sent as it is (see [`Mapper::send_uncounted_record`]).
    fn usage_record(
        &mut self,
        mut record: Event,
        response_id: Option<String>,
        out: &mut Emitter<'_>,
    ) -> std::io::Result<()> {
        self.send_uncounted_record(out)?;
        record.response_id = response_id;
        self.pending_usage = Some(record);
        Ok(())
    }

    /// Gives a `token_count` row's `usage` event the id of the response the held
    /// `token_usage_record` names, and lists the record's line in its `extra.merged_lines`.
    fn name_response(&mut self, event: &mut Event) {
        let Payload::Meta(Meta { meta_type: MetaType::Usage, usage: Some(usage), .. }) = &mut event.payload else {
            return;
        };
        let Some(record) = self.pending_usage.take() else { return };
        usage.response_id.clone_from(&record.response_id);
        event.response_id.clone_from(&record.response_id);
        merge_twin(event, &record);
    }

    /// Sends a held `token_usage_record` that no `token_count` row counted as a
    /// `usage_snapshot`: the rows are what Codex's own totals and other readers count, so a
    /// record alone adds nothing to usage (its counts stay in `data`).
    fn send_uncounted_record(&mut self, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let Some(mut record) = self.pending_usage.take() else { return Ok(()) };
        if let Payload::Meta(m) = &mut record.payload {
            m.meta_type = MetaType::UsageSnapshot;
        }
        record.extra = None;
        self.send(out, record, 0)
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
        let counted = facts.tokens.is_some();
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
        if facts.skimmed_at.is_some() {
            self.is_replayed(facts.skimmed_at);
        }
        if let Some(record) = facts.usage_record {
            let Step::Events { mut events, .. } = step else { unreachable!("a usage record is one event") };
            let event = events.pop().expect("a usage record is one event");
            return self.usage_record(event, record, out);
        }
        if counted && let Some(event) = step.first_event_mut() {
            self.name_response(event);
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
        self.send_uncounted_record(out)?;
        self.flush(out)?;
        for (event, slot) in self.turns.drain(..).flatten() {
            out.emit(event, slot)?;
        }
        Ok(())
    }
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
