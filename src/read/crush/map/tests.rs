//! The mapping of single Crush rows, apart from a database.

use super::*;
use crate::model::{Agent, Kind};

fn session(id: &str, parent: Option<&str>) -> SessionRow {
    SessionRow {
        id: id.into(),
        parent: parent.map(str::to_owned),
        title: Some("Untitled Session".into()),
        created: Some(1_767_225_600),
        data: Map::new(),
    }
}

fn row(role: &str, summary: bool) -> MessageRow {
    MessageRow {
        at: At { line: 7, id: "m1".into(), table: "message" },
        role: role.into(),
        model: Some("m".into()),
        provider: Some("p".into()),
        created: Some(1_767_225_601),
        is_summary: summary,
        data: Map::new(),
    }
}

/// The events of one message row of session `s` with `parts`.
fn map(session: &SessionRow, row: &MessageRow, parts: Value) -> Vec<Event> {
    let mut events = Vec::new();
    let mut out = |e| {
        events.push(e);
        Ok(())
    };
    let mut emitter = Emitter::new(Agent::Crush, "crush.db#s", &mut out);
    let Value::Array(parts) = parts else { panic!("parts are an array") };
    Mapper::new(session).message(row, &parts, &mut emitter).unwrap();
    events
}

fn meta_of(e: &Event) -> (MetaType, Value) {
    match &e.payload {
        Payload::Meta(m) => (m.meta_type, m.data.as_ref().unwrap().to_value()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_summary_message_is_a_compaction_then_its_text() {
    let parts = serde_json::json!([
        {"type": "text", "data": {"text": "The user asked for a fix; the tests now pass."}},
        {"type": "finish", "data": {"reason": "end_turn", "time": 1_767_225_609}}
    ]);
    let events = map(&session("s", None), &row("assistant", true), parts);
    let kinds: Vec<Kind> = events.iter().map(Event::kind).collect();
    assert_eq!(kinds, [Kind::Meta, Kind::Message, Kind::Meta]);
    assert_eq!(meta_of(&events[0]).0, MetaType::Compaction);
    assert_eq!(events[0].source.record_type.as_deref(), Some("message/assistant"));
    assert_eq!(events[1].source.record_type.as_deref(), Some("part/text"));
    assert_eq!(meta_of(&events[2]).0, MetaType::Progress, "the summary's end is not the turn's");
    assert!(events.iter().all(|e| e.response_id.as_deref() == Some("m1")));
    assert_eq!(events[1].extra.as_ref().unwrap().to_value(), serde_json::json!({"provider": "p"}));
    assert_eq!(events[2].timestamp.unwrap().timestamp(), 1_767_225_609);
}

#[test]
fn an_error_finish_keeps_what_crush_said() {
    let parts = serde_json::json!([{"type": "finish", "data": {
        "reason": "error", "time": 1_767_225_602, "message": "Provider Error", "details": "rate limited"}}]);
    let events = map(&session("s", None), &row("assistant", false), parts);
    let (meta, data) = meta_of(&events[0]);
    assert_eq!(meta, MetaType::System);
    assert_eq!((data["message"].as_str(), data["details"].as_str()), (Some("Provider Error"), Some("rate limited")));
}

#[test]
fn a_tool_result_with_media_has_its_text_and_image_as_parts() {
    let parts = serde_json::json!([{"type": "tool_result", "data": {
        "tool_call_id": "c1", "name": "view", "content": "Image read", "data": "iVBORw0KGgo=",
        "mime_type": "image/png", "metadata": "", "is_error": false}}]);
    let events = map(&session("s", None), &row("tool", false), parts);
    let Payload::ToolOutput(output) = &events[0].payload else { panic!("{events:?}") };
    assert_eq!(output.text, "Image read");
    assert_eq!(
        output.parts,
        [
            Part::Text { text: "Image read".into() },
            Part::Image { media_type: Some("image/png".into()), data: Some("iVBORw0KGgo=".into()), url: None },
        ]
    );
    assert_eq!((output.exit_code, output.result.as_ref()), (None, None));
    assert_eq!(events[0].response_id, None, "a tool message is no response");
}

#[test]
fn a_part_of_another_shape_and_a_row_without_parts_are_kept() {
    let parts = serde_json::json!([{"type": "text"}, "text"]);
    let events = map(&session("s", None), &row("user", false), parts);
    assert_eq!(events.iter().map(|e| meta_of(e).0).collect::<Vec<_>>(), [MetaType::Unknown; 2]);
    assert_eq!(meta_of(&events[1]).1, "text");
    assert_eq!(events[1].source.record_type.as_deref(), Some("part/part"));
    let events = map(&session("s", None), &row("assistant", false), serde_json::json!([]));
    assert_eq!(events.len(), 1);
    assert_eq!(meta_of(&events[0]).0, MetaType::System);
    assert_eq!(events[0].source.record_type.as_deref(), Some("message/assistant"));
}

#[test]
fn a_child_session_of_an_older_crush_is_named_by_its_call() {
    let parts = serde_json::json!([{"type": "text", "data": {"text": "Find it"}}]);
    let events = map(&session("call_9", Some("s")), &row("user", false), parts);
    assert_eq!(events[0].parent_call_id.as_deref(), Some("call_9"));
    assert_eq!(events[0].parent_session_id.as_deref(), Some("s"));
    assert!(events[0].is_sidechain && !events[0].injected);
}

#[test]
fn the_exit_code_is_the_last_line_before_the_working_directory() {
    let bash = "FAIL\n\nmake: *** [test] Error 1\nExit code 2\n\n<cwd>/home/dev/shop</cwd>";
    assert_eq!(exit_code(bash), Some(2));
    assert_eq!(exit_code("Status: completed\n\nboom\nExit code 127"), Some(127));
    assert_eq!(exit_code("ok\n\n<cwd>/tmp</cwd>"), None);
    assert_eq!(exit_code("Exit code 2 was printed by the program\nok"), None);
    assert_eq!(exit_code("interrupted\nCommand was aborted before completion"), None);
}

#[test]
fn times_are_seconds_unless_too_large_for_seconds() {
    assert_eq!(time_of(1_767_225_600).unwrap().to_rfc3339(), "2026-01-01T00:00:00+00:00");
    assert_eq!(time_of(1_767_225_600_250).unwrap().timestamp_millis(), 1_767_225_600_250);
    assert_eq!(time_of(0), None);
}

#[test]
fn a_child_session_is_told_by_its_id() {
    assert_eq!(Lineage::of("s1", None), Lineage::Root);
    assert_eq!(
        Lineage::of("m1$$call_1", Some("s1")),
        Lineage::Tool { message: Some("m1".into()), call: "call_1".into() }
    );
    assert_eq!(Lineage::of("call_1", Some("s1")), Lineage::Tool { message: None, call: "call_1".into() });
    assert_eq!(Lineage::of("title-s1", Some("s1")), Lineage::Title);
}

#[test]
fn a_tool_input_is_parsed_when_it_holds_an_object() {
    let (input, text) = tool_input(r#"{"command":"ls"}"#);
    assert_eq!(input.unwrap().get(), r#"{"command":"ls"}"#);
    assert_eq!(text, None);
    assert_eq!(tool_input(r#"{"command":"l"#), (None, Some(r#"{"command":"l"#.to_owned())));
    assert_eq!(tool_input("[1]"), (None, Some("[1]".to_owned())));
    assert_eq!(tool_input(""), (None, None));
}
