//! Reading an interchange document as a stream, one event at a time.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Reads an interchange document as a stream: each event is handed to `on_event` (with its
/// session's index and its own index) as soon as it is parsed, and never kept; what remains —
/// the document with every `events` array emptied — is returned for checking once.
///
/// # Errors
/// When the input is not a JSON object, or `on_event` fails (its message becomes the error).
pub fn walk_document<R: std::io::Read>(
    input: R,
    on_event: &mut dyn FnMut(usize, usize, &serde_json::value::RawValue) -> Result<(), String>,
) -> serde_json::Result<serde_json::Value> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut on_event = on_event;
    let skeleton = serde::de::DeserializeSeed::deserialize(Document(&mut on_event), &mut de)?;
    de.end()?;
    Ok(skeleton)
}

type OnEvent<'f> = &'f mut dyn FnMut(usize, usize, &RawValue) -> Result<(), String>;

/// The document: `sessions` is walked, every other key kept.
pub struct Document<'f, 'g>(pub &'f mut OnEvent<'g>);

impl<'de> DeserializeSeed<'de> for Document<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document<'_, '_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an interchange document (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value =
                if key == "sessions" { map.next_value_seed(Sessions(&mut *self.0))? } else { map.next_value()? };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

struct Sessions<'f, 'g>(&'f mut OnEvent<'g>);

impl<'de> DeserializeSeed<'de> for Sessions<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Sessions<'_, '_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of sessions")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(entry) = seq.next_element_seed(Entry(&mut *self.0, out.len()))? {
            out.push(entry);
        }
        Ok(Value::Array(out))
    }
}

struct Entry<'f, 'g>(&'f mut OnEvent<'g>, usize);

impl<'de> DeserializeSeed<'de> for Entry<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Entry<'_, '_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session entry (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value =
                if key == "events" { map.next_value_seed(Events(&mut *self.0, self.1))? } else { map.next_value()? };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

struct Events<'f, 'g>(&'f mut OnEvent<'g>, usize);

impl<'de> DeserializeSeed<'de> for Events<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_, '_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut j = 0;
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            (self.0)(self.1, j, &raw).map_err(de::Error::custom)?;
            j += 1;
        }
        Ok(Value::Array(Vec::new()))
    }
}
