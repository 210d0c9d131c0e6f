//! Claude Code lines → events, decided from the line alone, and the facts the [`super::map::Mapper`]
//! settles across lines.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::blocks::{block_json, block_text, content_part, read_block};
use super::classify::UserTurn;
use super::raw::{self, Block, Content, Message as RawMessage, Record, ResultFacts, TaskInput};
use super::{paths, progress};
use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, Source, ToolCall, ToolOutput,
};
use crate::read::{Apart, Line, LineParser, Nested, Object, Problem, checked_sum, file_stem, parse_time};

/// Top-level fields of user and assistant records that event fields carry; the rest go to
/// `extra`.
pub(super) const CARRIED: [&str; 12] = [
    "type",
    "uuid",
    "parentUuid",
    "sessionId",
    "timestamp",
    "version",
    "cwd",
    "gitBranch",
    "isSidechain",
    "agentId",
    "isMeta",
    "toolUseResult",
];

/// Fields of `message` that event fields carry (`usage` is carried by the usage event).
pub(super) const CARRIED_MESSAGE: [&str; 5] = ["role", "content", "id", "model", "usage"];

/// Fields of a line read apart in its pass: the message, its content blocks, and the content of
/// the tool results among them.
pub(super) const APART: &[Apart] = &[Apart {
    key: "message",
    list: false,
    inner: &[Apart { key: "content", list: true, inner: &[Apart { key: "content", list: true, inner: &[] }] }],
}];

/// Fields of a line read apart when its content blocks are not read: the message alone.
const APART_MESSAGE: &[Apart] = &[Apart { key: "message", list: false, inner: &[] }];

/// Prefix of the call ids given to commands the user ran in bash mode (`!cmd`), which the
/// source records without an id: the call is named after its record's uuid, and the output's
/// parent is that record.
pub(super) const USER_SHELL: &str = "user-shell:";

/// A `user` or `assistant` line: its record, and its `message` read as an object.
pub(super) struct ChatLine<'o, 'a> {
    pub(super) object: &'o Object<'a>,
    pub(super) record: &'o Record<'a>,
    pub(super) message: Option<&'o Result<Object<'a>, serde_json::Error>>,
    pub(super) line: Line<'a>,
}

impl<'a> ChatLine<'_, 'a> {
    /// The message's fields, if the record has a message.
    fn message(&self) -> Result<Option<RawMessage<'a>>, Problem> {
        let Some(message) = self.message else { return Ok(None) };
        Ok(Some(message.as_ref().map_err(Problem::from_json)?.get()?))
    }

    /// The message's `content`, once [`ChatLine::message`] has read the message.
    fn content(&self) -> Result<Option<Content<'_, 'a>>, Problem> {
        let Some(Ok(message)) = self.message else { return Ok(None) };
        Ok(Content::of(message)?)
    }
}

/// Parses the lines of one Claude Code file: what a line holds does not depend on the lines
/// before it, only how it links to them, which the [`Mapper`] settles.
#[derive(Clone)]
pub struct Parser {
    /// Session id for records that carry none (`summary` lines): the file's stem, which is the
    /// session id for main session files.
    pub(super) fallback_session: String,
    /// For a subagent file (`agent-<id>.jsonl`): its agent id.
    pub(super) file_agent: Option<String>,
    /// A run counting only usage: assistant records are read without their content blocks,
    /// unless they may start or feed a 1.0 inline sidechain (see [`Parser::needs_content`]).
    pub(super) usage_only: bool,
}

/// One parsed line: its events, and what the [`Mapper`] needs to link them to the lines before.
pub struct Parsed {
    pub(super) events: Vec<Event>,
    /// The record's uuid: a record seen in an earlier file was copied from it.
    pub(super) uuid: Option<u128>,
    /// For a record of a 1.0 inline sidechain: the chain it hangs on.
    pub(super) sidechain: Option<Box<Sidechain>>,
    /// For a record of a subagent file: its session, where the spawning call is looked up.
    pub(super) file_session: Option<String>,
    /// Tool calls the record makes.
    pub(super) calls: super::skim::Calls,
    /// The response usage the record repeats.
    pub(super) usage: Option<Box<Response>>,
    /// A `summary` record: its event, title and leaf, settled when the file ends.
    pub(super) summary: Option<Box<(Event, String, Option<String>)>>,
}

/// Where a record of a 1.0 inline sidechain sits in its chain.
pub(super) struct Sidechain {
    pub(super) uuid: Option<String>,
    pub(super) parent: Option<String>,
    /// The agent id if the record starts a chain: its uuid, else its session id.
    pub(super) root: String,
}

