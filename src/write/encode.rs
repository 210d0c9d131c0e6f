//! Events as JSON lines, written field by field, for every output that holds events as JSON
//! (unified JSONL, the interchange document, the `parts` column).
//!
//! The bytes are exactly those of `serde_json::to_writer` on the [`Event`] (a test compares the
//! two on every event of the corpora), made faster: field names are written as literals rather
//! than escaped one by one, and strings are escaped with SIMD. Escaping strings was the largest
//! single cost of converting to unified JSONL.

use crate::model::{
    Context, Event, Json, Meta, Part, Payload, Reasoning, Source, ToolCall, ToolFamily, ToolOutput, Usage,
};

/// Appends `event` to `out` as one JSON line: the bytes of `serde_json::to_writer` and a
/// newline.
pub fn event(event: &Event, out: &mut Vec<u8>) {
    let mut w = Out(out);
    w.raw("{\"schema_version\":");
    w.str(&event.schema_version);
    w.raw(",\"id\":");
    w.str(&event.id);
    w.raw(",\"agent\":");
    w.str(event.agent.as_str());
    w.raw(",\"session_id\":");
    w.str(&event.session_id);
    w.raw(",\"seq\":");
    w.u64(event.seq);
    w.raw(",\"timestamp\":");
    match &event.timestamp {
        Some(t) => {
            // A time's text needs no escaping.
            w.raw("\"");
            crate::model::time::write(t, w.0);
            w.raw("\"");
        }
        None => w.null(),
    }
    w.raw(",\"record_id\":");
    w.opt_str(&event.record_id);
    w.raw(",\"parent_record_id\":");
    w.opt_str(&event.parent_record_id);
    w.raw(",\"response_id\":");
    w.opt_str(&event.response_id);
    w.raw(",\"agent_id\":");
    w.opt_str(&event.agent_id);
    w.raw(",\"is_sidechain\":");
    w.bool(event.is_sidechain);
    w.raw(",\"parent_session_id\":");
    w.opt_str(&event.parent_session_id);
    w.raw(",\"parent_call_id\":");
    w.opt_str(&event.parent_call_id);
    w.raw(",\"injected\":");
    w.bool(event.injected);
    w.raw(",\"copied\":");
    w.bool(event.copied);
    w.raw(",\"rolled_back\":");
    w.bool(event.rolled_back);
    w.raw(",\"context\":");
    w.context(&event.context);
    w.raw(",\"source\":");
    w.source(&event.source);
    w.raw(",\"extra\":");
    w.json(&event.extra);
    w.raw(",\"kind\":");
    w.str(event.kind().as_str());
    w.raw(",\"payload\":");
    match &event.payload {
        Payload::Message(m) => {
            w.raw("{\"role\":");
            w.str(m.role.as_str());
            w.raw(",\"text\":");
            w.str(&m.text);
            w.raw(",\"parts\":");
            w.parts(m.written_parts());
            w.raw(",\"phase\":");
            w.opt_str(&m.phase);
            w.raw(",\"prompt_history\":");
            match m.prompt_history {
                Some(h) => w.str(h.as_str()),
                None => w.null(),
            }
            w.raw("}");
        }
        Payload::Reasoning(r) => w.reasoning(r),
        Payload::ToolCall(c) => w.tool_call(c),
        Payload::ToolOutput(o) => w.tool_output(o),
        Payload::Meta(m) => w.meta(m),
    }
    w.raw("}\n");
}

/// Appends message or tool output parts to `out` as a JSON array: the bytes of
/// `serde_json::to_writer` on them.
pub fn parts(parts: &[Part], out: &mut Vec<u8>) {
    Out(out).parts(parts);
}

/// Strings longer than this are escaped in pieces of this size.
const ESCAPED_PIECE: usize = 64 * 1024;

/// The buffer being written to.
struct Out<'a>(&'a mut Vec<u8>);

