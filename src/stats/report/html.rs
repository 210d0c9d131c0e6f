//! The report as one self-contained HTML page: no script runs, nothing is fetched, charts are
//! inline SVG, and the style sheet follows the reader's light or dark scheme and fits a phone.
//! The figures drawn are also in a JSON data block (`#agentlog-report`), for scripts and
//! tests.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use chrono::NaiveDate;
use serde_json::json;

use super::svg::{self, Bar, COLOURS, Series, Unit};
use super::{ReportTable, SessionFigures};
use crate::model::UsageTotals;
use crate::write::html::safe::escaped;

/// How the page is made.
#[derive(Debug, Clone)]
pub struct Options {
    /// The zone days are counted in, as the page names it.
    pub zone: String,
    /// Sessions listed as the longest and as the costliest.
    pub top: usize,
    /// The folder, relative to the page, holding the listed sessions' HTML transcripts as
    /// `agentlog convert --to html -o DIR/` lays them out; no links without it.
    pub transcripts: Option<String>,
    /// What made the page (`agentlog 0.1.0`).
    pub generator: String,
}

/// The page.
pub fn render(table: &ReportTable, options: &Options) -> String {
    let totals = table.usage.totals();
    let tools = table.tools.totals().figures();
    let sessions = table.sessions();
    let prompts: u64 = sessions.iter().map(|s| s.prompts).sum();
    let days = days(table);
    let mut page = String::with_capacity(64 << 10);
    let span = match (days.first(), days.last()) {
        (Some(a), Some(b)) if a != b => format!("{a} to {b}"),
        (Some(a), _) => a.clone(),
        _ => "no model responses".to_owned(),
    };
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"{}\">\n<title>Coding-agent sessions: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>Coding-agent sessions</h1>\n<p class=\"muted\">{} (days in {})</p>\n",
        escaped(&options.generator),
        escaped(&span),
        escaped(&span),
        escaped(&options.zone),
    );
    let failed = match tools.error_rate {
        Some(rate) => format!("{} ({:.1} %)", tools.errors, rate * 100.0),
        None => tools.errors.to_string(),
    };
    let cards = [
        ("sessions", sessions.len().to_string()),
        ("prompts", prompts.to_string()),
        ("model responses", totals.responses.to_string()),
        ("tokens", svg::short_count(totals.total_tokens as f64)),
        ("cost", totals.cost_usd.map_or("-".to_owned(), |c| format!("${c:.2}"))),
        ("tool calls", tools.calls.to_string()),
        ("failed tool calls", failed),
    ];
    page.push_str("<section class=\"cards\">\n");
    for (name, value) in cards {
        let _ =
            writeln!(page, "<div class=\"card\"><div class=\"value\">{}</div><div>{name}</div></div>", escaped(&value));
    }
    page.push_str("</section>\n");
    if totals.unpriced_responses > 0 {
        let _ = writeln!(
            page,
            "<p class=\"muted\">{} responses of models without a known price have no cost.</p>",
            totals.unpriced_responses
        );
    }
    let tokens = |t: &UsageTotals| t.total_tokens as f64;
    let cost = |t: &UsageTotals| t.cost_usd.unwrap_or(0.0);
    for (title, key, value, unit) in [
        ("Tokens per day, by model", 1, &tokens as &dyn Fn(&UsageTotals) -> f64, Unit::Count),
        ("Cost per day, by model", 1, &cost, Unit::Dollars),
        ("Tokens per day, by agent", 2, &tokens, Unit::Count),
        ("Cost per day, by agent", 2, &cost, Unit::Dollars),
    ] {
        let series = stacked(table, &days, key, value);
        page.push_str(&chart_section(title, &days, &series, unit));
    }
    page.push_str(&projects_section(table));
    page.push_str(&tools_section(table));
    let (longest, costliest) = table.longest_and_costliest(options.top);
    page.push_str(&sessions_section("Longest sessions", &longest, options));
    page.push_str(&sessions_section("Costliest sessions", &costliest, options));
    let data = data(table, prompts);
    let _ = write!(
        page,
        "<footer class=\"muted\">Made by {}. Totals are those of <code>agentlog usage</code> and <code>agentlog tools</code> on the same inputs and filters.</footer>\n\
         </main>\n<script type=\"application/json\" id=\"agentlog-report\">{}</script>\n</body>\n</html>\n",
        escaped(&options.generator),
        data.replace("</", "<\\/")
    );
    page
}

