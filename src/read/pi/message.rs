//! The `message` entries of a pi session: what each role becomes.
//!
//! - `user`: the prompt as typed (`content` a string, or text and image blocks).
//! - `assistant`: one model response. Its `thinking` blocks are reasoning (a `redacted` one is
//!   kept encrypted in `thinkingSignature`), its `text` blocks the answer, each `toolCall` a tool
//!   call; then its `usage`, and for `stopReason` `error` or `aborted` a notice with the
//!   `errorMessage`. Every event carries the response's `responseId`.
//! - `toolResult`: a tool's output. pi records no exit code for a failed `bash` call, only
//!   `isError` and the text `Command exited with code N` at the end of the output, which gives
//!   the exit code.
//! - `bashExecution`: a command the user ran (`!cmd`): a `user_shell` call and its output, with
//!   its `exitCode`, as Claude Code's `!` commands are read.
//! - `custom` (`hookMessage` before session version 3): a message an extension put into the
//!   context, an injected user message.
//! - `system` (pi 1.x): the system prompt's `sections` and the tools declared (`toolsAdded`,
//!   `toolsRemoved`), written before the first request and whenever they change: a
//!   `request_shape`, holding the message as recorded.
//!
//! **Usage.** `usage {input, output, cacheRead, cacheWrite, totalTokens, cost}` is one response's,
//! never cumulative: `input` is fresh input (pi subtracts cached tokens from the OpenAI APIs'
//! prompt count), `output` includes reasoning, which pi 0.x does not count apart (reasoning is
//! then null); pi 1.x adds `reasoning` on the OpenAI APIs and `cacheWrite1h` on Anthropic's. `cost` is pi's own, from the prices of its model list, kept in the usage event's
//! `data`. An error response pi never received (`stopReason` `error`, no `responseId`, every count
//! 0) gives no usage event.

use serde_json::{Map, Value};

use crate::model::{Json, Message, Meta, MetaType, Part, Payload, Reasoning, Role, ToolCall, ToolOutput, Usage};

/// The prefix of the call id given to a command the user ran, before the entry's id.
const USER_SHELL: &str = "user-shell:";

/// What one event of a message needs beyond its payload.
pub(super) struct Piece {
    /// The event's payload.
    pub payload: Payload,
    /// Whether the user did not type it.
    pub injected: bool,
    /// Fields of the record no other field carries.
    pub extra: Option<Value>,
}

impl Piece {
    fn new(payload: Payload) -> Self {
        Piece { payload, injected: false, extra: None }
    }

    /// A meta event holding `data`.
    pub(super) fn meta(meta_type: MetaType, data: &Map<String, Value>) -> Self {
        Piece::new(meta(meta_type, data))
    }

    fn with_extra(mut self, extra: Map<String, Value>) -> Self {
        if !extra.is_empty() {
            self.extra = Some(Value::Object(extra));
        }
        self
    }
}

/// The events of a `message` entry whose `message` is `message`, for the entry `id`.
pub(super) fn pieces(message: &Map<String, Value>, id: Option<&str>) -> Vec<Piece> {
    match message.get("role").and_then(Value::as_str).unwrap_or_default() {
        "user" => vec![user(message)],
        "assistant" => assistant(message),
        "toolResult" => vec![tool_result(message)],
        "bashExecution" => user_shell(message, id),
        "custom" | "hookMessage" => vec![injected(message)],
        // pi 1.x: the system prompt's sections and the tools declared, or a change of them.
        "system" => vec![Piece::new(meta(MetaType::RequestShape, message))],
        "compactionSummary" => vec![Piece::new(meta(MetaType::Compaction, message))],
        "branchSummary" => vec![Piece::new(meta(MetaType::InjectedContext, message))],
        _ => vec![Piece::new(meta(MetaType::Unknown, message))],
    }
}

/// The response id of an assistant message, if it names one.
pub(super) fn response_id(message: &Map<String, Value>) -> Option<String> {
    message.get("responseId").and_then(Value::as_str).map(str::to_owned)
}

fn user(message: &Map<String, Value>) -> Piece {
    let (parts, others) = content_parts(message.get("content"));
    Piece::new(Payload::Message(Message::from_parts(Role::User, parts))).with_extra(others)
}

/// A message an extension put into the context (`custom_message` entries too).
pub(super) fn injected(record: &Map<String, Value>) -> Piece {
    let (parts, mut extra) = content_parts(record.get("content"));
    for key in ["customType", "display", "details", "excludeFromContext"] {
        if let Some(value) = record.get(key) {
            extra.insert(key.to_owned(), value.clone());
        }
    }
    let mut piece = Piece::new(Payload::Message(Message::from_parts(Role::User, parts))).with_extra(extra);
    piece.injected = true;
    piece
}

