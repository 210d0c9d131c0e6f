//! Stable event ids.

use uuid::Uuid;

use super::Agent;

/// Namespace of agentlog event ids: UUIDv5 of the URL `https://agentlog.dev/event`.
const NAMESPACE: Uuid = Uuid::from_u128(0xdc27_68cb_bac3_5cac_a649_eee3_5fb4_5fcc);

/// The position of an event in its source: which file, which line, which event of that line.
#[derive(Debug, Clone, Copy)]
pub struct EventKey<'a> {
    /// The agent that wrote the file.
    pub agent: Agent,
    /// The event's session id.
    pub session_id: &'a str,
    /// The file's name without its directory (`-` for standard input).
    pub file_name: &'a str,
    /// 1-based line number.
    pub line: u64,
    /// Which event of that line: blocks count from 0; see [`USAGE_SLOT`].
    pub slot: u32,
}

/// The slot of the usage event derived from a line, distinct from its content blocks.
pub const USAGE_SLOT: u32 = u32::MAX;

impl EventKey<'_> {
    /// The event id: a UUIDv5 over the key's fields, rendered as lower-case hyphenated text.
    pub fn id(&self) -> String {
        // `agent \n session \n file \n line \n slot`, built without the formatting machinery:
        // this runs once per event.
        let mut name = Vec::with_capacity(64 + self.session_id.len() + self.file_name.len());
        let mut number = itoa::Buffer::new();
        for field in [self.agent.as_str(), self.session_id, self.file_name, number.format(self.line)] {
            name.extend_from_slice(field.as_bytes());
            name.push(b'\n');
        }
        name.extend_from_slice(number.format(self.slot).as_bytes());
        let mut text = [0; uuid::fmt::Hyphenated::LENGTH];
        uuid_v5(&NAMESPACE, &name).hyphenated().encode_lower(&mut text).to_owned()
    }
}

/// The name-based (SHA-1) UUID of `name` in `namespace` (RFC 9562 §5.5).
pub fn uuid_v5(namespace: &Uuid, name: &[u8]) -> Uuid {
    use sha1::Digest as _;
    let hash = sha1::Sha1::new().chain_update(namespace.as_bytes()).chain_update(name).finalize();
    let bytes = hash[..16].try_into().expect("a SHA-1 hash has 20 bytes");
    uuid::Builder::from_sha1_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(file_name: &str, line: u64, slot: u32) -> EventKey<'_> {
        EventKey { agent: Agent::Codex, session_id: "s1", file_name, line, slot }
    }

    #[test]
    fn namespace_is_the_v5_uuid_of_the_documented_url() {
        let expected = Uuid::new_v5(&Uuid::NAMESPACE_URL, b"https://agentlog.dev/event");
        assert_eq!(NAMESPACE, expected);
    }

    #[test]
    fn uuid_v5_agrees_with_the_uuid_crate() {
        for name in [&b""[..], b"x", b"claude_code\ns1\nf.jsonl\n1\n0", &[7; 200]] {
            assert_eq!(uuid_v5(&NAMESPACE, name), Uuid::new_v5(&NAMESPACE, name));
        }
    }

    #[test]
    fn an_id_is_the_uuid_v5_of_its_fields_one_per_line() {
        let expected = Uuid::new_v5(&NAMESPACE, b"codex\ns1\nf.jsonl\n12\n4294967295");
        assert_eq!(key("f.jsonl", 12, USAGE_SLOT).id(), expected.to_string());
    }

    #[test]
    fn ids_are_uuid_v5_and_differ_by_every_field() {
        let a = key("f.jsonl", 1, 0).id();
        assert_eq!(Uuid::parse_str(&a).unwrap().get_version_num(), 5);
        assert_ne!(a, key("g.jsonl", 1, 0).id());
        assert_ne!(a, key("f.jsonl", 2, 0).id());
        assert_ne!(a, key("f.jsonl", 1, 1).id());
        assert_eq!(a, key("f.jsonl", 1, 0).id());
    }
}
