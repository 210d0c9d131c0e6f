//! Parsing what the readers share: a line or file that must hold one JSON object, and the
//! agents' timestamps.

use super::{InputDiagnostic, Problem, ReadReport};

/// A record kept as a file of its own (OpenCode's JSON trees, OpenHands' event files), as a JSON
/// object, counted as line `line` of the input `name`; when it is not one, one diagnostic, naming
/// the file when it is not the input itself.
pub(crate) fn file_object(
    name: &str,
    line: u64,
    file: Option<&std::path::Path>,
    text: &[u8],
    report: &mut ReadReport,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = String::from_utf8_lossy(text);
    match parse_object::<serde_json::Map<String, serde_json::Value>>(&text) {
        Ok(object) => Some(object),
        Err(problem) => {
            let problem = match file {
                Some(file) => Problem { message: format!("{} (file {})", problem.message, file.display()), ..problem },
                None => problem,
            };
            report.lines_diagnosed += 1;
            let first = text.lines().next().unwrap_or_default();
            report.push(|| InputDiagnostic::new(name, line, first, problem));
            None
        }
    }
}

/// Parses a line that must hold one JSON object into the reader's record type.
///
/// # Errors
/// A [`Problem`] naming what the line holds instead: invalid JSON, another JSON value, or an
/// object of an unexpected shape.
pub(crate) fn parse_object<'a, T: serde::Deserialize<'a>>(text: &'a str) -> Result<T, Problem> {
    match serde_json::from_str(text) {
        Ok(record) => Ok(record),
        Err(e) if e.is_data() => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(value) if !value.is_object() => Err(Problem::not_an_object(describe(&value))),
            _ => Err(e.into()),
        },
        // Text that does not even start like JSON gets a plainer message than serde's
        // "expected ident" or "expected value".
        Err(e) if e.is_syntax() && !text.trim_start().starts_with(['{', '[', '"']) => Err(Problem::not_json(text)),
        Err(e) => Err(e.into()),
    }
}

/// Names a JSON value's type for messages ("an array", "a string", …).
fn describe(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Parses an RFC 3339 timestamp, as the agents write them.
pub(crate) fn parse_time(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(text).ok().map(|t| t.with_timezone(&chrono::Utc))
}
