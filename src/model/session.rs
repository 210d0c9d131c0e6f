//! [`SessionSummary`]: what one session holds, built from its events.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Agent, Event, Json, Kind, MetaType, Payload, PromptHistory, Role, Usage};

/// A summary of one session: identity, versions, title, time span, place, models, links,
/// counts, usage totals and the problems met reading it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SessionSummary {
    /// Session (Claude Code) or thread (Codex) id.
    pub session_id: String,
    /// The agent that wrote the session.
    pub agent: Agent,
    /// Agent versions seen in the session, sorted.
    pub agent_versions: Vec<String>,
    /// Session title: a user-set title, else a generated one, else the first real prompt.
    pub title: Option<String>,
    /// Earliest event time.
    #[serde(with = "super::time::option")]
    #[cfg_attr(test, schemars(with = "Option<String>", extend("format" = "date-time")))]
    pub started_at: Option<DateTime<Utc>>,
    /// Latest event time.
    #[serde(with = "super::time::option")]
    #[cfg_attr(test, schemars(with = "Option<String>", extend("format" = "date-time")))]
    pub ended_at: Option<DateTime<Utc>>,
    /// First working directory recorded.
    pub cwd: Option<String>,
    /// First git branch recorded.
    pub git_branch: Option<String>,
    /// How the session was started (`cli`, `sdk-py`, `claude-vscode`, …), as the agent's
    /// session registry records it. Added in 1.2.
    #[serde(default)]
    pub entrypoint: Option<String>,
    /// Models that served the session, sorted.
    pub models: Vec<String>,
    /// Session this one was spawned or forked from.
    pub parent_session_id: Option<String>,
    /// How this session relates to `parent_session_id`.
    pub relation: Option<Relation>,
    /// True when every message of the session comes from the agent's prompt history: no
    /// transcript of it was read (deleted, or never written), and this is what is left of it.
    /// Added in 1.2.
    #[serde(default)]
    pub prompts_only: bool,
    /// Ids of subagent threads in the session, sorted.
    pub agent_ids: Vec<String>,
    /// Input files that contributed events, as given on the command line, sorted.
    pub files: Vec<String>,
    /// Event counts.
    pub counts: Counts,
    /// Token usage summed over the session's `usage` events, copied events excluded.
    pub usage: UsageTotals,
    /// Call ids of tool calls that have no output.
    pub orphan_calls: Vec<String>,
    /// Call ids of tool outputs whose call was not seen.
    pub orphan_outputs: Vec<String>,
    /// Problems met while reading the session's files.
    pub diagnostics: Vec<Diagnostic>,
}

/// How a session relates to its parent session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub enum Relation {
    /// Spawned by the parent as a subagent.
    Subagent,
    /// Forked from the parent; it starts with a copy of the parent's history.
    Fork,
    /// Resumed from the parent; it starts with a copy of the parent's history.
    Resume,
}

/// Event counts of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Counts {
    /// Non-empty input lines read.
    pub lines: u64,
    /// All events.
    pub events: u64,
    /// Message events.
    pub messages: u64,
    /// Reasoning events.
    pub reasoning: u64,
    /// Tool call events.
    pub tool_calls: u64,
    /// Tool output events.
    pub tool_outputs: u64,
    /// Meta events.
    pub meta: u64,
    /// Input lines reported as diagnostics.
    pub diagnostics: u64,
}

/// Token usage and cost summed over a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct UsageTotals {
    /// Model responses counted.
    pub responses: u64,
    /// Input tokens neither read from nor written to the cache.
    pub input_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_tokens: u64,
    /// Of the cache writes, those kept for one hour. Added in 1.1.
    #[serde(default)]
    pub cache_write_1h_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning tokens (part of `output_tokens`).
    pub reasoning_tokens: u64,
    /// All tokens.
    pub total_tokens: u64,
    /// Cost in US dollars of the responses that have one; null when none has. Added in 1.1.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Responses without a cost, their model having no known price (they are not in
    /// `cost_usd`). Added in 1.1.
    #[serde(default)]
    pub unpriced_responses: u64,
}

/// The largest token count or total kept: the largest value of the 64-bit signed integers
/// that Parquet, Arrow, DuckDB and Spark store counts in.
pub const MAX_COUNT: u64 = i64::MAX as u64;

/// `a + b`, held at [`MAX_COUNT`]; whether it had to be.
fn add_capped(a: &mut u64, b: u64) -> bool {
    match a.checked_add(b).filter(|sum| *sum <= MAX_COUNT) {
        Some(sum) => {
            *a = sum;
            false
        }
        None => {
            *a = MAX_COUNT;
            true
        }
    }
}

