//! What a search reads of the Codex lines that lack its words, beside the bulk text it skips
//! ([`super::output::is_bulk_text`]): of a `function_call`, only the call's id and name, which
//! its output takes.

use super::parse::{Facts, Parsed, Step};
use crate::read::parse_time;
use crate::read::skim::{after_string, string};

/// What a search takes of a line lacking its words that is not bulk text: of a `function_call`,
/// its id and name, in an empty step that flushes what waits for a twin as the call's event
/// would; `None`, to be parsed whole, for any other line.
pub(super) fn skim(line: &[u8]) -> Option<Parsed> {
    let call = function_call(line)?;
    let facts = Facts {
        envelope: call.envelope,
        call: Some((call.id.to_owned(), call.name.to_owned())),
        skimmed_at: call.at.and_then(parse_time),
        ..Facts::default()
    };
    Some(Parsed { step: Step::Events { events: Vec::new(), transparent: false }, facts })
}

/// A `function_call` read from its raw bytes.
pub(super) struct Call<'l> {
    /// Whether the line is in the envelope (0.32+).
    pub(super) envelope: bool,
    /// The envelope's timestamp.
    pub(super) at: Option<&'l str>,
    pub(super) id: &'l str,
    pub(super) name: &'l str,
}

/// The call a `function_call` line makes, when it is written as Codex writes one, in the
/// envelope (`{"timestamp":"…","type":"response_item","payload":{"type":"function_call",
/// "name":"…","arguments":"…","call_id":"…"}}`) or outside it (0.1–0.31, the payload alone);
/// `None` for any other line, or one written otherwise (another field, another order, an
/// escape in the name or id).
pub(super) fn function_call(line: &[u8]) -> Option<Call<'_>> {
    const STAMPED: &[u8] = br#"{"timestamp":""#;
    const ITEM: &[u8] = br#","type":"response_item","payload":"#;
    const CALL: &[u8] = br#"{"type":"function_call","name":""#;
    let (envelope, at, rest) = match line.strip_prefix(STAMPED) {
        Some(rest) => {
            let (at, rest) = string(rest)?;
            (true, Some(at), rest.strip_prefix(ITEM)?.strip_prefix(CALL)?)
        }
        None => (false, None, line.strip_prefix(CALL)?),
    };
    let (name, rest) = string(rest)?;
    let rest = after_string(rest.strip_prefix(br#","arguments":""#)?)?;
    let (id, rest) = string(rest.strip_prefix(br#","call_id":""#)?)?;
    (rest == if envelope { &b"}}"[..] } else { b"}" }).then_some(Call { envelope, at, id, name })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_gives_its_id_and_name() {
        let line = br#"{"timestamp":"2025-11-24T21:32:50.530Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_G"}}"#;
        let call = function_call(line).unwrap();
        assert_eq!(
            (call.envelope, call.at, call.id, call.name),
            (true, Some("2025-11-24T21:32:50.530Z"), "call_G", "shell")
        );
        let bare = br#"{"type":"function_call","name":"next_task","arguments":"{\"id\":\"60\"}","call_id":"call_j"}"#;
        let call = function_call(bare).unwrap();
        assert_eq!((call.envelope, call.at, call.id, call.name), (false, None, "call_j", "next_task"));
    }

    #[test]
    fn other_lines_are_read_whole() {
        for line in [
            &br#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"js","namespace":"mcp__node_repl__","arguments":"{}","call_id":"c"}}"#[..],
            br#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c","id":"fc_1"}"#,
            br#"{"type":"function_call","name":"sh\u0065ll","arguments":"{}","call_id":"c"}"#,
            br#"{"type":"function_call_output","call_id":"c","output":"ok"}"#,
            br#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}"#,
        ] {
            assert!(function_call(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
    }
}
