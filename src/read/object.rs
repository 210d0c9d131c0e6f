//! [`Object`]: a JSON object's fields with their values left unparsed, read in one pass, so a
//! reader can take the fields it knows and keep the rest without reading the text again.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::value::MapDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IntoDeserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{Problem, parse_object};
use crate::model::Json;

/// A field a struct read with [`Object::get`] takes with [`Object::raw`] instead: declared so
/// that a repeated key is still an error, but not read again.
pub(crate) type RawField = Option<serde::de::IgnoredAny>;

/// The fields of one JSON object, in source order, each value as its raw text.
#[derive(Debug)]
pub(crate) struct Object<'a> {
    /// The object's text.
    text: &'a str,
    fields: Vec<(Cow<'a, str>, &'a RawValue)>,
}

/// A JSON object's fields, as [`Object`] keeps them.
struct FieldList<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

/// A JSON object read with the value of one of its fields read as an object of its own, in the
/// same pass ([`Object::parse_split`]).
#[derive(Debug)]
pub(crate) struct Split<'a> {
    /// The object, without that field when it was read apart.
    pub outer: Object<'a>,
    /// The field's value, when it was read apart.
    pub inner: Option<Object<'a>>,
}

/// An object's key, borrowed from the text unless it holds escapes.
#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// JSON's insignificant whitespace.
const WHITESPACE: [char; 4] = [' ', '\t', '\n', '\r'];

impl<'a> Object<'a> {
    /// Reads a line holding one JSON object.
    ///
    /// # Errors
    /// As [`parse_object`]: invalid JSON, or another kind of JSON value.
    pub fn parse(text: &'a str) -> Result<Self, Problem> {
        let FieldList(fields) = parse_object(text)?;
        Ok(Object { text, fields })
    }

    /// Reads one JSON object from a raw value (a nested object).
    ///
    /// # Errors
    /// When the value is not an object.
    pub fn from_raw(raw: &'a RawValue) -> Result<Self, serde_json::Error> {
        let FieldList(fields) = serde_json::from_str(raw.get())?;
        Ok(Object { text: raw.get(), fields })
    }

    /// Reads a line holding one JSON object, and the value of its field `key` as an object of its
    /// own in the same pass when `nest` says so for the fields before it. Each byte of the line
    /// is read once, where [`Object::parse`] then [`Object::from_raw`] read the field's twice.
    ///
    /// The field stays in `outer` as a raw value when it is not an object, not nested, or
    /// repeated.
    ///
    /// # Errors
    /// As [`Object::parse`].
    pub fn parse_split(
        text: &'a str,
        key: &str,
        nest: impl Fn(&[(Cow<'a, str>, &'a RawValue)]) -> bool,
    ) -> Result<Split<'a>, Problem> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let read = SplitSeed { text, key, nest }.deserialize(&mut deserializer);
        match read.and_then(|read| deserializer.end().map(|()| read)) {
            Ok((fields, inner)) => Ok(Split { outer: Object { text, fields }, inner }),
            // Whatever the one pass does not take (a repeated or escaped key, a value of another
            // kind, invalid JSON) is read the plain way, which also gives the errors.
            Err(_) => Ok(Split { outer: Object::parse(text)?, inner: None }),
        }
    }

    /// The object's text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The whole object as a [`Json`] value.
    pub fn to_json(&self) -> Json {
        Json::parse(self.text).expect("an object's text is one valid JSON value")
    }

    /// Deserialises `T`, a struct, from the fields it names; other fields are not looked at.
    ///
    /// # Errors
    /// When a named field has the wrong shape; the error's position is within the object's text.
    pub fn get<T: Deserialize<'a>>(&self) -> Result<T, serde_json::Error> {
        // On an error, the text is read again for an error that points into it.
        T::deserialize(Fields(self)).or_else(|_| serde_json::from_str(self.text))
    }

    /// The raw value of the field `key`; `None` when it is absent or `null`.
    ///
    /// Structs read with [`Object::get`] declare such fields as [`RawField`].
    pub fn raw(&self, key: &str) -> Option<&'a RawValue> {
        self.fields.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v).filter(|v| v.get() != "null")
    }

    /// The fields whose keys are not in `carried`, sorted by key, with `nested` (a field and
    /// its object's reduction) put under its key when anything is left of it; `None` when
    /// nothing is left. Readers put this in `Event::extra` so that fields no event carries
    /// survive. A repeated key keeps its last value.
    pub fn leftovers(&self, carried: &[&str], nested: Option<(&str, Option<Json>)>) -> Option<Json> {
        let mut rest: BTreeMap<&str, Json> = BTreeMap::new();
        for (key, value) in &self.fields {
            if nested.as_ref().is_some_and(|(k, _)| k == key) {
                continue;
            }
            if !carried.contains(&key.as_ref()) {
                rest.insert(key, Json::from_raw(value));
            }
        }
        if let Some((key, Some(left))) = nested {
            rest.insert(key, left);
        }
        (!rest.is_empty()).then(|| Json::from_value(&rest))
    }
}

