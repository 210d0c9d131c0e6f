//! Tests of reading objects apart: fields, nested objects, repeated keys and errors.

use super::*;
use proptest::prelude::*;

#[derive(Deserialize)]
struct Known<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    n: Option<u64>,
}

#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed")]
    name: Option<Cow<'a, str>>,
}

#[test]
fn an_optional_string_is_borrowed_unless_it_holds_escapes() {
    let name = |text| Object::parse(text).unwrap().get::<Named<'_>>().unwrap().name;
    assert!(matches!(name(r#"{"name":"plain"}"#), Some(Cow::Borrowed("plain"))));
    assert!(matches!(name(r#"{"name":"a\"b"}"#), Some(Cow::Owned(s)) if s == "a\"b"));
    assert!(name(r#"{"name":null}"#).is_none() && name("{}").is_none());
    assert!(Object::parse(r#"{"name":1}"#).unwrap().get::<Named<'_>>().is_err());
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

/// A payload, a message holding a list, and tool results in it.
const SHAPE: &[Apart] = &[
    Apart { key: "payload", list: false, inner: &[] },
    Apart {
        key: "message",
        list: false,
        inner: &[Apart { key: "content", list: true, inner: &[Apart { key: "content", list: true, inner: &[] }] }],
    },
];

/// Checks an object read in one pass against the same object read the plain way, `slow`.
fn same_as_read_plainly(fast: &Object<'_>, slow: &Object<'_>, apart: &[Apart]) {
    assert_eq!(fast.text, slow.text);
    for (key, nested) in &fast.nested {
        let shape = apart.iter().find(|a| a.key == *key).expect("only named fields are read apart");
        let raws: Vec<_> = slow.fields.iter().filter(|(k, _)| k == key).collect();
        let [(_, raw)] = raws[..] else { panic!("{key} read apart, but not once: {}", slow.text) };
        match nested {
            Nested::Object(object) => same_as_read_plainly(object, &Object::from_raw(raw).unwrap(), shape.inner),
            Nested::List(objects) => {
                let raws: Vec<&RawValue> = serde_json::from_str(raw.get()).unwrap();
                assert_eq!(objects.len(), raws.len());
                for (object, raw) in objects.iter().zip(raws) {
                    same_as_read_plainly(object, &Object::from_raw(raw).unwrap(), shape.inner);
                }
            }
            Nested::Text(text) => assert_eq!(text.as_ref(), serde_json::from_str::<String>(raw.get()).unwrap()),
        }
    }
    let rest: Vec<_> = texts(slow).into_iter().filter(|(k, _)| !fast.nested.iter().any(|(n, _)| n == k)).collect();
    assert_eq!(texts(fast), rest, "{}", slow.text);
}

/// Reads `text` both ways and compares; returns the keys read apart at the top.
fn read_apart(text: &str, nest: bool) -> Vec<&'static str> {
    let Ok(slow) = Object::parse(text) else {
        assert!(Object::parse_with(text, SHAPE, |_| nest).is_err(), "{text}");
        return Vec::new();
    };
    let fast = Object::parse_with(text, SHAPE, |_| nest).unwrap();
    same_as_read_plainly(&fast, &slow, SHAPE);
    let whole = Json::parse(text).unwrap();
    assert_eq!((slow.to_json(), fast.to_json()), (whole.clone(), whole));
    fast.nested.iter().map(|(k, _)| *k).collect()
}

#[test]
fn a_field_read_apart_has_its_own_text_and_fields() {
    let text = "{\"type\":\"x\", \"payload\" :\t{ \"a\" : [1, {\"}\":\"}\"}] ,\"b\":{}} , \"z\": 2 } ";
    assert_eq!(read_apart(text, true), ["payload"]);
    let object = Object::parse_with(text, SHAPE, |_| true).unwrap();
    let Some(Nested::Object(payload)) = object.nested("payload") else { panic!() };
    assert_eq!(payload.text, r#"{ "a" : [1, {"}":"}"}] ,"b":{}}"#);
    assert_eq!(object.raw("z").unwrap().get(), "2");
    assert_eq!(read_apart(r#"{"payload":{ }}"#, true), ["payload"]);
    assert_eq!(read_apart(r#"{"payload":{"n":-1.5e3}}"#, true), ["payload"]);
}

#[test]
fn lists_and_strings_are_read_apart_down_the_shape() {
    let text = r#"{"message":{"role":"user","content":[ {"type":"text","text":"a\"b"} ,
        {"type":"tool_result","content":[{"type":"text","text":"c"}],"id":1},{"content":"d\\\"e\\"}]}}"#;
    assert_eq!(read_apart(text, true), ["message"]);
    let object = Object::parse_with(text, SHAPE, |_| true).unwrap();
    let Some(Nested::Object(message)) = object.nested("message") else { panic!() };
    let Some(Nested::List(blocks)) = message.nested("content") else { panic!() };
    assert_eq!(blocks[0].text, r#"{"type":"text","text":"a\"b"}"#);
    assert!(
        matches!(blocks[1].nested("content"), Some(Nested::List(inner)) if inner[0].text == r#"{"type":"text","text":"c"}"#)
    );
    assert!(matches!(blocks[2].nested("content"), Some(Nested::Text(t)) if t == "d\\\"e\\"));
    assert_eq!(read_apart(r#"{"message":{"content":"plain","id":1}}"#, true), ["message"]);
    assert_eq!(read_apart(r#"{"message":{"id":1,"content":"plain"} }"#, true), ["message"]);
    assert_eq!(read_apart(r#"{"message":{"id":1,"content":"\\"}}"#, true), ["message"]);
    assert_eq!(read_apart(r#"{"message":{"content":[ ]}}"#, true), ["message"]);
}

#[test]
fn a_field_is_left_whole_when_it_cannot_be_read_apart() {
    for text in [
        r#"{"payload":{"a":1},"payload":{"a":2}}"#,
        r#"{"payload":"text"}"#,
        r#"{"payload":null}"#,
        r#"{"message":{"content":[1]}}"#,
        r#"{"message":{"content":{"a":1}}}"#,
        r#"{"message":{"content":null}}"#,
    ] {
        assert!(read_apart(text, true).is_empty(), "{text}");
    }
    assert!(read_apart(r#"{"payload":{"a":1}}"#, false).is_empty());
    // An escaped key is another key: the field stays in place.
    assert!(read_apart(r#"{"p\u0061yload":{"a":1}}"#, true).is_empty());
    for text in [r#"{"payload":{"a":1}} x"#, r#"{"payload":{"a":1}"#, r#"{"payload":{"a":1,}}"#, "[1]"] {
        assert!(read_apart(text, true).is_empty(), "{text}");
    }
}

/// Any JSON value, with strings that need escaping.
fn json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[ -~\n\"\\\\é}{\\]\\[]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop_oneof!["content", "[a-z\"{}]{0,3}"], inner), 0..4)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

/// Whether `value` has the shape `shape` reads apart.
fn fits(value: &serde_json::Value, shape: &Apart) -> bool {
    use serde_json::Value;
    let inner = |fields: &serde_json::Map<String, Value>| {
        shape.inner.iter().all(|a| fields.get(a.key).is_none_or(|v| fits(v, a)))
    };
    match value {
        Value::Object(fields) => !shape.list && inner(fields),
        Value::Array(items) => shape.list && items.iter().all(|i| i.as_object().is_some_and(inner)),
        Value::String(_) => shape.list,
        _ => false,
    }
}

/// Content as Claude Code writes it: a string, or a list of objects whose `content` is such
/// content again, before or after another field.
fn content() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let text = "[ -~\n\"\\\\é}{\\]\\[]{0,8}".prop_map(Value::from);
    text.prop_recursive(3, 16, 3, |inner| {
        prop::collection::vec((inner, json(), any::<bool>()), 0..3).prop_map(|blocks| {
            let blocks = blocks.into_iter().map(|(content, other, first)| {
                let other_key = if first { "a" } else { "z" };
                serde_json::json!({ "content": content, other_key: other })
            });
            Value::Array(blocks.collect())
        })
    })
}

proptest! {
    #[test]
    fn reading_fields_apart_reads_what_reading_them_plainly_reads(
        fields in prop::collection::vec((
            prop_oneof!["payload", "message", "type", "[a-z]{1,3}"],
            prop_oneof![json(), (content(), json()).prop_map(|(c, o)| serde_json::json!({"a": o, "content": c}))],
            any::<bool>(),
        ), 0..5),
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
        let apart = read_apart(&format!("{gap}{{{}}}{gap}", members.join(",")), nest);
        // Everything that fits the shape is read apart, unless something else does not.
        let once = |key: &str| fields.iter().filter(|(k, _, _)| k == key).count() == 1;
        let shaped: Vec<_> = fields.iter().filter(|(k, _, _)| SHAPE.iter().any(|a| a.key == k)).collect();
        let all_fit = shaped.iter().all(|(k, v, _)| once(k) && fits(v, SHAPE.iter().find(|a| a.key == k).unwrap()));
        let mut expected: Vec<&str> = if nest && all_fit { shaped.iter().map(|(k, _, _)| k.as_str()).collect() } else { Vec::new() };
        let mut apart = apart;
        expected.sort_unstable();
        apart.sort_unstable();
        prop_assert_eq!(apart, expected);
    }
}

#[test]
fn an_object_as_json_is_its_text_byte_for_byte() {
    for text in [
        r#"{"b":1e5,"a":"\u00e9","c":[1, 2],"b":{"x" :null}}"#,
        r#" {"k\u00E9y":1,"\/":3} "#,
        // Escaped as serde_json would escape it, but for the case of the hex digits.
        r#"{"\u001F":2}"#,
        "{\"a\": 1}",
        "{\"a\":\n1}",
        "{}",
    ] {
        let json = Object::parse(text).unwrap().to_json();
        assert_eq!(json, Json::parse(text).unwrap(), "{text}");
    }
    assert_eq!(Object::parse("{\"a\":\n1}").unwrap().to_json().get(), r#"{"a":1}"#);
}

#[test]
fn a_field_of_the_wrong_shape_is_an_error_that_points_into_the_text() {
    let object = Object::parse(r#"{"n":1, "type":5}"#).unwrap();
    let error = object.get::<Known<'_>>().err().unwrap();
    assert_eq!((error.line(), error.column()), (1, 16));
    assert!(Object::parse("[1]").is_err());
}
