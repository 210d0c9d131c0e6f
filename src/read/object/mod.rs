//! [`Object`]: a JSON object's fields with their values left unparsed, read in one pass, so a
//! reader can take the fields it knows and keep the rest without reading the text again.
//! Nested objects a reader maps (a Codex payload, a Claude Code message and its content blocks)
//! can be read apart in the same pass ([`Object::parse_with`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::value::MapDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::{Problem, parse_object};
use crate::model::{Json, has_line_break};

/// Deserialises an optional string, borrowed from the input where it holds no escapes. Serde
/// borrows a `Cow<str>` only when it is not wrapped, so `Option<Cow<str>>` fields name this.
pub(crate) fn borrowed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    /// A string as serde borrows it.
    #[derive(Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);

    Ok(Option::<Borrowed<'de>>::deserialize(deserializer)?.map(|Borrowed(text)| text))
}

/// A field a struct read with [`Object::get`] takes with [`Object::raw`] instead: declared so
/// that a repeated key is still an error, but not read again.
pub(crate) type RawField = Option<serde::de::IgnoredAny>;

/// The fields of one JSON object, in source order, each value as its raw text.
#[derive(Debug, Clone)]
pub(crate) struct Object<'a> {
    /// The object's text.
    text: &'a str,
    fields: Vec<(Cow<'a, str>, &'a RawValue)>,
    /// Fields read apart ([`Object::parse_with`]), which `fields` does not hold.
    nested: Vec<(&'static str, Nested<'a>)>,
}

/// A JSON object's fields, as [`Object`] keeps them.
struct FieldList<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

/// A field [`Object::parse_with`] reads apart from its object in the same pass: an object, or
/// a list of objects (or a string in its place).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Apart {
    /// The field's key.
    pub key: &'static str,
    /// Whether the value is a list of objects or a string, rather than one object.
    pub list: bool,
    /// Fields of the value's objects read apart in turn.
    pub inner: &'static [Apart],
}

