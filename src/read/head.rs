//! The start of a file as the readers' [`crate::read::Reader::sniff`] sees it: its first lines
//! as text, and as JSON records parsed as they are asked for.

use std::borrow::Cow;
use std::cell::OnceCell;

/// The start of a file, as [`crate::read::Reader::sniff`] sees it.
pub struct Head<'a> {
    /// The input's name as given (`-` for standard input).
    pub name: &'a str,
    /// The first few lines that parse as JSON values ([`Records`]).
    pub records: &'a Records<'a>,
    /// The first non-empty line as text (its first 64 KiB).
    pub first_line: &'a str,
    /// The first few lines as text, for formats that are one document rather than lines.
    pub text: &'a str,
}

/// The first few lines of a file that parse as JSON values, each parsed when first asked for
/// (most formats are told by the first), kept two levels deep (a record's fields and their
/// fields): a value below that, or a string over 1 KiB, is given as an empty value of its kind.
pub struct Records<'a> {
    lines: Vec<(Cow<'a, str>, OnceCell<Option<serde_json::Value>>)>,
}

impl<'a> Records<'a> {
    /// The records of `lines`, not parsed yet.
    pub fn new(lines: Vec<Cow<'a, str>>) -> Self {
        Records { lines: lines.into_iter().map(|line| (line, OnceCell::new())).collect() }
    }

    /// The records, in order, each parsed as it is reached.
    pub fn iter(&self) -> impl Iterator<Item = &serde_json::Value> {
        self.lines.iter().filter_map(|(line, record)| {
            record
                .get_or_init(|| {
                    let line = line.trim().trim_start_matches('\u{feff}');
                    if line.is_empty() { None } else { sniffed_record(line) }
                })
                .as_ref()
        })
    }

    /// The first record.
    pub fn first(&self) -> Option<&serde_json::Value> {
        self.iter().next()
    }
}

impl From<Vec<serde_json::Value>> for Records<'static> {
    /// Records already parsed.
    fn from(values: Vec<serde_json::Value>) -> Self {
        let parsed = |value| (Cow::Borrowed(""), OnceCell::from(Some(value)));
        Records { lines: values.into_iter().map(parsed).collect() }
    }
}

/// Strings longer than this are not copied when a file's format is told.
const STRING_BYTES: usize = 1 << 10;

/// A line as the readers' `sniff` sees it: the record with its fields and their fields, each
/// a scalar or a short string as it is, and an empty value of its kind below that or when a
/// string is long, so that the bulk of a record (a message's content, a tool's output) is
/// looked over but not copied; `None` when the line is not JSON. A line cut short (the start
/// of a first line longer than the bytes looked at) or holding a value that does not parse gives
/// the fields before it.
fn sniffed_record(line: &str) -> Option<serde_json::Value> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_str(line);
    if let Ok(record) = Shallow(2).deserialize(&mut de)
        && de.end().is_ok()
    {
        return Some(record);
    }
    let mut fields = serde_json::Map::new();
    let mut de = serde_json::Deserializer::from_str(line);
    // Reading stops at the first field that does not parse; the fields before it are kept.
    let _ = serde::Deserializer::deserialize_map(&mut de, Fields(&mut fields));
    (!fields.is_empty()).then_some(serde_json::Value::Object(fields))
}

/// Collects the top-level fields of an object into the map, as [`sniffed_record`] does.
struct Fields<'m>(&'m mut serde_json::Map<String, serde_json::Value>);

impl<'de> serde::de::Visitor<'de> for Fields<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Shallow(1))?;
            self.0.insert(key, value);
        }
        Ok(())
    }
}

/// A JSON value kept `levels` deep (see [`sniffed_record`]).
#[derive(Clone, Copy)]
struct Shallow(u8);

impl<'de> serde::de::DeserializeSeed<'de> for Shallow {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Shallow {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(serde_json::Value::String(if v.len() <= STRING_BYTES { v.to_owned() } else { String::new() }))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        match self.0.checked_sub(1) {
            Some(levels) => {
                while let Some(item) = seq.next_element_seed(Shallow(levels))? {
                    items.push(item);
                }
            }
            None => while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {},
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = serde_json::Map::new();
        match self.0.checked_sub(1) {
            Some(levels) => {
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value_seed(Shallow(levels))?;
                    fields.insert(key, value);
                }
            }
            None => while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {},
        }
        Ok(serde_json::Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sniffed_record_keeps_two_levels_and_short_strings() {
        let long = "x".repeat(STRING_BYTES + 1);
        let line = format!(
            r#"{{"type":"user","n":3,"message":{{"role":"model","parts":[{{"text":"hi"}}],"meta":{{"a":1}},"text":"{long}"}},"note":"{long}"}}"#
        );
        let record = sniffed_record(&line).unwrap();
        assert_eq!(record["type"], "user");
        assert_eq!(record["n"], 3);
        assert_eq!(record["message"]["role"], "model");
        assert_eq!(record["message"]["parts"], serde_json::json!([]));
        assert_eq!(record["message"]["meta"], serde_json::json!({}));
        assert_eq!(record["message"]["text"], "");
        assert_eq!(record["note"], "");
    }

    #[test]
    fn a_sniffed_line_cut_short_gives_the_fields_before_the_cut() {
        let record = sniffed_record(r#"{"type":"session","id":"a","payload":{"text":"unfini"#).unwrap();
        assert_eq!(record, serde_json::json!({"type": "session", "id": "a"}));
        assert_eq!(sniffed_record("[1,[2]]").unwrap(), serde_json::json!([1, [2]]));
        assert_eq!(sniffed_record("not json"), None);
    }
}
