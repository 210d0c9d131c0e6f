//! `item_completed` (Codex 0.169 and later): the turn items Codex finished, read as the older
//! `event_msg` twins of their `response_item` copies.

use super::parse::{End, Facts, Parser, Step};
use super::raw::CompletedItem;
use super::text::is_injected_text;
use crate::model::{Message, Part, Payload, Reasoning, Role};
use crate::read::{Line, Object};

impl Parser {
    /// An `item_completed` whose item is the twin of a `response_item`, read as the older
    /// event of the same role: a typed prompt's `UserMessage` follows its item and tells it
    /// typed, an `AgentMessage` or `Reasoning` precedes the item it copies, and a
    /// `CommandExecution` precedes its output with the exit code and duration. `None` for
    /// other items, which stay `system` events.
    pub(super) fn completed_item(
        &self,
        line: Line<'_>,
        ts: Option<&str>,
        record_type: &str,
        object: &Object<'_>,
        fields: &Object<'_>,
        facts: &mut Facts,
    ) -> Option<Step> {
        // The item is read once: as fields, for its leftovers, and typed from them.
        let item: CompletedItem<'_> = fields.get().ok()?;
        let text = || item.content.iter().filter_map(|part| part.text.as_deref()).collect::<Vec<_>>().concat();
        let extra = || {
            object.leftovers(&["type"], Some(("item", fields.leftovers(&["type", "content", "summary_text"], None))))
        };
        match item.item_type.as_ref() {
            "UserMessage" => {
                let text = text();
                let injected = is_injected_text(&text);
                let message = Message::from_parts(Role::User, vec![Part::Text { text }]);
                let mut event = self.event(line, ts, record_type, Payload::Message(message));
                event.injected = injected;
                event.extra = extra();
                Some(Step::UserMessage(event))
            }
            "AgentMessage" => {
                let message = Message::from_parts(Role::Assistant, vec![Part::Text { text: text() }]);
                let mut event = self.event(line, ts, record_type, Payload::Message(message));
                event.extra = extra();
                Some(Step::AgentMessage(event))
            }
            "Reasoning" => {
                let reasoning = Reasoning {
                    text: item.summary_text.join("\n\n"),
                    raw_text: None,
                    encrypted: false,
                    omitted: false,
                    signature: None,
                };
                let mut event = self.event(line, ts, record_type, Payload::Reasoning(reasoning));
                event.extra = extra();
                Some(Step::ReasoningEvent(event))
            }
            "CommandExecution" => {
                let call_id = item.id?;
                let duration_ms = item.duration.map(|d| d.secs * 1000 + d.nanos / 1_000_000);
                let end = End { exit_code: item.exit_code, duration_ms, is_error: None };
                facts.end = Some((call_id.into_owned(), end));
                None
            }
            _ => None,
        }
    }
}
