//! [`Json`]: a JSON value carried through unchanged, as compact single-line text.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// A JSON value kept as its compact source text (tool inputs, structured results, raw records).
///
/// The text is copied from the source as-is when it is already on one line, so numbers, key
/// order and escapes survive byte for byte; a value spread over several lines is re-serialised
/// compactly, so it never breaks a JSONL line.
#[derive(Clone)]
pub struct Json(Box<RawValue>);

impl Json {
    /// Parses `text` as one JSON value and keeps it.
    ///
    /// # Errors
    /// When `text` is not exactly one valid JSON value.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let raw: &RawValue = serde_json::from_str(text)?;
        Ok(Self::from_raw(raw))
    }

    /// Keeps an already parsed raw value, compacting it when it spans several lines.
    pub fn from_raw(raw: &RawValue) -> Self {
        // A raw newline byte can only be insignificant whitespace: newlines inside JSON strings
        // are always escaped. Such text (pretty-printed sources) is re-serialised compactly.
        if has_line_break(raw.get()) {
            let value: serde_json::Value = serde_json::from_str(raw.get()).expect("a RawValue is valid JSON");
            return Self::from_value(&value);
        }
        // Parsed raw values hold no surrounding whitespace, and copying one does not re-parse it.
        Json(raw.to_owned())
    }

    /// Serialises any value into a [`Json`].
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Self {
        Json(serde_json::value::to_raw_value(value).expect("serialising to a string cannot fail"))
    }

    /// The compact JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Parses the text into a [`serde_json::Value`].
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.get()).expect("a Json holds valid JSON")
    }
}

/// Whether `text` holds a line break.
pub(crate) fn has_line_break(text: &str) -> bool {
    memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_some()
}

impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Json {}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        if has_line_break(raw.get()) {
            return Ok(Json::from_raw(&raw));
        }
        if raw.get().is_empty() {
            return Err(D::Error::custom("expected a JSON value"));
        }
        Ok(Json(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_source_text_is_kept_byte_for_byte() {
        let json = Json::parse(r#"{"b":1e5,"a":"\u00e9"}"#).unwrap();
        assert_eq!(json.get(), r#"{"b":1e5,"a":"\u00e9"}"#);
    }

    #[test]
    fn pretty_printed_source_is_compacted_to_one_line() {
        let json = Json::parse("{\n  \"a\": [1,\n 2]\n}").unwrap();
        assert_eq!(json.get(), r#"{"a":[1,2]}"#);
    }

    #[test]
    fn surrounding_whitespace_is_not_kept() {
        assert_eq!(Json::parse(" \t{\"a\": 1} \t").unwrap().get(), r#"{"a": 1}"#);
        assert_eq!(Json::parse(" [1,\n2] ").unwrap().get(), "[1,2]");
    }

    #[test]
    fn round_trips_through_serde() {
        let json = Json::parse(r#"[1,"x",null]"#).unwrap();
        let text = serde_json::to_string(&json).unwrap();
        let back: Json = serde_json::from_str(&text).unwrap();
        assert_eq!(back, json);
    }
}
