use super::status::{Count, Notice, Tokens};

#[test]
fn a_tokens_line_gives_its_figures_as_written() {
    let t = Tokens::parse("Tokens: 2.4k sent, 104 received. Cost: $0.00042 message, $0.00042 session.").unwrap();
    assert_eq!(t.sent, Count { text: "2.4k", value: 2400 });
    assert_eq!(t.received, Count { text: "104", value: 104 });
    assert_eq!((t.cache_hit, t.cache_write), (None, None));
    assert_eq!((t.message_cost, t.session_cost), (Some(0.00042), Some(0.00042)));
    let u = t.usage(Some("m"));
    assert_eq!((u.input_tokens, u.output_tokens, u.cache_read_tokens), (Some(2400), Some(104), None));
}

#[test]
fn cache_figures_are_taken_out_of_the_input() {
    let t = Tokens::parse(
        "Tokens: 12k sent, 1.2k cache write, 8.0k cache hit, 237 received.\nCost: $0.01 message, $0.02 session.",
    )
    .unwrap();
    let u = t.usage(None);
    assert_eq!(u.input_tokens, Some(12_000 - 1_200 - 8_000));
    assert_eq!((u.cache_write_tokens, u.cache_read_tokens, u.output_tokens), (Some(1200), Some(8000), Some(237)));
    assert_eq!(u.cost_usd, Some(0.01));
}

#[test]
fn a_tokens_line_without_cost_is_usage_too() {
    let t = Tokens::parse("Tokens: 950 sent, 12 received.").unwrap();
    assert_eq!((t.sent.value, t.message_cost), (950, None));
    assert!(Tokens::parse("Tokens: many sent, 12 received.").is_none());
}

#[test]
fn notices_are_told_apart() {
    assert_eq!(Notice::of("Applied edit to src/a.py"), Notice::Edit("src/a.py"));
    assert_eq!(Notice::of("Running echo hi"), Notice::Shell("echo hi"));
    assert_eq!(
        Notice::of("Main model: openai/gpt-4.1 with diff edit format"),
        Notice::Model { model: "openai/gpt-4.1", edit_format: Some("diff") }
    );
    assert_eq!(Notice::of("Added .aider* to .gitignore"), Notice::Other);
}
