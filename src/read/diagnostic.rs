//! [`InputDiagnostic`]: one input line that could not be mapped, rendered by miette with the
//! file, line, column and a short window of the line.

use std::fmt;

use miette::{Diagnostic, LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use crate::model;

/// Bytes of the offending line shown on each side of the error position.
const WINDOW: usize = 60;

/// What is wrong with a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Stable code, such as `agentlog::input::invalid_json`.
    pub code: &'static str,
    /// One-line description, lower case, no trailing period.
    pub message: String,
    /// 0-based byte column of the problem within the line.
    pub column: usize,
    /// What the user can do about it.
    pub help: Option<&'static str>,
    /// True when the problem fails the run (validation), false for a skipped input line.
    pub is_error: bool,
}

impl Problem {
    /// A line that is not valid JSON, from serde_json's error (whose column counts bytes).
    pub fn from_json(e: &serde_json::Error) -> Self {
        let text = e.to_string();
        // serde_json appends " at line L column C"; the diagnostic shows the position itself.
        let message = match text.rfind(" at line ") {
            Some(i) => text[..i].to_owned(),
            None => text,
        };
        let column = e.column().saturating_sub(1);
        match e.classify() {
            serde_json::error::Category::Data => Problem {
                code: "agentlog::input::unexpected_record",
                message: format!("unexpected record: {message}"),
                column,
                help: Some("the line is JSON but not in a shape this reader knows; it was skipped"),
                is_error: false,
            },
            _ => Problem {
                code: "agentlog::input::invalid_json",
                message: format!("invalid JSON: {message}"),
                column,
                help: Some("the line was skipped; the rest of the file was converted"),
                is_error: false,
            },
        }
    }

    /// A line that is not JSON at all.
    pub fn not_json(text: &str) -> Self {
        let start: String = text.trim_start().chars().take(24).collect();
        Problem {
            code: "agentlog::input::invalid_json",
            message: format!("expected a JSON object, but found `{start}`"),
            column: text.len() - text.trim_start().len(),
            help: Some("the line was skipped; the rest of the file was converted"),
            is_error: false,
        }
    }

    /// A line that is valid JSON but not an object.
    pub fn not_an_object(found: &str) -> Self {
        Problem {
            code: "agentlog::input::not_an_object",
            message: format!("expected a JSON object, but found {found}"),
            column: 0,
            help: Some("the line was skipped; the rest of the file was converted"),
            is_error: false,
        }
    }

    /// A line that is not UTF-8.
    pub fn invalid_utf8(valid_up_to: usize) -> Self {
        Problem {
            code: "agentlog::input::invalid_utf8",
            message: "expected UTF-8 text, but found an invalid byte sequence".into(),
            column: valid_up_to,
            help: Some("the line was skipped; the rest of the file was converted"),
            is_error: false,
        }
    }

    /// A value of a line that was changed so that the output is valid JSON data; the line was
    /// still mapped.
    pub fn repaired(path: &str, what: &str, column: usize) -> Self {
        Problem {
            code: "agentlog::input::repaired_value",
            message: format!("invalid JSON data at {path}: {what}"),
            column,
            help: Some("the record was kept; only this value was changed"),
            is_error: false,
        }
    }

    /// A field of a line that holds a value of the wrong kind; the line was still mapped, without
    /// that value.
    pub fn invalid_field(path: &str, expected: &str, found: &str, column: usize) -> Self {
        Problem {
            code: "agentlog::input::invalid_field",
            message: format!("expected {expected} at {path}, but found `{found}`"),
            column,
            help: Some("the record was kept without this value"),
            is_error: false,
        }
    }

    /// An input read with a reader the user chose (`--from`) whose first lines look like another
    /// reader's format.
    pub fn reader_mismatch(reader: &str, looks_like: &str) -> Self {
        Problem {
            code: "agentlog::input::reader_mismatch",
            message: format!("expected {reader} records (--from {reader}), but the file looks like {looks_like}"),
            column: 0,
            help: Some(
                "records the reader does not know are kept as meta events of type unknown; drop --from to tell each file's format from its content",
            ),
            is_error: false,
        }
    }