/// A field's value read apart ([`Apart`]).
#[derive(Debug, Clone)]
pub(crate) enum Nested<'a> {
    Object(Object<'a>),
    List(Vec<Object<'a>>),
    Text(Cow<'a, str>),
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
        Ok(Object { text, fields, nested: Vec::new() })
    }

    /// Reads one JSON object from a raw value (a nested object).
    ///
    /// # Errors
    /// When the value is not an object.
    pub fn from_raw(raw: &'a RawValue) -> Result<Self, serde_json::Error> {
        let FieldList(fields) = serde_json::from_str(raw.get())?;
        Ok(Object { text: raw.get(), fields, nested: Vec::new() })
    }

    /// Reads a line holding one JSON object, with the fields `apart` names read apart in the same
    /// pass ([`Object::nested`]), the top-level ones only where `nest` says so for the fields
    /// before them. Each byte of the line is read once, where [`Object::parse`] then
    /// [`Object::from_raw`] read a nested object's twice.
    ///
    /// A line the one pass does not take (a repeated key read apart, a value of another kind,
    /// invalid JSON) is read as [`Object::parse`] reads it, with nothing apart.
    ///
    /// # Errors
    /// As [`Object::parse`].
    pub fn parse_with(
        text: &'a str,
        apart: &'static [Apart],
        nest: impl Fn(&[(Cow<'a, str>, &'a RawValue)]) -> bool,
    ) -> Result<Self, Problem> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let start = text.len() - text.trim_start_matches(WHITESPACE).len();
        let read = ObjectSeed { text, start, apart, nest: &nest }.deserialize(&mut deserializer);
        match read.and_then(|read| deserializer.end().map(|()| read)) {
            Ok((object, _)) => Ok(Object { text, ..object }),
            Err(_) => Object::parse(text),
        }
    }

    /// The value of the field `key`, when it was read apart.
    pub fn nested(&self, key: &str) -> Option<&Nested<'a>> {
        self.nested.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Takes the value of the field `key` out, when it was read apart.
    pub fn take_nested(&mut self, key: &str) -> Option<Nested<'a>> {
        let at = self.nested.iter().position(|(k, _)| *k == key)?;
        Some(self.nested.swap_remove(at).1)
    }

    /// The object's text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The whole object as a [`Json`] value.
    pub fn to_json(&self) -> Json {
        // Compact text (as both agents write it) is rebuilt from the fields without reading it
        // again, and kept when it is the same text byte for byte.
        let text = self.text.trim_matches(WHITESPACE);
        if self.nested.is_empty() && !has_line_break(text) {
            let rebuilt = Json::from_value_of_raw(&AsMap(&self.fields));
            if rebuilt.get() == text {
                return rebuilt;
            }
        }
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

/// An object's fields written as a JSON object, in their order.
struct AsMap<'o, 'a>(&'o [(Cow<'a, str>, &'a RawValue)]);

impl Serialize for AsMap<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// Fields of the objects inside a value read apart: any before them.
fn always(_: &[(Cow<'_, str>, &RawValue)]) -> bool {
    true
}

/// Reads an object as [`FieldList`] does, with the fields `apart` names read apart; gives the
/// object and the offset just past it. `start` is the offset of its `{` in `text`.
struct ObjectSeed<'t, 'n, N: ?Sized> {
    text: &'t str,
    start: usize,
    apart: &'static [Apart],
    nest: &'n N,
}

impl<'de, N> DeserializeSeed<'de> for ObjectSeed<'de, '_, N>
where
    N: Fn(&[(Cow<'de, str>, &'de RawValue)]) -> bool + ?Sized,
{
    type Value = (Object<'de>, usize);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, N> Visitor<'de> for ObjectSeed<'de, '_, N>
where
    N: Fn(&[(Cow<'de, str>, &'de RawValue)]) -> bool + ?Sized,
{
    type Value = (Object<'de>, usize);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let text = self.text;
        let lost = || A::Error::custom("a value read apart is not where it was expected");
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(16));
        let mut nested: Vec<(&'static str, Nested<'de>)> = Vec::new();
        // Offset just past the `{` or the last value read.
        let mut last = self.start + 1;
        while let Some(Key(key)) = map.next_key()? {
            let shape = self.apart.iter().find(|a| a.key == key).filter(|_| (self.nest)(&fields));
            // An escaped key is not read apart: its value's place is not known.
            let (Some(shape), Cow::Borrowed(name)) = (shape, &key) else {
                let value: &RawValue = map.next_value()?;
                last = offset(text, value.get()).ok_or_else(lost)? + value.get().len();
                fields.push((key, value));
                continue;
            };
            if nested.iter().any(|(k, _)| *k == shape.key) {
                return Err(A::Error::custom("a key read apart is repeated"));
            }
            let start = value_start(text, name).ok_or_else(lost)?;
            let (value, end) = if shape.list {
                map.next_value_seed(ListSeed { text, start, apart: shape.inner })?
            } else {
                let seed = ObjectSeed { text, start, apart: shape.inner, nest: &always };
                let (object, end) = map.next_value_seed(seed)?;
                (Nested::Object(object), end)
            };
            last = end;
            nested.push((shape.key, value));
        }
        let end = after(text, last, '}').ok_or_else(lost)?;
        Ok((Object { text: &text[self.start..end], fields, nested }, end))
    }
}

/// Reads a list of objects (each as [`ObjectSeed`] reads it) or a string; gives it and the
/// offset just past it. `start` is the offset of its `[` or `"` in `text`.
struct ListSeed<'t> {
    text: &'t str,
    start: usize,
    apart: &'static [Apart],
}

impl<'de> DeserializeSeed<'de> for ListSeed<'de> {
    type Value = (Nested<'de>, usize);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'de> {
    type Value = (Nested<'de>, usize);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of JSON objects, or a string")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let text = self.text;
        let lost = || A::Error::custom("a value read apart is not where it was expected");
        let mut objects = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        // Offset just past the `[` or the last object read.
        let mut last = self.start + 1;
        loop {
            // An object after the first follows a comma; where there is none, the list ends.
            let start = match objects.is_empty() {
                true => Some(skip(text, last)),
                false => after(text, last, ',').map(|at| skip(text, at)),
            };
            let seed = ObjectSeed { text, start: start.unwrap_or(last), apart: self.apart, nest: &always };
            let Some((object, end)) = seq.next_element_seed(seed)? else { break };
            if start.is_none() {
                return Err(lost());
            }
            objects.push(object);
            last = end;
        }
        let end = after(text, last, ']').ok_or_else(lost)?;
        Ok((Nested::List(objects), end))
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, value: &'de str) -> Result<Self::Value, E> {
        let at = offset(self.text, value).ok_or_else(|| E::custom("a string read apart is not in the text"))?;
        // Past the closing quote.
        Ok((Nested::Text(Cow::Borrowed(value)), at + value.len() + 1))
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Self::Value, E> {
        let end = string_end(self.text, self.start).ok_or_else(|| E::custom("a string read apart has no end"))?;
        Ok((Nested::Text(Cow::Owned(value.to_owned())), end))
    }
}

/// The offset of `part`, a slice of `text`, in `text`.
fn offset(text: &str, part: &str) -> Option<usize> {
    (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize).filter(|at| *at + part.len() <= text.len())
}

/// The offset just past the whitespace at `at`.
fn skip(text: &str, at: usize) -> usize {
    at + text.get(at..).map_or(0, |rest| rest.len() - rest.trim_start_matches(WHITESPACE).len())
}

/// The offset just past `punctuation` when only whitespace comes before it from `at`.
fn after(text: &str, at: usize, punctuation: char) -> Option<usize> {
    let at = skip(text, at);
    text.get(at..)?.starts_with(punctuation).then_some(at + 1)
}

/// The offset of the value of the key `key`, a slice of `text`: past the key's closing quote,
/// the colon and the whitespace around it, the only things JSON allows there.
fn value_start(text: &str, key: &str) -> Option<usize> {
    let closing = offset(text, key)? + key.len();
    text.get(closing..)?.starts_with('"').then_some(())?;
    Some(skip(text, after(text, closing + 1, ':')?))
}

/// The offset just past the JSON string that starts at `start`: past its first quote that an
/// even number of backslashes precedes.
fn string_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = start + 1;
    loop {
        let quote = at + memchr::memchr(b'"', bytes.get(at..)?)?;
        let backslashes = bytes[..quote].iter().rev().take_while(|b| **b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(quote + 1);
        }
        at = quote + 1;
    }
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
mod tests;