impl UsageTotals {
    /// Adds one response's usage; whether a total passed [`MAX_COUNT`] and was held there
    /// (never wrapped).
    pub fn add(&mut self, usage: &Usage) -> bool {
        self.merge(&UsageTotals {
            responses: 1,
            input_tokens: usage.input_tokens.unwrap_or(0),
            cache_read_tokens: usage.cache_read_tokens.unwrap_or(0),
            cache_write_tokens: usage.cache_write_tokens.unwrap_or(0),
            cache_write_1h_tokens: usage.cache_write_1h_tokens.unwrap_or(0),
            output_tokens: usage.output_tokens.unwrap_or(0),
            reasoning_tokens: usage.reasoning_tokens.unwrap_or(0),
            total_tokens: usage.total_tokens.unwrap_or(0),
            cost_usd: usage.cost_usd,
            unpriced_responses: u64::from(usage.cost_usd.is_none()),
        })
    }

    /// Adds another total; whether a total passed [`MAX_COUNT`] and was held there.
    pub fn merge(&mut self, other: &UsageTotals) -> bool {
        if let Some(cost) = other.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + cost);
        }
        let counts = [
            (&mut self.responses, other.responses),
            (&mut self.input_tokens, other.input_tokens),
            (&mut self.cache_read_tokens, other.cache_read_tokens),
            (&mut self.cache_write_tokens, other.cache_write_tokens),
            (&mut self.cache_write_1h_tokens, other.cache_write_1h_tokens),
            (&mut self.output_tokens, other.output_tokens),
            (&mut self.reasoning_tokens, other.reasoning_tokens),
            (&mut self.total_tokens, other.total_tokens),
            (&mut self.unpriced_responses, other.unpriced_responses),
        ];
        counts.into_iter().fold(false, |capped, (total, n)| add_capped(total, n) | capped)
    }
}

/// Records, once per session, that its usage totals passed [`MAX_COUNT`] at `line` of `file`.
fn note_capped_totals(s: &mut SessionSummary, file: &str, line: Option<u64>) {
    const CODE: &str = "agentlog::usage::total_overflow";
    if s.diagnostics.iter().any(|d| d.code == CODE) {
        return;
    }
    s.diagnostics.push(Diagnostic {
        code: CODE.into(),
        message: format!("the session's token totals passed {MAX_COUNT} and are held there, not wrapped"),
        file: file.to_owned(),
        line,
        column: None,
    });
    s.counts.diagnostics += 1;
}

/// A problem with one input line (or a whole input), as recorded in summaries and reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Diagnostic {
    /// Stable code, such as `agentlog::input::invalid_json`.
    pub code: String,
    /// One-line description.
    pub message: String,
    /// The input file as given on the command line.
    pub file: String,
    /// 1-based line; null for problems with the whole file.
    pub line: Option<u64>,
    /// 1-based byte column within the line, where known.
    pub column: Option<u64>,
}

/// The title sources a session can have, strongest first.
const TITLE_SOURCES: [&str; 4] = ["custom", "ai", "summary", "prompt"];

/// Builds a [`SessionSummary`] from events, one at a time.
#[derive(Debug)]
pub struct SessionTally {
    summary: SessionSummary,
    versions: BTreeSet<String>,
    models: BTreeSet<String>,
    agent_ids: BTreeSet<String>,
    files: BTreeSet<String>,
    /// Title candidates by source rank; the last one seen of each source wins.
    titles: [Option<String>; 4],
    /// Call id → whether an output was seen (true) or only the call (false); `None` key
    /// cannot occur, calls without ids are not tracked.
    calls: BTreeMap<String, bool>,
    outputs_without_call: BTreeSet<String>,
    /// Whether calls and outputs are matched to find orphans.
    orphans: bool,
    /// Messages read from the agent's prompt history of a session without a transcript.
    history_only: u64,
    /// Whether a prompt from the prompt history says the session has a transcript.
    history_in_transcript: bool,
}

impl SessionTally {
    /// Starts an empty summary for a session.
    pub fn new(agent: Agent, session_id: &str) -> Self {
        SessionTally {
            summary: SessionSummary {
                session_id: session_id.to_owned(),
                agent,
                agent_versions: Vec::new(),
                title: None,
                started_at: None,
                ended_at: None,
                cwd: None,
                git_branch: None,
                entrypoint: None,
                models: Vec::new(),
                parent_session_id: None,
                relation: None,
                prompts_only: false,
                agent_ids: Vec::new(),
                files: Vec::new(),
                counts: Counts::default(),
                usage: UsageTotals::default(),
                orphan_calls: Vec::new(),
                orphan_outputs: Vec::new(),
                diagnostics: Vec::new(),
            },
            versions: BTreeSet::new(),
            models: BTreeSet::new(),
            agent_ids: BTreeSet::new(),
            files: BTreeSet::new(),
            titles: Default::default(),
            calls: BTreeMap::new(),
            outputs_without_call: BTreeSet::new(),
            orphans: true,
            history_only: 0,
            history_in_transcript: false,
        }
    }

