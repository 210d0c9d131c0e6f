//! `agentlog tools`: calls, failures and durations per tool, as a table, JSON or CSV.

use crate::read::{self, Settings};
use crate::stats::tools::{ToolFigures, ToolsKey, ToolsQuery, ToolsTable};
use crate::stats::usage::RowKey;
use serde::Serialize;

use super::args::ToolsArgs;
use super::exit::Exit;
use super::report::Reporter;
use super::table::{Table, count};

/// Runs `agentlog tools`.
pub fn run(args: &ToolsArgs, reporter: &Reporter) -> Exit {
    let Some((filter, zone)) = super::filter::resolve(&args.filter).inspect_err(|e| reporter.error(e)).ok() else {
        return Exit::Usage;
    };
    let by = args.by.iter().map(|name| ToolsKey::from_name(name).expect("clap only accepts known keys"));
    let asked: Vec<ToolsKey> = if args.by.is_empty() { vec![ToolsKey::Tool] } else { by.collect() };
    // Rows by tool also show its family, which the agent that named the tool decides: summed as
    // a key of its own, so that a name two agents give different families has a row for each.
    let mut by = asked.clone();
    if !by.contains(&ToolsKey::Family)
        && let Some(i) = by.iter().position(|k| *k == ToolsKey::Tool)
    {
        by.insert(i + 1, ToolsKey::Family);
    }
    let query = ToolsQuery { by, zone, filter };
    // Error messages are content: redaction that cannot run stops the run before any is shown.
    let redaction = match args.redact.resolve_or_report(reporter) {
        Ok(redaction) => redaction,
        Err(exit) => return exit,
    };
    let settings = Settings::new(super::sum::threads(args.jobs), read::DEFAULT_MAX_LINE_BYTES).unwrap_or_default();
    let settings = match &redaction {
        Some(redaction) => settings.with_redactor(redaction.redactor.clone()),
        None => settings,
    };
    let summed = super::sum::sum(&args.inputs, &args.from, &settings, reporter, |table: &mut ToolsTable, event| {
        table.add(&query, event);
    });
    let (table, totals) = match summed {
        Ok(summed) => summed,
        Err(exit) => return exit,
    };
    if let Some(redaction) = redaction
        && let Err(e) = redaction.write_report()
    {
        reporter.error(&e);
        return Exit::Output;
    }
    let rows: Vec<Row> =
        table.rows().map(|(key, sums)| Row { keys: keys(&query, key), figures: sums.figures() }).collect();
    let all = table.totals().figures();
    let text = if args.json {
        let document = serde_json::json!({
            "by": asked.iter().map(|k| k.name()).collect::<Vec<_>>(),
            "rows": rows,
            "totals": all,
        });
        serde_json::to_string_pretty(&document).expect("a tools table serialises") + "\n"
    } else if args.csv {
        csv(&rows)
    } else {
        human(&rows, &all)
    };
    super::print(text.as_bytes(), reporter).max(Exit::of(&totals))
}

/// A row's keys as named columns.
fn keys(query: &ToolsQuery, key: &RowKey) -> Vec<(&'static str, Option<String>)> {
    query.by.iter().map(|k| k.name()).zip(key.iter().cloned()).collect()
}

/// One row as written out: its keys, then its figures.
struct Row {
    keys: Vec<(&'static str, Option<String>)>,
    figures: ToolFigures,
}

impl Serialize for Row {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let figures = serde_json::to_value(&self.figures).map_err(serde::ser::Error::custom)?;
        let serde_json::Value::Object(figures) = figures else { unreachable!("figures are an object") };
        let mut map = serializer.serialize_map(Some(self.keys.len() + figures.len()))?;
        for (name, value) in &self.keys {
            map.serialize_entry(name, value)?;
        }
        for (name, value) in &figures {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

fn rate(f: &ToolFigures) -> String {
    f.error_rate.map_or_else(|| "-".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

fn ms(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{} ms", count(v)))
}

/// The table for people, a totals row, then the commonest errors of each row that has some.
fn human(rows: &[Row], all: &ToolFigures) -> String {
    let names: Vec<&str> = rows.first().map(|r| r.keys.iter().map(|(n, _)| *n).collect()).unwrap_or_default();
    let mut columns: Vec<(&str, bool)> = names.iter().map(|n| (*n, false)).collect();
    columns.extend([
        ("Calls", true),
        ("Outputs", true),
        ("Errors", true),
        ("Error rate", true),
        ("Median", true),
        ("p95", true),
    ]);
    let figures = |f: &ToolFigures| {
        vec![count(f.calls), count(f.outputs), count(f.errors), rate(f), ms(f.median_ms), ms(f.p95_ms)]
    };
    let mut table = Table::new(&columns);
    for row in rows {
        let mut cells: Vec<String> =
            row.keys.iter().map(|(_, v)| v.clone().unwrap_or_else(|| "(unknown)".into())).collect();
        cells.extend(figures(&row.figures));
        table.row(cells);
    }
    let mut last: Vec<String> = names.iter().map(|_| String::new()).collect();
    if let Some(first) = last.first_mut() {
        *first = "Total".into();
    }
    last.extend(figures(all));
    table.totals(last);
    let mut text = table.render();
    let failing: Vec<&Row> = rows.iter().filter(|r| !r.figures.top_errors.is_empty()).collect();
    if !failing.is_empty() {
        text += "\nCommonest errors:\n";
    }
    for row in failing {
        let name: Vec<String> = row.keys.iter().map(|(_, v)| v.clone().unwrap_or_else(|| "(unknown)".into())).collect();
        text += &format!("  {}\n", name.join(" / "));
        for e in row.figures.top_errors.iter().take(3) {
            text += &format!("    {:>6}  {}\n", count(e.count), e.message);
        }
    }
    text
}

fn csv(rows: &[Row]) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let names: Vec<&str> = rows.first().map(|r| r.keys.iter().map(|(n, _)| *n).collect()).unwrap_or_default();
    let mut header: Vec<&str> = names;
    header.extend([
        "calls",
        "outputs",
        "errors",
        "failures_known",
        "error_rate",
        "durations_known",
        "median_ms",
        "p95_ms",
        "top_error",
    ]);
    out.write_record(&header).expect("writing to memory cannot fail");
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    for row in rows {
        let f = &row.figures;
        let mut record: Vec<String> = row.keys.iter().map(|(_, v)| v.clone().unwrap_or_default()).collect();
        record.extend([
            f.calls.to_string(),
            f.outputs.to_string(),
            f.errors.to_string(),
            f.failures_known.to_string(),
            f.error_rate.map(|r| r.to_string()).unwrap_or_default(),
            f.durations_known.to_string(),
            opt(f.median_ms),
            opt(f.p95_ms),
            f.top_errors.first().map(|e| e.message.clone()).unwrap_or_default(),
        ]);
        out.write_record(&record).expect("writing to memory cannot fail");
    }
    String::from_utf8(out.into_inner().expect("writing to memory cannot fail")).expect("CSV of UTF-8 text")
}
