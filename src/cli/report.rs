//! Printing diagnostics and errors on stderr.

use std::io::{IsTerminal, Write};

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

use agentlog::read::InputDiagnostic;

/// Input diagnostics printed per file; the rest are counted.
const MAX_PRINTED_PER_FILE: usize = 20;

/// Prints diagnostics on stderr, in colour only on a terminal without `NO_COLOR`.
pub struct Reporter {
    handler: GraphicalReportHandler,
    quiet: bool,
}

impl Reporter {
    /// A reporter; `quiet` keeps warnings and summaries off stderr.
    pub fn new(quiet: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let theme = if no_color || !std::io::stderr().is_terminal() {
            GraphicalTheme::unicode_nocolor()
        } else {
            GraphicalTheme::unicode()
        };
        Reporter { handler: GraphicalReportHandler::new_themed(theme), quiet }
    }

    /// Prints an error; errors are printed even when quiet.
    pub fn error(&self, diagnostic: &dyn Diagnostic) {
        self.render(diagnostic);
    }

    /// Prints the input diagnostics of one file, at most [`MAX_PRINTED_PER_FILE`] of them.
    pub fn input_diagnostics(&self, file: &str, diagnostics: &[InputDiagnostic]) {
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
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }
}