/// Every day from the first to the last with usage, in order.
fn days(table: &ReportTable) -> Vec<String> {
    let seen: BTreeSet<&str> = table.usage.rows().filter_map(|(key, _)| key[0].as_deref()).collect();
    let parse = |d: &str| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok();
    let (Some(first), Some(last)) = (seen.first().and_then(|d| parse(d)), seen.last().and_then(|d| parse(d))) else {
        return seen.into_iter().map(str::to_owned).collect();
    };
    first.iter_days().take_while(|d| *d <= last).map(|d| d.format("%Y-%m-%d").to_string()).collect()
}

/// The series of a chart per day: by the row key at `key` (1 the model, 2 the agent), the
/// largest [`COLOURS`]` - 1` by their sum with a colour each, the rest as "other".
fn stacked(table: &ReportTable, days: &[String], key: usize, value: &dyn Fn(&UsageTotals) -> f64) -> Vec<Series> {
    let column: BTreeMap<&str, usize> = days.iter().enumerate().map(|(i, d)| (d.as_str(), i)).collect();
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (row, totals) in table.usage.rows() {
        let Some(&i) = row[0].as_deref().and_then(|d| column.get(d)) else { continue };
        let name = row[key].clone().unwrap_or_else(|| "(unknown)".to_owned());
        by.entry(name).or_insert_with(|| vec![0.0; days.len()])[i] += value(totals);
    }
    let mut named: Vec<(String, Vec<f64>)> = by.into_iter().filter(|(_, v)| v.iter().any(|x| *x > 0.0)).collect();
    named.sort_by(|a, b| b.1.iter().sum::<f64>().total_cmp(&a.1.iter().sum::<f64>()).then_with(|| a.0.cmp(&b.0)));
    let mut series: Vec<Series> = Vec::new();
    let mut other = vec![0.0; days.len()];
    let rest = named.len() > COLOURS;
    for (n, (name, values)) in named.into_iter().enumerate() {
        if rest && n >= COLOURS - 1 {
            other.iter_mut().zip(&values).for_each(|(o, v)| *o += v);
        } else {
            series.push(Series { name, class: format!("c{n}"), values });
        }
    }
    if rest {
        series.push(Series { name: "other".to_owned(), class: "other".to_owned(), values: other });
    }
    series
}