/// The line holding the largest usage of one response so far.
pub(super) struct Response {
    pub(super) head: Event,
    pub(super) usage: raw::Usage,
    pub(super) output: u64,
    pub(super) all_copied: bool,
    pub(super) key: (String, String),
}

impl Parser {
    /// A parser for the file named `name`.
    pub fn new(name: &str, usage_only: bool) -> Self {
        Parser {
            // A file under a session's folder that is not a subagent's (a workflow journal)
            // belongs to that session.
            fallback_session: paths::subagent_id(name)
                .is_none()
                .then(|| paths::session_of_folder(std::path::Path::new(name)))
                .flatten()
                .unwrap_or_else(|| file_stem(name).to_owned()),
            file_agent: paths::subagent_id(name).map(str::to_owned),
            usage_only,
        }
    }

    /// Whether a line's content blocks are read: always, but in a run counting only usage only
    /// where [`super::usage::needs_content`] says so.
    fn needs_content(&self, line: &str) -> bool {
        !self.usage_only || super::usage::needs_content(line)
    }

    /// The event fields every event of `record` shares, with a placeholder payload; fills the
    /// line's links in `parsed`.
    fn head(&self, record: &Record<'_>, line: Line<'_>, parsed: &mut Parsed) -> Event {
        let session = record.session_id.as_deref().unwrap_or(&self.fallback_session).to_owned();
        let mut event = Event::new(session, placeholder());
        event.timestamp = record.timestamp.as_deref().and_then(parse_time);
        event.record_id = record.uuid.as_deref().map(str::to_owned);
        event.parent_record_id = record.parent_uuid.as_deref().map(str::to_owned);
        event.injected = record.is_meta;
        event.context = Context {
            model: None,
            cwd: record.cwd.as_deref().map(str::to_owned),
            git_branch: record.git_branch.as_deref().filter(|b| !b.is_empty()).map(str::to_owned),
            agent_version: record.version.as_deref().map(str::to_owned),
        };
        event.source = Source {
            file: String::new(),
            line: line.number,
            byte_offset: line.offset,
            record_type: record.record_type.as_deref().map(str::to_owned),
        };
        parsed.uuid = record.uuid.as_deref().and_then(uuid_bits);
        self.subagent(record, &mut event, parsed);
        event
    }

    /// Fills the subagent fields a record holds itself: from the file (2.0 and 2.1 layouts) or
    /// the record; a 1.0 inline sidechain leaves its chain to the mapper.
    fn subagent(&self, record: &Record<'_>, event: &mut Event, parsed: &mut Parsed) {
        if let Some(agent) = &self.file_agent {
            event.agent_id = Some(record.agent_id.as_deref().unwrap_or(agent).to_owned());
            event.is_sidechain = true;
            event.parent_session_id = Some(event.session_id.clone());
            parsed.file_session = Some(event.session_id.clone());
            return;
        }
        event.is_sidechain = record.is_sidechain;
        if !record.is_sidechain {
            return;
        }
        event.parent_session_id = Some(event.session_id.clone());
        if let Some(agent) = &record.agent_id {
            event.agent_id = Some(agent.clone().into_owned());
            return;
        }
        // An inline sidechain: a run of records rooted at a record without a sidechain parent.
        parsed.sidechain = Some(Box::new(Sidechain {
            uuid: record.uuid.as_deref().map(str::to_owned),
            parent: record.parent_uuid.as_deref().map(str::to_owned),
            root: record.uuid.as_deref().unwrap_or(&event.session_id).to_owned(),
        }));
    }
}

impl Parser {
    fn user(&self, head: &Event, chat: &ChatLine<'_, '_>) -> Result<Vec<Event>, Problem> {
        let (record, line) = (chat.record, chat.line);
        if record.is_compact_summary {
            // The summary that replaces the history after compaction: not something the user said.
            return Ok(vec![with(head, meta(MetaType::Compaction, Json::parse(line.text)?))]);
        }
        if chat.message()?.is_none() {
            return Ok(vec![with(head, unknown(Json::parse(line.text)?))]);
        }
        let injected = record.is_meta || record.source_tool_use_id.is_some();
        let mut turn = UserTurn::default();
        match chat.content()? {
            None => {}
            Some(Content::Text(text)) => turn.text(head, &text, injected),
            Some(Content::Blocks(blocks)) => {
                let mut structured = chat.object.raw("toolUseResult");
                for block in &blocks {
                    // A block of a shape this reader does not know is kept whole.
                    let Some((object, block)) = read_block(block) else {
                        turn.push(with(head, unknown(block_json(block))));
                        continue;
                    };
                    match block.block_type.as_ref() {
                        "tool_result" => {
                            let output = Self::tool_result(&block, object, structured.take())?;
                            turn.push(with(head, output));
                        }
                        "text" => turn.text(head, block.text.as_deref().unwrap_or_default(), injected),
                        _ => match content_part(&block) {
                            Some(part) => turn.parts.push(part),
                            None => turn.push(with(head, unknown(object.to_json()))),
                        },
                    }
                }
            }
        }
        Ok(turn.finish(head, injected))
    }

