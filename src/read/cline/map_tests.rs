use super::*;
use crate::model::Agent;

fn read(text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    let mut push = |e: Event| {
        events.push(e);
        Ok(())
    };
    let mut emitter = Emitter::new(Agent::Cline, "s.messages.json", &mut push);
    assert!(document("s.messages.json", text, &mut emitter).unwrap());
    events
}

#[test]
fn typed_prompt_is_unwrapped_and_reminders_are_injected() {
    assert_eq!(unwrap_user_input("<user_input mode=\"act\">hi there</user_input>"), ("hi there", Some("act")));
    assert_eq!(unwrap_user_input("[SYSTEM] finish"), ("[SYSTEM] finish", None));
    let events = read(
        r#"{"sessionId":"s1","origin":{"version":"3.0.65"},"messages":[
        {"id":"u1","role":"user","content":[{"type":"text","text":"<user_input mode=\"plan\">do it</user_input>"}],"ts":1795797379907},
        {"id":"u2","role":"user","content":[{"type":"text","text":"[SYSTEM] call a tool"}],"metadata":{"userRunSpan":0}}]}"#,
    );
    let users: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Message(m) => Some((m.text.as_str(), e.injected, e.source.line)),
            _ => None,
        })
        .collect();
    assert_eq!(users, [("do it", false, 2), ("[SYSTEM] call a tool", true, 3)]);
    assert_eq!(events[0].context.agent_version.as_deref(), Some("3.0.65"));
}

#[test]
fn input_tokens_hold_the_cache_counts() {
    let metrics = serde_json::json!({"inputTokens": 1500, "outputTokens": 50, "cacheReadTokens": 300,
        "cacheWriteTokens": 200, "cost": 0.00459});
    let u = usage(metrics.as_object().unwrap(), None);
    assert_eq!(
        (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens, u.total_tokens),
        (Some(1000), Some(300), Some(200), Some(50), Some(1550))
    );
    // a count the metrics lack stays unknown
    let u = usage(serde_json::json!({"inputTokens": 10, "outputTokens": 2}).as_object().unwrap(), None);
    assert_eq!((u.input_tokens, u.cache_read_tokens, u.cache_write_tokens), (Some(10), None, None));
}

#[test]
fn failed_command_gives_its_exit_code() {
    let content = serde_json::json!([{"query": "ls /x", "result": "[Command exited with code 2]\n\n[stderr]\nls: no\n",
        "error": "Command exited with code 2", "success": false}]);
    let (text, parts, failed, code) = result_content(Some(&content));
    assert!(text.contains("ls: no"));
    assert!(parts.is_empty());
    assert_eq!((failed, code), (Some(true), Some(2)));
}

#[test]
fn unknown_blocks_and_roles_are_kept() {
    let events = read(
        r#"{"sessionId":"s1","messages":[{"id":"a","role":"assistant","content":[{"type":"new_block","x":1}]},
        {"id":"b","role":"tool","content":"?"}]}"#,
    );
    let unknown =
        events.iter().filter(|e| matches!(&e.payload, Payload::Meta(m) if m.meta_type == MetaType::Unknown)).count();
    assert_eq!(unknown, 2);
}
