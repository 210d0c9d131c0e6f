//! Rewriting the strings of a raw JSON value: every string is decoded before it is looked at,
//! and the value is rebuilt only where a string changed, keeping key order, numbers and the
//! rest of the text as they were.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// What to do with the strings met in a walk.
pub trait Strings {
    /// Whether any string in the raw JSON text `raw` could change; values for which it is
    /// false are left unparsed.
    fn may_change(&self, raw: &str) -> bool;
    /// Whether the value under `key` of an object is left alone; `entries` are the object's.
    fn exempt(&self, key: &str, entries: &[(String, &RawValue)]) -> bool;
    /// A string value at JSON Pointer `path`: its new text, or `None` to keep it.
    fn value(&mut self, path: &str, text: &str) -> Option<String>;
    /// An object key at `path` (the object's pointer): its new text, or `None` to keep it.
    fn key(&mut self, path: &str, key: &str) -> Option<String>;
}

/// The text of `raw` with its strings rewritten by `strings`, or `None` when nothing changed.
/// `path` is the JSON Pointer of `raw`, and is left as it was given.
pub fn rewrite(raw: &RawValue, path: &mut String, strings: &mut dyn Strings) -> Option<String> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => {
            let decoded: String = serde_json::from_str(text).ok()?;
            let new = strings.value(path, &decoded)?;
            Some(serde_json::to_string(&new).expect("a string serialises"))
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            let len = path.len();
            let mut changed: Vec<Option<String>> = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                if !strings.may_change(item.get()) {
                    changed.push(None);
                    continue;
                }
                path.push('/');
                path.push_str(itoa::Buffer::new().format(i));
                changed.push(rewrite(item, path, strings));
                path.truncate(len);
            }
            if changed.iter().all(Option::is_none) {
                return None;
            }
            let mut out = String::with_capacity(text.len() + 32);
            out.push('[');
            for (i, (item, new)) in items.iter().zip(&changed).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(new.as_deref().unwrap_or(item.get()));
            }
            out.push(']');
            Some(out)
        }
        Some(b'{') => {
            let Entries(entries) = serde_json::from_str(text).ok()?;
            let len = path.len();
            let mut changed = false;
            let mut rebuilt: Vec<(Option<String>, Option<String>)> = Vec::with_capacity(entries.len());
            for (key, value) in &entries {
                let new_key = strings.key(path, key);
                path.push('/');
                push_pointer_token(path, key);
                let skip = strings.exempt(key, &entries) || !strings.may_change(value.get());
                let new_value = if skip { None } else { rewrite(value, path, strings) };
                path.truncate(len);
                changed |= new_key.is_some() || new_value.is_some();
                rebuilt.push((new_key, new_value));
            }
            if !changed {
                return None;
            }
            let mut out = String::with_capacity(text.len() + 32);
            out.push('{');
            for (i, ((key, value), (new_key, new_value))) in entries.iter().zip(&rebuilt).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(new_key.as_deref().unwrap_or(key)).expect("a string serialises"));
                out.push(':');
                out.push_str(new_value.as_deref().unwrap_or(value.get()));
            }
            out.push('}');
            Some(out)
        }
        _ => None,
    }
}

/// Appends `token` to a JSON Pointer, escaped as RFC 6901 says.
pub fn push_pointer_token(path: &mut String, token: &str) {
    if token.contains(['~', '/']) {
        path.push_str(&token.replace('~', "~0").replace('/', "~1"));
    } else {
        path.push_str(token);
    }
}

/// An object's entries in their order, values left raw.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Walk<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Walk<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(Walk(std::marker::PhantomData))
    }
}