impl Out<'_> {
    fn raw(&mut self, text: &str) {
        self.0.extend_from_slice(text.as_bytes());
    }

    fn str(&mut self, text: &str) {
        if text.len() <= ESCAPED_PIECE {
            json_escape_simd::escape_into(text, self.0);
        } else {
            self.long_str(text);
        }
    }

    /// [`Out::str`] for a long string, escaped piece by piece: the escaper reserves six times
    /// its input's length, which for a 100 MB string would be 600 MB of buffer.
    #[inline(never)]
    fn long_str(&mut self, mut text: &str) {
        // Room for the string if it needs no escaping, and for one piece's reservation.
        self.0.reserve(text.len() + 6 * ESCAPED_PIECE + 64);
        self.0.push(b'"');
        while !text.is_empty() {
            let mut end = text.len().min(ESCAPED_PIECE);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let (piece, rest) = text.split_at(end);
            let start = self.0.len();
            json_escape_simd::escape_into(piece, self.0);
            // Drop the piece's own quotes.
            let escaped = self.0.len();
            self.0.copy_within(start + 1..escaped - 1, start);
            self.0.truncate(escaped - 2);
            text = rest;
        }
        self.0.push(b'"');
    }

    fn null(&mut self) {
        self.raw("null");
    }

    fn opt_str(&mut self, text: &Option<String>) {
        match text {
            Some(text) => self.str(text),
            None => self.null(),
        }
    }

    fn u64(&mut self, n: u64) {
        self.raw(itoa::Buffer::new().format(n));
    }

    fn opt_u64(&mut self, n: Option<u64>) {
        match n {
            Some(n) => self.u64(n),
            None => self.null(),
        }
    }

    fn opt_bool(&mut self, b: Option<bool>) {
        match b {
            Some(b) => self.bool(b),
            None => self.null(),
        }
    }

    fn tool_kind(&mut self, kind: Option<ToolFamily>) {
        match kind {
            Some(kind) => {
                self.raw("\"");
                self.raw(kind.as_str());
                self.raw("\"");
            }
            None => self.null(),
        }
    }

    fn opt_f64(&mut self, n: Option<f64>) {
        match n {
            // serde_json's own digits, so that the bytes stay those of `to_writer`.
            Some(n) => serde_json::to_writer(&mut *self.0, &n).expect("writing to a Vec cannot fail"),
            None => self.null(),
        }
    }

    fn bool(&mut self, b: bool) {
        self.raw(if b { "true" } else { "false" });
    }

    fn json(&mut self, json: &Option<Json>) {
        match json {
            Some(json) => self.raw(json.get()),
            None => self.null(),
        }
    }

    fn context(&mut self, c: &Context) {
        self.raw("{\"model\":");
        self.opt_str(&c.model);
        self.raw(",\"cwd\":");
        self.opt_str(&c.cwd);
        self.raw(",\"git_branch\":");
        self.opt_str(&c.git_branch);
        self.raw(",\"agent_version\":");
        self.opt_str(&c.agent_version);
        self.raw("}");
    }

    fn source(&mut self, s: &Source) {
        self.raw("{\"file\":");
        self.str(&s.file);
        self.raw(",\"line\":");
        self.u64(s.line);
        self.raw(",\"byte_offset\":");
        self.u64(s.byte_offset);
        self.raw(",\"record_type\":");
        self.opt_str(&s.record_type);
        self.raw("}");
    }

    fn parts(&mut self, parts: &[Part]) {
        self.raw("[");
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                self.raw(",");
            }
            let (tag, media_type, data, url) = match part {
                Part::Text { text } => {
                    self.raw("{\"type\":\"text\",\"text\":");
                    self.str(text);
                    self.raw("}");
                    continue;
                }
                Part::Image { media_type, data, url } => ("image", media_type, data, url),
                Part::Document { media_type, data, url } => ("document", media_type, data, url),
            };
            self.raw("{\"type\":");
            self.str(tag);
            self.raw(",\"media_type\":");
            self.opt_str(media_type);
            self.raw(",\"data\":");
            self.opt_str(data);
            self.raw(",\"url\":");
            self.opt_str(url);
            self.raw("}");
        }
        self.raw("]");
    }

    fn reasoning(&mut self, r: &Reasoning) {
        self.raw("{\"text\":");
        self.str(&r.text);
        self.raw(",\"raw_text\":");
        self.opt_str(&r.raw_text);
        self.raw(",\"encrypted\":");
        self.bool(r.encrypted);
        self.raw(",\"omitted\":");
        self.bool(r.omitted);
        self.raw(",\"signature\":");
        self.opt_str(&r.signature);
        self.raw("}");
    }

    fn tool_call(&mut self, c: &ToolCall) {
        self.raw("{\"call_id\":");
        self.opt_str(&c.call_id);
        self.raw(",\"name\":");
        self.str(&c.name);
        self.raw(",\"tool_kind\":");
        self.tool_kind(c.tool_kind);
        self.raw(",\"input\":");
        self.json(&c.input);
        self.raw(",\"input_text\":");
        self.opt_str(&c.input_text);
        self.raw("}");
    }

    fn tool_output(&mut self, o: &ToolOutput) {
        self.raw("{\"call_id\":");
        self.opt_str(&o.call_id);
        self.raw(",\"name\":");
        self.opt_str(&o.name);
        self.raw(",\"tool_kind\":");
        self.tool_kind(o.tool_kind);
        self.raw(",\"text\":");
        self.str(&o.text);
        self.raw(",\"parts\":");
        self.parts(&o.parts);
        self.raw(",\"is_error\":");
        self.opt_bool(o.is_error);
        self.raw(",\"exit_code\":");
        match o.exit_code {
            Some(n) => self.raw(itoa::Buffer::new().format(n)),
            None => self.null(),
        }
        self.raw(",\"failed\":");
        self.opt_bool(o.failed);
        self.raw(",\"duration_ms\":");
        self.opt_u64(o.duration_ms);
        self.raw(",\"result\":");
        self.json(&o.result);
        self.raw("}");
    }

    fn meta(&mut self, m: &Meta) {
        self.raw("{\"meta_type\":");
        self.str(m.meta_type.as_str());
        self.raw(",\"data\":");
        self.json(&m.data);
        self.raw(",\"usage\":");
        match &m.usage {
            Some(u) => self.usage(u),
            None => self.null(),
        }
        self.raw("}");
    }

    fn usage(&mut self, u: &Usage) {
        self.raw("{\"input_tokens\":");
        self.opt_u64(u.input_tokens);
        self.raw(",\"cache_read_tokens\":");
        self.opt_u64(u.cache_read_tokens);
        self.raw(",\"cache_write_tokens\":");
        self.opt_u64(u.cache_write_tokens);
        self.raw(",\"cache_write_1h_tokens\":");
        self.opt_u64(u.cache_write_1h_tokens);
        self.raw(",\"output_tokens\":");
        self.opt_u64(u.output_tokens);
        self.raw(",\"reasoning_tokens\":");
        self.opt_u64(u.reasoning_tokens);
        self.raw(",\"total_tokens\":");
        self.opt_u64(u.total_tokens);
        self.raw(",\"cost_usd\":");
        self.opt_f64(u.cost_usd);
        self.raw(",\"model\":");
        self.opt_str(&u.model);
        self.raw(",\"response_id\":");
        self.opt_str(&u.response_id);
        self.raw("}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Agent, Message, MetaType, Role};
    use proptest::prelude::*;

    #[test]
    fn a_message_of_text_alone_holds_its_text_once() {
        let plain = Event::new(
            "s".into(),
            Payload::Message(Message::from_parts(Role::User, vec![Part::Text { text: "hi".into() }])),
        );
        let mut line = Vec::new();
        event(&plain, &mut line);
        let line = String::from_utf8(line).unwrap();
        assert!(line.contains(r#""text":"hi","parts":[],"#), "{line}");
        lines_agree(&plain);
        let read: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(read, plain, "the one part comes back from the text");
        // With an image, or an empty text part, every part is written.
        let image = Part::Image { media_type: None, data: None, url: Some("https://x/y.png".into()) };
        for parts in [vec![Part::Text { text: "hi".into() }, image], vec![Part::Text { text: String::new() }]] {
            let e = Event::new("s".into(), Payload::Message(Message::from_parts(Role::User, parts.clone())));
            let mut line = Vec::new();
            event(&e, &mut line);
            let read: Event = serde_json::from_slice(&line).unwrap();
            assert_eq!(read, e);
        }
    }

    fn lines_agree(e: &Event) {
        let mut ours = Vec::new();
        event(e, &mut ours);
        let mut serde = serde_json::to_vec(e).unwrap();
        serde.push(b'\n');
        assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(serde).unwrap());
    }

    /// Every payload shape, with `text` in every string field and every optional field set.
    fn events(text: &str) -> Vec<Event> {
        let s = || Some(text.to_owned());
        let json = Some(Json::from_value(&serde_json::json!({ "k": text, "n": [1, 2.5, null] })));
        let parts = vec![
            Part::Text { text: text.to_owned() },
            Part::Image { media_type: s(), data: s(), url: None },
            Part::Document { media_type: None, data: None, url: s() },
        ];
        let usage = Usage {
            input_tokens: Some(1),
            cache_read_tokens: None,
            cache_write_tokens: Some(u64::MAX),
            cache_write_1h_tokens: Some(3),
            output_tokens: Some(0),
            reasoning_tokens: None,
            total_tokens: Some(7),
            cost_usd: Some(0.1 + 0.2),
            model: s(),
            response_id: None,
        };
        let payloads = [
            Payload::Message(Message {
                role: Role::Developer,
                text: text.to_owned(),
                parts: parts.clone(),
                phase: s(),
                prompt_history: Some(crate::model::PromptHistory::InTranscript),
            }),
            Payload::Reasoning(Reasoning {
                text: text.to_owned(),
                raw_text: s(),
                encrypted: true,
                omitted: false,
                signature: None,
            }),
            Payload::ToolCall(ToolCall {
                call_id: s(),
                name: text.to_owned(),
                tool_kind: Some(ToolFamily::WebFetch),
                input: json.clone(),
                input_text: s(),
            }),
            Payload::ToolOutput(ToolOutput {
                tool_kind: None,
                failed: Some(true),
                call_id: None,
                name: s(),
                text: text.to_owned(),
                parts,
                is_error: Some(false),
                exit_code: Some(-3),
                duration_ms: Some(12),
                result: json.clone(),
            }),
            Payload::Meta(Meta { meta_type: MetaType::UsageSnapshot, data: None, usage: Some(usage) }),
            Payload::Meta(Meta { meta_type: MetaType::Unknown, data: json.clone(), usage: None }),
        ];
        payloads
            .into_iter()
            .map(|payload| {
                let mut e = Event::new(text.to_owned(), payload);
                e.agent = Agent::Codex;
                e.id = text.to_owned();
                e.seq = 42;
                e.timestamp = chrono::DateTime::from_timestamp_millis(1_771_846_829_275);
                e.record_id = s();
                e.parent_session_id = s();
                e.is_sidechain = true;
                e.copied = true;
                e.context = Context { model: s(), cwd: s(), git_branch: None, agent_version: s() };
                e.source = Source { file: text.to_owned(), line: 3, byte_offset: 99, record_type: s() };
                e.extra = json.clone();
                e
            })
            .collect()
    }

    #[test]
    fn strings_that_need_escaping_are_written_as_serde_writes_them() {
        for text in
            ["", "plain", "quote \" backslash \\ slash /", "\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}", "é ✓ 😀 \u{2028}"]
        {
            events(text).iter().for_each(lines_agree);
        }
    }

    #[test]
    fn long_strings_are_written_as_serde_writes_them_in_little_room() {
        // Multi-byte characters and escapes fall across the pieces long strings are escaped in.
        for unit in ["é", "😀", "\"\n", "ab\u{1}"] {
            let text = unit.repeat(3 * ESCAPED_PIECE / unit.len() + 1);
            events(&text).iter().for_each(lines_agree);
        }
        let text = "x".repeat(16 * ESCAPED_PIECE);
        let mut out = Vec::new();
        Out(&mut out).str(&text);
        assert_eq!(out.len(), text.len() + 2);
        assert!(out.capacity() < text.len() + 8 * ESCAPED_PIECE, "{} bytes reserved", out.capacity());
    }

    #[test]
    fn empty_and_absent_fields_are_written_as_serde_writes_them() {
        let empty =
            Event::new(String::new(), Payload::Meta(Meta { meta_type: MetaType::Title, data: None, usage: None }));
        lines_agree(&empty);
        let message =
            Message { role: Role::User, text: String::new(), parts: vec![], phase: None, prompt_history: None };
        lines_agree(&Event::new("s".into(), Payload::Message(message)));
    }

    proptest! {
        #[test]
        fn any_string_is_written_as_serde_writes_it(text in "\\PC*|[\\x00-\\x7f]{0,80}") {
            events(&text).iter().for_each(lines_agree);
        }
    }
}
