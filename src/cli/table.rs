//! Tables for people: columns padded to their widest cell, numbers right-aligned, a rule above
//! the totals.

/// A table being built.
pub struct Table {
    headers: Vec<String>,
    /// Whether each column is right-aligned.
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
    totals: Option<Vec<String>>,
}

impl Table {
    /// A table of these columns; `(header, right-aligned)`.
    pub fn new(columns: &[(&str, bool)]) -> Self {
        Table {
            headers: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            right: columns.iter().map(|(_, r)| *r).collect(),
            rows: Vec::new(),
            totals: None,
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Sets the totals row, printed last under a rule.
    pub fn totals(&mut self, cells: Vec<String>) {
        self.totals = Some(cells);
    }

    /// The table as text, one line per row.
    pub fn render(&self) -> String {
        let all = std::iter::once(&self.headers).chain(&self.rows).chain(self.totals.as_ref());
        let mut widths = vec![0; self.headers.len()];
        for row in all {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .zip(&self.right)
                .map(|((cell, w), right)| if *right { format!("{cell:>w$}") } else { format!("{cell:<w$}") })
                .collect();
            padded.join("  ").trim_end().to_owned() + "\n"
        };
        let mut out = line(&self.headers);
        for row in &self.rows {
            out += &line(row);
        }
        if let Some(totals) = &self.totals {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out += &line(&rule);
            out += &line(totals);
        }
        out
    }
}

/// A count with thousands separated: `1,234,567`.
pub use crate::write::transcript::thousands as count;

/// Dollars to the cent: `$1,234.57`; `-` for no cost.
pub fn dollars(cost: Option<f64>) -> String {
    match cost {
        Some(c) => {
            let cents = (c * 100.0).round() as u64;
            format!("${}.{:02}", count(cents / 100), cents % 100)
        }
        None => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_dollars_read_like_money() {
        assert_eq!(
            (count(0), count(999), count(1000), count(1_234_567)),
            ("0".into(), "999".into(), "1,000".into(), "1,234,567".into())
        );
        assert_eq!(
            (dollars(Some(1234.567)), dollars(Some(0.004)), dollars(None)),
            ("$1,234.57".into(), "$0.00".into(), "-".into())
        );
    }

    #[test]
    fn columns_line_up_with_totals_under_a_rule() {
        let mut t = Table::new(&[("day", false), ("tokens", true)]);
        t.row(vec!["2026-02-23".into(), "1,000".into()]);
        t.row(vec!["2026-02-24".into(), "5".into()]);
        t.totals(vec!["total".into(), "1,005".into()]);
        assert_eq!(
            t.render(),
            "day         tokens\n2026-02-23   1,000\n2026-02-24       5\n──────────  ──────\ntotal        1,005\n"
        );
    }
}
