//! Claude Code records → events.

use serde_json::value::RawValue;

use super::raw::{Block, Content, MediaSource, Message as RawMessage, Record};
use crate::model::{
    Context, Event, Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, Source, ToolCall, ToolOutput,
};
use crate::read::{Emitter, Line, LineError, LineMapper, file_stem, parse_object, parse_time};

/// Maps the lines of one Claude Code file.
pub struct Mapper {
    /// Session id for records that carry none (`summary` lines): the file's stem, which is the
    /// session id for main session files.
    fallback_session: String,
}

impl Mapper {
    /// A mapper for the file named `name`.
    pub fn new(name: &str) -> Self {
        Mapper { fallback_session: file_stem(name).to_owned() }
    }

    /// The event fields every event of `record` shares, with a placeholder payload.
    fn head(&self, record: &Record<'_>, line: Line<'_>) -> Event {
        let session = record.session_id.as_deref().unwrap_or(&self.fallback_session);
        let mut event = Event::new(session.to_owned(), placeholder());
        event.timestamp = record.timestamp.as_deref().and_then(parse_time);
        event.record_id = record.uuid.as_deref().map(str::to_owned);
        event.parent_record_id = record.parent_uuid.as_deref().map(str::to_owned);
        event.agent_id = record.agent_id.as_deref().map(str::to_owned);
        event.is_sidechain = record.is_sidechain;
        if record.is_sidechain {
            event.parent_session_id = Some(event.session_id.clone());
        }
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
        event
    }
}

impl LineMapper for Mapper {
    fn map_line(&mut self, line: Line<'_>, out: &mut Emitter<'_>) -> Result<(), LineError> {
        let record: Record<'_> = parse_object(line.text)?;
        let head = self.head(&record, line);
        let events = match (record.record_type.as_deref(), record.message) {
            (Some("user"), Some(message)) => {
                user(&head, &serde_json::from_str(message.get())?, record.tool_use_result)?
            }
            (Some("assistant"), Some(message)) => assistant(&head, &serde_json::from_str(message.get())?)?,
            _ => vec![with(&head, unknown(Json::parse(line.text)?))],
        };
        for (slot, event) in events.into_iter().enumerate() {
            out.emit(event, slot as u32)?;
        }
        Ok(())
    }
}

/// A user record: the typed or injected message, and any tool results it carries.
///
/// `toolUseResult` is the structured result of the line's tool result (a line carries one).
fn user(head: &Event, message: &RawMessage<'_>, tool_use_result: Option<&RawValue>) -> Result<Vec<Event>, LineError> {
    let mut events = Vec::new();
    let mut parts = Vec::new();
    match message.content.map(Content::parse).transpose()?.flatten() {
        None => {}
        Some(Content::Text(text)) => parts.push(Part::Text { text: text.into_owned() }),
        Some(Content::Blocks(blocks)) => {
            for raw in blocks {
                let block: Block<'_> = serde_json::from_str(raw.get())?;
                match block.block_type.as_ref() {
                    "tool_result" => events.push(with(head, tool_result(block, tool_use_result)?)),
                    _ => match content_part(&block) {
                        Some(part) => parts.push(part),
                        None => events.push(with(head, unknown(Json::from_raw(raw)))),
                    },
                }
            }
        }
    }
    if !parts.is_empty() || events.is_empty() {
        events.insert(0, with(head, message_payload(Role::User, parts)));
    }
    Ok(events)
}

/// An assistant record: one event per content block.
fn assistant(head: &Event, message: &RawMessage<'_>) -> Result<Vec<Event>, LineError> {
    let mut head = head.clone();
    head.response_id = message.id.as_deref().map(str::to_owned);
    head.context.model = message.model.as_deref().map(str::to_owned);
    let blocks = match message.content.map(Content::parse).transpose()?.flatten() {
        None => return Ok(vec![with(&head, message_payload(Role::Assistant, Vec::new()))]),
        Some(Content::Text(text)) => {
            return Ok(vec![with(
                &head,
                message_payload(Role::Assistant, vec![Part::Text { text: text.into_owned() }]),
            )]);
        }
        Some(Content::Blocks(blocks)) => blocks,
    };
    let mut events = Vec::with_capacity(blocks.len());
    for raw in blocks {
        let block: Block<'_> = serde_json::from_str(raw.get())?;
        let payload = match block.block_type.as_ref() {
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
            "tool_use" => Payload::ToolCall(ToolCall {
                call_id: block.id.map(|s| s.into_owned()),
                name: block.name.map(|s| s.into_owned()).unwrap_or_default(),
                input: block.input.map(Json::from_raw),
                input_text: None,
            }),
            _ => match content_part(&block) {
                Some(part) => message_payload(Role::Assistant, vec![part]),
                None => unknown(Json::from_raw(raw)),
            },
        };
        events.push(with(&head, payload));
    }
    Ok(events)
}

/// A `tool_result` block.
fn tool_result(block: Block<'_>, structured: Option<&RawValue>) -> Result<Payload, LineError> {
    let mut text = Vec::new();
    let mut parts = Vec::new();
    match block.content.map(Content::parse).transpose()?.flatten() {
        None => {}
        Some(Content::Text(t)) => text.push(t.into_owned()),
        Some(Content::Blocks(blocks)) => {
            for raw in blocks {
                let inner: Block<'_> = serde_json::from_str(raw.get())?;
                match content_part(&inner) {
                    Some(Part::Text { text: t }) => {
                        text.push(t.clone());
                        parts.push(Part::Text { text: t });
                    }
                    Some(part) => parts.push(part),
                    None => parts.push(Part::Text { text: raw.get().to_owned() }),
                }
            }
        }
    }
    if parts.iter().all(|p| matches!(p, Part::Text { .. })) {
        parts.clear();
    }
    Ok(Payload::ToolOutput(ToolOutput {
        call_id: block.tool_use_id.map(|s| s.into_owned()),
        name: None,
        text: text.join("\n"),
        parts,
        is_error: block.is_error,
        exit_code: None,
        duration_ms: None,
        result: structured.map(Json::from_raw),
    }))
}

/// A text, image or document block as a content part; `None` for other blocks.
fn content_part(block: &Block<'_>) -> Option<Part> {
    let media = |source: &Option<MediaSource<'_>>| {
        let s = source.as_ref();
        (
            s.and_then(|s| s.media_type.as_deref().map(str::to_owned)),
            s.and_then(|s| s.data.as_deref().map(str::to_owned)),
            s.and_then(|s| s.url.as_deref().map(str::to_owned)),
        )
    };
    match block.block_type.as_ref() {
        "text" => Some(Part::Text { text: block.text.as_deref().unwrap_or_default().to_owned() }),
        "image" => {
            let (media_type, data, url) = media(&block.source);
            Some(Part::Image { media_type, data, url })
        }
        "document" => {
            let (media_type, data, url) = media(&block.source);
            Some(Part::Document { media_type, data, url })
        }
        _ => None,
    }
}

fn message_payload(role: Role, parts: Vec<Part>) -> Payload {
    Payload::Message(Message::from_parts(role, parts))
}

/// A record or block this reader does not map, kept whole.
fn unknown(data: Json) -> Payload {
    Payload::Meta(Meta { meta_type: MetaType::Unknown, data: Some(data), usage: None })
}

fn with(head: &Event, payload: Payload) -> Event {
    let mut event = head.clone();
    event.payload = payload;
    event
}

fn placeholder() -> Payload {
    Payload::Meta(Meta { meta_type: MetaType::Unknown, data: None, usage: None })
}