    /// The code of [`Problem::new_kind_in_place`].
    pub const NEW_KIND: &'static str = "agentlog::input::new_kind";

    /// A file in an agent's own places whose first lines match no format agentlog knows: read
    /// as that agent's all the same; the message names the kind in parentheses.
    pub fn new_kind_in_place(reader: &str, kind: &str) -> Self {
        Problem {
            code: Self::NEW_KIND,
            message: format!(
                "the first records are of a kind agentlog does not know ({kind}); read as {reader}'s, since the file lies in its places"
            ),
            column: 0,
            help: Some(
                "records agentlog does not know are kept whole as meta events of type unknown; `agentlog drift` lists them",
            ),
            is_error: false,
        }
    }

    /// A line longer than the longest line read; it was skipped without being held whole.
    pub fn line_too_long(length: u64, limit: usize) -> Self {
        Problem {
            code: "agentlog::input::line_too_long",
            message: format!("expected a line of at most {limit} bytes, but found one of {length} bytes"),
            column: 0,
            help: Some("the line was skipped; raise the limit with --max-line-bytes to read it"),
            is_error: false,
        }
    }

    /// The problem as met in the `data` of row `id` of a database's table `table`: the
    /// diagnostic's line is the row's rowid, so the message names the row.
    pub fn in_row(table: &str, id: &str, problem: Problem) -> Self {
        Problem { message: format!("{} (table `{table}`, row `{id}`)", problem.message), ..problem }
    }

    /// Marks the problem as found on a last line without a line ending: a cut-off write.
    pub fn at_end_of_input(self) -> Self {
        if self.code != "agentlog::input::invalid_json" {
            return self;
        }
        Problem {
            code: "agentlog::input::truncated_line",
            message: format!("last line is cut short: {}", self.message),
            help: Some("the file ends in the middle of a record; it may still be being written"),
            ..self
        }
    }
}

/// The JSON path (`message.usage.input_tokens`, `content[2].text`) of the value at byte `at` of
/// `text`, a line holding JSON; `$` for the top level.
pub(crate) fn json_path_at(text: &str, at: usize) -> String {
    enum Frame<'t> {
        Object { key: &'t str, expecting_key: bool },
        Array(usize),
    }
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut i = 0;
    while i < at.min(bytes.len()) {
        match bytes[i] {
            b'{' => stack.push(Frame::Object { key: "", expecting_key: true }),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { expecting_key, .. }) => *expecting_key = true,
                Some(Frame::Array(index)) => *index += 1,
                None => {}
            },
            b':' => {
                if let Some(Frame::Object { expecting_key, .. }) = stack.last_mut() {
                    *expecting_key = false;
                }
            }
            b'"' => {
                let start = i + 1;
                i = start;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, expecting_key: true }) = stack.last_mut() {
                    *key = text.get(start..i.min(bytes.len())).unwrap_or("");
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object { key, .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    if path.is_empty() { "$".to_owned() } else { path }
}

/// One input line that could not be mapped.
#[derive(Debug, Clone)]
pub struct InputDiagnostic {
    /// The input's name as given on the command line.
    pub file: String,
    /// 1-based line number.
    pub line: u64,
    /// What is wrong.
    pub problem: Problem,
    /// Whether the line was skipped; false when it was mapped with a value changed.
    pub skipped: bool,
    window: Window,
}

impl InputDiagnostic {
    /// A diagnostic for line `line` of `file`, whose text is `text`.
    pub fn new(file: &str, line: u64, text: &str, problem: Problem) -> Self {
        let window = Window::around(file, line, text, problem.column);
        InputDiagnostic { file: file.to_owned(), line, problem, skipped: true, window }
    }

    /// Replaces the shown part of the line and the message by what `redact` makes of them
    /// (`None`: unchanged); the problem's place is kept within the shown text.
    pub fn redact(&mut self, redact: impl Fn(&str) -> Option<String>) {
        if let Some(text) = redact(&self.window.text) {
            self.window.at = floor_char_boundary(&text, self.window.at.min(text.len()));
            self.window.text = text;
        }
        if let Some(message) = redact(&self.problem.message) {
            self.problem.message = message;
        }
    }

    /// Marks the line as mapped in spite of the problem.
    pub fn kept(self) -> Self {
        InputDiagnostic { skipped: false, ..self }
    }

    /// 1-based byte column of the problem.
    pub fn column(&self) -> u64 {
        self.problem.column as u64 + 1
    }

    /// The diagnostic as recorded in session summaries and reports.
    pub fn to_record(&self) -> model::Diagnostic {
        model::Diagnostic {
            code: self.problem.code.to_owned(),
            message: self.problem.message.clone(),
            file: self.file.clone(),
            line: Some(self.line),
            column: Some(self.column()),
        }
    }
}

impl fmt::Display for InputDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.problem.message)
    }
}

