//! An event's JSON as a [`Value`] for checking against the event schema, with long strings cut
//! short: the schema limits no string's length, and only `schema_version`, written by agentlog
//! itself, has a pattern. A 100 MB text so costs its first bytes instead of a second copy.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Bytes kept of a string longer than this.
const KEPT: usize = 4096;

/// Parses `json` (one event as encoded) with every string longer than [`KEPT`] bytes cut to
/// its first characters.
///
/// # Errors
/// When `json` is not one JSON value.
pub fn parse(json: &[u8]) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let value = Shortened.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Deserialises a [`Value`], cutting long strings.
#[derive(Clone, Copy)]
struct Shortened;

impl<'de> DeserializeSeed<'de> for Shortened {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Shortened {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        let mut end = v.len().min(KEPT);
        while !v.is_char_boundary(end) {
            end -= 1;
        }
        Ok(Value::String(v[..end].to_owned()))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_are_cut_and_the_rest_kept() {
        let long = "é".repeat(KEPT);
        let json = serde_json::json!({ "a": [1, -2, 2.5, null, true, "x"], "b": { "text": long } });
        let value = parse(json.to_string().as_bytes()).unwrap();
        assert_eq!(value["a"], json["a"]);
        let text = value["b"]["text"].as_str().unwrap();
        assert_eq!(text.len(), KEPT);
        assert!(long.starts_with(text));
    }

    #[test]
    fn what_is_not_one_value_is_an_error() {
        assert!(parse(b"{\"a\":1} 2").is_err());
        assert!(parse(b"{\"a\":").is_err());
    }
}
