//! The report's charts, drawn as inline SVG: columns per day stacked by series, and
//! horizontal bars. Colours come from the page's style sheet (classes `c0`…`c7`, `other`), so
//! that they follow its light or dark scheme; every shape has a `<title>` with its figure,
//! shown on hover without a script.

use std::fmt::Write as _;

use crate::write::html::safe::escaped;

/// Series shown with a colour of their own; the rest are summed as "other".
pub const COLOURS: usize = 8;

/// What a chart's values are.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// A count (tokens, calls): `1.2M`, `340k`, `87`.
    Count,
    /// US dollars: `$12.34`.
    Dollars,
}

impl Unit {
    /// A value as the chart labels it.
    pub fn format(self, value: f64) -> String {
        match self {
            Unit::Count => short_count(value),
            Unit::Dollars if value >= 1000.0 => format!("${}", short_count(value)),
            Unit::Dollars => format!("${value:.2}"),
        }
    }
}

/// A count in a few characters: `1.2G`, `3.4M`, `56k`, `789`.
pub fn short_count(value: f64) -> String {
    let (scaled, suffix) = match value.abs() {
        v if v >= 1e9 => (value / 1e9, "G"),
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e4 => (value / 1e3, "k"),
        _ => return format!("{value:.0}"),
    };
    if scaled.abs() >= 100.0 { format!("{scaled:.0}{suffix}") } else { format!("{scaled:.1}{suffix}") }
}

/// One series of a stacked chart: its name, its class (`c0`…, `other`) and a value per column.
pub struct Series {
    /// The name in the legend.
    pub name: String,
    /// The class that colours it.
    pub class: String,
    /// A value per column.
    pub values: Vec<f64>,
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 26.0;

/// The top of a value axis: the smallest of 1, 2, 2.5 or 5 times a power of ten at or above
/// `max`.
fn axis_top(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * power).find(|top| *top >= max).unwrap_or(10.0 * power)
}

/// Columns, one per label, each stacked from the series' values; `label` describes the chart
/// for screen readers.
pub fn stacked_columns(label: &str, columns: &[String], series: &[Series], unit: Unit) -> String {
    let totals: Vec<f64> = (0..columns.len()).map(|i| series.iter().map(|s| s.values[i]).sum()).collect();
    let top = axis_top(totals.iter().copied().fold(0.0, f64::max));
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let step = plot_w / columns.len().max(1) as f64;
    let bar = (step * 0.8).max(1.0);
    let y = |v: f64| TOP + plot_h - v / top * plot_h;
    let mut svg = format!(
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" preserveAspectRatio="xMinYMin meet">"#,
        escaped(label)
    );
    for i in 0..=4 {
        let v = top * f64::from(i) / 4.0;
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}"/><text class="axis" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y(v) + 4.0,
            unit.format(v),
            y = y(v),
        );
    }
    for (i, column) in columns.iter().enumerate() {
        let x = LEFT + step * i as f64 + (step - bar) / 2.0;
        let mut base = 0.0;
        for s in series {
            let v = s.values[i];
            if v <= 0.0 {
                continue;
            }
            let _ = write!(
                svg,
                r#"<rect class="{}" x="{x:.1}" y="{:.1}" width="{bar:.1}" height="{:.1}"><title>{} · {}: {}</title></rect>"#,
                s.class,
                y(base + v),
                (y(base) - y(base + v)).max(0.5),
                escaped(column),
                escaped(&s.name),
                unit.format(v)
            );
            base += v;
        }
    }
    // Labels under a few columns, evenly spread, the first and last among them.
    let shown = columns.len().min(8);
    for k in 0..shown {
        let i = if shown <= 1 { 0 } else { k * (columns.len() - 1) / (shown - 1) };
        let x = LEFT + step * (i as f64 + 0.5);
        // The first and last labels stay inside the chart.
        let anchor = match k {
            0 if shown > 1 => "start",
            _ if k + 1 == shown && shown > 1 => "end",
            _ => "middle",
        };
        let x = match anchor {
            "start" => x - step / 2.0,
            "end" => x + step / 2.0,
            _ => x,
        };
        let _ = write!(
            svg,
            r#"<text class="axis" x="{x:.1}" y="{}" text-anchor="{anchor}">{}</text>"#,
            HEIGHT - 8.0,
            escaped(columns[i].get(5..).unwrap_or(&columns[i]))
        );
    }
    svg.push_str("</svg>");
    svg
}

