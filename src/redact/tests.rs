use super::*;
use crate::model::{Message, Role, ToolCall};

fn redactor() -> Redactor {
    Redactor::new(Options::default()).unwrap()
}

fn redacted(text: &str) -> String {
    redactor().text(text).unwrap_or_else(|| text.to_owned())
}

#[test]
fn every_rule_has_a_keyword_in_each_of_its_examples() {
    // One example per rule, written from the provider's documented format.
    let examples = [
        ("private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"),
        ("anthropic-api-key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
        ("openai-api-key", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh"),
        ("aws-access-key-id", "AKIAZ2B3C4D5E6F7G2H3"),
        ("aws-secret-access-key", "aws_secret_access_key = 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"),
        ("github-token", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
        ("gitlab-token", "glpat-a1B2c3D4e5F6g7H8i9J0"),
        ("slack-token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("stripe-key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        ("twilio-api-key", "SK0123456789abcdef0123456789abcdef"),
        ("sendgrid-api-key", "SG.abcdefghijABCDEFGHIJ01.abcdefghijABCDEFGHIJ0123456789abcdefghijABC"),
        ("npm-token", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
        ("pypi-token", "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKl"),
        ("dockerhub-token", "dckr_pat_a1B2c3D4e5F6g7H8i9J0k1L2m3N"),
        ("google-api-key", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
        ("google-oauth", "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"),
        ("azure-storage-key", "AccountName=x;AccountKey=a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6==;"),
        ("azure-client-secret", "secret: abc8Q~a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"),
        ("huggingface-token", "hf_abcdefghijABCDEFGHIJabcdefghijABCD"),
        ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
        ("url-password", "postgres://app:S3cr3tPassw0rd@db:5432/app"),
        ("authorization-header", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
        ("cookie", "Cookie: sid=a1B2c3D4e5F6g7H8; theme=dark"),
        ("generic-secret", "DB_PASSWORD=Xk9mP2vQ7rT4wZ8n"),
    ];
    assert_eq!(examples.len(), rules::RULES.len());
    for (rule, example) in examples {
        let out = redacted(example);
        assert!(out.contains(&format!("[REDACTED:{rule}]")), "{rule}: {out}");
    }
}

#[test]
fn only_the_secret_part_of_a_match_is_replaced() {
    assert_eq!(
        redacted("postgres://app:S3cr3tPassw0rd@db:5432/app"),
        "postgres://app:[REDACTED:url-password]@db:5432/app"
    );
    assert_eq!(
        redacted("curl -H 'Authorization: Bearer a1B2c3D4e5F6g7H8i9' x"),
        "curl -H 'Authorization: Bearer [REDACTED:authorization-header]' x"
    );
}

#[test]
fn code_and_placeholders_are_not_secrets() {
    for text in [
        "const csrfToken = document.querySelector(\"meta\")",
        "token = ReviewTokenStore.mint(project.id)",
        "apiKey: process.env.OPENAI_API_KEY",
        "password = ${DB_PASSWORD}",
        "postgres://user:$PASSWORD@localhost/db",
        "\"input_tokens\": 1234567890",
        "setFirstTokenReceived: React.Dispatch<boolean>",
        "token: getAccessTokenFromEnvironment()",
        "AKIAIOSFODNN7EXAMPLE",
        "a uuid 3f1c2a9e-5b7d-5e2f-9a41-0c6d8e7f1b23 and a sha 1cdfa7b17410e00cddbb7a4347336af2c6f80ee0",
    ] {
        assert_eq!(redacted(text), text);
    }
}

#[test]
fn a_private_key_cut_short_is_redacted_to_its_last_line() {
    let text = "     1→-----BEGIN OPENSSH PRIVATE KEY-----\n     2→b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n     3→QyNTUxOQAAACDi9yJ0fGDU8k1UxC1k6wHGS4zSxJt8C7Hq1YH4Ky7hJAAAAJgGm9c7BpvX\n(file truncated)";
    let out = redacted(text);
    assert!(!out.contains("b3BlbnNz") && !out.contains("QyNTUxOQ"), "{out}");
    assert!(out.ends_with("(file truncated)"), "{out}");
}

#[test]
fn json_is_rebuilt_only_where_a_string_changed_and_keeps_its_order() {
    let r = redactor();
    let input = r#"{"z":1.50,"command":"export GH=ghp_0123456789abcdefghijABCDEFGHIJ012345","a":{"id":"ghp_0123456789abcdefghijABCDEFGHIJ012345"},"n":[1e3,"x"]}"#;
    let mut call = Event::new(
        "s".into(),
        Payload::ToolCall(ToolCall {
            call_id: None,
            name: "Bash".into(),
            tool_kind: None,
            input: Some(Json::parse(input).unwrap()),
            input_text: None,
        }),
    );
    call.id = "e1".into();
    r.event(&mut call, &mut r.scope());
    let Payload::ToolCall(ToolCall { input: Some(out), .. }) = &call.payload else { panic!() };
    assert_eq!(
        out.get(),
        r#"{"z":1.50,"command":"export GH=[REDACTED:github-token]","a":{"id":"ghp_0123456789abcdefghijABCDEFGHIJ012345"},"n":[1e3,"x"]}"#
    );
    let report = r.report();
    assert_eq!(report.redacted, 1);
    assert_eq!(report.findings[0].path, "/payload/input/command");
}

#[test]
fn a_keyword_spelled_with_json_escapes_is_still_found() {
    let r = redactor();
    // `\u0067hp_` is `ghp_`: the raw text holds no keyword, the decoded string does.
    let raw = r#"{"text":"\u0067hp_0123456789abcdefghijABCDEFGHIJ012345"}"#;
    let mut event = Event::new("s".into(), Payload::Message(Message::from_parts(Role::User, vec![])));
    event.extra = Some(Json::parse(raw).unwrap());
    r.event(&mut event, &mut r.scope());
    assert_eq!(event.extra.unwrap().get(), r#"{"text":"[REDACTED:github-token]"}"#);
}

#[test]
fn pointers_escape_slashes_and_tildes() {
    let mut path = String::from("/extra/");
    json::push_pointer_token(&mut path, "a/b~c");
    assert_eq!(path, "/extra/a~1b~0c");
}

#[test]
fn pseudonyms_are_stable_under_one_key_and_differ_under_another() {
    let make = |key: &[u8]| {
        let options = Options {
            pseudonymize: Kinds::parse("user,email,host,path").unwrap(),
            key: Some(key.to_vec()),
            users: vec![],
        };
        Redactor::new(options).unwrap()
    };
    let text =
        "cd /Users/alice/work/acme-billing/src && git push https://git.acme.internal/x alice@acme.com; alice said";
    let pseudonymize = |r: &Redactor| {
        let mut event = Event::new("s".into(), Payload::Message(Message::from_parts(Role::User, vec![])));
        event.source.file = "projects/-Users-alice-work-acme-billing/s.jsonl".into();
        if let Payload::Message(m) = &mut event.payload {
            m.text = text.into();
        }
        let mut scope = r.scope();
        r.event(&mut event, &mut scope);
        let file = event.source.file.clone();
        // The user learned from the project directory's name is known to later events.
        let mut later = Event::new("s".into(), Payload::Message(Message::from_parts(Role::User, vec![])));
        later.context.cwd = Some("/Users/alice/work/acme-billing".into());
        r.event(&mut later, &mut scope);
        let Payload::Message(m) = event.payload else { panic!() };
        assert!(!file.contains("alice") && !file.contains("acme") && file.starts_with("projects/"), "{file}");
        (m.text, later.context.cwd.unwrap())
    };
    let (a, cwd) = pseudonymize(&make(b"0123456789abcdef"));
    let (b, _) = pseudonymize(&make(b"0123456789abcdef"));
    let (c, _) = pseudonymize(&make(b"fedcba9876543210"));
    assert_eq!(a, b);
    assert_ne!(a, c);
    for gone in ["alice", "acme", "acme-billing"] {
        assert!(!a.contains(gone) && !cwd.contains(gone), "{gone} in {a} / {cwd}");
    }
    // The same directory has the same pseudonym in the text and in the working directory.
    assert!(a.contains(&cwd), "{a} / {cwd}");
    assert!(a.contains("/Users/user-") && a.ends_with(" said"), "{a}");
    assert!(a.contains("@email.invalid") && a.contains(".invalid/x"), "{a}");
}

#[test]
fn entropy_is_in_bits_per_byte() {
    assert_eq!(scan::entropy("aaaa"), 0.0);
    assert!((scan::entropy("abcd") - 2.0).abs() < 1e-9);
}
