//! What a search reads of the Claude Code lines that lack its words: nothing of bulk text, and
//! of the records that call tools only the calls' ids and names, which later results take.

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::read::literals::Literals;
use crate::read::skim::string;

/// Whether a line is bulk text a search may skip when it lacks the words: a tool's results
/// (`tool_result` blocks), an answer or its reasoning, a `progress` record (a hook's or a
/// command's output as it ran, a subagent's step; meta events, whose times do not start a
/// session), a file-history snapshot (meta events too). Never a record that calls a tool,
/// whose name later results take, nor one of a 1.0 inline sidechain, whose records link to
/// each other (a subagent's file marks every record a sidechain; its records link by the
/// file); typed prompts, which title their session, are `user` records without results.
pub(super) fn is_bulk_text(line: &[u8], subagent_file: bool) -> bool {
    /// Kinds of bulk text, then (from [`LINKED`]) what links a record to others, then (from
    /// [`SIDECHAIN`]) the mark of a sidechain's record.
    static WORDS: LazyLock<Literals> = LazyLock::new(|| {
        Literals::new(&[
            "\"tool_result\"",
            "\"assistant\"",
            "\"type\":\"progress\"",
            "\"type\":\"file-history-snapshot\"",
            "\"type\":\"tool_use\"",
            "\"type\": \"tool_use\"",
            "\"type\":\"server_tool_use\"",
            "\"type\": \"server_tool_use\"",
            "\"isSidechain\":true",
            "\"isSidechain\": true",
        ])
    });
    const LINKED: usize = 4;
    const SIDECHAIN: usize = 8;
    let (mut bulk, mut linked) = (false, false);
    WORDS.each_found(line, |found| {
        if found >= SIDECHAIN && subagent_file {
            return true;
        }
        linked = found >= LINKED;
        bulk = true;
        !linked
    });
    bulk && !linked
}

/// Tool calls a record makes: call id, tool name, and the prompt of Task and Agent calls.
pub(super) type Calls = Vec<(String, String, Option<String>)>;

/// The tools a record lacking a search's words calls, and its uuid, read from its raw bytes:
/// the id and name of each `tool_use` block, as Claude Code writes one
/// (`{"type":"tool_use","id":"…","name":"…"`). `None` where the line is to be parsed whole:
/// written otherwise, calling no tool, calling through the server (`server_tool_use`), a
/// record of a 1.0 inline sidechain outside a subagent's file, a `progress` record, or a Task
/// or Agent call, whose prompt links such a sidechain.
pub(super) fn tool_calls(line: &[u8], subagent_file: bool) -> Option<(Calls, Option<&str>)> {
    static BLOCK: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#"{"type":"tool_use","id":""#));
    static TOOL_USE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""type":"tool_use""#));
    static UUID: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""uuid":""#));
    /// What makes a line be parsed whole, then (from [`SIDECHAIN`]) the mark of a sidechain's
    /// record.
    static WHOLE: LazyLock<Literals> = LazyLock::new(|| {
        Literals::new(&[
            "\"type\":\"progress\"",
            "\"type\":\"server_tool_use\"",
            "\"type\": \"server_tool_use\"",
            // A block written otherwise, which `BLOCK` would not see.
            "\"type\": \"tool_use\"",
            "\"isSidechain\":true",
            "\"isSidechain\": true",
        ])
    });
    const SIDECHAIN: usize = 4;
    let mut whole = false;
    WHOLE.each_found(line, |found| {
        // A subagent's file marks every record a sidechain; its records link by the file.
        whole = !(subagent_file && found >= SIDECHAIN);
        !whole
    });
    if whole || !line.starts_with(b"{") {
        return None;
    }
    let mut calls = Vec::new();
    for at in BLOCK.find_iter(line) {
        let (id, rest) = string(&line[at + BLOCK.needle().len()..])?;
        let (name, _) = string(rest.strip_prefix(br#","name":""#)?)?;
        if name == "Task" || name == "Agent" {
            return None;
        }
        calls.push((id.to_owned(), name.to_owned(), None));
    }
    // Every tool_use block is one written as above.
    if calls.is_empty() || TOOL_USE.find_iter(line).count() != calls.len() {
        return None;
    }
    let uuid = UUID.find(line).and_then(|at| string(&line[at + UUID.needle().len()..])).map(|(uuid, _)| uuid);
    Some((calls, uuid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_calling_tools_gives_their_ids_and_names() {
        let line = br#"{"type":"assistant","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls \"a\""}},{"type":"tool_use","id":"toolu_2","name":"Read","input":{}}],"stop_reason":"tool_use"},"uuid":"5f0c5ac1-6e0d-4a38-9a4b-2a4c3e1d0b11"}"#;
        let (calls, uuid) = tool_calls(line, false).unwrap();
        let names: Vec<(&str, &str)> = calls.iter().map(|(id, name, _)| (id.as_str(), name.as_str())).collect();
        assert_eq!(names, [("toolu_1", "Bash"), ("toolu_2", "Read")]);
        assert_eq!(uuid, Some("5f0c5ac1-6e0d-4a38-9a4b-2a4c3e1d0b11"));
    }

    #[test]
    fn other_records_are_read_whole() {
        for (line, subagent_file) in [
            (&br#"{"type":"assistant","message":{"content":[{"type":"text","text":"x"}]}}"#[..], false),
            (br#"{"message":{"content":[{"type":"tool_use","id":"t","name":"Task","input":{"prompt":"p"}}]}}"#, false),
            (br#"{"isSidechain":true,"message":{"content":[{"type":"tool_use","id":"t","name":"Bash"}]}}"#, false),
            (
                br#"{"type":"progress","data":{"message":{"content":[{"type":"tool_use","id":"t","name":"Bash"}]}}}"#,
                true,
            ),
            (br#"{"message":{"content":[{"type":"tool_use","name":"Bash","id":"t"}]}}"#, false),
            (br#"{"message":{"content":[{"type":"tool_use","id":"t\u0031","name":"Bash"}]}}"#, false),
            (
                br#"{"message":{"content":[{"type":"tool_use","id":"t","name":"Bash"},{"type": "tool_use","id":"u","name":"Read"}]}}"#,
                false,
            ),
        ] {
            assert!(tool_calls(line, subagent_file).is_none(), "{}", String::from_utf8_lossy(line));
        }
        let sidechain = br#"{"isSidechain":true,"message":{"content":[{"type":"tool_use","id":"t","name":"Bash"}]}}"#;
        assert!(tool_calls(sidechain, true).is_some(), "a subagent's file links by the file");
    }
}
