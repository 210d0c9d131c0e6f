//! Tool output as Codex records it: a string (plain, JSON-in-string or unified-exec text) or an
//! array of content items. There is no structured exit status on disk; it is recovered from the text where the text carries it.

use serde_json::value::RawValue;

use super::raw::{ContentItem, ShellOutput};
use crate::model::Part;

/// What a tool output string or array says.
#[derive(Debug, Default, PartialEq)]
pub struct Output {
    pub text: String,
    pub parts: Vec<Part>,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<u64>,
}

/// Reads a `function_call_output.output` or `custom_tool_call_output.output` value.
pub fn parse(raw: &RawValue) -> serde_json::Result<Output> {
    match raw.get().as_bytes().first() {
        Some(b'"') => Ok(from_text(serde_json::from_str(raw.get())?)),
        Some(b'[') => {
            let items: Vec<ContentItem<'_>> = serde_json::from_str(raw.get())?;
            let mut texts = Vec::new();
            let mut parts = Vec::new();
            for item in items {
                match (item.item_type.as_ref(), item.text, item.image_url) {
                    (_, Some(text), _) => {
                        texts.push(text.clone().into_owned());
                        parts.push(Part::Text { text: text.into_owned() });
                    }
                    (_, None, Some(url)) => parts.push(super::text::image_part(&url)),
                    _ => {}
                }
            }
            if parts.iter().all(|p| p.text().is_some()) {
                parts.clear();
            }
            Ok(Output { text: texts.join("\n"), parts, ..Output::default() })
        }
        _ => Ok(Output { text: raw.get().to_owned(), ..Output::default() }),
    }
}

/// Reads an output string: JSON-in-string `{"output", "metadata": {exit_code,
/// duration_seconds}}`, or text with `Process exited with code N` / `Exit code: N` and
/// `Wall time: X seconds` lines (unified exec), or plain text.
pub fn from_text(text: String) -> Output {
    if text.starts_with('{')
        && let Ok(shell) = serde_json::from_str::<ShellOutput>(&text)
    {
        let metadata = shell.metadata;
        return Output {
            text: shell.output,
            parts: Vec::new(),
            exit_code: metadata.as_ref().and_then(|m| m.exit_code),
            duration_ms: metadata.and_then(|m| m.duration_seconds).map(seconds_to_ms),
        };
    }
    let mut exit_code = None;
    let mut duration_ms = None;
    // The header lines come before `Output:`; the command's own output is not searched.
    for line in text.lines().take_while(|l| *l != "Output:").take(8) {
        if let Some(code) = line.strip_prefix("Process exited with code ").or_else(|| line.strip_prefix("Exit code: "))
        {
            exit_code = code.trim().parse().ok();
        } else if let Some(wall) = line.strip_prefix("Wall time: ") {
            duration_ms = wall.trim_end_matches(" seconds").trim().parse().ok().map(seconds_to_ms);
        }
    }
    Output { text, parts: Vec::new(), exit_code, duration_ms }
}

pub fn seconds_to_ms(seconds: f64) -> u64 {
    (seconds * 1000.0).round().max(0.0) as u64
}

/// Whether a line is bulk text a search may skip when it lacks the words: a tool's output, and
/// the `exec_command_end` / `mcp_tool_call_end` after it, which add only facts (exit code,
/// duration) to the output; reasoning, most of whose bytes are its encrypted form. Their names
/// come from the calls, read whole.
pub(super) fn is_bulk_text(line: &[u8]) -> bool {
    static KINDS: std::sync::LazyLock<crate::read::literals::Literals> = std::sync::LazyLock::new(|| {
        crate::read::literals::Literals::new(&[
            "\"function_call_output\"",
            "\"custom_tool_call_output\"",
            "\"exec_command_end\"",
            "\"mcp_tool_call_end\"",
            "\"type\":\"reasoning\"",
        ])
    });
    KINDS.is_match(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_in_string_output_gives_text_exit_code_and_duration() {
        let out = from_text(r#"{"output":"ok\n","metadata":{"exit_code":2,"duration_seconds":0.25}}"#.into());
        assert_eq!(out, Output { text: "ok\n".into(), parts: vec![], exit_code: Some(2), duration_ms: Some(250) });
    }

    #[test]
    fn unified_exec_text_gives_exit_code_and_wall_time() {
        let text = "Chunk ID: a21e41\nWall time: 1.0037 seconds\nProcess exited with code 1\nOriginal token count: 3\nOutput:\nProcess exited with code 7\n";
        let out = from_text(text.into());
        assert_eq!((out.exit_code, out.duration_ms), (Some(1), Some(1004)));
        assert_eq!(out.text, text, "the text is kept whole");
    }

    #[test]
    fn a_running_process_has_no_exit_code() {
        let out =
            from_text("Chunk ID: x\nWall time: 1.0 seconds\nProcess running with session ID 48230\nOutput:\n".into());
        assert_eq!((out.exit_code, out.duration_ms), (None, Some(1000)));
    }

    #[test]
    fn simple_exec_text_and_plain_errors() {
        assert_eq!(from_text("Exit code: 0\nWall time: 0.5 seconds\nOutput:\nhi".into()).exit_code, Some(0));
        assert_eq!(from_text("aborted".into()), Output { text: "aborted".into(), ..Output::default() });
    }

    #[test]
    fn array_output_keeps_images_in_order() {
        let raw: Box<RawValue> = serde_json::from_str(
            r#"[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]"#,
        )
        .unwrap();
        let out = parse(&raw).unwrap();
        assert_eq!(out.text, "see");
        assert_eq!(out.parts.len(), 2);
        assert_eq!(
            out.parts[1],
            Part::Image { media_type: Some("image/png".into()), data: Some("AAAA".into()), url: None }
        );
    }
}
