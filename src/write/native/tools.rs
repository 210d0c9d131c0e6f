//! A tool call of one agent as what it did, whatever the agent named its arguments: the
//! command a shell call ran, the file a read or write named, the text an edit replaced. The
//! native writers turn these into the target agent's own tools; a call they cannot tell
//! becomes text the model reads ([`call_as_text`]).

use serde_json::Value;

use crate::model::{Agent, ToolCall, ToolFamily, ToolOutput};

/// What a call did, in terms every agent's tools share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Ran a shell command.
    Shell { command: String },
    /// Read a file.
    Read { path: String },
    /// Wrote a whole file.
    Write { path: String, content: String },
    /// Replaced text in a file.
    Edit { path: String, old: String, new: String },
    /// Searched file contents for a pattern (under a path).
    Grep { pattern: String, path: Option<String> },
    /// Listed files matching a glob pattern.
    Glob { pattern: String },
}

/// The first string among `keys` of `input`.
fn field(input: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| input.get(k)?.as_str()).map(str::to_owned)
}

/// The command of a shell call: a string, or an argument vector (`["bash", "-lc", "ls"]` gives
/// `ls`; other vectors are joined with spaces).
fn command(input: &Value) -> Option<String> {
    match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') && flag.contains('c') => {
                    Some((*script).to_owned())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

const PATH: &[&str] = &["file_path", "filePath", "path", "absolute_path", "filename", "file"];

/// What `call` did, where its family and arguments tell; `None` for anything else (subagents,
/// web tools, patches, tools of MCP servers).
pub fn action(call: &ToolCall) -> Option<Action> {
    let input = call.input.as_ref()?.to_value();
    let family = call.tool_kind.unwrap_or_else(|| ToolFamily::of(&call.name));
    match family {
        ToolFamily::Shell => command(&input).map(|command| Action::Shell { command }),
        ToolFamily::Read => field(&input, PATH).map(|path| Action::Read { path }),
        ToolFamily::Write => Some(Action::Write {
            path: field(&input, PATH)?,
            content: field(&input, &["content", "file_text", "text", "contents"])?,
        }),
        ToolFamily::Edit => Some(Action::Edit {
            path: field(&input, PATH)?,
            old: field(&input, &["old_string", "oldString", "old_str", "old_text", "search"])?,
            new: field(&input, &["new_string", "newString", "new_str", "new_text", "replace"])?,
        }),
        ToolFamily::Search => {
            let pattern = field(&input, &["pattern", "query", "regex"])?;
            if call.name.to_ascii_lowercase().contains("glob") {
                Some(Action::Glob { pattern })
            } else {
                Some(Action::Grep { pattern, path: field(&input, &["path", "dir_path", "directory"]) })
            }
        }
        _ => None,
    }
}

/// A call the target has no tool for, as text the model reads: the tool's name, the agent
/// whose tool it is, and its input.
pub fn call_as_text(agent: Agent, call: &ToolCall) -> String {
    let input = match (&call.input, &call.input_text) {
        (Some(input), _) => serde_json::to_string_pretty(&input.to_value()).unwrap_or_default(),
        (None, Some(text)) => text.clone(),
        (None, None) => String::new(),
    };
    let id = call.call_id.as_deref().map(|id| format!(" (call {id})")).unwrap_or_default();
    format!("[Called the {} tool `{}`{id} with:]\n{input}", agent.as_str(), call.name)
}

/// The output of a call written as text ([`call_as_text`]).
pub fn output_as_text(output: &ToolOutput) -> String {
    let name = output.name.as_deref().unwrap_or("tool");
    let id = output.call_id.as_deref().map(|id| format!(" (call {id})")).unwrap_or_default();
    let failed = if output.failed == Some(true) { ", which failed" } else { "" };
    format!("[Output of `{name}`{id}{failed}:]\n{}", output.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall::from_input(None, name.to_owned(), Some(&input))
    }

    #[test]
    fn calls_of_every_agent_tell_what_they_did() {
        let shell = |c: &str| Some(Action::Shell { command: c.to_owned() });
        assert_eq!(action(&call("Bash", serde_json::json!({ "command": "ls -la" }))), shell("ls -la"));
        assert_eq!(action(&call("exec_command", serde_json::json!({ "cmd": "git status" }))), shell("git status"));
        assert_eq!(
            action(&call("shell", serde_json::json!({ "command": ["bash", "-lc", "echo hi"] }))),
            shell("echo hi")
        );
        assert_eq!(action(&call("shell", serde_json::json!({ "command": ["ls", "-a"] }))), shell("ls -a"));
        assert_eq!(
            action(&call("read_file", serde_json::json!({ "absolute_path": "/a/b.rs" }))),
            Some(Action::Read { path: "/a/b.rs".into() })
        );
        assert_eq!(
            action(&call("Edit", serde_json::json!({ "filePath": "x", "oldString": "a", "newString": "b" }))),
            Some(Action::Edit { path: "x".into(), old: "a".into(), new: "b".into() })
        );
        assert_eq!(
            action(&call("Glob", serde_json::json!({ "pattern": "**/*.rs" }))),
            Some(Action::Glob { pattern: "**/*.rs".into() })
        );
        assert_eq!(action(&call("apply_patch", serde_json::json!({ "input": "*** Begin Patch" }))), None);
        assert_eq!(action(&call("WebFetch", serde_json::json!({ "url": "https://example.com" }))), None);
    }
}
