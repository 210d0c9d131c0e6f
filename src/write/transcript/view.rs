//! What a transcript shows of an event, before any format: a tool call's label, key argument,
//! diff or checklist, and its output; the label of injected context; a command's name.

use crate::model::{Part, Role, ToolCall, ToolFamily, ToolOutput, mcp_server};

/// Longest key argument shown on a tool call's line.
const KEY_CHARS: usize = 120;

/// A tool call and its output, either of which may be missing, as a transcript shows them.
pub struct Exchange<'e> {
    /// The tool's name as the agent called it.
    pub name: &'e str,
    /// The family's label, or `MCP <server>`.
    pub label: String,
    /// The argument that says most about the call, on one line.
    pub key: Option<String>,
    /// The call's input shown the way it reads best, if it has such a way.
    pub shown: Option<Shown>,
    /// The whole input: pretty JSON (`true`) or the text the agent gave.
    pub input: Option<(String, bool)>,
    /// The output, when one was recorded.
    pub output: Option<&'e ToolOutput>,
    /// Lines of the output's text.
    pub output_lines: usize,
    /// The output's images and documents.
    pub attachments: Vec<Attachment<'e>>,
    /// Whether the call started a subagent.
    pub subagent: bool,
}

/// A call's input in the form that reads best.
pub enum Shown {
    /// Edits as a unified diff (or the patch the agent gave).
    Diff(String),
    /// A plan or todo list: each item and whether it is done.
    Checklist(Vec<(bool, String)>),
}

impl<'e> Exchange<'e> {
    /// What to show of `call` and `output`.
    pub fn new(call: Option<&'e ToolCall>, output: Option<&'e ToolOutput>) -> Self {
        let name = call.map(|c| c.name.as_str()).or_else(|| output.and_then(|o| o.name.as_deref())).unwrap_or("tool");
        let value =
            call.and_then(|c| c.input.as_ref()).and_then(|j| serde_json::from_str::<serde_json::Value>(j.get()).ok());
        // The family the agent's reader gave the tool; by its name for events without one.
        let given = call.and_then(|c| c.tool_kind).or_else(|| output.and_then(|o| o.tool_kind));
        let family = given.unwrap_or_else(|| ToolFamily::of(name));
        let label = match mcp_server(name) {
            Some(server) => format!("MCP {server}"),
            None => family.label().to_owned(),
        };
        let input = call.and_then(|call| match (&value, &call.input, &call.input_text) {
            (Some(value), _, _) => Some((serde_json::to_string_pretty(value).unwrap_or_default(), true)),
            (None, Some(json), _) => Some((json.get().to_owned(), true)),
            (None, None, Some(text)) => Some((text.clone(), false)),
            (None, None, None) => None,
        });
        let text = call.and_then(|c| c.input_text.as_deref());
        Exchange {
            name,
            label,
            key: value.as_ref().and_then(key_argument),
            shown: call.and_then(|_| shown(family, value.as_ref(), text)),
            input: input.filter(|(text, _)| !text.is_empty()),
            output,
            output_lines: output.map_or(0, |o| o.text.lines().count()),
            attachments: output.map(|o| attachments(&o.parts)).unwrap_or_default(),
            subagent: family == ToolFamily::Subagent,
        }
    }
}

impl Exchange<'_> {
    /// The line above the output: its size, and whether it failed.
    pub fn output_label(&self) -> String {
        let failed = self.output.is_some_and(|o| o.is_error == Some(true));
        let error = if failed { ", error" } else { "" };
        let exit = self.output.and_then(|o| o.exit_code).map(|c| format!(", exit code {c}")).unwrap_or_default();
        match self.output_lines {
            0 => format!("output empty{error}{exit}"),
            1 => format!("output, 1 line{error}{exit}"),
            lines => format!("output, {lines} lines{error}{exit}"),
        }
    }
}

