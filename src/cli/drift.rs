//! `agentlog drift`: what agentlog does not map yet, per agent and version, as a table or JSON.

use serde_json::json;

use crate::read::{self, Settings};
use crate::stats::drift::DriftTable;

use super::args::DriftArgs;
use super::exit::Exit;
use super::report::Reporter;
use super::table::{Table, count};

/// Runs `agentlog drift`.
pub fn run(args: &DriftArgs, reporter: &Reporter) -> Exit {
    let settings = Settings::new(super::sum::threads(args.jobs), read::DEFAULT_MAX_LINE_BYTES).unwrap_or_default();
    let summed = super::sum::sum(&args.inputs, &args.from, &settings, reporter, DriftTable::add);
    let (table, totals) = match summed {
        Ok(summed) => summed,
        Err(exit) => return exit,
    };
    let text = if args.json {
        let rows: Vec<serde_json::Value> = table
            .rows()
            .map(|(agent, kind, name, row)| {
                json!({
                    "agent": agent,
                    "kind": kind,
                    "name": name,
                    "count": row.count,
                    "first_seen": row.first_seen,
                    "first_version": row.first_version,
                    "last_version": row.last_version,
                })
            })
            .collect();
        serde_json::to_string_pretty(&json!({ "rows": rows })).expect("a drift table serialises") + "\n"
    } else {
        let mut out = Table::new(&[
            ("Agent", false),
            ("Kind", false),
            ("Name", false),
            ("Count", true),
            ("Versions", false),
            ("First seen", false),
        ]);
        for (agent, kind, name, row) in table.rows() {
            let versions = match (&row.first_version, &row.last_version) {
                (Some(first), Some(last)) if first != last => format!("{first} – {last}"),
                (Some(first), _) => first.clone(),
                _ => "-".to_owned(),
            };
            out.row(vec![
                agent.to_owned(),
                kind.name().to_owned(),
                name.to_owned(),
                count(row.count),
                versions,
                row.first_seen.clone(),
            ]);
        }
        out.render()
    };
    super::print(text.as_bytes(), reporter).max(Exit::of(&totals))
}
