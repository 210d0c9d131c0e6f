//! Codex rollout lines → [`Step`]s: what each line is, decided from the line alone. The
//! [`super::map::Mapper`] settles them in order.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::output;
use super::raw::{self, ContentItem, EventMsg, Item, McpResult, SessionMeta, TokenInfo, TurnContext, UsageRecord};
use super::text::{image_part, is_image_wrapper, is_injected_text};
use crate::model::{
    Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, Source, ToolCall, ToolOutput,
};
use crate::read::{Apart, Line, LineParser, Nested, Object, Problem, parse_time};

/// Parses the lines of one rollout file. What a line holds does not depend on the lines before
/// it; the session, context and pairing it gets from them are settled by the [`Mapper`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Parser;

/// One parsed line: what it is, and the facts the [`Mapper`] takes from it before settling its
/// events.
pub struct Parsed {
    pub(super) step: Step,
    pub(super) facts: Facts,
}

/// What a line tells the [`Mapper`] besides its events.
#[derive(Default)]
pub(super) struct Facts {
    /// The line is in the envelope (0.32+).
    pub(super) envelope: bool,
    /// A response item outside the envelope, whose record type is prefixed like the envelope's
    /// once the file is known to use it.
    pub(super) bare_item: bool,
    /// A session header's facts.
    pub(super) header: Option<Box<Header>>,
    /// A `turn_context`'s model and working directory.
    pub(super) turn: Option<Box<(Option<String>, Option<String>)>>,
    /// A tool call: call id and tool name.
    pub(super) call: Option<(String, String)>,
    /// `patch_apply_end` facts for the output of a call.
    pub(super) end: Option<(String, End)>,
    /// A `token_count` row: its counters, and the row as data.
    pub(super) tokens: Option<Box<(Option<TokenInfo>, Json)>>,
    /// A `token_usage_record`: the id of the response it reports.
    pub(super) usage_record: Option<Option<String>>,
    /// The time of a line skimmed for a search, which gives no event: it ends a forked
    /// thread's replay as its event would have.
    pub(super) skimmed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The facts of a session header (`session_meta`).
pub(super) struct Header {
    pub(super) id: Option<String>,
    pub(super) cwd: Option<String>,
    pub(super) cli_version: Option<String>,
    pub(super) git_branch: Option<String>,
    pub(super) forked_from_id: Option<String>,
    /// From `source.subagent`: the spawning thread and agent name of a `thread_spawn`, and the
    /// subagent's name when it is a plain string.
    pub(super) spawn: Option<(Option<String>, Option<String>, Option<String>)>,
    pub(super) parent_thread_id: Option<String>,
    /// `agent_nickname`, else `agent_path`.
    pub(super) agent_name: Option<String>,
}

/// Facts about a tool run from the extended events.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct End {
    pub(super) exit_code: Option<i64>,
    pub(super) duration_ms: Option<u64>,
    pub(super) is_error: Option<bool>,
}