    /// Starts a summary that does not look for orphan calls and outputs (it lists none), for
    /// callers that need only the rest: its memory does not grow with the session's calls.
    pub fn without_orphans(agent: Agent, session_id: &str) -> Self {
        SessionTally { orphans: false, ..SessionTally::new(agent, session_id) }
    }

    /// Takes one event of the session into account.
    pub fn observe(&mut self, event: &Event) {
        let s = &mut self.summary;
        s.counts.events += 1;
        if let Some(t) = event.timestamp {
            s.started_at = Some(s.started_at.map_or(t, |a| a.min(t)));
            s.ended_at = Some(s.ended_at.map_or(t, |b| b.max(t)));
        }
        let ctx = &event.context;
        if s.cwd.is_none() {
            s.cwd.clone_from(&ctx.cwd);
        }
        if s.git_branch.is_none() {
            s.git_branch.clone_from(&ctx.git_branch);
        }
        if let Some(v) = &ctx.agent_version {
            insert(&mut self.versions, v);
        }
        if let Some(a) = &event.agent_id
            && event.parent_session_id.as_deref() == Some(s.session_id.as_str())
        {
            // A subagent thread inside this session (Claude Code).
            insert(&mut self.agent_ids, a);
        } else if let Some(parent) = &event.parent_session_id
            && s.parent_session_id.is_none()
            && *parent != s.session_id
        {
            // A thread of its own that another session spawned or forked (Codex).
            s.parent_session_id = Some(parent.clone());
            s.relation = Some(if event.is_sidechain { Relation::Subagent } else { Relation::Fork });
        }
        insert(&mut self.files, &event.source.file);
        match &event.payload {
            Payload::Message(m) if m.prompt_history == Some(PromptHistory::InTranscript) => {
                // The transcript's own copy of the prompt is counted.
                self.history_in_transcript = true;
            }
            Payload::Message(m) => {
                s.counts.messages += 1;
                self.history_only += u64::from(m.prompt_history == Some(PromptHistory::NoTranscript));
                self.history_in_transcript |= m.prompt_history == Some(PromptHistory::NotInTranscript);
                if m.role == Role::User && !event.injected && !event.is_sidechain && !m.text.trim().is_empty() {
                    self.titles[3].get_or_insert_with(|| first_line(&m.text));
                }
            }
            Payload::Reasoning(_) => s.counts.reasoning += 1,
            Payload::ToolCall(c) => {
                s.counts.tool_calls += 1;
                if let Some(id) = c.call_id.as_ref().filter(|_| self.orphans) {
                    self.calls.entry(id.clone()).or_insert(false);
                }
            }
            Payload::ToolOutput(o) => {
                s.counts.tool_outputs += 1;
                if let Some(id) = o.call_id.as_ref().filter(|_| self.orphans) {
                    match self.calls.get_mut(id) {
                        Some(answered) => *answered = true,
                        None => {
                            self.outputs_without_call.insert(id.clone());
                        }
                    }
                }
            }
            Payload::Meta(m) => {
                s.counts.meta += 1;
                match (m.meta_type, &m.usage) {
                    (MetaType::Usage, Some(u)) if !event.copied => {
                        if s.usage.add(u) {
                            note_capped_totals(s, &event.source.file, Some(event.source.line));
                        }
                        if let Some(model) = &u.model {
                            insert(&mut self.models, model);
                        }
                    }
                    (MetaType::SessionRegistry, _) if s.entrypoint.is_none() => {
                        s.entrypoint = m.data.as_ref().and_then(|d| string_field(d, "entrypoint"));
                    }
                    (MetaType::Memory, _) => {
                        let project = m.data.as_ref().and_then(|d| string_field(d, "project"));
                        self.titles[3].get_or_insert_with(|| format!("Memory of {}", project.unwrap_or_default()));
                    }
                    (MetaType::Title, _) => {
                        if let Some((rank, title)) = m.data.as_ref().and_then(title_of) {
                            self.titles[rank] = Some(title);
                        }
                    }
                    _ => {}
                }
            }
        }
        if event.kind() != Kind::Meta
            && let Some(model) = &ctx.model
        {
            insert(&mut self.models, model);
        }
    }

    /// Counts input lines read and records the problems met reading them.
    pub fn add_lines(&mut self, lines: u64, diagnostics: &[Diagnostic]) {
        self.summary.counts.lines += lines;
        self.summary.counts.diagnostics += diagnostics.len() as u64;
        self.summary.diagnostics.extend_from_slice(diagnostics);
    }

