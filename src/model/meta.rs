//! [`Meta`]: the payload of a record that is not conversation, and its [`MetaType`].

use serde::{Deserialize, Serialize};

use super::{Json, Usage};

/// A record that is not conversation: session start, usage, titles, compaction and the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Meta {
    /// What the record is.
    pub meta_type: MetaType,
    /// The record's data: for `unknown`, the whole source record.
    pub data: Option<Json>,
    /// Token usage of one model response; set on `usage` events only.
    pub usage: Option<Usage>,
}

/// The type of a meta record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum MetaType {
    /// Session header: ids, versions, instructions, git.
    SessionStart,
    /// Settings in force from here on (model, sandbox, approval policy).
    TurnContext,
    /// A user turn started.
    TurnStart,
    /// A user turn ended.
    TurnEnd,
    /// Token usage of one model response.
    Usage,
    /// Usage or rate-limit counters reported again without a new response (cumulative
    /// re-emits, rows before the first response, replayed history).
    UsageSnapshot,
    /// Context compaction: the history before it was summarised.
    Compaction,
    /// A session title.
    Title,
    /// A file-history or undo snapshot.
    FileSnapshot,
    /// A system or harness notice (hooks, errors, timings).
    System,
    /// Progress of a running tool, hook or subagent.
    Progress,
    /// A harness attachment (hook output, tool listing deltas, reminders).
    Attachment,
    /// Typed-ahead input queued while the agent worked.
    QueueOperation,
    /// A slash command or local command and its output; `data.text` holds the record's text,
    /// and for a slash command `data.command` (`/model`) and `data.args` its name and arguments.
    Command,
    /// The user interrupted the agent.
    Interrupt,
    /// Context injected into the conversation that the user did not type.
    InjectedContext,
    /// A background task reported back.
    TaskNotification,
    /// Earlier turns were rolled back.
    Rollback,
    /// A tool the model provider ran on its side (web search, image generation, tool search);
    /// the log holds no call id or output to pair it with.
    ServerTool,
    /// A memory file the agent keeps for a project (Claude Code `memory/*.md`): `data` holds
    /// `name`, `description`, `type`, `body`, `path` and the whole `front_matter`. Added in 1.2.
    Memory,
    /// The agent's todo list as a side file holds it (Claude Code `todos/*.json`): `data.todos`,
    /// each `{content, status, activeForm}`. Added in 1.2.
    TodoList,
    /// An entry of the agent's registry of running sessions (Claude Code `sessions/<pid>.json`):
    /// `data` holds `pid`, `cwd`, `startedAt`, `kind` and `entrypoint`. Added in 1.2.
    SessionRegistry,
    /// What the agent sends the model besides the conversation, once per distinct form: `data`
    /// holds `system` (the system prompt: a string or a list of text blocks, as the agent
    /// sent it), `tools` (the tool definitions, each with `name`, `description` and
    /// `input_schema`) and `shape_hash`, the agent's key for it (Claude Code
    /// `api-request-shape`). Added in 1.3.
    RequestShape,
    /// One request to the model as the agent made it: its parameters (model, token limit,
    /// thinking, betas) and the `shape_hash` of the [`MetaType::RequestShape`] it sent; `data`
    /// holds the record (Claude Code `api-request`). A request that failed and was retried has
    /// one each. Added in 1.3.
    Request,
    /// One message of a request's body as sent to the model, with the reminders the agent
    /// added to it, keyed by its hash; `data` holds the record (Claude Code
    /// `api-request-blob`). Added in 1.3.
    RequestMessage,
    /// The session's totals as the agent itself computed them (Claude Code `cost-state`:
    /// cost in USD, durations, tokens per model); cumulative, so the last one of a session holds
    /// its totals. Never counted as usage. `data` holds the record. Added in 1.3.
    AgentTotals,
    /// A record this version of agentlog does not know; `data` holds it whole.
    Unknown,
}

impl MetaType {
    /// The name used in output (`session_start`, `usage`, …).
    pub fn as_str(self) -> &'static str {
        use MetaType::*;
        match self {
            SessionStart => "session_start",
            TurnContext => "turn_context",
            TurnStart => "turn_start",
            TurnEnd => "turn_end",
            Usage => "usage",
            UsageSnapshot => "usage_snapshot",
            Compaction => "compaction",
            Title => "title",
            FileSnapshot => "file_snapshot",
            System => "system",
            Progress => "progress",
            Attachment => "attachment",
            QueueOperation => "queue_operation",
            Command => "command",
            Interrupt => "interrupt",
            InjectedContext => "injected_context",
            TaskNotification => "task_notification",
            Rollback => "rollback",
            ServerTool => "server_tool",
            Memory => "memory",
            TodoList => "todo_list",
            SessionRegistry => "session_registry",
            RequestShape => "request_shape",
            Request => "request",
            RequestMessage => "request_message",
            AgentTotals => "agent_totals",
            Unknown => "unknown",
        }
    }
}
