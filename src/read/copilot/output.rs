//! What a `tool.execution_complete` says of the command it ran: its exit code, and the files
//! a `user.message` attaches (`session.binary_asset`).
//!
//! Copilot CLI writes `success: true` for a shell command that ran, whatever its exit status:
//! 1.0.102 adds `shellExecution.exitCode` (and `toolTelemetry.metrics.exit_code`), older
//! versions only end the output with `<exited with exit code N>` (1.0.20) or
//! `<shellId: ID completed with exit code N>` (1.0.74 and later). The exit code then tells
//! whether the command failed.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::model::{Part, ToolFamily};

/// The exit code of a tool's run: `shellExecution.exitCode`, `toolTelemetry.metrics.exit_code`,
/// or, for a shell tool, the last line of its output.
pub fn exit_code(data: &Map<String, Value>, family: Option<ToolFamily>, text: &str) -> Option<i64> {
    let integer = |v: &Value| v.as_i64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64));
    data.get("shellExecution")
        .and_then(|s| s.get("exitCode"))
        .and_then(integer)
        .or_else(|| data.get("toolTelemetry")?.get("metrics")?.get("exit_code").and_then(integer))
        .or_else(|| (family == Some(ToolFamily::Shell)).then(|| exit_code_in_text(text)).flatten())
}

/// The exit code of a shell output's last line, `<exited with exit code N>` or `<shellId: ID
/// completed with exit code N>`.
fn exit_code_in_text(text: &str) -> Option<i64> {
    let last = text.trim_end().lines().next_back()?.trim();
    let inner = last.strip_prefix('<')?.strip_suffix('>')?;
    let (head, code) = inner.rsplit_once(" exit code ")?;
    let known = head == "exited with" || (head.starts_with("shellId: ") && head.ends_with(" completed with"));
    known.then(|| code.parse().ok()).flatten()
}

/// The files of `session.binary_asset` records, by `assetId`, for the attachments that name them.
#[derive(Default)]
pub struct Assets {
    /// Media type and base64 data by asset id.
    by_id: HashMap<String, (Option<String>, String)>,
}

impl Assets {
    /// Keeps the file of a `session.binary_asset` record.
    pub fn keep(&mut self, data: &Map<String, Value>) {
        let text = |key| data.get(key).and_then(Value::as_str);
        if let (Some(id), Some(bytes)) = (text("assetId"), text("data")) {
            self.by_id.insert(id.to_owned(), (text("mimeType").map(str::to_owned), bytes.to_owned()));
        }
    }

    /// An image (or PDF document) part for each attachment whose `assetId` names a file kept;
    /// other files stay in their `attachment` event.
    pub fn parts(&self, attachments: Option<&Value>) -> Vec<Part> {
        let mut parts = Vec::new();
        for attachment in attachments.and_then(Value::as_array).into_iter().flatten() {
            let Some((stored_type, data)) =
                attachment.get("assetId").and_then(Value::as_str).and_then(|id| self.by_id.get(id))
            else {
                continue;
            };
            let media_type =
                stored_type.clone().or_else(|| attachment.get("mimeType").and_then(Value::as_str).map(str::to_owned));
            let data = Some(data.clone());
            match media_type.as_deref() {
                Some(t) if t.starts_with("image/") => parts.push(Part::Image { media_type, data, url: None }),
                Some("application/pdf") => parts.push(Part::Document { media_type, data, url: None }),
                _ => {}
            }
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_read_from_the_output_of_shell_tools_only() {
        let none = Map::new();
        let shell = Some(ToolFamily::Shell);
        assert_eq!(exit_code(&none, shell, "ls: no\n<exited with exit code 2>"), Some(2));
        assert_eq!(exit_code(&none, shell, "ok\n<shellId: 7 completed with exit code 0>\n"), Some(0));
        assert_eq!(exit_code(&none, shell, "<shellId: 7 completed with exit code 0>\nmore"), None);
        assert_eq!(exit_code(&none, Some(ToolFamily::Read), "<exited with exit code 2>"), None);
        assert_eq!(exit_code(&none, shell, "<exited with exit code two>"), None);
        let data =
            serde_json::json!({"shellExecution": {"exitCode": 3}, "toolTelemetry": {"metrics": {"exit_code": 4.0}}});
        assert_eq!(exit_code(data.as_object().unwrap(), None, ""), Some(3));
        let data = serde_json::json!({"toolTelemetry": {"metrics": {"exit_code": 4.0}}});
        assert_eq!(exit_code(data.as_object().unwrap(), None, ""), Some(4));
    }
}