    /// Merges another tally of the same session (another file of it) into this one.
    pub fn merge(&mut self, other: SessionTally) {
        let o = other.summary;
        let s = &mut self.summary;
        s.started_at = [s.started_at, o.started_at].into_iter().flatten().min();
        s.ended_at = [s.ended_at, o.ended_at].into_iter().flatten().max();
        if s.cwd.is_none() {
            s.cwd = o.cwd;
        }
        if s.git_branch.is_none() {
            s.git_branch = o.git_branch;
        }
        if s.entrypoint.is_none() {
            s.entrypoint = o.entrypoint;
        }
        self.history_only += other.history_only;
        self.history_in_transcript |= other.history_in_transcript;
        if s.parent_session_id.is_none() {
            s.parent_session_id = o.parent_session_id;
            s.relation = o.relation;
        }
        let c = &mut s.counts;
        c.lines += o.counts.lines;
        c.events += o.counts.events;
        c.messages += o.counts.messages;
        c.reasoning += o.counts.reasoning;
        c.tool_calls += o.counts.tool_calls;
        c.tool_outputs += o.counts.tool_outputs;
        c.meta += o.counts.meta;
        c.diagnostics += o.counts.diagnostics;
        let capped = s.usage.merge(&o.usage);
        s.diagnostics.extend(o.diagnostics);
        if capped {
            let file = other.files.iter().next().cloned().unwrap_or_default();
            note_capped_totals(s, &file, None);
        }
        self.versions.extend(other.versions);
        self.models.extend(other.models);
        self.agent_ids.extend(other.agent_ids);
        self.files.extend(other.files);
        for (rank, title) in other.titles.into_iter().enumerate() {
            // Within a rank, the main thread's title (merged first) wins over a subagent's.
            if self.titles[rank].is_none() {
                self.titles[rank] = title;
            }
        }
        for (id, answered) in other.calls {
            *self.calls.entry(id).or_insert(false) |= answered;
        }
        self.outputs_without_call.extend(other.outputs_without_call);
    }

    /// The finished summary.
    pub fn finish(mut self) -> SessionSummary {
        let s = &mut self.summary;
        s.agent_versions = self.versions.into_iter().collect();
        s.models = self.models.into_iter().collect();
        s.agent_ids = self.agent_ids.into_iter().collect();
        s.files = self.files.into_iter().collect();
        s.title = self.titles.into_iter().flatten().next();
        // A prompt found in a transcript, or a message of a transcript, says the session's
        // transcript was read.
        s.prompts_only = self.history_only > 0 && self.history_only == s.counts.messages && !self.history_in_transcript;
        s.orphan_calls = self.calls.iter().filter(|(_, answered)| !**answered).map(|(id, _)| id.clone()).collect();
        s.orphan_outputs = self.outputs_without_call.into_iter().filter(|id| !self.calls.contains_key(id)).collect();
        self.summary
    }
}

fn insert(set: &mut BTreeSet<String>, value: &str) {
    if !set.contains(value) {
        set.insert(value.to_owned());
    }
}

/// The first line of a prompt, at most 200 characters.
fn first_line(text: &str) -> String {
    text.trim().lines().next().unwrap_or_default().chars().take(200).collect()
}

/// The string at `key` of a JSON object.
fn string_field(data: &Json, key: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(data.get()).ok()?;
    value.get(key)?.as_str().map(str::to_owned)
}

/// Reads a title event's data: `{"title": …, "source": "custom" | "ai" | "summary"}`.
fn title_of(data: &Json) -> Option<(usize, String)> {
    #[derive(Deserialize)]
    struct Title {
        title: String,
        source: String,
    }
    let t: Title = serde_json::from_str(data.get()).ok()?;
    let rank = TITLE_SOURCES.iter().position(|s| *s == t.source)?;
    Some((rank, t.title))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Payload, ToolCall};

    #[test]
    fn a_tally_without_orphans_keeps_everything_else() {
        let call = Payload::ToolCall(ToolCall {
            tool_kind: None,
            call_id: Some("c1".into()),
            name: "Bash".into(),
            input: None,
            input_text: None,
        });
        let event = Event::new("s".into(), call);
        let (mut full, mut light) =
            (SessionTally::new(Agent::Codex, "s"), SessionTally::without_orphans(Agent::Codex, "s"));
        full.observe(&event);
        light.observe(&event);
        let (full, light) = (full.finish(), light.finish());
        assert_eq!(full.orphan_calls, vec!["c1".to_owned()]);
        assert!(light.orphan_calls.is_empty());
        assert_eq!(SessionSummary { orphan_calls: Vec::new(), ..full }, light);
    }
}
