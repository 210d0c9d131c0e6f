//! Checking agentlog output against the published schemas.
//!
//! [`Validator`] validates unified JSONL line by line against `schema/event.schema.json`, in
//! bounded memory; each problem becomes an [`InputDiagnostic`] naming the line, the JSON
//! pointer of the offending value and the schema keyword that failed.

use std::io::{self, BufRead};

use serde_json::Value;

use crate::model::EVENT_SCHEMA;
use crate::read::{InputDiagnostic, Problem};

/// Problems reported per file before the rest are only counted.
pub const MAX_REPORTED: usize = 1000;

/// Validates unified events against the published event schema.
pub struct Validator {
    event: jsonschema::Validator,
    /// One validator per event kind for its payload alone: a payload error fails the event
    /// schema's `oneOf` as a whole, and these name the actual field instead.
    payloads: Vec<(&'static str, jsonschema::Validator)>,
}

/// Event kinds and the schema definition of their payloads.
const PAYLOADS: [(&str, &str); 5] = [
    ("message", "Message"),
    ("reasoning", "Reasoning"),
    ("tool_call", "ToolCall"),
    ("tool_output", "ToolOutput"),
    ("meta", "Meta"),
];

impl Default for Validator {
    fn default() -> Self {
        Self::new()
    }
}

/// What validating one file found.
#[derive(Debug, Default)]
pub struct Validation {
    /// Non-empty lines checked.
    pub lines: u64,
    /// Lines with at least one problem.
    pub invalid_lines: u64,
    /// The problems, at most [`MAX_REPORTED`].
    pub problems: Vec<InputDiagnostic>,
}

impl Validator {
    /// A validator for the event schema built into this binary.
    pub fn new() -> Self {
        let schema: Value = serde_json::from_str(EVENT_SCHEMA).expect("the built-in schema is JSON");
        let build = |schema: &Value| {
            jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(schema)
                .expect("the built-in schema is a valid 2020-12 schema")
        };
        let payloads = PAYLOADS
            .iter()
            .map(|(kind, def)| {
                let sub = serde_json::json!({
                    "$schema": schema["$schema"],
                    "$defs": schema["$defs"],
                    "$ref": format!("#/$defs/{def}"),
                });
                (*kind, build(&sub))
            })
            .collect();
        Validator { event: build(&schema), payloads }
    }

    /// Validates every line of a unified JSONL input named `name`.
    ///
    /// # Errors
    /// Only when reading the input fails.
    pub fn check_jsonl(&self, name: &str, mut input: impl BufRead) -> io::Result<Validation> {
        let mut result = Validation::default();
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
            result.lines += 1;
            let problems = self.check_line(text);
            if problems.is_empty() {
                continue;
            }
            result.invalid_lines += 1;
            for problem in problems {
                if result.problems.len() < MAX_REPORTED {
                    result.problems.push(InputDiagnostic::new(name, number, text, problem));
                }
            }
        }
        Ok(result)
    }

    /// The problems of one line: not JSON, or each schema violation.
    fn check_line(&self, text: &str) -> Vec<Problem> {
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => {
                let mut p = Problem::from_json(&e);
                p.code = "agentlog::validate::invalid_json";
                p.help = Some("every line of unified output is one JSON object");
                p.is_error = true;
                return vec![p];
            }
        };
        let mut problems = Vec::new();
        for e in self.event.iter_errors(&value) {
            let keyword = e.schema_path().as_str().rsplit('/').next().unwrap_or_default().to_owned();
            if keyword == "oneOf" && e.instance_path().as_str().is_empty() {
                // The kind/payload pair: say which of the two is wrong.
                problems.extend(self.check_payload(&value));
                continue;
            }
            problems.push(schema_problem(e.instance_path().as_str(), &e.to_string(), &keyword));
        }
        problems
    }

    /// Why `kind` and `payload` match none of the event kinds.
    fn check_payload(&self, event: &Value) -> Vec<Problem> {
        let kind = event.get("kind").and_then(Value::as_str).unwrap_or_default();
        let Some((_, validator)) = self.payloads.iter().find(|(k, _)| *k == kind) else {
            let known = PAYLOADS.map(|(k, _)| k).join(", ");
            let found = event.get("kind").map_or_else(|| "nothing".to_owned(), Value::to_string);
            return vec![schema_problem("/kind", &format!("expected one of {known}, but found {found}"), "oneOf")];
        };
        let Some(payload) = event.get("payload") else {
            return vec![schema_problem("/", "\"payload\" is a required property", "required")];
        };
        validator
            .iter_errors(payload)
            .map(|e| {
                let keyword = e.schema_path().as_str().rsplit('/').next().unwrap_or_default().to_owned();
                schema_problem(&format!("/payload{}", e.instance_path().as_str()), &e.to_string(), &keyword)
            })
            .collect()
    }
}

fn schema_problem(pointer: &str, reason: &str, keyword: &str) -> Problem {
    let pointer = if pointer.is_empty() { "/" } else { pointer };
    Problem {
        code: "agentlog::validate::schema",
        message: format!("{pointer}: {reason} (schema keyword `{keyword}`)"),
        column: 0,
        help: None,
        is_error: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Validation {
        Validator::new().check_jsonl("t.jsonl", text.as_bytes()).unwrap()
    }

    #[test]
    fn reports_a_line_that_is_not_json() {
        let v = check("{\"a\":\n");
        assert_eq!((v.lines, v.invalid_lines), (1, 1));
        assert_eq!(v.problems[0].problem.code, "agentlog::validate::invalid_json");
        assert_eq!(v.problems[0].line, 1);
    }

    #[test]
    fn names_the_field_inside_a_payload() {
        let v = check(r#"{"kind":"message","payload":{"role":"robot","text":"","parts":[],"phase":null}}"#);
        assert!(v.problems.iter().any(|p| p.problem.message.starts_with("/payload/role: ")), "{:#?}", v.problems);
        let v = check(r#"{"kind":"telepathy","payload":{}}"#);
        assert!(v.problems.iter().any(|p| p.problem.message
            == "/kind: expected one of message, reasoning, tool_call, tool_output, meta, but found \"telepathy\" (schema keyword `oneOf`)"));
    }

    #[test]
    fn reports_a_missing_field_with_its_keyword() {
        let v = check("{}\n");
        assert_eq!(v.invalid_lines, 1);
        assert!(v.problems.iter().any(|p| p.problem.message.contains("\"id\" is a required property")
            && p.problem.message.contains("keyword `required`")));
    }
}