    fn assistant(
        &self,
        head: &Event,
        chat: &ChatLine<'_, '_>,
        parsed: &mut Parsed,
        content: bool,
    ) -> Result<Vec<Event>, Problem> {
        let (record, line) = (chat.record, chat.line);
        let Some(message) = chat.message()? else {
            return Ok(vec![with(head, unknown(Json::parse(line.text)?))]);
        };
        let mut head = head.clone();
        head.response_id = message.id.as_deref().map(str::to_owned);
        head.context.model = message.model.as_deref().map(str::to_owned);
        let mut events = Vec::new();
        match if content { chat.content()? } else { None } {
            None => {}
            Some(Content::Text(text)) => {
                let parts = vec![Part::Text { text: text.into_owned() }];
                events.push(with(&head, Payload::Message(Message::from_parts(Role::Assistant, parts))));
            }
            Some(Content::Blocks(blocks)) => {
                for block in &blocks {
                    let payload = match read_block(block) {
                        Some((object, block)) => Self::assistant_block(block, object, &mut parsed.calls),
                        None => unknown(block_json(block)),
                    };
                    events.push(with(&head, payload));
                }
            }
        }
        if events.is_empty() {
            // No content, or an empty list of blocks: the response is still a record.
            events.push(with(&head, Payload::Message(Message::from_parts(Role::Assistant, Vec::new()))));
        }
        parsed.usage = Self::response(&head, record, &message);
        Ok(events)
    }