fn assistant(message: &Map<String, Value>) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut texts = Vec::new();
    let mut others = Vec::new();
    for block in blocks(message.get("content")) {
        let text = |key| block.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        match block.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(Part::Text { text: text("text") }),
            Some("thinking") => {
                let signature = block.get("thinkingSignature").and_then(Value::as_str).map(str::to_owned);
                let encrypted = block.get("redacted").and_then(Value::as_bool).unwrap_or(false);
                let reasoning =
                    Reasoning { text: text("thinking"), raw_text: None, encrypted, omitted: false, signature };
                pieces.push(Piece::new(Payload::Reasoning(reasoning)));
            }
            Some("toolCall") => {
                let (input, input_text) = match block.get("arguments") {
                    Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                        Ok(v) => (Some(Json::from_value_of_raw(&v)), None),
                        Err(_) => (None, Some(s.clone())),
                    },
                    Some(args) => (Some(Json::from_value_of_raw(args)), None),
                    None => (None, None),
                };
                let call = ToolCall {
                    call_id: block.get("id").and_then(Value::as_str).map(str::to_owned),
                    name: text("name"),
                    tool_kind: None,
                    input,
                    input_text,
                };
                pieces.push(Piece::new(Payload::ToolCall(call)));
            }
            _ => others.push(Value::Object(block.clone())),
        }
    }
    // What no other field carries: `api`, `provider`, `stopReason`, and in pi 1.x `thinkingLevel`,
    // `rawStopReason`, `durationMs`.
    let mut extra = message.clone();
    for key in ["role", "content", "usage", "responseId", "model", "timestamp"] {
        extra.remove(key);
    }
    if !others.is_empty() {
        extra.insert("content".into(), Value::Array(others));
    }
    // The fields above go on the answer, or on the first event when there is none.
    let mut unplaced = Some(extra);
    if !texts.is_empty() {
        // The answer comes after the reasoning and before the calls, as the model wrote them.
        let at = pieces.iter().take_while(|p| matches!(p.payload, Payload::Reasoning(_))).count();
        let answer = Piece::new(Payload::Message(Message::from_parts(Role::Assistant, texts)));
        pieces.insert(at, answer.with_extra(unplaced.take().unwrap_or_default()));
    }
    let stop = message.get("stopReason").and_then(Value::as_str);
    if matches!(stop, Some("error" | "aborted")) {
        let mut data = Map::new();
        for key in ["stopReason", "errorMessage"] {
            if let Some(value) = message.get(key) {
                data.insert(key.to_owned(), value.clone());
            }
        }
        let meta_type = if stop == Some("aborted") { MetaType::Interrupt } else { MetaType::System };
        pieces.push(Piece::new(meta(meta_type, &data)));
    }
    pieces.extend(usage(message));
    if let Some(extra) = unplaced {
        match pieces.first_mut() {
            Some(first) => first.extra = (!extra.is_empty()).then_some(Value::Object(extra)),
            // An assistant message with nothing in it: an empty answer.
            None => {
                let empty = Message::from_parts(Role::Assistant, Vec::new());
                pieces.push(Piece::new(Payload::Message(empty)).with_extra(extra));
            }
        }
    }
    pieces
}

/// The usage event of an assistant message: none for a response pi never received (no
/// response id, every count 0).
fn usage(message: &Map<String, Value>) -> Option<Piece> {
    let counts = message.get("usage")?.as_object()?;
    let response = response_id(message);
    let counted = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"]
        .iter()
        .any(|k| counts.get(*k).and_then(Value::as_u64).unwrap_or(0) > 0);
    if response.is_none() && !counted {
        return None;
    }
    let model = message.get("model").and_then(Value::as_str).map(str::to_owned);
    Some(usage_piece(counts, model, response, None))
}

/// A usage event of pi's `usage` counts, with pi's `cost` (and `kind`, for a `usage` entry) in
/// its data. `reasoning` (pi 1.x, OpenAI APIs) is part of `output`; `cacheWrite1h` (pi 1.x,
/// Anthropic) part of `cacheWrite`.
pub(super) fn usage_piece(
    counts: &Map<String, Value>,
    model: Option<String>,
    response_id: Option<String>,
    kind: Option<&Value>,
) -> Piece {
    let count = |key: &str| counts.get(key).and_then(Value::as_u64);
    let usage = Usage {
        input_tokens: count("input"),
        cache_read_tokens: count("cacheRead"),
        cache_write_tokens: count("cacheWrite"),
        cache_write_1h_tokens: count("cacheWrite1h"),
        output_tokens: count("output"),
        reasoning_tokens: count("reasoning"),
        total_tokens: count("totalTokens"),
        cost_usd: None,
        model,
        response_id,
    };
    let mut data = Map::new();
    if let Some(kind) = kind {
        data.insert("kind".into(), kind.clone());
    }
    if let Some(cost) = counts.get("cost") {
        data.insert("cost".into(), cost.clone());
    }
    let data = (!data.is_empty()).then(|| Json::from_value_of_raw(&data));
    Piece::new(Payload::Meta(Meta { meta_type: MetaType::Usage, data, usage: Some(usage) }))
}

