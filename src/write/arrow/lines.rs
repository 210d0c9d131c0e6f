//! The Arrow schema of one line of unified JSONL, for loaders that cannot infer one: Polars
//! (`read_ndjson(schema=…)`) and Spark (`spark.read.schema(…).json(…)`).
//!
//! It is derived from the published JSON Schema, so the two cannot drift. Free-form JSON fields
//! (a tool's input and result, meta data, `extra`), whose type changes from line to line, are
//! strings: such loaders keep their JSON text. The payloads of all event kinds merge into one
//! struct, each field null where an event kind lacks it.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use serde_json::{Map, Value};

use crate::model::EVENT_SCHEMA;

/// The Arrow schema of one unified JSONL line.
pub fn line_schema() -> SchemaRef {
    let schema: Value = serde_json::from_str(EVENT_SCHEMA).expect("the published schema is JSON");
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    match (Node { defs: &defs }).data_type(&schema) {
        DataType::Struct(fields) => Arc::new(Schema::new(fields)),
        other => unreachable!("the event schema describes an object, not {other}"),
    }
}

/// Converts JSON Schema nodes, resolving `$ref`s into `defs`.
struct Node<'a> {
    defs: &'a Map<String, Value>,
}

impl Node<'_> {
    fn resolve<'v>(&'v self, node: &'v Value) -> &'v Value {
        match node.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
            Some(name) => self.resolve(&self.defs[name]),
            None => node,
        }
    }

    fn data_type(&self, node: &Value) -> DataType {
        let node = self.resolve(node);
        let mut types: Vec<DataType> = Vec::new();
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            let fields = properties.iter().map(|(name, p)| Field::new(name, self.data_type(p), true));
            types.push(DataType::Struct(fields.collect()));
        }
        for key in ["oneOf", "anyOf"] {
            // A `null` branch only makes the field nullable, as every field is.
            let branches = node.get(key).and_then(Value::as_array).into_iter().flatten();
            let typed = branches.filter(|b| b.get("type").is_none_or(|t| t != "null"));
            types.extend(typed.map(|b| self.data_type(b)));
        }
        if !types.is_empty() {
            return merge(types);
        }
        let named = match node.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
            _ => Vec::new(),
        };
        match named[..] {
            ["string"] => DataType::Utf8,
            ["integer"] => DataType::Int64,
            ["number"] => DataType::Float64,
            ["boolean"] => DataType::Boolean,
            ["array"] => {
                let items = node.get("items").map_or(DataType::Utf8, |i| self.data_type(i));
                DataType::List(Arc::new(Field::new("item", items, true)))
            }
            // Free-form JSON: any type, or an object of any keys.
            _ => DataType::Utf8,
        }
    }
}

/// One type for values of any of `types`: structs merge field by field (in order of first
/// appearance), equal types stay, anything else is JSON text.
fn merge(types: Vec<DataType>) -> DataType {
    let mut merged: Option<DataType> = None;
    for t in types {
        merged = Some(match (merged, t) {
            (None, t) => t,
            (Some(DataType::Struct(a)), DataType::Struct(b)) => {
                let mut fields: Vec<Field> = a.iter().map(|f| f.as_ref().clone()).collect();
                for f in b.iter() {
                    match fields.iter_mut().find(|x| x.name() == f.name()) {
                        Some(x) => {
                            let t = merge(vec![x.data_type().clone(), f.data_type().clone()]);
                            *x = Field::new(x.name(), t, true);
                        }
                        None => fields.push(f.as_ref().clone()),
                    }
                }
                DataType::Struct(Fields::from(fields))
            }
            (Some(a), b) if a == b => a,
            _ => DataType::Utf8,
        });
    }
    merged.unwrap_or(DataType::Utf8)
}

/// [`line_schema`] as an Arrow IPC file without batches, which `pl.read_ipc_schema` and
/// `pyarrow.ipc.open_file(…).schema` read.
///
/// # Errors
/// Only on a bug (a schema the IPC writer rejects).
pub fn line_schema_file() -> Result<Vec<u8>, arrow_schema::ArrowError> {
    let mut file = Vec::new();
    arrow_ipc::writer::FileWriter::try_new(&mut file, &line_schema())?.finish()?;
    Ok(file)
}

/// The schema as a Spark SQL DDL string (`name TYPE, …`), for `spark.read.schema(…)`.
pub fn spark_ddl(schema: &Schema) -> String {
    fn spark(t: &DataType) -> String {
        match t {
            DataType::Int64 => "BIGINT".into(),
            DataType::Float64 => "DOUBLE".into(),
            DataType::Boolean => "BOOLEAN".into(),
            DataType::List(item) => format!("ARRAY<{}>", spark(item.data_type())),
            DataType::Struct(fields) => {
                let fields: Vec<String> =
                    fields.iter().map(|f| format!("`{}`: {}", f.name(), spark(f.data_type()))).collect();
                format!("STRUCT<{}>", fields.join(", "))
            }
            _ => "STRING".into(),
        }
    }
    let fields: Vec<String> =
        schema.fields().iter().map(|f| format!("`{}` {}", f.name(), spark(f.data_type()))).collect();
    fields.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field<'a>(fields: &'a Fields, name: &str) -> &'a Field {
        fields.iter().find(|f| f.name() == name).unwrap_or_else(|| panic!("no field {name}"))
    }

    #[test]
    fn the_line_schema_has_every_top_level_property_and_one_payload_of_all_kinds() {
        let schema = line_schema();
        let published: Value = serde_json::from_str(EVENT_SCHEMA).unwrap();
        for name in published["properties"].as_object().unwrap().keys() {
            assert!(schema.field_with_name(name).is_ok(), "{name}");
        }
        assert_eq!(schema.field_with_name("kind").unwrap().data_type(), &DataType::Utf8);
        assert_eq!(schema.field_with_name("seq").unwrap().data_type(), &DataType::Int64);
        assert_eq!(schema.field_with_name("extra").unwrap().data_type(), &DataType::Utf8);
        let DataType::Struct(payload) = schema.field_with_name("payload").unwrap().data_type() else {
            panic!("payload is a struct")
        };
        // One field of each kind's payload, and free-form JSON as text.
        for name in ["role", "raw_text", "input_text", "exit_code", "meta_type"] {
            field(payload, name);
        }
        assert_eq!(field(payload, "input").data_type(), &DataType::Utf8);
        assert_eq!(field(payload, "data").data_type(), &DataType::Utf8);
        let DataType::Struct(usage) = field(payload, "usage").data_type() else { panic!("usage is a struct") };
        assert_eq!(field(usage, "output_tokens").data_type(), &DataType::Int64);
        let DataType::List(part) = field(payload, "parts").data_type() else { panic!("parts is a list") };
        let DataType::Struct(part) = part.data_type() else { panic!("a part is a struct") };
        for name in ["type", "text", "media_type", "data", "url"] {
            field(part, name);
        }
    }

    #[test]
    fn spark_ddl_quotes_names_and_nests_types() {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Utf8, true),
            Field::new(
                "usage",
                DataType::Struct(vec![Field::new("output_tokens", DataType::Int64, true)].into()),
                true,
            ),
            Field::new("parts", DataType::List(Arc::new(Field::new("item", DataType::Boolean, true))), true),
        ]);
        assert_eq!(spark_ddl(&schema), "`id` STRING, `usage` STRUCT<`output_tokens`: BIGINT>, `parts` ARRAY<BOOLEAN>");
    }
}
