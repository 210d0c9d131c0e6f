//! What kind of tool a call is, by the name the agent gave it, across agents, and whether it
//! failed.

use super::Agent;

/// A tool's family, so that tool use compares across agents (`tool_kind` in the output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum ToolFamily {
    /// Runs a shell command.
    Shell,
    /// Reads a file.
    Read,
    /// Writes a whole file.
    Write,
    /// Edits part of a file, or applies a patch.
    Edit,
    /// Searches files or their contents.
    Search,
    /// Fetches a web page.
    WebFetch,
    /// Searches the web.
    WebSearch,
    /// Starts a subagent.
    Subagent,
    /// Updates a plan or todo list.
    Plan,
    /// Asks the user a question.
    AskUser,
    /// A tool of an MCP server.
    Mcp,
    /// Anything else.
    Other,
}

impl ToolFamily {
    /// The family of a tool named `name` (`Bash`, `exec_command`, `mcp__github__create_issue`).
    pub fn of(name: &str) -> ToolFamily {
        match name {
            "Bash" | "BashOutput" | "KillShell" | "KillBash" | "PowerShell" | "exec_command" | "shell"
            | "local_shell" | "write_stdin" | "container.exec" | "user_shell" => ToolFamily::Shell,
            "Read" | "NotebookRead" | "view_image" | "read_file" => ToolFamily::Read,
            "Write" => ToolFamily::Write,
            "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch" => ToolFamily::Edit,
            "Grep" | "Glob" | "LS" | "grep_files" | "list_dir" => ToolFamily::Search,
            "WebFetch" => ToolFamily::WebFetch,
            "WebSearch" | "web_search" | "web_search_call" => ToolFamily::WebSearch,
            "Task" | "Agent" | "spawn_agent" => ToolFamily::Subagent,
            "TodoWrite" | "update_plan" | "ExitPlanMode" => ToolFamily::Plan,
            "AskUserQuestion" => ToolFamily::AskUser,
            _ if mcp_server(name).is_some() => ToolFamily::Mcp,
            _ => ToolFamily::Other,
        }
    }

    /// Every family.
    pub const ALL: [ToolFamily; 12] = [
        ToolFamily::Shell,
        ToolFamily::Read,
        ToolFamily::Write,
        ToolFamily::Edit,
        ToolFamily::Search,
        ToolFamily::WebFetch,
        ToolFamily::WebSearch,
        ToolFamily::Subagent,
        ToolFamily::Plan,
        ToolFamily::AskUser,
        ToolFamily::Mcp,
        ToolFamily::Other,
    ];

    /// The name used in output: `shell`, `web_fetch`, `ask_user`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFamily::Shell => "shell",
            ToolFamily::Read => "read",
            ToolFamily::Write => "write",
            ToolFamily::Edit => "edit",
            ToolFamily::Search => "search",
            ToolFamily::WebFetch => "web_fetch",
            ToolFamily::WebSearch => "web_search",
            ToolFamily::Subagent => "subagent",
            ToolFamily::Plan => "plan",
            ToolFamily::AskUser => "ask_user",
            ToolFamily::Mcp => "mcp",
            ToolFamily::Other => "other",
        }
    }

    /// A short label: `shell`, `read`, `web search`, ….
    pub fn label(self) -> &'static str {
        match self {
            ToolFamily::WebFetch => "web fetch",
            ToolFamily::WebSearch => "web search",
            ToolFamily::AskUser => "question",
            ToolFamily::Mcp => "MCP",
            ToolFamily::Other => "tool",
            // The others read the same in a label as in output.
            _ => self.as_str(),
        }
    }
}

/// Whether a tool call failed, by one rule for every output: an error reported by the tool
/// (`is_error`) or a non-zero exit code is a failure; a zero exit code, or `is_error` false, is
/// not. Claude Code marks only errors (it leaves `is_error` out on success), so its outputs
/// without either are not failures; other agents' are unknown (`None`).
pub fn failed(agent: Agent, is_error: Option<bool>, exit_code: Option<i64>) -> Option<bool> {
    match (is_error, exit_code) {
        (Some(true), _) => Some(true),
        (_, Some(code)) => Some(code != 0),
        (Some(false), None) => Some(false),
        (None, None) => (agent == Agent::ClaudeCode).then_some(false),
    }
}

/// The MCP server of a tool named `mcp__<server>__<tool>` (Claude Code, Codex from 2026) or
/// `<server>__<tool>` (Codex in 2025).
pub fn mcp_server(name: &str) -> Option<&str> {
    let (server, tool) = name.strip_prefix("mcp__").unwrap_or(name).split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_cover_both_agents_names_and_mcp_servers() {
        assert_eq!(ToolFamily::of("Bash"), ToolFamily::Shell);
        assert_eq!(ToolFamily::of("exec_command"), ToolFamily::Shell);
        assert_eq!(ToolFamily::of("apply_patch"), ToolFamily::Edit);
        assert_eq!(ToolFamily::of("update_plan"), ToolFamily::Plan);
        assert_eq!(ToolFamily::of("mcp__github__create_issue"), ToolFamily::Mcp);
        assert_eq!(mcp_server("mcp__github__create_issue"), Some("github"));
        assert_eq!(mcp_server("Bash"), None);
        assert_eq!(mcp_server("memory__add_observations"), Some("memory"));
        assert_eq!(ToolFamily::of("task-master-ai__set_task_status"), ToolFamily::Mcp);
        assert_eq!((mcp_server("__x"), mcp_server("x__"), mcp_server("mcp__")), (None, None, None));
        assert_eq!(ToolFamily::of("Frobnicate"), ToolFamily::Other);
        assert_eq!(ToolFamily::of("PowerShell"), ToolFamily::Shell);
    }

    #[test]
    fn an_error_or_a_non_zero_exit_code_is_a_failure_and_claude_marks_only_errors() {
        use Agent::{ClaudeCode, Codex};
        assert_eq!(failed(Codex, Some(true), Some(0)), Some(true));
        assert_eq!(failed(Codex, Some(false), Some(2)), Some(true));
        assert_eq!(failed(Codex, None, Some(0)), Some(false));
        assert_eq!(failed(Codex, None, None), None);
        assert_eq!(failed(ClaudeCode, None, None), Some(false));
        assert_eq!(failed(ClaudeCode, Some(true), None), Some(true));
    }

    #[test]
    fn names_are_the_serde_names() {
        for family in ToolFamily::ALL {
            assert_eq!(serde_json::to_value(family).unwrap(), family.as_str());
        }
    }
}
