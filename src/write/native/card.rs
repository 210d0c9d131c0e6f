//! The dataset card (`README.md`) written beside the session files of `-o DIR/`: what the
//! Hugging Face Hub shows on a dataset page, and what anyone given the folder reads first.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::{Carried, Format, Rendered, Session};

/// What the card says, gathered as sessions are written.
pub struct Card {
    target: &'static dyn Format,
    redaction: Option<String>,
    /// Per source agent: sessions, and what they carried.
    agents: BTreeMap<&'static str, (u64, Carried)>,
}

impl Card {
    /// An empty card for files of `target`.
    pub fn new(target: &'static dyn Format, redaction: Option<String>) -> Self {
        Card { target, redaction, agents: BTreeMap::new() }
    }

    /// Counts one session written.
    pub fn add(&mut self, session: &Session, rendered: &Rendered) {
        let (sessions, carried) = self.agents.entry(session.agent.as_str()).or_default();
        *sessions += 1;
        carried.add(&rendered.counts);
    }

    /// Writes the card: YAML front matter for the Hub, then a table per source agent.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let target = self.target.label();
        writeln!(out, "---")?;
        writeln!(out, "pretty_name: Coding-agent sessions as {target} session files")?;
        writeln!(out, "tags:")?;
        for tag in ["agent-traces", "coding-agent", "traces", "tool-use", self.target.name()] {
            writeln!(out, "- {tag}")?;
        }
        writeln!(out, "---")?;
        writeln!(out)?;
        writeln!(out, "# Coding-agent sessions\n")?;
        writeln!(
            out,
            "Sessions converted by agentlog {} into {target} session files (JSON Lines), in the folders \
             {target} keeps them in, so that the agent can resume them and trace viewers read them as they are.\n",
            env!("CARGO_PKG_VERSION")
        )?;
        writeln!(
            out,
            "| source agent | sessions | prompts | answers | tool calls | as text | reasoning | left out | images |"
        )?;
        writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")?;
        let mut total = (0, Carried::default());
        for (agent, (sessions, c)) in &self.agents {
            row(out, agent, *sessions, c)?;
            total.0 += sessions;
            total.1.add(c);
        }
        row(out, "**total**", total.0, &total.1)?;
        writeln!(out)?;
        writeln!(
            out,
            "\"as text\": tool calls of tools {target} does not have, written as text the model reads. \
             \"left out\": reasoning {target} cannot carry (another provider's, or without its signature).\n"
        )?;
        writeln!(out, "## Redaction\n")?;
        match &self.redaction {
            Some(how) => writeln!(out, "{how}\n")?,
            None => writeln!(
                out,
                "None. These files hold prompts, tool inputs and outputs, paths and whatever else the sessions \
                 held: review them before publishing, or convert again with `--redact`.\n"
            )?,
        }
        writeln!(out, "## Usage\n")?;
        writeln!(
            out,
            "Token usage is not carried over: each file records the source's responses without their token \
             counts, so that reading the source and the copy together counts every response once."
        )
    }
}

fn row(out: &mut dyn Write, agent: &str, sessions: u64, c: &Carried) -> io::Result<()> {
    writeln!(
        out,
        "| {agent} | {sessions} | {} | {} | {} | {} | {} | {} | {} |",
        c.prompts, c.answers, c.tool_calls, c.tool_calls_as_text, c.reasoning, c.reasoning_left_out, c.images
    )
}