impl<'de> Deserialize<'de> for FieldList<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;

        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = FieldList<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldList<'de>, A::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(16));
                while let Some(Key(key)) = map.next_key()? {
                    fields.push((key, map.next_value()?));
                }
                Ok(FieldList(fields))
            }
        }

        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// Reads an object's fields as [`FieldList`] does, with one field's object value read apart.
struct SplitSeed<'t, 'k, F> {
    text: &'t str,
    key: &'k str,
    nest: F,
}

/// The fields of a [`Split`] read in one pass.
type SplitFields<'a> = (Vec<(Cow<'a, str>, &'a RawValue)>, Option<Object<'a>>);

impl<'de, F: Fn(&[(Cow<'de, str>, &'de RawValue)]) -> bool> DeserializeSeed<'de> for SplitSeed<'de, '_, F> {
    type Value = SplitFields<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: Fn(&[(Cow<'de, str>, &'de RawValue)]) -> bool> Visitor<'de> for SplitSeed<'de, '_, F> {
    type Value = SplitFields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(16));
        let (mut inner, mut seen) = (None, false);
        while let Some(Key(key)) = map.next_key()? {
            if key != self.key {
                fields.push((key, map.next_value()?));
                continue;
            }
            if seen {
                return Err(A::Error::custom("repeated key"));
            }
            seen = true;
            match key {
                Cow::Borrowed(name) if (self.nest)(&fields) => {
                    let FieldList(nested) = map.next_value()?;
                    let text = value_text(self.text, name, &nested).ok_or_else(|| A::Error::custom("no span"))?;
                    inner = Some(Object { text, fields: nested });
                }
                key => fields.push((key, map.next_value()?)),
            }
        }
        Ok((fields, inner))
    }
}

/// The text of the object value of the field named `key` (a slice of `text`) whose fields,
/// read, are `fields`: from the `{` after the key to the `}` after its last value, which JSON
/// allows nothing but whitespace and punctuation to separate. `None` when `key` or a value is
/// not a slice of `text`.
fn value_text<'a>(text: &'a str, key: &str, fields: &[(Cow<'a, str>, &'a RawValue)]) -> Option<&'a str> {
    let offset = |part: &str| (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize).filter(|o| *o <= text.len());
    let after_key = offset(key)? + key.len();
    let rest = text.get(after_key..)?.strip_prefix('"')?.trim_start_matches(WHITESPACE);
    let rest = rest.strip_prefix(':')?.trim_start_matches(WHITESPACE);
    let start = text.len() - rest.len();
    let last = match fields.last() {
        Some((_, value)) => offset(value.get())? + value.get().len(),
        None => start + 1,
    };
    let rest = text.get(last..)?.trim_start_matches(WHITESPACE).strip_prefix('}')?;
    text.get(start..text.len() - rest.len()).filter(|value| value.starts_with('{'))
}

/// Deserialises a struct from an [`Object`], handing it only the fields it declares.
struct Fields<'o, 'a>(&'o Object<'a>);

