//! Property tests: random bytes, arbitrary JSON records and mutated real lines never make a
//! reader panic, and every non-empty line is still accounted for (mapped or diagnosed once).

mod common;

use agentlog::read::{Input, READERS, Shared};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Feeds `text` to every reader and checks the line accounting.
fn check_all_readers(text: &[u8]) -> Result<(), TestCaseError> {
    let lines = text.split(|b| *b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)).count() as u64;
    for reader in READERS {
        let mut events = 0u64;
        let report = reader
            .read(Input { name: "fuzz.jsonl", bytes: Box::new(text), shared: &mut Shared::default() }, &mut |_| {
                events += 1;
                Ok(())
            })
            .expect("reading from memory does not fail");
        prop_assert_eq!(report.lines, lines, "{}", reader.name());
        prop_assert_eq!(report.lines_mapped + report.diagnosed(), lines, "{}", reader.name());
        prop_assert_eq!(report.events, events);
    }
    Ok(())
}

/// JSON values shaped like agent records: known keys and types with arbitrary values.
fn record() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z<>/ \\[\\]{}\"\\\\]{0,12}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "type",
                    "text",
                    "id",
                    "content",
                    "name",
                    "input",
                    "tool_use_id",
                    "is_error",
                    "role",
                    "payload",
                    "usage",
                    "output_tokens",
                    "source"
                ]),
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    });
    let types = prop::sample::select(vec![
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "attachment",
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "message",
        "function_call",
        "reasoning",
        "zzz",
    ]);
    (types, value.clone(), value.clone(), value, any::<bool>()).prop_map(|(t, message, payload, extra, side)| {
        json!({"type": t, "uuid": "u", "sessionId": "s", "isSidechain": side, "message": message,
               "payload": payload, "timestamp": "2026-01-01T00:00:00Z", "extra": extra})
    })
}

/// Lines of the project's samples, to mutate.
fn sample_lines() -> Vec<String> {
    common::session_files(&common::own_corpus())
        .into_iter()
        .flat_map(|(path, _)| common::text(&path).lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|l| !l.is_empty() && l.len() < 4096)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check_all_readers(&bytes)?;
    }

    #[test]
    fn arbitrary_records_never_panic(records in prop::collection::vec(record(), 1..12)) {
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        check_all_readers(text.as_bytes())?;
    }

    #[test]
    fn mutated_real_lines_never_panic(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..16)
    ) {
        let lines = sample_lines();
        let mut text = Vec::new();
        for (line, at, byte, how) in picks {
            let mut l = lines[line.index(lines.len())].clone().into_bytes();
            let i = at.index(l.len().max(1));
            match how {
                0 => l.truncate(i),
                1 => l.insert(i.min(l.len()), byte),
                2 => { let copy = l.clone(); l.extend_from_slice(&copy); }
                _ => {
                    let last = l.len() - 1;
                    l[i.min(last)] = byte;
                }
            }
            text.extend_from_slice(&l);
            text.push(b'\n');
        }
        check_all_readers(&text)?;
    }
}