/// What a call does, in the form that reads best: edits as unified diffs, plans as checklists.
fn shown(family: ToolFamily, input: Option<&serde_json::Value>, text: Option<&str>) -> Option<Shown> {
    let str_at = |v: &serde_json::Value, k: &str| v.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
    match (family, input) {
        (ToolFamily::Edit, Some(input)) => {
            let path = str_at(input, "file_path").unwrap_or_default();
            let mut edits: Vec<(String, String)> = Vec::new();
            if let (Some(old), Some(new)) = (str_at(input, "old_string"), str_at(input, "new_string")) {
                edits.push((old, new));
            }
            for edit in input.get("edits").and_then(serde_json::Value::as_array).into_iter().flatten() {
                if let (Some(old), Some(new)) = (str_at(edit, "old_string"), str_at(edit, "new_string")) {
                    edits.push((old, new));
                }
            }
            let mut diff = String::new();
            for (old, new) in &edits {
                let text = similar::TextDiff::from_lines(old.as_str(), new.as_str());
                diff.push_str(&text.unified_diff().context_radius(3).header(&path, &path).to_string());
            }
            if diff.is_empty() {
                str_at(input, "input").or_else(|| str_at(input, "patch")).map(Shown::Diff)
            } else {
                Some(Shown::Diff(diff))
            }
        }
        (ToolFamily::Edit, None) => text.map(|patch| Shown::Diff(patch.to_owned())),
        (ToolFamily::Plan, Some(input)) => {
            let items = input.get("todos").or_else(|| input.get("plan")).and_then(serde_json::Value::as_array)?;
            let items: Vec<(bool, String)> = items
                .iter()
                .map(|item| {
                    let what = str_at(item, "content").or_else(|| str_at(item, "step")).unwrap_or_default();
                    (str_at(item, "status").is_some_and(|s| s == "completed"), what)
                })
                .collect();
            (!items.is_empty()).then_some(Shown::Checklist(items))
        }
        _ => None,
    }
}

/// The argument that says most about a call: the command, path, pattern, URL or query, on one
/// line and cut when long.
pub fn key_argument(input: &serde_json::Value) -> Option<String> {
    let keys = ["command", "cmd", "file_path", "path", "pattern", "url", "query", "description", "prompt"];
    let value = keys.iter().find_map(|k| input.get(k))?;
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => {
            parts.iter().map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned)).collect::<Vec<_>>().join(" ")
        }
        other => other.to_string(),
    };
    Some(one_line(&text, KEY_CHARS))
}

/// The label of a memory file's section: `memory: <name> (<type>) — <description>`, from its
/// fields; the file's path when it has no name.
pub fn memory_label(data: Option<&serde_json::Value>) -> String {
    let field = |k: &str| data.and_then(|d| d.get(k)).and_then(serde_json::Value::as_str);
    let name = field("name").or_else(|| field("path").map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p)));
    let mut label = format!("memory: {}", one_line(name.unwrap_or("unnamed"), 80));
    if let Some(kind) = field("type") {
        label.push_str(&format!(" ({})", one_line(kind, 20)));
    }
    if let Some(description) = field("description") {
        label.push_str(&format!(" — {}", one_line(description, 120)));
    }
    label
}

/// `text` on one line, whitespace runs collapsed, at most `chars` characters (then `…`).
pub fn one_line(text: &str, chars: usize) -> String {
    let mut short = String::new();
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            short.push(' ');
        }
        short.push_str(word);
        if short.len() > 4 * chars {
            break;
        }
    }
    match short.char_indices().nth(chars) {
        Some((cut, _)) => {
            short.truncate(cut);
            short.push('…');
            short
        }
        None => short,
    }
}

/// The label of context the agent added to the conversation: its role and first tag.
pub fn injected_label(role: Role, text: &str) -> String {
    let tag = text.trim_start().strip_prefix('<').and_then(|t| t.split(['>', ' ', '\n']).next());
    let tag = tag.filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    match tag {
        Some(tag) => format!("{} context: {tag}", role.as_str()),
        None => format!("{} context", role.as_str()),
    }
}

