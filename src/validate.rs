//! Checking agentlog output against the published schemas.
//!
//! [`Validator`] checks unified JSONL line by line against `schema/event.schema.json`, and
//! interchange documents as a stream: each event against the event schema as it is read, the
//! rest of the document against `schema/interchange.schema.json` once. Memory does not grow with
//! the size of the file. Every problem names the file, the line (JSONL) or the JSON pointer
//! (interchange), the schema keyword that failed and a one-line reason.

use std::fmt;
use std::io::{self, BufRead, Read};

use miette::Diagnostic;
use serde::Serialize;
use serde_json::Value;

pub use crate::model::Violation;

use crate::model::Schemas;
use crate::read::interchange::walk_document;
use crate::read::{InputDiagnostic, Problem};

/// Problems reported per file before the rest are only counted.
pub const MAX_REPORTED: usize = 1000;

/// Validates agentlog output against the schemas built into this binary.
#[derive(Default)]
pub struct Validator {
    schemas: Schemas,
}

/// A problem found in a file: on a line (JSONL, or a document that is not JSON) or at a JSON
/// pointer of a document.
#[derive(Debug)]
pub enum Finding {
    /// A line that is not JSON or breaks the schema.
    Line(InputDiagnostic),
    /// A value of an interchange document that breaks the schema.
    Document {
        /// The file as given.
        file: String,
        /// What breaks.
        violation: Violation,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Line(d) => d.fmt(f),
            Finding::Document { file, violation } => write!(f, "{file}: {violation}"),
        }
    }
}

impl std::error::Error for Finding {}

impl Diagnostic for Finding {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match self {
            Finding::Line(d) => d.code(),
            Finding::Document { .. } => Some(Box::new("agentlog::validate::schema")),
        }
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Error)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        match self {
            Finding::Line(d) => d.help(),
            Finding::Document { .. } => None,
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        match self {
            Finding::Line(d) => d.source_code(),
            Finding::Document { .. } => None,
        }
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        match self {
            Finding::Line(d) => d.labels(),
            Finding::Document { .. } => None,
        }
    }
}

/// Which of agentlog's formats a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Unified JSONL: one event per line.
    Unified,
    /// An interchange document.
    Interchange,
}

/// What validating one file found.
#[derive(Debug)]
pub struct Validation {
    /// The format the file was checked as.
    pub format: Format,
    /// Events checked.
    pub events: u64,
    /// Events (or JSONL lines) with at least one problem, plus one if the rest of a document is
    /// invalid.
    pub invalid: u64,
    /// The problems, at most [`MAX_REPORTED`].
    pub findings: Vec<Finding>,
}

impl Validation {
    fn new(format: Format) -> Self {
        Validation { format, events: 0, invalid: 0, findings: Vec::new() }
    }

    fn push(&mut self, finding: Finding) {
        if self.findings.len() < MAX_REPORTED {
            self.findings.push(finding);
        }
    }
}

impl Validator {
    /// A validator for the schemas built into this binary.
    pub fn new() -> Self {
        Validator { schemas: Schemas::new() }
    }

    /// The ways one event breaks the event schema; empty when it is valid.
    pub fn event_violations(&self, event: &Value) -> Vec<Violation> {
        self.schemas.event_violations(event)
    }

    /// The ways an interchange document, with its `events` arrays emptied, breaks the
    /// interchange schema.
    pub fn document_violations(&self, skeleton: &Value) -> Vec<Violation> {
        self.schemas.document_violations(skeleton)
    }

    /// Validates a file of either format, telling which from its first line.
    ///
    /// # Errors
    /// Only when reading the input fails.
    pub fn check(&self, name: &str, mut input: impl BufRead) -> io::Result<Validation> {
        let mut first = Vec::new();
        input.read_until(b'\n', &mut first)?;
        // An empty file is unified JSONL with no events, as `convert` writes for no input.
        let is_event = first.iter().all(u8::is_ascii_whitespace)
            || serde_json::from_slice::<Value>(&first).is_ok_and(|v| v.get("kind").is_some());
        let input = io::Cursor::new(first).chain(input);
        if is_event { self.check_jsonl(name, io::BufReader::new(input)) } else { self.check_interchange(name, input) }
    }