    /// One block of an assistant record; tool calls are also listed in `calls`.
    fn assistant_block(block: Block<'_>, object: &Object<'_>, calls: &mut super::skim::Calls) -> Payload {
        match block.block_type.as_ref() {
            "thinking" => {
                let text = block.thinking.map(|t| t.into_owned()).unwrap_or_default();
                Payload::Reasoning(Reasoning {
                    omitted: text.is_empty(),
                    text,
                    raw_text: None,
                    encrypted: false,
                    signature: block.signature.map(|s| s.into_owned()),
                })
            }
            "redacted_thinking" => Payload::Reasoning(Reasoning {
                text: String::new(),
                raw_text: None,
                encrypted: true,
                omitted: false,
                signature: None,
            }),
            "tool_use" | "server_tool_use" => {
                let name = block.name.map(|s| s.into_owned()).unwrap_or_default();
                let call_id = block.id.map(|s| s.into_owned());
                let input = object.raw("input");
                if let Some(id) = &call_id {
                    let prompt = input
                        .filter(|_| name == "Task" || name == "Agent")
                        .and_then(|input| serde_json::from_str::<TaskInput<'_>>(input.get()).ok())
                        .and_then(|input| input.prompt);
                    calls.push((id.clone(), name.clone(), prompt.map(|p| p.into_owned())));
                }
                Payload::ToolCall(ToolCall {
                    call_id,
                    name,
                    tool_kind: None,
                    input: input.map(Json::from_raw),
                    input_text: None,
                })
            }
            _ => match content_part(&block) {
                Some(part) => Payload::Message(Message::from_parts(Role::Assistant, vec![part])),
                None => unknown(object.to_json()),
            },
        }
    }

    /// The usage line of a model response; `None` for lines Claude Code makes up itself (API
    /// errors, interruptions), which are not model responses.
    fn response(head: &Event, record: &Record<'_>, message: &RawMessage<'_>) -> Option<Box<Response>> {
        let (Some(id), Some(usage)) = (&message.id, &message.usage) else { return None };
        if record.is_api_error_message
            || message.model.as_deref() == Some("<synthetic>")
            || record.agentlog_source.is_some()
        {
            return None;
        }
        let counts = [usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens];
        if checked_sum(counts.iter().chain([&usage.output_tokens]).filter_map(|c| c.get())).is_none() {
            crate::read::lenient::overflow("message.usage");
        }
        Some(Box::new(Response {
            head: head.clone(),
            usage: usage.clone(),
            output: usage.output_tokens.get().unwrap_or(0),
            all_copied: false,
            key: (id.clone().into_owned(), record.request_id.as_deref().unwrap_or_default().to_owned()),
        }))
    }

    /// A `tool_result` block; the mapper names the tool from its call.
    fn tool_result(block: &Block<'_>, object: &Object<'_>, structured: Option<&RawValue>) -> Result<Payload, Problem> {
        let mut text = Vec::new();
        let mut parts = Vec::new();
        match Content::of(object)? {
            None => {}
            Some(Content::Text(t)) => text.push(t.into_owned()),
            Some(Content::Blocks(blocks)) => {
                for inner in &blocks {
                    match read_block(inner).and_then(|(_, inner)| content_part(&inner)) {
                        Some(Part::Text { text: t }) => {
                            text.push(t.clone());
                            parts.push(Part::Text { text: t });
                        }
                        Some(part) => parts.push(part),
                        // `tool_reference` and other blocks: kept as their JSON text.
                        None => parts.push(Part::Text { text: block_text(inner).to_owned() }),
                    }
                }
            }
        }
        if parts.iter().all(|p| matches!(p, Part::Text { .. })) {
            parts.clear();
        }
        let facts = structured
            .filter(|r| r.get().starts_with('{'))
            .and_then(|r| serde_json::from_str::<ResultFacts<'_>>(r.get()).ok())
            .unwrap_or_default();
        let call_id = block.tool_use_id.as_deref().map(str::to_owned);
        Ok(Payload::ToolOutput(ToolOutput {
            tool_kind: None,
            failed: None,
            name: None,
            call_id,
            text: text.join("\n"),
            parts,
            is_error: block.is_error,
            exit_code: facts.exit_code,
            duration_ms: facts.duration_ms.or(facts.total_duration_ms).map(|ms| ms.round() as u64),
            result: structured.map(Json::from_raw),
        }))
    }

    fn system(head: &Event, record: &Record<'_>, object: &Object<'_>) -> Event {
        let meta_type = match record.subtype.as_deref() {
            Some("compact_boundary" | "microcompact_boundary") => MetaType::Compaction,
            Some("local_command") => MetaType::Command,
            None
            | Some(
                "api_error"
                | "error"
                | "api_refusal"
                | "model_refusal_fallback"
                | "informational"
                | "turn_duration"
                | "stop_hook_summary"
                | "away_summary"
                | "bridge_status"
                | "session_start",
            ) => MetaType::System,
            Some(_) => MetaType::Unknown,
        };
        with(head, meta(meta_type, object.to_json()))
    }
}

impl LineParser for Parser {
    type Parsed = Parsed;

    fn may_matter_to_usage(&self, line: &[u8]) -> bool {
        super::usage::may_matter_to_usage(line)
    }

    fn is_bulk_text(&self, line: &[u8]) -> bool {
        super::skim::is_bulk_text(line, self.file_agent.is_some())
    }

    fn skim(&self, line: &[u8]) -> Option<Parsed> {
        let (calls, uuid) = super::skim::tool_calls(line, self.file_agent.is_some())?;
        Some(Parsed {
            events: Vec::new(),
            uuid: uuid.and_then(uuid_bits),
            sidechain: None,
            file_session: None,
            calls,
            usage: None,
            summary: None,
        })
    }

    fn parse(&self, line: Line<'_>) -> Result<Parsed, Problem> {
        let content = self.needs_content(line.text);
        let mut object = Object::parse_with(line.text, if content { APART } else { APART_MESSAGE }, |_| true)?;
        let message = match object.take_nested("message") {
            Some(Nested::Object(message)) => Some(message),
            _ => None,
        };
        let record: Record<'_> = object.get()?;
        let mut parsed = Parsed {
            events: Vec::new(),
            uuid: None,
            sidechain: None,
            file_session: None,
            calls: Vec::new(),
            usage: None,
            summary: None,
        };
        let head = self.head(&record, line, &mut parsed);
        let record_type = record.record_type.as_deref().unwrap_or_default();
        // Only user and assistant records are read by their message. A message that is not an
        // object stays raw, and fails as one when it is read.
        let message = match record_type {
            "user" | "assistant" => message.map(Ok).or_else(|| object.raw("message").map(Object::from_raw)),
            _ => None,
        };
        let mut events = match record_type {
            "user" => {
                self.user(&head, &ChatLine { object: &object, record: &record, message: message.as_ref(), line })?
            }
            "assistant" => self.assistant(
                &head,
                &ChatLine { object: &object, record: &record, message: message.as_ref(), line },
                &mut parsed,
                content,
            )?,
            "system" => vec![Self::system(&head, &record, &object)],
            "summary" => {
                let title = record.summary.as_deref().unwrap_or_default().to_owned();
                let leaf = record.leaf_uuid.as_deref().map(str::to_owned);
                parsed.summary = Some(Box::new((head, title, leaf)));
                return Ok(parsed);
            }
            "custom-title" | "ai-title" => {
                let (title, source) = match record_type {
                    "custom-title" => (record.custom_title.as_deref(), "custom"),
                    _ => (record.ai_title.as_deref(), "ai"),
                };
                let data = serde_json::json!({ "title": title.unwrap_or_default(), "source": source, "record": object.to_json() });
                vec![with(&head, meta(MetaType::Title, Json::from_value(&data)))]
            }
            "api-request-shape" => {
                let mut event = with(&head, meta(MetaType::RequestShape, request_shape(&object)));
                event.extra =
                    object.leftovers(&["type", "shape", "shapeHash", "sessionId", "timestamp", "version"], None);
                vec![event]
            }
            "progress" => {
                // A record agentlog copied from another session repeats usage counted there.
                if record.agentlog_source.is_none() {
                    parsed.usage = object.raw("data").and_then(|data| progress::response(&head, &object, data));
                }
                vec![with(&head, meta(MetaType::Progress, object.to_json()))]
            }
            _ => {
                let meta_type = match record_type {
                    "file-history-snapshot" => MetaType::FileSnapshot,
                    "attachment" => MetaType::Attachment,
                    "queue-operation" => MetaType::QueueOperation,
                    "api-request" => MetaType::Request,
                    "api-request-blob" => MetaType::RequestMessage,
                    "cost-state" => MetaType::AgentTotals,
                    "tools-used"
                    | "last-prompt"
                    | "permission-mode"
                    | "mode"
                    | "tag"
                    | "agent-name"
                    | "agent-color"
                    | "agent-setting"
                    | "pr-link"
                    | "frame-link"
                    | "worktree-state"
                    | "relocated"
                    | "bridge-session"
                    | "atis-latch"
                    | "content-replacement"
                    | "saved_hook_context"
                    | "started"
                    | "result" => MetaType::System,
                    _ => MetaType::Unknown,
                };
                vec![with(&head, meta(meta_type, object.to_json()))]
            }
        };
        if matches!(record_type, "user" | "assistant")
            && let Some(first) = events.first_mut()
        {
            // Fields no event field carries go with the record's first event.
            let message =
                message.as_ref().and_then(|m| m.as_ref().ok()).and_then(|m| m.leftovers(&CARRIED_MESSAGE, None));
            first.extra = object.leftovers(&CARRIED, Some(("message", message)));
        }
        parsed.events = events;
        Ok(parsed)
    }
}

/// The data of an `api-request-shape` record: the fields of its `shape` (`system`, `tools`) and
/// its `shapeHash` as `shape_hash`, as the model's [`MetaType::RequestShape`] has them.
fn request_shape(object: &Object<'_>) -> Json {
    let shape =
        object.raw("shape").and_then(|shape| serde_json::from_str::<BTreeMap<String, &RawValue>>(shape.get()).ok());
    let mut data: BTreeMap<String, Json> =
        shape.into_iter().flatten().map(|(key, value)| (key, Json::from_raw(value))).collect();
    if let Some(hash) = object.raw("shapeHash") {
        data.insert("shape_hash".to_owned(), Json::from_raw(hash));
    }
    Json::from_value(&data)
}

/// The data of a title from a `summary` record; its fields in the order `serde_json::json!`
/// would write them, so that it reads as every other title's data.
#[derive(serde::Serialize)]
pub(super) struct SummaryTitle<'a> {
    pub(super) leaf_uuid: Option<&'a str>,
    pub(super) source: &'a str,
    pub(super) title: &'a str,
}

pub(super) fn meta(meta_type: MetaType, data: Json) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(data), usage: None })
}

/// A record or block this reader does not map, kept whole.
pub(super) fn unknown(data: Json) -> Payload {
    meta(MetaType::Unknown, data)
}

pub(super) fn with(head: &Event, payload: Payload) -> Event {
    let mut event = head.clone();
    event.payload = payload;
    event
}

pub(super) fn placeholder() -> Payload {
    Payload::Meta(Meta { meta_type: MetaType::Unknown, data: None, usage: None })
}

/// A UUID as 128 bits, for the set of records seen; `None` for ids that are not UUIDs.
pub(super) fn uuid_bits(text: &str) -> Option<u128> {
    uuid::Uuid::parse_str(text).ok().map(|u| u.as_u128())
}