impl std::error::Error for InputDiagnostic {}

impl Diagnostic for InputDiagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.problem.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(if self.problem.is_error { miette::Severity::Error } else { miette::Severity::Warning })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.problem.help.map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.window)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let label = LabeledSpan::new_with_span(Some("here".into()), SourceSpan::new(self.window.at.into(), 0));
        Some(Box::new(std::iter::once(label)))
    }
}

/// A few dozen bytes of one line around a position, reported at the file's own line and column.
#[derive(Debug, Clone)]
struct Window {
    name: String,
    text: String,
    /// 0-based line of the window in the file.
    line0: usize,
    /// 0-based byte column in the line where the window starts.
    col0: usize,
    /// Position of the problem within `text`.
    at: usize,
}

impl Window {
    fn around(name: &str, line: u64, text: &str, column: usize) -> Self {
        let column = floor_char_boundary(text, column.min(text.len()));
        let start = floor_char_boundary(text, column.saturating_sub(WINDOW));
        let end = floor_char_boundary(text, (column + WINDOW).min(text.len()));
        // Control characters would garble the terminal; show them as replacement marks.
        let shown: String = text[start..end].chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect();
        let at = shown.char_indices().nth(text[start..column].chars().count()).map_or(shown.len(), |(i, _)| i);
        Window { name: name.to_owned(), text: shown, line0: line.saturating_sub(1) as usize, col0: start, at }
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self.text.read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            self.line0 + inner.line(),
            self.col0 + inner.column(),
            inner.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_error_column_is_a_byte_offset_into_the_line() {
        let line = r#"{"a":"é","b":}"#;
        let e = serde_json::from_str::<serde_json::Value>(line).unwrap_err();
        let p = Problem::from_json(&e);
        assert_eq!(p.code, "agentlog::input::invalid_json");
        assert_eq!(&line[p.column..], "}");
        assert_eq!(p.message, "invalid JSON: expected value");
    }

    #[test]
    fn window_stays_on_char_boundaries() {
        let text = "é".repeat(100);
        for column in 0..text.len() + 3 {
            let w = Window::around("f", 1, &text, column);
            assert!(w.text.is_char_boundary(w.at));
            assert!(w.at <= w.text.len());
        }
    }

    #[test]
    fn truncated_last_line_is_named_as_such() {
        let e = serde_json::from_str::<serde_json::Value>(r#"{"a":"b"#).unwrap_err();
        let p = Problem::from_json(&e).at_end_of_input();
        assert_eq!(p.code, "agentlog::input::truncated_line");
        assert_eq!(p.message, "last line is cut short: invalid JSON: EOF while parsing a string");
    }
}
