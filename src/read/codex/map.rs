//! Codex rollout lines → events.

use super::raw::{self, Item, SessionMeta};
use crate::model::{Context, Event, Json, Message, Meta, MetaType, Part, Payload, Role, Source};
use crate::read::{Emitter, Line, LineError, LineMapper, file_stem, parse_object, parse_time};

/// Maps the lines of one rollout file.
pub struct Mapper {
    /// The thread id: from `session_meta`, else the UUID at the end of the file name.
    session_id: String,
    /// Context from the session header, applied to every later event.
    context: Context,
    /// Whether a session header has been seen: only the first one is canonical.
    seen_meta: bool,
}

impl Mapper {
    /// A mapper for the file named `name`.
    pub fn new(name: &str) -> Self {
        Mapper { session_id: session_id_from_name(name), context: Context::default(), seen_meta: false }
    }

    fn event(&self, line: Line<'_>, timestamp: Option<&str>, record_type: String, payload: Payload) -> Event {
        let mut event = Event::new(self.session_id.clone(), payload);
        event.timestamp = timestamp.and_then(parse_time);
        event.context = self.context.clone();
        event.source =
            Source { file: String::new(), line: line.number, byte_offset: line.offset, record_type: Some(record_type) };
        event
    }

    /// Takes the session header's facts into account; only the first header counts.
    fn session_meta(&mut self, text: &str) -> Result<(), LineError> {
        let meta: SessionMeta<'_> = serde_json::from_str(text)?;
        if !self.seen_meta {
            self.seen_meta = true;
            if let Some(id) = meta.id {
                self.session_id = id.into_owned();
            }
            self.context.cwd = meta.cwd.map(|s| s.into_owned());
            self.context.agent_version = meta.cli_version.map(|s| s.into_owned());
            self.context.git_branch = meta.git.and_then(|g| g.branch).map(|s| s.into_owned());
        }
        Ok(())
    }
}

impl LineMapper for Mapper {
    fn map_line(&mut self, line: Line<'_>, out: &mut Emitter<'_>) -> Result<(), LineError> {
        let record: raw::Line<'_> = parse_object(line.text)?;
        let timestamp = record.timestamp.as_deref();
        let (record_type, payload) = match (record.line_type.as_deref(), record.payload) {
            // The envelope (0.32+).
            (Some("session_meta"), Some(payload)) => {
                self.session_meta(payload.get())?;
                ("session_meta".to_owned(), meta(MetaType::SessionStart, Json::from_raw(payload)))
            }
            (Some("response_item"), Some(payload)) => {
                let item: Item<'_> = serde_json::from_str(payload.get())?;
                let record_type = format!("response_item/{}", item.item_type);
                (record_type, response_item(item).unwrap_or_else(|| unknown(Json::from_raw(payload))))
            }
            (Some(other), Some(_)) => (other.to_owned(), unknown(Json::parse(line.text)?)),
            // Bare legacy lines (0.1 to 0.31).
            (None, None) if record.record_type.is_some() => ("state".to_owned(), unknown(Json::parse(line.text)?)),
            (None, None) if record.id.is_some() => {
                self.session_meta(line.text)?;
                ("session_meta".to_owned(), meta(MetaType::SessionStart, Json::parse(line.text)?))
            }
            (Some(item_type), None) => {
                let item: Item<'_> = serde_json::from_str(line.text)?;
                let record_type = item_type.to_owned();
                (record_type, response_item(item).map_or_else(|| Json::parse(line.text).map(unknown), Ok)?)
            }
            _ => ("unknown".to_owned(), unknown(Json::parse(line.text)?)),
        };
        let event = self.event(line, timestamp, record_type, payload);
        out.emit(event, 0)?;
        Ok(())
    }
}

/// A response item this reader maps; `None` for the others.
fn response_item(item: Item<'_>) -> Option<Payload> {
    match item.item_type.as_ref() {
        "message" => {
            let role = match item.role.as_deref()? {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "developer" => Role::Developer,
                "system" => Role::System,
                _ => return None,
            };
            let mut parts = Vec::new();
            for c in item.content.unwrap_or_default() {
                match c.item_type.as_ref() {
                    "input_text" | "output_text" | "text" => {
                        parts.push(Part::Text { text: c.text.map(|t| t.into_owned()).unwrap_or_default() });
                    }
                    "input_image" => parts.push(Part::Image {
                        media_type: None,
                        data: None,
                        url: c.image_url.map(|u| u.into_owned()),
                    }),
                    _ => return None,
                }
            }
            let mut message = Message::from_parts(role, parts);
            message.phase = item.phase.map(|p| p.into_owned());
            Some(Payload::Message(message))
        }
        _ => None,
    }
}

fn meta(meta_type: MetaType, data: Json) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(data), usage: None })
}

fn unknown(data: Json) -> Payload {
    meta(MetaType::Unknown, data)
}

/// The thread id in a rollout's file name (`rollout-2025-05-07T17-24-21-<uuid>.jsonl`), or the
/// file's stem when it holds none.
fn session_id_from_name(name: &str) -> String {
    let stem = file_stem(name);
    // A UUID is 36 characters: 8-4-4-4-12 hex digits.
    match stem.len().checked_sub(36).and_then(|i| stem.get(i..)) {
        Some(tail) if uuid::Uuid::parse_str(tail).is_ok() => tail.to_owned(),
        _ => stem.to_owned(),
    }
}
