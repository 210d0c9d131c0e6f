//! Gemini CLI message content → agentlog messages and tool outputs, shared by the readers of
//! Gemini CLI and of its fork Qwen Code, whose records carry the same Gemini API parts and usage.
//!
//! A message's `content` is a `PartListUnion` of the Gemini API: a string, a part, or a list of
//! parts (`text`, `inlineData`, `fileData`, `functionCall`, `functionResponse`, …).
//!
//! - **Prompts.** A `user` message's text is what the user typed: `displayContent` where the
//!   record has it (0.61 writes the prompt expanded with the files an `@path` names into
//!   `content`, and the typed line into `displayContent`), else `content`. The expanded text is
//!   kept in `extra.content_text`. Images and documents sent with the prompt (`inlineData`,
//!   `fileData`) become image or document parts. The environment the CLI sends as the first
//!   `user` message (`<session_context>…`) is flagged `injected`.
//! - **Tool results.** A `user` record made only of `functionResponse` parts is what the CLI sent
//!   back to the model from its tools; the same result is in the `result` of the call in the
//!   `gemini` message's `toolCalls`, which becomes the tool output. Such a record is merged into
//!   that output (listed in its `extra.merged_lines`); a result whose call no `gemini` message
//!   holds becomes a tool output of its own.
//! - **Shell exit codes.** `run_shell_command` reports `status: "success"` for a command that
//!   ran, whatever its exit status; a non-zero one is only a line `Exit Code: N` of its output
//!   text (before 0.61 the line was always there). That code becomes the output's `exit_code`,
//!   so that `failed` says whether the command failed.

use serde_json::{Map, Value};

use crate::model::{Event, Json, Message, Part, Payload, Role, ToolCall, ToolFamily, ToolOutput, Usage};
use crate::read::parse_time;

/// The name of Gemini CLI's shell tool.
const SHELL_TOOL: &str = "run_shell_command";

/// How the environment message the CLI sends first begins (`getEnvironmentContext` of 0.61:
/// the date, the platform, the folders, in this tag).
const SESSION_CONTEXT: &str = "<session_context>";

/// The text of a `PartListUnion`: a string, a part, or a list of parts.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text")?.as_str()).collect::<Vec<_>>().join(""),
        Some(Value::Object(part)) => part.get("text").and_then(Value::as_str).unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}