fn tool_result(message: &Map<String, Value>) -> Piece {
    let (parts, others) = content_parts(message.get("content"));
    let text = parts.iter().filter_map(Part::text).collect::<Vec<_>>().join("\n");
    let name = message.get("toolName").and_then(Value::as_str).map(str::to_owned);
    let is_error = message.get("isError").and_then(Value::as_bool);
    let exit_code = if name.as_deref() == Some("bash") { reported_exit_code(&text) } else { None };
    let output = ToolOutput {
        call_id: message.get("toolCallId").and_then(Value::as_str).map(str::to_owned),
        name,
        tool_kind: None,
        parts: if parts.iter().all(|p| p.text().is_some()) { Vec::new() } else { parts },
        text,
        is_error,
        exit_code,
        failed: None,
        duration_ms: message.get("durationMs").and_then(Value::as_u64),
        result: message.get("details").map(Json::from_value_of_raw),
    };
    Piece::new(Payload::ToolOutput(output)).with_extra(others)
}

/// The exit code pi's `bash` tool appends to the output of a command that failed:
/// `…\n\nCommand exited with code 2`.
fn reported_exit_code(text: &str) -> Option<i64> {
    let last = text.trim_end().rsplit('\n').next()?;
    last.strip_prefix("Command exited with code ")?.trim().parse().ok()
}

/// A command the user ran: a `user_shell` call, and its output.
fn user_shell(message: &Map<String, Value>, id: Option<&str>) -> Vec<Piece> {
    let call_id = id.map(|id| format!("{USER_SHELL}{id}"));
    let command = message.get("command").cloned().unwrap_or(Value::Null);
    let call = ToolCall {
        call_id: call_id.clone(),
        name: "user_shell".into(),
        tool_kind: None,
        input: Some(Json::from_value_of_raw(&serde_json::json!({ "command": command }))),
        input_text: None,
    };
    let mut result = message.clone();
    for key in ["role", "command", "output", "exitCode", "timestamp"] {
        result.remove(key);
    }
    let output = ToolOutput {
        call_id,
        name: Some("user_shell".into()),
        tool_kind: None,
        text: message.get("output").and_then(Value::as_str).unwrap_or_default().to_owned(),
        parts: Vec::new(),
        is_error: None,
        exit_code: message.get("exitCode").and_then(Value::as_i64),
        failed: None,
        duration_ms: None,
        result: (!result.is_empty()).then(|| Json::from_value_of_raw(&result)),
    };
    vec![Piece::new(Payload::ToolCall(call)), Piece::new(Payload::ToolOutput(output))]
}

/// The blocks of a `content` array (a string is one text block).
fn blocks(content: Option<&Value>) -> Vec<Map<String, Value>> {
    match content {
        Some(Value::String(text)) => {
            let mut block = Map::new();
            block.insert("type".into(), "text".into());
            block.insert("text".into(), text.clone().into());
            vec![block]
        }
        Some(Value::Array(items)) => items.iter().filter_map(|v| v.as_object().cloned()).collect(),
        _ => Vec::new(),
    }
}

/// The text and image parts of a `content`, and whatever else it holds (under `content` of the
/// returned map).
fn content_parts(content: Option<&Value>) -> (Vec<Part>, Map<String, Value>) {
    let mut parts = Vec::new();
    let mut others = Vec::new();
    if let Some(Value::Array(items)) = content {
        others.extend(items.iter().filter(|v| !v.is_object()).cloned());
    } else if let Some(other) = content.filter(|c| !c.is_string() && !c.is_null()) {
        others.push(other.clone());
    }
    for block in blocks(content) {
        let text = |key| block.get(key).and_then(Value::as_str).map(str::to_owned);
        match block.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(Part::Text { text: text("text").unwrap_or_default() }),
            Some("image") => parts.push(Part::Image { media_type: text("mimeType"), data: text("data"), url: None }),
            _ => others.push(Value::Object(block)),
        }
    }
    let mut extra = Map::new();
    if !others.is_empty() {
        extra.insert("content".into(), Value::Array(others));
    }
    (parts, extra)
}

/// A meta payload holding `data`.
fn meta(meta_type: MetaType, data: &Map<String, Value>) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(Json::from_value_of_raw(data)), usage: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_code_read_from_the_end_of_a_failed_bash_output() {
        let text = "ls: cannot access '/nonexistent': No such file or directory\n\n\nCommand exited with code 2";
        assert_eq!(reported_exit_code(text), Some(2));
        assert_eq!(reported_exit_code("hello\n"), None);
    }
}
