//! Checking values against the published schemas built into this library: one event against
//! `schema/event.schema.json`, an interchange document's skeleton against
//! `schema/interchange.schema.json`.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::{ATIF_SCHEMA, EVENT_SCHEMA, INTERCHANGE_SCHEMA};

/// Event kinds and the schema definition of their payloads.
const PAYLOADS: [(&str, &str); 5] = [
    ("message", "Message"),
    ("reasoning", "Reasoning"),
    ("tool_call", "ToolCall"),
    ("tool_output", "ToolOutput"),
    ("meta", "Meta"),
];

/// The published schemas, compiled.
pub struct Schemas {
    event: jsonschema::Validator,
    /// One validator per event kind for its payload alone: a payload error fails the event
    /// schema's `oneOf` as a whole, and these name the actual field instead.
    payloads: Vec<(&'static str, jsonschema::Validator)>,
    document: jsonschema::Validator,
}

impl Default for Schemas {
    fn default() -> Self {
        Self::new()
    }
}

/// One place where a value breaks the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// JSON pointer of the offending value (`/payload/role`, `/sessions/0/events/3/seq`).
    pub pointer: String,
    /// The schema keyword that failed (`type`, `required`, `oneOf`, …).
    pub keyword: String,
    /// One-line reason.
    pub reason: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{pointer}: {} (schema keyword `{}`)", self.reason, self.keyword)
    }
}

impl Schemas {
    /// The schemas built into this library, compiled.
    pub fn new() -> Self {
        let event: Value = serde_json::from_str(EVENT_SCHEMA).expect("the built-in schema is JSON");
        let document: Value = serde_json::from_str(INTERCHANGE_SCHEMA).expect("the built-in schema is JSON");
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
                    "$schema": event["$schema"],
                    "$defs": event["$defs"],
                    "$ref": format!("#/$defs/{def}"),
                });
                (*kind, build(&sub))
            })
            .collect();
        Schemas { event: build(&event), payloads, document: build(&document) }
    }

    /// The ways one event breaks the event schema; empty when it is valid.
    pub fn event_violations(&self, event: &Value) -> Vec<Violation> {
        if self.event.is_valid(event) {
            return Vec::new();
        }
        let mut found = Vec::new();
        for e in self.event.iter_errors(event) {
            if keyword(&e) == "oneOf" && e.instance_path().as_str().is_empty() {
                // The kind/payload pair: say which of the two is wrong.
                found.extend(self.payload_violations(event));
                continue;
            }
            found.push(violation("", &e));
        }
        found
    }

    fn payload_violations(&self, event: &Value) -> Vec<Violation> {
        let kind = event.get("kind").and_then(Value::as_str).unwrap_or_default();
        let Some((_, validator)) = self.payloads.iter().find(|(k, _)| *k == kind) else {
            let known = PAYLOADS.map(|(k, _)| k).join(", ");
            let found = event.get("kind").map_or_else(|| "nothing".to_owned(), Value::to_string);
            return vec![Violation {
                pointer: "/kind".into(),
                keyword: "oneOf".into(),
                reason: format!("expected one of {known}, but found {found}"),
            }];
        };
        let Some(payload) = event.get("payload") else {
            return vec![Violation {
                pointer: String::new(),
                keyword: "required".into(),
                reason: "\"payload\" is a required property".into(),
            }];
        };
        validator.iter_errors(payload).map(|e| violation("/payload", &e)).collect()
    }

    /// The ways an interchange document, with its `events` arrays emptied, breaks the
    /// interchange schema.
    pub fn document_violations(&self, skeleton: &Value) -> Vec<Violation> {
        self.document.iter_errors(skeleton).map(|e| violation("", &e)).collect()
    }
}

/// agentlog's schema of ATIF documents (`schema/atif.schema.json`), compiled.
pub struct AtifSchema(jsonschema::Validator);

impl Default for AtifSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl AtifSchema {
    /// The built-in schema, compiled.
    pub fn new() -> Self {
        let schema: Value = serde_json::from_str(ATIF_SCHEMA).expect("the built-in schema is JSON");
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("the built-in schema is a valid 2020-12 schema");
        AtifSchema(validator)
    }

    /// The ways a document breaks the schema; empty when it is valid.
    pub fn violations(&self, document: &Value) -> Vec<Violation> {
        self.0.iter_errors(document).map(|e| violation("", &e)).collect()
    }
}

/// A schema error as a [`Violation`], its pointer under `prefix`.
fn violation(prefix: &str, e: &jsonschema::ValidationError<'_>) -> Violation {
    Violation { pointer: format!("{prefix}{}", e.instance_path().as_str()), keyword: keyword(e), reason: e.to_string() }
}

fn keyword(e: &jsonschema::ValidationError<'_>) -> String {
    e.schema_path().as_str().rsplit('/').next().unwrap_or_default().to_owned()
}