/// The parts of a `PartListUnion` that agentlog has a part for, in order: text, and inline or
/// referenced media.
pub(crate) fn parts_of(content: Option<&Value>) -> Vec<Part> {
    let part = |part: &Value| {
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            return Some(Part::Text { text: text.to_owned() });
        }
        let (media, inline) = match (part.get("inlineData"), part.get("fileData")) {
            (Some(media), _) => (media, true),
            (None, Some(media)) => (media, false),
            (None, None) => return None,
        };
        let field = |key| media.get(key).and_then(Value::as_str).map(str::to_owned);
        let media_type = field("mimeType");
        let (data, url) = if inline { (field("data"), None) } else { (None, field("fileUri")) };
        Some(if media_type.as_deref().is_none_or(|t| t.starts_with("image/")) {
            Part::Image { media_type, data, url }
        } else {
            Part::Document { media_type, data, url }
        })
    };
    match content {
        Some(Value::String(text)) => vec![Part::Text { text: text.clone() }],
        Some(Value::Array(parts)) => parts.iter().filter_map(part).collect(),
        Some(one @ Value::Object(_)) => part(one).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A `user` message: its payload, whether the user did not type it, and what the record holds
/// beyond the message (the expanded prompt).
pub(super) fn user_message(record: &Map<String, Value>) -> (Payload, bool, Option<Json>) {
    let content = record.get("content");
    let media: Vec<Part> = parts_of(content).into_iter().filter(|p| p.text().is_none()).collect();
    let (text, parts, extra) = match record.get("displayContent") {
        Some(shown) => {
            let text = content_text(Some(shown));
            let mut parts = parts_of(Some(shown));
            let missing: Vec<Part> = media.into_iter().filter(|p| !parts.contains(p)).collect();
            parts.extend(missing);
            let expanded = content_text(content);
            let extra = (expanded != text).then(|| serde_json::json!({ "content_text": expanded }));
            (text, parts, extra.as_ref().map(Json::from_value_of_raw))
        }
        None => {
            let text = content_text(content);
            // Text alone is one part, as the record's text parts joined; with media, every
            // part in order.
            let parts = match (media.is_empty(), text.is_empty()) {
                (true, true) => Vec::new(),
                (true, false) => vec![Part::Text { text: text.clone() }],
                (false, _) => parts_of(content),
            };
            (text, parts, None)
        }
    };
    let injected = text.trim_start().starts_with(SESSION_CONTEXT);
    let message = Message { role: Role::User, text, parts, phase: None, prompt_history: None };
    (Payload::Message(message), injected, extra)
}

/// The `functionResponse` parts of a `user` record that holds nothing else: the results of
/// tool calls, sent back to the model. `None` for any other record.
pub(super) fn tool_results(record: &Map<String, Value>) -> Option<Vec<&Value>> {
    if record.get("type").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let parts = record.get("content")?.as_array().filter(|parts| !parts.is_empty())?;
    parts.iter().map(|part| part.get("functionResponse")).collect()
}

/// The call id a `functionResponse` answers.
pub(super) fn response_id(response: &Value) -> Option<&str> {
    response.get("id").and_then(Value::as_str)
}

/// Whether a call of `toolCalls` has run: its output is known.
pub(super) fn has_output(call: &Value) -> bool {
    let status = call.get("status").and_then(Value::as_str);
    call.get("result").is_some_and(|r| !r.is_null()) || matches!(status, Some("success" | "error" | "cancelled"))
}

/// The text of a `functionResponse.response`: its `output`, or its `error`.
fn response_text(response: &Value) -> String {
    match response.get("output").or_else(|| response.get("error")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => response.to_string(),
    }
}

/// The exit code a shell tool's output reports in its `Exit Code: N` line; `None` for output
/// of another form, or without the line, or `Exit Code: (none)` (killed by a signal).
///
/// The output (optionally in `<untrusted_context>`) starts with `Output: ` (0.61; `Command: `
/// before) and ends with the fields that follow the command's own output, in this order:
/// `Error`, `Exit Code`, `Signal`, `Background PIDs`, `Process Group PGID`. The line is looked
/// for among those last fields only, so that the command's own output cannot fake it.
pub(crate) fn shell_exit_code(output: &str) -> Option<i64> {
    let body = output.trim();
    let body = body
        .strip_prefix("<untrusted_context>")
        .and_then(|b| b.strip_suffix("</untrusted_context>"))
        .map_or(body, str::trim);
    if !(body.starts_with("Output: ") || body.starts_with("Command: ")) {
        return None;
    }
    for line in body.lines().rev() {
        if let Some(code) = line.strip_prefix("Exit Code: ") {
            return code.trim().parse().ok();
        }
        if !["Signal: ", "Background PIDs: ", "Process Group PGID: "].iter().any(|field| line.starts_with(field)) {
            return None;
        }
    }
    None
}

/// The exit code of a call's output: from the shell tool's output text only.
fn exit_code(name: &str, responses: &[&Value]) -> Option<i64> {
    if name != SHELL_TOOL {
        return None;
    }
    responses.iter().find_map(|r| r.get("output")?.as_str().and_then(shell_exit_code))
}

/// Adds `lines` to an event's `extra.merged_lines`, as lines of `record_type` records.
pub(super) fn add_merged_lines(event: &mut Event, lines: &[u64], record_type: &str) {
    if lines.is_empty() {
        return;
    }
    let mut extra = match event.extra.as_ref().map(Json::to_value) {
        Some(Value::Object(extra)) => extra,
        _ => Map::new(),
    };
    let listed = extra.entry("merged_lines").or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(listed) = listed {
        listed.extend(lines.iter().map(|line| serde_json::json!({ "line": line, "record_type": record_type })));
    }
    event.extra = Some(Json::from_value_of_raw(&extra));
}

/// A tool call of a `gemini` message and, once it ran, its output; `merged` are the lines of
/// the `user` records that sent the same result back, listed on the output.
pub(crate) fn tool(call: &Value, new: &dyn Fn(Payload) -> Event, merged: &[u64]) -> Vec<Event> {
    let call_id = call.get("id").and_then(Value::as_str).map(str::to_owned);
    let name = call.get("name").and_then(Value::as_str).unwrap_or("unknown").to_owned();
    let time = call.get("timestamp").and_then(Value::as_str).and_then(parse_time);
    let args = call.get("args");
    let mut events = vec![new(Payload::ToolCall(ToolCall {
        call_id: call_id.clone(),
        name: name.clone(),
        tool_kind: None,
        input: args.filter(|a| a.is_object()).map(Json::from_value_of_raw),
        input_text: args.and_then(Value::as_str).map(str::to_owned),
    }))];
    if has_output(call) {
        let status = call.get("status").and_then(Value::as_str);
        let result = call.get("result").filter(|r| !r.is_null());
        let responses: Vec<&Value> = result
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|part| part.get("functionResponse")?.get("response"))
            .collect();
        let text: Vec<String> = responses.iter().map(|r| response_text(r)).collect();
        let mut output = new(Payload::ToolOutput(ToolOutput {
            call_id,
            exit_code: exit_code(&name, &responses),
            name: Some(name),
            tool_kind: None,
            text: text.join("\n"),
            parts: Vec::new(),
            is_error: status.map(|s| s != "success"),
            failed: None,
            duration_ms: None,
            result: result.map(Json::from_value_of_raw),
        }));
        output.timestamp = time.or(output.timestamp);
        if let Some(status) = status {
            output.extra = Some(Json::from_value(&serde_json::json!({ "status": status })));
        }
        add_merged_lines(&mut output, merged, "user");
        events.push(output);
    }
    events
}