impl<'de> Deserializer<'de> for Fields<'_, 'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let fields = self.0.fields.iter().map(|(k, v)| (k.as_ref(), FieldValue(v)));
        visitor.visit_map(MapDeserializer::new(fields))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        names: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let fields = self.0.fields.iter().filter(|(k, _)| names.contains(&k.as_ref()));
        visitor.visit_map(MapDeserializer::new(fields.map(|(k, v)| (k.as_ref(), FieldValue(v)))))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// One field's value as [`Fields`] hands it on: parsed from its raw text, except that a value
/// the struct ignores is not read again (it was checked when the object was read).
struct FieldValue<'a>(&'a RawValue);

impl<'de> IntoDeserializer<'de, serde_json::Error> for FieldValue<'de> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// Forwards `deserialize_*` methods, with their arguments before the visitor, to the raw value.
macro_rules! forward_to_raw {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Self::Error> {
            self.0.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for FieldValue<'de> {
    type Error = serde_json::Error;

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        if self.0.get() == "null" { visitor.visit_none() } else { visitor.visit_some(self) }
    }

    forward_to_raw! {
        deserialize_any() deserialize_bool() deserialize_i8() deserialize_i16() deserialize_i32()
        deserialize_i64() deserialize_i128() deserialize_u8() deserialize_u16() deserialize_u32()
        deserialize_u64() deserialize_u128() deserialize_f32() deserialize_f64() deserialize_char()
        deserialize_str() deserialize_string() deserialize_bytes() deserialize_byte_buf()
        deserialize_unit() deserialize_seq() deserialize_map() deserialize_identifier()
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_struct(name: &'static str, fields: &'static [&'static str])
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Deserialize)]
    struct Known<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
        n: Option<u64>,
    }

    #[test]
    fn a_struct_takes_its_fields_and_the_rest_are_left_over() {
        let text = r#"{"type":"user","z":[1, 2],"n":3,"a":{"b":"c"}}"#;
        let object = Object::parse(text).unwrap();
        let known: Known<'_> = object.get().unwrap();
        assert_eq!((known.kind.as_ref(), known.n), ("user", Some(3)));
        assert!(matches!(known.kind, Cow::Borrowed(_)), "the string is borrowed from the line");
        let left = object.leftovers(&["type", "n"], None).unwrap();
        assert_eq!(left.get(), r#"{"a":{"b":"c"},"z":[1, 2]}"#);
    }

    #[test]
    fn a_nested_reduction_goes_under_its_key_and_empty_ones_vanish() {
        let object = Object::parse(r#"{"message":{"id":1},"k":true}"#).unwrap();
        let inner = Object::parse(r#"{"id":1}"#).unwrap();
        assert_eq!(inner.leftovers(&["id"], None), None);
        let left = object.leftovers(&[], Some(("message", inner.leftovers(&["id"], None))));
        assert_eq!(left.unwrap().get(), r#"{"k":true}"#);
        let left = object.leftovers(&[], Some(("message", inner.leftovers(&[], None))));
        assert_eq!(left.unwrap().get(), r#"{"k":true,"message":{"id":1}}"#);
    }

    #[derive(Deserialize)]
    struct WithRaw {
        #[serde(rename = "payload")]
        _payload: RawField,
    }

    #[test]
    fn a_raw_field_is_taken_as_it_is_and_a_repeated_one_is_still_an_error() {
        let object = Object::parse(r#"{"payload":{"a":[1,"x\"y"]},"none":null}"#).unwrap();
        assert!(object.get::<WithRaw>().is_ok());
        assert_eq!(object.raw("payload").unwrap().get(), r#"{"a":[1,"x\"y"]}"#);
        assert!(object.raw("none").is_none() && object.raw("absent").is_none());
        let repeated = Object::parse(r#"{"payload":1,"payload":2}"#).unwrap();
        assert!(repeated.get::<WithRaw>().is_err());
    }

    /// An object's fields as plain text, to compare.
    fn texts(object: &Object<'_>) -> Vec<(String, String)> {
        object.fields.iter().map(|(k, v)| (k.to_string(), v.get().to_owned())).collect()
    }

    /// Checks [`Object::parse_split`] against [`Object::parse`] then [`Object::from_raw`]; returns
    /// whether the field was read apart.
    fn splits_as_read_twice(text: &str, nest: bool) -> bool {
        let Ok(whole) = Object::parse(text) else {
            assert!(Object::parse_split(text, "payload", |_| nest).is_err(), "{text}");
            return false;
        };
        let Split { outer, inner } = Object::parse_split(text, "payload", |_| nest).unwrap();
        assert_eq!(outer.text, whole.text);
        let payloads: Vec<_> = whole.fields.iter().filter(|(k, _)| k == "payload").collect();
        let Some(inner) = inner else {
            assert_eq!(texts(&outer), texts(&whole), "{text}");
            // Read whole only when it has to be: a repeated or escaped key, or another value.
            let plain = text.contains(r#""payload""#);
            assert!(!nest || payloads.len() != 1 || !payloads[0].1.get().starts_with('{') || !plain, "{text}");
            return false;
        };
        let [(_, raw)] = payloads[..] else { panic!("read apart, but not once: {text}") };
        assert_eq!(inner.text, raw.get());
        assert_eq!(texts(&inner), texts(&Object::from_raw(raw).unwrap()));
        let rest: Vec<_> = texts(&whole).into_iter().filter(|(k, _)| k != "payload").collect();
        assert_eq!(texts(&outer), rest);
        true
    }

    #[test]
    fn a_field_read_apart_has_its_own_text_and_fields() {
        let text = "{\"type\":\"x\", \"payload\" :\t{ \"a\" : [1, {\"}\":\"}\"}] ,\"b\":{}} , \"z\": 2 } ";
        assert!(splits_as_read_twice(text, true));
        let Split { outer, inner } = Object::parse_split(text, "payload", |_| true).unwrap();
        assert_eq!(inner.unwrap().text, r#"{ "a" : [1, {"}":"}"}] ,"b":{}}"#);
        assert_eq!(outer.raw("z").unwrap().get(), "2");
        assert!(splits_as_read_twice(r#"{"payload":{ }}"#, true));
        assert!(splits_as_read_twice(r#"{"payload":{"n":-1.5e3}}"#, true));
    }

    #[test]
    fn a_field_is_left_whole_when_it_cannot_be_read_apart() {
        for text in [
            r#"{"payload":{"a":1},"payload":{"a":2}}"#,
            r#"{"payload":"text"}"#,
            r#"{"payload":null}"#,
            r#"{"p\u0061yload":{"a":1}}"#,
        ] {
            assert!(!splits_as_read_twice(text, true), "{text}");
        }
        assert!(!splits_as_read_twice(r#"{"payload":{"a":1}}"#, false));
        for text in [r#"{"payload":{"a":1}} x"#, r#"{"payload":{"a":1}"#, r#"{"payload":{"a":1,}}"#, "[1]"] {
            assert!(!splits_as_read_twice(text, true), "{text}");
        }
    }

    /// Any JSON value, with strings that need escaping.
    fn json() -> impl Strategy<Value = serde_json::Value> {
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[ -~\n\"\\\\é}{]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z\"{}]{0,3}", inner), 0..4)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn reading_a_field_apart_reads_what_reading_it_twice_reads(
            fields in prop::collection::vec((prop_oneof!["payload", "type", "[a-z]{1,3}"], json(), any::<bool>()), 0..5),
            spaced in any::<bool>(),
            nest in any::<bool>(),
        ) {
            // Compact or pretty values, with or without spaces around the punctuation.
            let gap = if spaced { " \t" } else { "" };
            let members: Vec<String> = fields
                .iter()
                .map(|(key, value, pretty)| {
                    let value = if *pretty { serde_json::to_string_pretty(value) } else { serde_json::to_string(value) };
                    format!("{gap}\"{key}\"{gap}:{gap}{}{gap}", value.unwrap())
                })
                .collect();
            let text = format!("{gap}{{{}}}{gap}", members.join(","));
            splits_as_read_twice(&text, nest);
        }
    }

    #[test]
    fn a_field_of_the_wrong_shape_is_an_error_that_points_into_the_text() {
        let object = Object::parse(r#"{"n":1, "type":5}"#).unwrap();
        let error = object.get::<Known<'_>>().err().unwrap();
        assert_eq!((error.line(), error.column()), (1, 16));
        assert!(Object::parse("[1]").is_err());
    }
}
