//! Printing diagnostics and errors on stderr.

use std::io::{IsTerminal, Write};

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

use crate::validate::{Finding, Validation};

use super::args::Color;

/// Input diagnostics printed per file; the rest are counted.
const MAX_PRINTED_PER_FILE: usize = 20;

/// Prints diagnostics on stderr, in colour only on a terminal without `NO_COLOR`, around the
/// progress bar when one is drawn.
pub struct Reporter {
    handler: GraphicalReportHandler,
    quiet: bool,
    progress: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    /// Errors kept for the caller instead of printed; `None` prints them.
    kept: Option<std::sync::Mutex<Vec<super::Problem>>>,
}

impl Reporter {
    /// A reporter; `quiet` keeps warnings and summaries off stderr.
    pub fn new(quiet: bool, color: Color) -> Self {
        let coloured = match color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal(),
        };
        let theme = if coloured { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
        Reporter { handler: GraphicalReportHandler::new_themed(theme), quiet, progress: Default::default(), kept: None }
    }

    /// A reporter that prints nothing and keeps the errors for [`Reporter::take`]; a run's
    /// diagnostics then reach the caller through its `--report`.
    pub fn keeping() -> Self {
        Reporter { kept: Some(Default::default()), ..Reporter::new(true, Color::Never) }
    }

    /// The errors kept so far.
    pub fn take(&self) -> Vec<super::Problem> {
        self.kept.as_ref().map(|kept| std::mem::take(&mut *kept.lock().expect("not poisoned"))).unwrap_or_default()
    }

    /// A progress bar for `total` input bytes, drawn only when stderr is a terminal and not quiet;
    /// lines printed meanwhile appear above it.
    pub fn progress_bar(&self, total: u64) -> indicatif::ProgressBar {
        let visible = !self.quiet && std::io::stderr().is_terminal();
        let bar = super::convert::progress_bar(total, visible);
        *self.progress.lock().expect("not poisoned") = visible.then(|| bar.clone());
        bar
    }

    /// Prints an error; errors are printed even when quiet.
    pub fn error(&self, diagnostic: &(dyn Diagnostic + 'static)) {
        match &self.kept {
            Some(kept) => kept.lock().expect("not poisoned").push(super::Problem::of(diagnostic)),
            None => self.render(diagnostic),
        }
    }

    /// Prints any diagnostics of one file, at most [`MAX_PRINTED_PER_FILE`] of them.
    pub fn diagnostics<D: Diagnostic>(&self, file: &str, diagnostics: &[D]) {
        if self.quiet {
            return;
        }
        for d in diagnostics.iter().take(MAX_PRINTED_PER_FILE) {
            self.render(d);
        }
        if diagnostics.len() > MAX_PRINTED_PER_FILE {
            self.line(&format!("… and {} more problems in {file}", diagnostics.len() - MAX_PRINTED_PER_FILE));
        }
    }

    /// Whether warnings and summaries are kept off stderr.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// Prints a line of information, unless quiet.
    pub fn info(&self, text: &str) {
        if !self.quiet {
            self.line(text);
        }
    }

    fn render(&self, diagnostic: &dyn Diagnostic) {
        let mut text = String::new();
        if self.handler.render_report(&mut text, diagnostic).is_err() {
            text = format!("{diagnostic}\n");
        }
        self.line(text.trim_end());
    }

    fn line(&self, text: &str) {
        // stderr may be closed too; there is nowhere left to report that.
        let print = || {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        };
        match self.progress.lock().expect("not poisoned").as_ref() {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

/// One file's part of `validate --format json`.
pub fn file_report(file: &str, v: &Validation) -> serde_json::Value {
    let problems: Vec<serde_json::Value> = v
        .findings
        .iter()
        .map(|f| match f {
            Finding::Line(d) => serde_json::json!({
                "code": d.problem.code, "line": d.line, "column": d.column(), "message": d.problem.message,
            }),
            Finding::Document { violation, .. } => serde_json::json!({
                "code": "agentlog::validate::schema", "pointer": violation.pointer,
                "keyword": violation.keyword, "message": violation.reason,
            }),
        })
        .collect();
    serde_json::json!({
        "file": file, "format": v.format, "valid": v.invalid == 0, "events": v.events,
        "invalid": v.invalid, "problems": problems,
    })
}

/// A size for people: `512 B`, `2.9 kB`, `14.0 MB`, `1.2 GB` (powers of 1000).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 999.95 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::human_size;

    #[test]
    fn sizes_for_people_round_to_one_decimal_in_powers_of_1000() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(999), "999 B");
        assert_eq!(human_size(1000), "1.0 kB");
        assert_eq!(human_size(2976), "3.0 kB");
        assert_eq!(human_size(999_949), "999.9 kB");
        assert_eq!(human_size(999_950), "1.0 MB");
        assert_eq!(human_size(14_000_000), "14.0 MB");
        assert_eq!(human_size(1_234_567_890), "1.2 GB");
    }
}