/// The tool output of a `functionResponse` sent back in a `user` record whose call no
/// `gemini` message holds.
pub(crate) fn sent_result(part: &Value, new: &dyn Fn(Payload) -> Event) -> Event {
    let response = part.get("response").unwrap_or(&Value::Null);
    let name = part.get("name").and_then(Value::as_str).map(str::to_owned);
    let wrapped = Value::Array(vec![serde_json::json!({ "functionResponse": part })]);
    new(Payload::ToolOutput(ToolOutput {
        call_id: response_id(part).map(str::to_owned),
        exit_code: name.as_deref().and_then(|n| exit_code(n, &[response])),
        name,
        tool_kind: None,
        text: response_text(response),
        parts: Vec::new(),
        is_error: response.get("error").map(|_| true),
        failed: None,
        duration_ms: None,
        result: Some(Json::from_value_of_raw(&wrapped)),
    }))
}

/// The token counts of one response as the Gemini API's usage metadata names them; `None`
/// where the record does not say.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tokens {
    /// The prompt, cache reads included (`promptTokenCount`).
    pub input: Option<u64>,
    /// Prompt tokens read from the cache (`cachedContentTokenCount`).
    pub cached: Option<u64>,
    /// The response (`candidatesTokenCount`).
    pub output: Option<u64>,
    /// Tokens spent thinking (`thoughtsTokenCount`).
    pub thoughts: Option<u64>,
    /// The prompt of tool-use results, beside `input` (`toolUsePromptTokenCount`).
    pub tool: Option<u64>,
    /// Everything (`totalTokenCount`).
    pub total: Option<u64>,
}

/// Agentlog's non-overlapping counts of Gemini-named token counts: fresh input is `input`
/// less `cached` plus `tool`, cache reads `cached`, output with `thoughts` as its reasoning
/// part, total `total`. `thoughts_in_output` says whether `output` already includes the
/// thoughts (counts converted from an OpenAI-compatible API's usage, where reasoning is part of
/// the completion) or lies beside them (the Gemini API's own usage metadata), in which case
/// they are added.
pub(crate) fn usage(tokens: Tokens, thoughts_in_output: bool, model: Option<String>) -> Usage {
    let Tokens { input, cached, output, thoughts, tool, total } = tokens;
    let fresh = input.map(|i| i.saturating_sub(cached.unwrap_or(0)).saturating_add(tool.unwrap_or(0)));
    let output = match thoughts_in_output {
        true => output,
        false => output.map(|o| o.saturating_add(thoughts.unwrap_or(0))),
    };
    Usage {
        input_tokens: fresh,
        cache_read_tokens: cached,
        output_tokens: output,
        reasoning_tokens: thoughts,
        total_tokens: total,
        model,
        ..Usage::default()
    }
}

/// The family of a Gemini CLI tool, by its name.
pub(crate) fn family(name: &str) -> ToolFamily {
    match name {
        "run_shell_command" => ToolFamily::Shell,
        "read_file" | "read_many_files" => ToolFamily::Read,
        "write_file" => ToolFamily::Write,
        "replace" | "edit" => ToolFamily::Edit,
        "glob" | "search_file_content" | "grep_search" | "list_directory" => ToolFamily::Search,
        "web_fetch" => ToolFamily::WebFetch,
        "google_web_search" => ToolFamily::WebSearch,
        "write_todos" => ToolFamily::Plan,
        "delegate_to_agent" | "codebase_investigator" => ToolFamily::Subagent,
        "ask_user" => ToolFamily::AskUser,
        other => ToolFamily::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_is_read_from_the_fields_after_the_output_only() {
        let now = "<untrusted_context>\nOutput: ls: cannot access '/x'\nExit Code: 2\nProcess Group PGID: 7\n</untrusted_context>";
        assert_eq!(shell_exit_code(now), Some(2));
        assert_eq!(shell_exit_code("Output: hello\nProcess Group PGID: 7"), None);
        let before = "Command: true\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 9";
        assert_eq!(shell_exit_code(before), Some(0));
        assert_eq!(shell_exit_code("Command: sleep 9\nOutput: (empty)\nExit Code: (none)\nSignal: 15"), None);
        // The command printed the line itself; the CLI's own fields end with the PGID.
        assert_eq!(shell_exit_code("Output: Exit Code: 5\nall good\nProcess Group PGID: 7"), None);
        assert_eq!(shell_exit_code("Exit Code: 2"), None, "not the shell tool's form");
    }
}