/// The text of a command record with its markup tags taken out: `/model opus` from
/// `<command-name>/model</command-name><command-args>opus</command-args>`.
pub fn command_text(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let tag_end = rest[open..].find('>').map(|e| open + e);
        let is_tag = tag_end.is_some_and(|e| {
            let name = rest[open + 1..e].trim_start_matches('/');
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
        match (is_tag, tag_end) {
            (true, Some(e)) => {
                plain.push_str(&rest[..open]);
                if !plain.ends_with(char::is_whitespace) {
                    plain.push(' ');
                }
                rest = &rest[e + 1..];
            }
            _ => {
                plain.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    plain.push_str(rest);
    plain.trim().to_owned()
}

/// An image or document of a message or tool output.
pub struct Attachment<'p> {
    /// `image` or `document`.
    pub what: &'static str,
    /// Its media type, when known.
    pub media_type: Option<&'p str>,
    /// Base64 data, for inline ones.
    pub data: Option<&'p str>,
    /// URL, for referenced ones.
    pub url: Option<&'p str>,
    /// Where it was written beside the transcript (`--images files`), relative to it.
    pub link: Option<String>,
}

/// The images and documents among `parts`.
pub fn attachments(parts: &[Part]) -> Vec<Attachment<'_>> {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { .. } => None,
            Part::Image { media_type, data, url } => Some(Attachment {
                what: "image",
                media_type: media_type.as_deref(),
                data: data.as_deref(),
                url: url.as_deref(),
                link: None,
            }),
            Part::Document { media_type, data, url } => Some(Attachment {
                what: "document",
                media_type: media_type.as_deref(),
                data: data.as_deref(),
                url: url.as_deref(),
                link: None,
            }),
        })
        .collect()
}

impl Attachment<'_> {
    /// A `data:` URL of an inline image of a raster type a browser shows safely; `None` for
    /// other attachments (SVG can hold script and is never embedded).
    pub fn data_url(&self) -> Option<String> {
        let media_type = self.media_type?;
        let safe = ["image/png", "image/jpeg", "image/gif", "image/webp"].contains(&media_type);
        let data = self.data.filter(|d| d.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)))?;
        (safe && self.what == "image").then(|| format!("data:{media_type};base64,{data}"))
    }

    /// A placeholder: `[image: image/png, 12 KB]`.
    pub fn placeholder(&self) -> String {
        let kind = self.media_type.unwrap_or("unknown type");
        match (self.data, self.url) {
            (Some(data), _) => format!("[{}: {kind}, {} KB]", self.what, data.len() * 3 / 4 / 1024),
            (None, Some(url)) if !url.starts_with("data:") => format!("[{}: {kind}, {}]", self.what, one_line(url, 80)),
            _ => format!("[{}: {kind}]", self.what),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_arguments_are_cut_only_when_long() {
        let call = |command: &str| serde_json::json!({ "command": command });
        let spaced = format!("ls{}-la", " ".repeat(200));
        assert_eq!(key_argument(&call(&spaced)).unwrap(), "ls -la");
        let long = "x".repeat(KEY_CHARS + 1);
        assert_eq!(key_argument(&call(&long)).unwrap(), format!("{}…", "x".repeat(KEY_CHARS)));
        assert_eq!(key_argument(&serde_json::json!({ "command": ["git", "status"] })).unwrap(), "git status");
    }

    #[test]
    fn commands_lose_their_tags_but_not_their_text() {
        let command = command_text("<command-name>/model</command-name>\n<command-args>opus</command-args>");
        assert_eq!(one_line(&command, 80), "/model opus");
        assert_eq!(command_text("<local-command-stdout>a\n b</local-command-stdout>"), "a\n b");
        assert_eq!(command_text("a < b and <c> d"), "a < b and  d");
        assert_eq!(command_text("x <not a tag> y"), "x <not a tag> y");
    }

    #[test]
    fn only_raster_images_with_clean_data_are_embedded() {
        let image = |media_type: &'static str, data: &'static str| Attachment {
            what: "image",
            media_type: Some(media_type),
            data: Some(data),
            url: None,
            link: None,
        };
        assert_eq!(image("image/png", "iVBORw0K").data_url().unwrap(), "data:image/png;base64,iVBORw0K");
        assert!(image("image/svg+xml", "PHN2Zz4=").data_url().is_none());
        assert!(image("image/png", "a\"onerror=x").data_url().is_none());
    }
}