    /// Validates every line of a unified JSONL input named `name`.
    ///
    /// # Errors
    /// Only when reading the input fails.
    pub fn check_jsonl(&self, name: &str, mut input: impl BufRead) -> io::Result<Validation> {
        let mut result = Validation::new(Format::Unified);
        let mut buf = Vec::new();
        let mut number = 0;
        loop {
            buf.clear();
            if input.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            number += 1;
            let text = String::from_utf8_lossy(&buf);
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            result.events += 1;
            let problems = match serde_json::from_str::<Value>(text) {
                Err(e) => {
                    let mut p = Problem::from_json(&e);
                    p.code = "agentlog::validate::invalid_json";
                    p.help = Some("every line of unified output is one JSON object");
                    vec![p]
                }
                Ok(value) => self.event_violations(&value).into_iter().map(|v| schema_problem(&v)).collect(),
            };
            if !problems.is_empty() {
                result.invalid += 1;
            }
            for mut problem in problems {
                problem.is_error = true;
                result.push(Finding::Line(InputDiagnostic::new(name, number, text, problem)));
            }
        }
        Ok(result)
    }

    /// Validates an interchange document named `name`, streaming its events.
    ///
    /// # Errors
    /// Only when reading the input fails.
    pub fn check_interchange(&self, name: &str, input: impl Read) -> io::Result<Validation> {
        let mut result = Validation::new(Format::Interchange);
        let walked = walk_document(input, &mut |i, j, raw| {
            result.events += 1;
            let value: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            let violations = self.event_violations(&value);
            if !violations.is_empty() {
                result.invalid += 1;
            }
            for mut v in violations {
                v.pointer = format!("/sessions/{i}/events/{j}{}", v.pointer);
                result.push(Finding::Document { file: name.to_owned(), violation: v });
            }
            Ok(())
        });
        match walked {
            Err(e) if e.is_io() => return Err(e.into()),
            Err(e) => {
                // Not JSON, or cut short: name the line and column where reading stopped.
                result.invalid += 1;
                let mut p = Problem::from_json(&e);
                p.code = "agentlog::validate::invalid_json";
                p.help = Some("an interchange file is one JSON document");
                p.is_error = true;
                let line = e.line() as u64;
                result.push(Finding::Line(InputDiagnostic::new(name, line.max(1), "", p)));
            }
            Ok(skeleton) => {
                let violations = self.document_violations(&skeleton);
                if !violations.is_empty() {
                    result.invalid += 1;
                }
                for violation in violations {
                    result.push(Finding::Document { file: name.to_owned(), violation });
                }
            }
        }
        Ok(result)
    }
}

fn schema_problem(v: &Violation) -> Problem {
    Problem { code: "agentlog::validate::schema", message: v.to_string(), column: 0, help: None, is_error: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Validation {
        Validator::new().check("t", text.as_bytes()).unwrap()
    }

    fn messages(v: &Validation) -> Vec<String> {
        v.findings.iter().map(ToString::to_string).collect()
    }

    // Found by the mutation fuzzer: `convert` writes an empty file for inputs without events,
    // and `validate` took it for a broken interchange document.
    #[test]
    fn an_empty_file_is_valid_jsonl_without_events() {
        let v = Validator::new().check("empty.jsonl", &b""[..]).unwrap();
        assert_eq!((v.events, v.invalid), (0, 0));
    }

    #[test]
    fn reports_a_jsonl_line_that_is_not_json() {
        let v = Validator::new().check_jsonl("t.jsonl", "{\"a\":\n".as_bytes()).unwrap();
        assert_eq!((v.events, v.invalid), (1, 1));
        assert!(
            matches!(&v.findings[0], Finding::Line(d) if d.line == 1 && d.problem.code == "agentlog::validate::invalid_json")
        );
    }

    #[test]
    fn names_the_field_inside_a_payload_and_an_unknown_kind() {
        let v = check(
            "{\"kind\":\"message\",\"payload\":{\"role\":\"robot\",\"text\":\"\",\"parts\":[],\"phase\":null}}\n",
        );
        assert!(messages(&v).iter().any(|m| m.contains("/payload/role: ")), "{:#?}", messages(&v));
        let v = check("{\"kind\":\"telepathy\",\"payload\":{}}\n");
        assert!(messages(&v).iter().any(|m| m.contains(
            "/kind: expected one of message, reasoning, tool_call, tool_output, meta, but found \"telepathy\" (schema keyword `oneOf`)"
        )));
    }

    #[test]
    fn a_missing_field_names_its_keyword() {
        let v = check("{\"kind\":\"meta\"}\n");
        assert!(
            messages(&v)
                .iter()
                .any(|m| m.contains("\"id\" is a required property") && m.contains("keyword `required`"))
        );
    }

    #[test]
    fn a_truncated_document_names_where_reading_stopped() {
        let v = check("{\"schema_version\":\"1.0\",\n\"sessions\":[{\"events\":[");
        assert_eq!(v.format, Format::Interchange);
        assert!(matches!(&v.findings[..], [Finding::Line(d)] if d.line == 2 && d.problem.message.contains("EOF")));
    }
}
