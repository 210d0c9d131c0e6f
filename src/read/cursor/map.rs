//! Cursor transcript lines → agentlog events.
//!
//! One event per content block, in order: `text` a `message` of the line's role, `tool_use` a
//! `tool_call` without call id; anything else is kept as `unknown`. A user text is kept whole,
//! with its `<user_query>` wrapper and any context Cursor put before it (`<external_links>`,
//! `<attached_files>`); a `<system_notification>` (a background task that finished) is a
//! message the user did not type, so `injected`. The `<timestamp>` at the start of a user text
//! (`Saturday, Aug 22, 2026, 9:35 AM (UTC+3)`, local time with its offset) is that message's
//! time.

use serde_json::{Map, Value};

use crate::model::{Event, Json, Message, Meta, MetaType, Part, Payload, Role, ToolCall};
use crate::read::{Emitter, Line, LineMapper, file_stem};

/// A parsed line: where it is, and its record.
pub type Parsed = (Line<'static>, Map<String, Value>);

/// Maps the lines of one transcript.
pub struct Mapper {
    session_id: String,
}

impl Mapper {
    /// A mapper for the file named `name`: its stem is the session (conversation) id.
    pub fn new(name: &str) -> Self {
        Mapper { session_id: file_stem(name).to_owned() }
    }

    fn event(&self, parsed: &Parsed, role: &str, payload: Payload) -> Event {
        let mut event = Event::new(self.session_id.clone(), payload);
        event.source.line = parsed.0.number;
        event.source.byte_offset = parsed.0.offset;
        event.source.record_type = Some(role.to_owned());
        event
    }

    fn unknown(&self, parsed: &Parsed, role: &str, data: Value) -> Event {
        let meta = Meta { meta_type: MetaType::Unknown, data: Some(Json::from_value_of_raw(&data)), usage: None };
        self.event(parsed, role, Payload::Meta(meta))
    }
}

impl LineMapper<Parsed> for Mapper {
    fn map(&mut self, parsed: Parsed, out: &mut Emitter<'_>) -> std::io::Result<()> {
        let record = &parsed.1;
        let role_name = record.get("role").and_then(Value::as_str).unwrap_or("record").to_owned();
        let role = match role_name.as_str() {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        };
        let content = record.get("message").and_then(|m| m.get("content"));
        let blocks: Vec<&Value> = match content {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(text @ Value::String(_)) => vec![text],
            _ => Vec::new(),
        };
        let Some(role) = role.filter(|_| !blocks.is_empty()) else {
            return out.emit(self.unknown(&parsed, &role_name, Value::Object(record.clone())), 0);
        };
        for (slot, block) in blocks.into_iter().enumerate() {
            let kind = block.get("type").and_then(Value::as_str);
            let text = block.as_str().or_else(|| block.get("text").and_then(Value::as_str));
            let event = match (kind, text) {
                (Some("text") | None, Some(text)) => {
                    let message = Message::from_parts(role, vec![Part::Text { text: text.to_owned() }]);
                    let mut event = self.event(&parsed, &role_name, Payload::Message(message));
                    if role == Role::User {
                        let (time, rest) = split_timestamp(text);
                        event.timestamp = time;
                        event.injected = rest.trim_start().starts_with("<system_notification>");
                    }
                    event
                }
                (Some("tool_use"), _) => {
                    let input = block.get("input");
                    let call = ToolCall::from_input(
                        block.get("id").and_then(Value::as_str).map(str::to_owned),
                        block.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned(),
                        input,
                    );
                    self.event(&parsed, &role_name, Payload::ToolCall(call))
                }
                _ => self.unknown(&parsed, &role_name, serde_json::json!({ "block": block })),
            };
            out.emit(event, slot as u32)?;
        }
        Ok(())
    }
}

/// The time of a `<timestamp>…</timestamp>` at the start of a user text, and the text after it.
fn split_timestamp(text: &str) -> (Option<chrono::DateTime<chrono::Utc>>, &str) {
    let Some(rest) = text.trim_start().strip_prefix("<timestamp>") else { return (None, text) };
    let Some((stamp, after)) = rest.split_once("</timestamp>") else { return (None, text) };
    (parse_stamp(stamp), after)
}

/// `Saturday, Aug 22, 2026, 9:35 AM (UTC+3)` (or `UTC-7`, `UTC+5:30`) as a UTC time; `None`
/// for anything else, such as a weekday alone.
fn parse_stamp(stamp: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let (_weekday, rest) = stamp.trim().split_once(", ")?;
    let (local, zone) = rest.split_once(" (UTC")?;
    let zone = zone.strip_suffix(')')?;
    let offset_seconds = if zone.is_empty() {
        0
    } else {
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = zone[1..].split_once(':').unwrap_or((&zone[1..], "0"));
        sign * (hours.parse::<i32>().ok()? * 3600 + minutes.parse::<i32>().ok()? * 60)
    };
    let offset = chrono::FixedOffset::east_opt(offset_seconds)?;
    let naive = chrono::NaiveDateTime::parse_from_str(local.trim(), "%b %d, %Y, %I:%M %p").ok()?;
    naive.and_local_timezone(offset).single().map(|t| t.with_timezone(&chrono::Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read_with_their_offset() {
        let (time, rest) = split_timestamp(
            "<timestamp>Saturday, Aug 22, 2026, 9:35 AM (UTC+3)</timestamp>\n<user_query>\nx\n</user_query>",
        );
        assert_eq!(time.map(|t| t.to_rfc3339()), Some("2026-08-22T06:35:00+00:00".to_owned()));
        assert!(rest.starts_with("\n<user_query>"));
        let (time, _) = split_timestamp("<timestamp>Saturday, May 2, 2026, 4:42 PM (UTC-5)</timestamp>");
        assert_eq!(time.map(|t| t.to_rfc3339()), Some("2026-05-02T21:42:00+00:00".to_owned()));
        let (time, _) = split_timestamp("<timestamp>Monday, Jan 5, 2026, 12:05 AM (UTC+5:30)</timestamp>");
        assert_eq!(time.map(|t| t.to_rfc3339()), Some("2026-01-04T18:35:00+00:00".to_owned()));
        assert_eq!(split_timestamp("<timestamp>Saturday</timestamp> <user_query>q</user_query>").0, None);
        assert_eq!(split_timestamp("<user_query>q</user_query>").0, None);
    }
}