/// A stacked chart with its legend and its figures in a table.
fn chart_section(title: &str, days: &[String], series: &[Series], unit: Unit) -> String {
    let mut out = format!("<section>\n<h2>{}</h2>\n", escaped(title));
    if series.is_empty() {
        out.push_str("<p class=\"muted\">Nothing to show.</p>\n</section>\n");
        return out;
    }
    out.push_str(&svg::stacked_columns(title, days, series, unit));
    out.push_str("\n<ul class=\"legend\">");
    for s in series {
        let total: f64 = s.values.iter().sum();
        let _ = write!(
            out,
            "<li><span class=\"swatch {}\"></span>{} <span class=\"muted\">{}</span></li>",
            s.class,
            escaped(&s.name),
            unit.format(total)
        );
    }
    out.push_str("</ul>\n<details><summary>Figures</summary><div class=\"scroll\"><table>\n<tr><th>day</th>");
    for s in series {
        let _ = write!(out, "<th>{}</th>", escaped(&s.name));
    }
    out.push_str("</tr>\n");
    for (i, day) in days.iter().enumerate() {
        if series.iter().all(|s| s.values[i] <= 0.0) {
            continue;
        }
        let _ = write!(out, "<tr><td>{day}</td>");
        for s in series {
            let _ = write!(out, "<td class=\"num\">{}</td>", unit.format(s.values[i]));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div></details>\n</section>\n");
    out
}

/// Sessions and prompts per project, the largest 15, the rest as one row.
fn projects_section(table: &ReportTable) -> String {
    const SHOWN: usize = 15;
    let projects = table.projects();
    let mut rows: Vec<Bar> = Vec::new();
    let (mut sessions, mut prompts, mut others) = (0, 0, 0);
    for (n, (project, s, p)) in projects.iter().enumerate() {
        if n < SHOWN {
            let note = format!("{} · {}", plural(*s, "session"), plural(*p, "prompt"));
            let label = project.unwrap_or("(no working directory)").to_owned();
            rows.push(Bar { label, value: *s as f64, marked: 0.0, note });
        } else {
            (sessions, prompts, others) = (sessions + s, prompts + p, others + 1);
        }
    }
    if others > 0 {
        let note = format!("{} · {}", plural(sessions, "session"), plural(prompts, "prompt"));
        rows.push(Bar { label: format!("{others} other projects"), value: sessions as f64, marked: 0.0, note });
    }
    let mut out = "<section>\n<h2>Sessions and prompts per project</h2>\n".to_owned();
    if rows.is_empty() {
        out.push_str("<p class=\"muted\">Nothing to show.</p>\n");
    } else {
        out.push_str(&svg::bars("Sessions per project", &rows));
    }
    out.push_str("\n</section>\n");
    out
}

/// Tool calls per family, with the failed share marked.
fn tools_section(table: &ReportTable) -> String {
    let mut rows: Vec<(String, super::super::tools::ToolFigures)> = table
        .tools
        .rows()
        .map(|(key, sums)| (key[0].clone().unwrap_or_else(|| "(unknown)".to_owned()), sums.figures()))
        .collect();
    rows.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then_with(|| a.0.cmp(&b.0)));
    let bars: Vec<Bar> = rows
        .iter()
        .map(|(family, f)| {
            let rate = f.error_rate.map_or(String::new(), |r| format!(" ({:.1} %)", r * 100.0));
            Bar {
                label: family.clone(),
                value: f.calls.max(f.outputs) as f64,
                marked: f.errors as f64,
                note: format!("{} · {} failed{rate}", plural(f.calls, "call"), f.errors),
            }
        })
        .collect();
    let mut out = "<section>\n<h2>Tool calls per family</h2>\n".to_owned();
    if bars.is_empty() {
        out.push_str("<p class=\"muted\">Nothing to show.</p>\n");
    } else {
        out.push_str(&svg::bars("Tool calls per family, failures marked", &bars));
        out.push_str(
            "\n<p class=\"muted\"><span class=\"swatch marked\"></span>failed calls; the rate is of the outputs whose success is known.</p>\n",
        );
    }
    out.push_str("</section>\n");
    out
}

/// A table of sessions, each linked to its transcript when the transcripts are beside the page.
fn sessions_section(title: &str, sessions: &[&SessionFigures], options: &Options) -> String {
    let mut out = format!("<section>\n<h2>{}</h2>\n", escaped(title));
    if sessions.is_empty() {
        out.push_str("<p class=\"muted\">Nothing to show.</p>\n</section>\n");
        return out;
    }
    out.push_str(
        "<div class=\"scroll\"><table>\n<tr><th>session</th><th>agent</th><th>project</th><th>started</th><th>length</th><th>prompts</th><th>cost</th></tr>\n",
    );
    for s in sessions {
        let name: String = s.title.as_deref().unwrap_or("(no prompt)").chars().take(80).collect();
        let cell = match &options.transcripts {
            Some(dir) => {
                let file = crate::write::session_file_name(s.agent, &s.session_id, "html", &mut Default::default());
                let href = format!("{}/{}/{file}", encode(dir), s.agent.as_str());
                format!("<a href=\"{}\">{}</a>", escaped(&href), escaped(&name))
            }
            None => escaped(&name),
        };
        let length = s.duration().map_or("-".to_owned(), |d| {
            let minutes = d.num_minutes();
            if minutes >= 60 { format!("{}h {:02}m", minutes / 60, minutes % 60) } else { format!("{minutes}m") }
        });
        let _ = writeln!(
            out,
            "<tr><td>{cell}<div class=\"muted id\">{}</div></td><td>{}</td><td class=\"path\">{}</td><td>{}</td><td class=\"num\">{length}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escaped(&s.session_id),
            s.agent.as_str(),
            escaped(s.project.as_deref().unwrap_or("-")),
            s.first.map_or("-".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string()),
            s.prompts,
            s.usage.cost_usd.map_or("-".to_owned(), |c| format!("${c:.2}")),
        );
    }
    out.push_str("</table></div>\n</section>\n");
    out
}

/// `n` and a noun, made plural unless `n` is 1.
fn plural(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A folder name as a relative URL's first part.
fn encode(dir: &str) -> String {
    const KEPT: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'.').remove(b'-').remove(b'_').remove(b'~');
    percent_encoding::utf8_percent_encode(dir, KEPT).to_string()
}

/// The figures drawn, as JSON: usage rows and totals as `agentlog usage --by day,model,agent
/// --json` gives them, tool rows and totals as `agentlog tools --by family --json`.
fn data(table: &ReportTable, prompts: u64) -> String {
    let usage: Vec<serde_json::Value> = table
        .usage
        .rows()
        .map(|(key, totals)| json!({ "day": key[0], "model": key[1], "agent": key[2], "totals": totals }))
        .collect();
    let tools: Vec<serde_json::Value> =
        table.tools.rows().map(|(key, sums)| json!({ "family": key[0], "figures": sums.figures() })).collect();
    let document = json!({
        "sessions": table.sessions().len(),
        "prompts": prompts,
        "usage": { "rows": usage, "totals": table.usage.totals() },
        "tools": { "rows": tools, "totals": table.tools.totals().figures() },
    });
    serde_json::to_string(&document).expect("figures serialise")
}

/// The page's style: light or dark as the reader's system is, readable on a phone.
const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0;
  --card: #f6f8fa; --link: #0969da; --marked: #cf222e;
  --c0: #4e79a7; --c1: #f28e2b; --c2: #59a14f; --c3: #b07aa1; --c4: #76b7b2; --c5: #edc948;
  --c6: #ff9da7; --c7: #9c755f; --other: #bab0ac; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --card: #151b23;
    --link: #4493f8; --marked: #f85149;
    --c0: #6b9bd1; --c1: #f5a05a; --c2: #7cc46f; --c3: #c99bbd; --c4: #8fd0cb; --c5: #f0d36a;
    --c6: #ffb3bb; --c7: #c39a85; --other: #8b8580; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 -apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; }
a { color: var(--link); }
.muted { color: var(--muted); font-size: .9rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(8.5rem, 1fr)); gap: .6rem; margin: 1rem 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; font-size: .85rem; color: var(--muted); }
.card .value { font-size: 1.35rem; font-weight: 600; color: var(--fg); }
svg.chart { width: 100%; height: auto; display: block; }
svg text { fill: var(--muted); font-size: 12px; }
svg text.label { fill: var(--fg); }
svg line.grid { stroke: var(--line); stroke-width: 1; }
.c0 { fill: var(--c0); background: var(--c0); } .c1 { fill: var(--c1); background: var(--c1); }
.c2 { fill: var(--c2); background: var(--c2); } .c3 { fill: var(--c3); background: var(--c3); }
.c4 { fill: var(--c4); background: var(--c4); } .c5 { fill: var(--c5); background: var(--c5); }
.c6 { fill: var(--c6); background: var(--c6); } .c7 { fill: var(--c7); background: var(--c7); }
.other { fill: var(--other); background: var(--other); }
.marked { fill: var(--marked); background: var(--marked); }
ul.legend { list-style: none; padding: 0; margin: .4rem 0; display: flex; flex-wrap: wrap; gap: .2rem 1rem; font-size: .85rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .35rem; vertical-align: -1px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .85rem; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
td.path { overflow-wrap: anywhere; }
.id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .75rem; overflow-wrap: anywhere; }
details summary { cursor: pointer; color: var(--muted); font-size: .9rem; }
footer { margin: 2rem 0 1rem; }
@media (max-width: 40rem) { main { padding: .6rem; } svg text { font-size: 16px; } }
";
