//! What kind of tool a call is, by the name the agent gave it, across agents.

/// A tool's family, for labels in transcripts and for counting tool use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
            "Bash" | "BashOutput" | "KillShell" | "exec_command" | "shell" | "local_shell" | "write_stdin"
            | "container.exec" | "user_shell" => ToolFamily::Shell,
            "Read" | "NotebookRead" | "view_image" | "read_file" => ToolFamily::Read,
            "Write" => ToolFamily::Write,
            "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch" => ToolFamily::Edit,
            "Grep" | "Glob" | "LS" | "grep_files" | "list_dir" => ToolFamily::Search,
            "WebFetch" => ToolFamily::WebFetch,
            "WebSearch" | "web_search" => ToolFamily::WebSearch,
            "Task" | "Agent" | "spawn_agent" => ToolFamily::Subagent,
            "TodoWrite" | "update_plan" | "ExitPlanMode" => ToolFamily::Plan,
            "AskUserQuestion" => ToolFamily::AskUser,
            _ if mcp_server(name).is_some() => ToolFamily::Mcp,
            _ => ToolFamily::Other,
        }
    }

    /// A short label: `shell`, `read`, `web search`, ….
    pub fn label(self) -> &'static str {
        match self {
            ToolFamily::Shell => "shell",
            ToolFamily::Read => "read",
            ToolFamily::Write => "write",
            ToolFamily::Edit => "edit",
            ToolFamily::Search => "search",
            ToolFamily::WebFetch => "web fetch",
            ToolFamily::WebSearch => "web search",
            ToolFamily::Subagent => "subagent",
            ToolFamily::Plan => "plan",
            ToolFamily::AskUser => "question",
            ToolFamily::Mcp => "MCP",
            ToolFamily::Other => "tool",
        }
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
    }
}
