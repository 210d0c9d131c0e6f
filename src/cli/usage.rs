//! `agentlog usage`: tokens and cost per day, model, session… as a table, JSON or CSV.

use std::sync::Arc;

use crate::cost::Prices;
use crate::model::UsageTotals;
use crate::read::{self, Settings};
use crate::stats::usage::{UsageKey, UsageQuery, UsageTable};
use serde::Serialize;

use super::args::UsageArgs;
use super::error::CliError;
use super::exit::Exit;
use super::report::Reporter;
use super::table::{Table, count, dollars};

/// Runs `agentlog usage`.
pub fn run(args: UsageArgs, reporter: &Reporter) -> Exit {
    let prices = match prices(args.prices.as_deref(), reporter) {
        Ok(prices) => prices,
        Err(exit) => return exit,
    };
    if args.prices_info {
        return super::print(prices_info(&prices).as_bytes(), reporter);
    }
    let Some((filter, zone)) = super::filter::resolve(&args.filter).inspect_err(|e| reporter.error(e)).ok() else {
        return Exit::Usage;
    };
    let by = args.by.iter().map(|name| UsageKey::from_name(name).expect("clap only accepts known keys"));
    let by = if args.by.is_empty() { vec![UsageKey::Day] } else { by.collect() };
    let query = UsageQuery { by, zone, filter };
    let settings = Settings::new(super::sum::threads(args.jobs), read::DEFAULT_MAX_LINE_BYTES)
        .unwrap_or_default()
        .with_prices(Arc::new(prices))
        .only_usage();
    let summed = super::sum::sum(&args.inputs, &args.from, &settings, reporter, |table: &mut UsageTable, event| {
        table.add(&query, event);
    });
    let (table, totals) = match summed {
        Ok(summed) => summed,
        Err(exit) => return exit,
    };
    let unpriced: Vec<String> = settings.prices().unpriced().into_keys().collect();
    for model in &unpriced {
        reporter.info(&format!(
            "agentlog: no price for model `{model}`: its responses have no cost (add one with --prices FILE)"
        ));
    }
    let text = if args.json {
        json(&query, &table, &unpriced, settings.prices())
    } else if args.csv {
        csv(&query, &table)
    } else {
        human(&query, &table)
    };
    super::print(text.as_bytes(), reporter).max(Exit::of(&totals))
}

/// The embedded prices, with those of `file` added or replacing them.
///
/// # Errors
/// The exit status when the file cannot be read, after reporting why.
pub(super) fn prices(file: Option<&std::path::Path>, reporter: &Reporter) -> Result<Prices, Exit> {
    match file {
        Some(path) => Prices::with_file(path).map_err(|e| {
            reporter.error(&CliError::from(e));
            Exit::Input
        }),
        None => Ok(Prices::embedded()),
    }
}

/// The token columns of a row: name in JSON and CSV, header in the table, and value.
fn counts(t: &UsageTotals) -> [(&'static str, &'static str, u64); 8] {
    [
        ("input_tokens", "Input", t.input_tokens),
        ("cache_read_tokens", "Cache read", t.cache_read_tokens),
        ("cache_write_tokens", "Cache write", t.cache_write_tokens),
        ("cache_write_1h_tokens", "of it 1h", t.cache_write_1h_tokens),
        ("output_tokens", "Output", t.output_tokens),
        ("reasoning_tokens", "Reasoning", t.reasoning_tokens),
        ("total_tokens", "Total", t.total_tokens),
        ("responses", "Responses", t.responses),
    ]
}

/// The table for people, with a totals row; a cost that leaves out responses without a price
/// is marked `*`.
fn human(query: &UsageQuery, table: &UsageTable) -> String {
    let totals = table.totals();
    let mut columns: Vec<(&str, bool)> = query.by.iter().map(|k| (k.name(), false)).collect();
    columns.extend(
        counts(&totals).iter().filter(|(name, ..)| *name != "cache_write_1h_tokens").map(|(_, h, _)| (*h, true)),
    );
    columns.push(("Cost (USD)", true));
    let mut out = Table::new(&columns);
    let cells = |t: &UsageTotals| {
        let mut cells: Vec<String> =
            counts(t).iter().filter(|(name, ..)| *name != "cache_write_1h_tokens").map(|(.., n)| count(*n)).collect();
        let marked = if t.unpriced_responses > 0 { "*" } else { "" };
        cells.push(format!("{}{marked}", dollars(t.cost_usd)));
        cells
    };
    for (key, t) in table.rows() {
        let mut row: Vec<String> = key.iter().map(|v| v.clone().unwrap_or_else(|| "(unknown)".into())).collect();
        row.extend(cells(t));
        out.row(row);
    }
    let mut last: Vec<String> = query.by.iter().map(|_| String::new()).collect();
    if let Some(first) = last.first_mut() {
        *first = "Total".into();
    }
    last.extend(cells(&totals));
    out.totals(last);
    let mut text = out.render();
    if totals.unpriced_responses > 0 {
        let n = totals.unpriced_responses;
        text +=
            &format!("* leaves out {} response{} of models without a price\n", count(n), if n == 1 { "" } else { "s" });
    }
    text
}

/// One row of the JSON output: its keys, then its totals.
#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    keys: serde_json::Map<String, serde_json::Value>,
    #[serde(flatten)]
    totals: &'a UsageTotals,
}

fn json(query: &UsageQuery, table: &UsageTable, unpriced: &[String], prices: &Prices) -> String {
    let rows: Vec<Row> = table
        .rows()
        .map(|(key, totals)| Row {
            keys: query.by.iter().zip(key).map(|(k, v)| (k.name().to_owned(), v.clone().into())).collect(),
            totals,
        })
        .collect();
    let by: Vec<&str> = query.by.iter().map(|k| k.name()).collect();
    let document = serde_json::json!({
        "by": by,
        "rows": rows,
        "totals": table.totals(),
        "unpriced_models": unpriced,
        "prices": { "source": prices.source(), "files": prices.files() },
    });
    serde_json::to_string_pretty(&document).expect("a usage table serialises") + "\n"
}

fn csv(query: &UsageQuery, table: &UsageTable) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = query.by.iter().map(|k| k.name()).collect();
    header.extend(counts(&UsageTotals::default()).iter().map(|(name, ..)| *name));
    header.extend(["cost_usd", "unpriced_responses"]);
    let mut records = vec![header.iter().map(|h| (*h).to_owned()).collect::<Vec<String>>()];
    for (key, t) in table.rows() {
        let mut record: Vec<String> = key.iter().map(|v| v.clone().unwrap_or_default()).collect();
        record.extend(counts(t).iter().map(|(.., n)| n.to_string()));
        record.push(t.cost_usd.map(|c| c.to_string()).unwrap_or_default());
        record.push(t.unpriced_responses.to_string());
        records.push(record);
    }
    for record in records {
        out.write_record(&record).expect("writing to memory cannot fail");
    }
    String::from_utf8(out.into_inner().expect("writing to memory cannot fail")).expect("CSV of UTF-8 text")
}

/// `--prices-info`: where the prices come from, and the models they price.
fn prices_info(prices: &Prices) -> String {
    let mut text = String::new();
    if let Some(s) = prices.source() {
        text += &format!(
            "Embedded prices: {} {} ({}), file {}\n  sha256 {}\n",
            s.package, s.version, s.url, s.file, s.sha256
        );
    }
    for file in prices.files() {
        text += &format!("Added or replaced from {file}\n");
    }
    let models = prices.models();
    text += &format!("{} models priced:\n", models.len());
    for model in models {
        text += &format!("  {model}\n");
    }
    text
}