/// One horizontal bar: its label, its value, and the part of it drawn in the warning colour
/// (failures of calls), with the text written after it.
pub struct Bar {
    /// The label before the bar.
    pub label: String,
    /// The bar's length.
    pub value: f64,
    /// The part of it marked (drawn from its start).
    pub marked: f64,
    /// The text after the bar.
    pub note: String,
}

/// Horizontal bars, one per row, scaled to the longest; `label` describes the chart.
pub fn bars(label: &str, rows: &[Bar]) -> String {
    const ROW: f64 = 22.0;
    const LABEL: f64 = 230.0;
    const NOTE: f64 = 220.0;
    let height = ROW * rows.len() as f64 + 4.0;
    let max = rows.iter().map(|r| r.value).fold(0.0, f64::max).max(1e-9);
    let room = WIDTH - LABEL - NOTE;
    let mut svg = format!(
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{}" preserveAspectRatio="xMinYMin meet">"#,
        escaped(label)
    );
    for (i, row) in rows.iter().enumerate() {
        let top = ROW * i as f64 + 2.0;
        let w = (row.value / max * room).max(if row.value > 0.0 { 1.0 } else { 0.0 });
        let marked = (row.marked / max * room).min(w);
        let shown: String = if row.label.chars().count() > 34 {
            format!("…{}", row.label.chars().rev().take(33).collect::<Vec<_>>().into_iter().rev().collect::<String>())
        } else {
            row.label.clone()
        };
        let _ = write!(
            svg,
            r#"<text class="label" x="{}" y="{:.1}" text-anchor="end"><title>{}</title>{}</text><rect class="c0" x="{LABEL}" y="{top:.1}" width="{w:.1}" height="{}"><title>{}: {}</title></rect>"#,
            LABEL - 8.0,
            top + ROW * 0.68,
            escaped(&row.label),
            escaped(&shown),
            ROW - 6.0,
            escaped(&row.label),
            escaped(&row.note),
        );
        if marked > 0.0 {
            let _ = write!(
                svg,
                r#"<rect class="marked" x="{LABEL}" y="{top:.1}" width="{marked:.1}" height="{}"/>"#,
                ROW - 6.0
            );
        }
        let _ = write!(
            svg,
            r#"<text class="note" x="{:.1}" y="{:.1}">{}</text>"#,
            LABEL + w + 6.0,
            top + ROW * 0.68,
            escaped(&row.note)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_shortened_and_axes_rounded_up() {
        assert_eq!(short_count(1_234_567.0), "1.2M");
        assert_eq!(short_count(56_000.0), "56.0k");
        assert_eq!(short_count(789.0), "789");
        assert_eq!(axis_top(0.0), 1.0);
        assert_eq!(axis_top(7.3), 10.0);
        assert_eq!(axis_top(180.0), 200.0);
        assert_eq!(axis_top(2100.0), 2500.0);
    }

    #[test]
    fn a_stacked_column_is_as_tall_as_its_total() {
        let series = [
            Series { name: "a".into(), class: "c0".into(), values: vec![25.0, 0.0] },
            Series { name: "b<".into(), class: "c1".into(), values: vec![25.0, 100.0] },
        ];
        let svg = stacked_columns("t", &["2026-11-01".into(), "2026-11-02".into()], &series, Unit::Count);
        // An axis of 100 over 204 units of height: 25 is 51 units, 100 is 204.
        assert!(svg.contains(r#"height="51.0"><title>2026-11-01 · a: 25</title>"#), "{svg}");
        assert!(svg.contains(r#"height="204.0"><title>2026-11-02 · b&lt;: 100</title>"#), "{svg}");
        assert!(!svg.contains("2026-11-02 · a"), "a zero value draws nothing");
    }
}
