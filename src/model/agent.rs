//! The agents whose sessions agentlog reads.

use serde::{Deserialize, Serialize};

/// The agent that wrote a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Agent {
    /// Anthropic's Claude Code.
    #[serde(rename = "claude-code")]
    ClaudeCode,
    /// OpenAI's Codex CLI.
    #[serde(rename = "codex")]
    Codex,
    /// Google's Gemini CLI.
    #[serde(rename = "gemini-cli")]
    GeminiCli,
    /// GitHub Copilot CLI.
    #[serde(rename = "copilot-cli")]
    CopilotCli,
    /// OpenCode (sst/opencode, anomalyco/opencode).
    #[serde(rename = "opencode")]
    OpenCode,
    /// Kilo CLI, Kilo Code's fork of OpenCode.
    #[serde(rename = "kilo")]
    Kilo,
    /// Charm's Crush.
    #[serde(rename = "crush")]
    Crush,
    /// pi (badlogic/pi-mono, earendil-works/pi), the coding agent of `@mariozechner/pi-coding-agent`.
    #[serde(rename = "pi")]
    Pi,
    /// Qwen Code, the Qwen team's fork of Gemini CLI.
    #[serde(rename = "qwen-code")]
    QwenCode,
    /// Cline: its CLI, and the task folders of its VS Code extension.
    #[serde(rename = "cline")]
    Cline,
    /// Aider, whose history lives in the project as Markdown.
    #[serde(rename = "aider")]
    Aider,
    /// OpenHands: its CLI and software agent SDK.
    #[serde(rename = "openhands")]
    OpenHands,
    /// Factory's Droid.
    #[serde(rename = "factory-droid")]
    FactoryDroid,
    /// Cursor's agent (CLI and IDE agent transcripts).
    #[serde(rename = "cursor")]
    Cursor,
    /// Kiro's CLI.
    #[serde(rename = "kiro")]
    Kiro,
}

impl Agent {
    /// The name used in output (`claude-code`, `codex`).
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::CopilotCli => "copilot-cli",
            Agent::OpenCode => "opencode",
            Agent::Kilo => "kilo",
            Agent::Crush => "crush",
            Agent::Pi => "pi",
            Agent::QwenCode => "qwen-code",
            Agent::Cline => "cline",
            Agent::Aider => "aider",
            Agent::OpenHands => "openhands",
            Agent::FactoryDroid => "factory-droid",
            Agent::Cursor => "cursor",
            Agent::Kiro => "kiro",
        }
    }

    /// The agent of a name used in output; `None` for another name.
    pub fn from_name(name: &str) -> Option<Agent> {
        const ALL: [Agent; 15] = [
            Agent::ClaudeCode,
            Agent::Codex,
            Agent::GeminiCli,
            Agent::CopilotCli,
            Agent::OpenCode,
            Agent::Kilo,
            Agent::Crush,
            Agent::Pi,
            Agent::QwenCode,
            Agent::Cline,
            Agent::Aider,
            Agent::OpenHands,
            Agent::FactoryDroid,
            Agent::Cursor,
            Agent::Kiro,
        ];
        ALL.into_iter().find(|a| a.as_str() == name)
    }
}
