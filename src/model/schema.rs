//! Keeps `schema/*.schema.json` equal to what the Rust types serialise.
//!
//! The schemas are generated from the types with schemars and compared with the checked-in
//! files; `UPDATE_SCHEMA=1 cargo test schema` rewrites them (review the diff like code).

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use super::*;

impl JsonSchema for Json {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Json".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "description": "Any JSON value, kept as the source wrote it." })
    }
}

fn generate<T: JsonSchema>(id: &str, title: &str, description: &str) -> String {
    let generator = SchemaSettings::draft2020_12().for_serialize().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    polish(&mut schema);
    let root = schema.as_object_mut().expect("a root schema is an object");
    root.insert("$id".into(), id.into());
    root.insert("title".into(), title.into());
    root.insert("description".into(), description.into());
    root.insert("x-agentlog-schema-version".into(), SCHEMA_VERSION.into());
    serde_json::to_string_pretty(&schema).expect("a schema serialises") + "\n"
}

/// Describes the tag properties serde derives from enums (`kind` and `payload` of [`Payload`],
/// `type` of [`Part`]), and joins doc-comment lines into one paragraph per description.
fn polish(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = text.split("\n\n").map(|p| p.replace('\n', " ")).collect::<Vec<_>>().join("\n\n");
            }
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for (name, text) in [
                    ("kind", "The event kind; it decides the type of `payload`."),
                    ("payload", "The typed payload of this event kind."),
                    ("type", "The part type; it decides the other properties."),
                ] {
                    if let Some(Value::Object(prop)) = props.get_mut(name) {
                        prop.entry("description").or_insert_with(|| text.into());
                    }
                }
            }
            map.values_mut().for_each(polish);
        }
        Value::Array(items) => items.iter_mut().for_each(polish),
        _ => {}
    }
}

fn event_schema() -> String {
    generate::<Event>(
        EVENT_SCHEMA_ID,
        "agentlog unified event",
        "One line of agentlog's unified JSONL output: one event of a coding-agent session.",
    )
}

fn interchange_schema() -> String {
    generate::<Document>(
        INTERCHANGE_SCHEMA_ID,
        "agentlog interchange document",
        "A document holding coding-agent sessions: a header, then each session's summary and events.",
    )
}

fn check(file: &str, fresh: &str, on_disk: &str) {
    let path = format!("{}/schema/{file}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, fresh).expect("schema/ is writable");
        return;
    }
    assert!(
        fresh == on_disk,
        "schema/{file} does not match the Rust types: run `UPDATE_SCHEMA=1 cargo test schema` and review the diff"
    );
}

#[test]
fn schema_files_match_the_rust_types() {
    check("event.schema.json", &event_schema(), EVENT_SCHEMA);
    check("interchange.schema.json", &interchange_schema(), INTERCHANGE_SCHEMA);
}

/// Collects the JSON pointers of properties that lack a description.
fn undescribed(value: &Value, pointer: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, prop) in props {
                    if prop.get("description").is_none() {
                        out.push(format!("{pointer}/properties/{name}"));
                    }
                }
            }
            for (key, child) in map {
                undescribed(child, &format!("{pointer}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                undescribed(child, &format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_property_has_a_description() {
    for text in [EVENT_SCHEMA, INTERCHANGE_SCHEMA] {
        let schema: Value = serde_json::from_str(text).unwrap();
        let mut missing = Vec::new();
        undescribed(&schema, "", &mut missing);
        assert!(missing.is_empty(), "properties without a description: {missing:#?}");
    }
}

#[test]
fn schema_files_are_valid_draft_2020_12() {
    for text in [EVENT_SCHEMA, INTERCHANGE_SCHEMA] {
        let schema: Value = serde_json::from_str(text).unwrap();
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
        jsonschema::meta::validate(&schema).expect("a valid 2020-12 schema");
    }
}