/// What one line is, decided before anything is emitted.
pub(super) enum Step {
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
    pub(super) fn events_mut(&mut self) -> &mut [Event] {
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
    pub(super) fn first_event_mut(&mut self) -> Option<&mut Event> {
        self.events_mut().first_mut()
    }
}

impl Parser {
    /// An event of `line` with the fields the line itself holds; the mapper settles the rest.
    pub(super) fn event(&self, line: Line<'_>, timestamp: Option<&str>, record_type: &str, payload: Payload) -> Event {
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
            // The context the model is given (instructions, environments, date), in full or as a
            // change.
            "world_state" => {
                self.events(line, ts, "world_state", meta(MetaType::TurnContext, Json::from_raw(payload.raw()?)), true)
            }
            "token_usage_record" => {
                // The mapper pairs it with the `token_count` row that counts the same response.
                let object = payload.object()?;
                let record: UsageRecord<'_> = object.get()?;
                facts.usage_record = Some(record.response_id.map(Cow::into_owned));
                let data =
                    Payload::Meta(Meta { meta_type: MetaType::Unknown, data: Some(object.to_json()), usage: None });
                let mut event = self.event(line, ts, "token_usage_record", data);
                event.extra = object.leftovers(&["response_id", "usage"], None);
                Step::Events { events: vec![event], transparent: true }
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

    pub(super) fn item_step(
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
                one(self, Payload::ToolCall(ToolCall { call_id, name, tool_kind: None, input, input_text }))
            }
            "function_call_output" | "custom_tool_call_output" => {
                let out = match object.raw("output") {
                    None => output::Output::default(),
                    Some(raw) => output::parse(raw)?,
                };
                // The mapper names the tool from its call and adds what `patch_apply_end` said.
                let payload = Payload::ToolOutput(ToolOutput {
                    tool_kind: None,
                    failed: None,
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
            "item_completed" => {
                let item = object.raw("item").and_then(|raw| Object::from_raw(raw).ok());
                if let Some(item) = &item
                    && let Some(step) = self.completed_item(line, ts, &record_type, object, item, facts)
                {
                    return Ok(step);
                }
                MetaType::System
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

impl LineParser for Parser {
    type Parsed = Parsed;

    fn may_matter_to_usage(&self, line: &[u8]) -> bool {
        super::tokens::may_matter_to_usage(line)
    }

    fn is_bulk_text(&self, line: &[u8]) -> bool {
        super::output::is_bulk_text(line)
    }

    fn skim(&self, line: &[u8]) -> Option<Parsed> {
        super::skim::skim(line)
    }

    fn parse(&self, line: Line<'_>) -> Result<Parsed, Problem> {
        let mut facts = Facts::default();
        let step = self.step(line, &mut facts)?;
        Ok(Parsed { step, facts })
    }
}

/// An envelope's payload: read as fields in the line's pass, or kept whole.
pub(super) enum Body<'a> {
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
pub(super) const PAYLOAD: &[Apart] = &[Apart { key: "payload", list: false, inner: &[] }];

/// Whether an envelope whose fields before `payload` are `fields` holds a record this reader maps
/// from the payload's fields (an item or an event), so that the payload is read as fields.
pub(super) fn payload_is_mapped(fields: &[(Cow<'_, str>, &RawValue)]) -> bool {
    fields.iter().any(|(key, value)| key == "type" && matches!(value.get(), r#""response_item""# | r#""event_msg""#))
}

/// Reads a session header (`session_meta`).
pub(super) fn header(text: &str) -> Result<Box<Header>, Problem> {
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
pub(super) fn message_item(item: &Item<'_>) -> Option<(Message, bool)> {
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

/// `function_call.arguments`: a string holding JSON (parsed), or text that is not JSON (kept).
pub(super) fn arguments(raw: Option<&RawValue>) -> Result<(Option<Json>, Option<String>), Problem> {
    let Some(raw) = raw else { return Ok((None, None)) };
    if !raw.get().starts_with('"') {
        return Ok((Some(Json::from_raw(raw)), None));
    }
    let text: std::borrow::Cow<'_, str> = serde_json::from_str(raw.get())?;
    Ok(json_or_text(&text))
}

pub(super) fn json_or_text(text: &str) -> (Option<Json>, Option<String>) {
    match Json::parse(text) {
        Ok(json) => (Some(json), None),
        Err(_) => (None, Some(text.to_owned())),
    }
}

pub(super) fn join<'a>(parts: impl Iterator<Item = &'a ContentItem<'a>>) -> String {
    parts.filter_map(|p| p.text.as_deref()).collect::<Vec<_>>().join("\n")
}

pub(super) fn meta(meta_type: MetaType, data: Json) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(data), usage: None })
}

pub(super) fn unknown(data: Json) -> Payload {
    meta(MetaType::Unknown, data)
}

/// The payload of a `token_count` event until the mapper has read its counters.
pub(super) fn placeholder() -> Payload {
    Payload::Meta(Meta { meta_type: MetaType::Unknown, data: None, usage: None })
}
