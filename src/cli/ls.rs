//! `agentlog ls`: one line per input file, for people on a terminal or for programs.

use std::io::{self, Write};

use crate::pipeline::{self, Item};

use super::report::human_size;
use serde::Serialize;

/// How the listing is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Tab-separated fields, sizes in bytes, no header: for `cut`, `awk` and `sort`.
    Tabs,
    /// A header and aligned columns, sizes for people: for a terminal.
    Table,
    /// One JSON object per line.
    Json,
}

/// One listed file.
#[derive(Debug, Serialize)]
struct Row {
    /// The agent, as the data names it (`claude-code`, `codex`).
    agent: String,
    /// The reader that reads the file (`--from`).
    format: &'static str,
    /// What the file holds: `session`, or a side file (`prompt-history`, `memory`, …).
    kind: &'static str,
    /// The session; `-` for files that hold many (prompt history, thread names).
    session: String,
    size: u64,
    version: Option<String>,
    path: String,
}

/// Writes the listing of `items`.
pub fn write<'a>(items: impl Iterator<Item = &'a Item>, style: Style, out: &mut impl Write) -> io::Result<()> {
    let rows = items.map(|item| {
        let peek = pipeline::peek(item);
        let kind = peek.kind;
        Row {
            agent: peek.agent.unwrap_or_else(|| "-".into()),
            format: item.reader.name(),
            kind: kind.as_str(),
            session: if kind.spans_sessions() { "-".into() } else { peek.session.unwrap_or_default() },
            size: item.size,
            version: peek.version,
            path: item.spec.name().to_owned(),
        }
    });
    match style {
        Style::Json => {
            for row in rows {
                serde_json::to_writer(&mut *out, &row)?;
                out.write_all(b"\n")?;
            }
        }
        Style::Tabs => {
            for r in rows {
                let version = r.version.as_deref().unwrap_or("-");
                writeln!(out, "{}\t{}\t{}\t{}\t{}\t{}", r.agent, r.session, r.size, version, r.path, r.kind)?;
            }
        }
        Style::Table => {
            // Aligned columns need every row first; a listing is one short line per file.
            let header = ["AGENT", "SESSION", "SIZE", "VERSION", "KIND", "PATH"].map(str::to_owned);
            let cells: Vec<[String; 6]> = std::iter::once(header)
                .chain(rows.map(|r| {
                    let version = r.version.unwrap_or_else(|| "-".into());
                    [r.agent, r.session, human_size(r.size), version, r.kind.to_owned(), r.path]
                }))
                .collect();
            let width = |i: usize| cells.iter().map(|c| c[i].chars().count()).max().unwrap_or(0);
            let widths = [width(0), width(1), width(2), width(3), width(4)];
            for [agent, session, size, version, kind, path] in &cells {
                let (a, s, z, v, k) = (widths[0], widths[1], widths[2], widths[3], widths[4]);
                writeln!(out, "{agent:<a$}  {session:<s$}  {size:>z$}  {version:<v$}  {kind:<k$}  {path}")?;
            }
        }
    }
    out.flush()
}
