//! The credential rules: one entry per kind of secret, written from each provider's documented
//! token format, with the public rule sets of gitleaks and detect-secrets as references.
//!
//! A rule's `keywords` are literals of which at least one appears in every text the rule can
//! match, spelled as in the pattern (ASCII case ignored when the pattern starts with `(?i)`); a
//! text none of them appears in is never matched against the rule's pattern. Where the pattern has a group named `secret`, only that group is replaced, so that
//! `postgres://me:[REDACTED:url-password]@db` keeps its user and host.

/// One kind of secret.
#[derive(Debug)]
pub struct Rule {
    /// The id in the placeholder `[REDACTED:<id>]` and in the findings report.
    pub id: &'static str,
    /// What the rule finds, for `agentlog redact-rules` and the documentation.
    pub description: &'static str,
    /// Literals one of which is in every match (ASCII case ignored for `(?i)` patterns).
    pub keywords: &'static [&'static str],
    /// The pattern (Rust `regex` syntax); a group named `secret` narrows what is replaced.
    pub pattern: &'static str,
    /// Smallest Shannon entropy, in bits per byte, of a secret the rule accepts.
    pub entropy: Option<f64>,
    /// Lists of patterns of values that look like a match but are not secrets (placeholders,
    /// variables, code).
    pub allow: &'static [&'static [&'static str]],
}

/// Values that stand for a secret rather than being one: shell and template variables,
/// placeholders, values already masked.
const PLACEHOLDERS: &[&str] = &[
    r"^\$",
    r"^%",
    r"^<[^>]*>?$",
    r"^\{",
    r"^\[REDACTED",
    r"^[*xX•.-]+$",
    r"(?i)^(?:your|my|the|some|example|dummy|fake|test|sample|placeholder|changeme|redacted|secret|password|token|null|none|undefined|true|false)",
    r"(?i)^(?:process\.env|os\.environ|os\.getenv|env\.|getenv|settings\.|config\.|self\.|this\.|args\.|options\.)",
];

/// Values after a secret-sounding name that are code or numbers, not secrets: numbers,
/// identifiers in snake, kebab, camel, Pascal or constant case, and member accesses
/// (`document.querySelector`, `params.apiKey`).
const CODE: &[&str] = &[
    r"^[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+$",
    r"^(?:[A-Z][a-z]{2,})+[0-9]*$",
    r"^[\d.:_-]+$",
    r"^[a-z]+(?:[._/-][a-z]+)*$",
    r"^[a-z]{2,}(?:[A-Z][a-z]{2,})+[0-9]*$",
    r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$",
];

/// The rules, most specific first: where matches of two rules overlap, the earlier rule names
/// the placeholder.
pub const RULES: &[Rule] = &[
    Rule {
        id: "private-key",
        description: "PEM private keys (RSA, EC, DSA, OpenSSH, PKCS#8, PGP), also cut short",
        keywords: &["-----BEGIN"],
        pattern: r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|(?:[\s\d→|]*[A-Za-z0-9+/=]{8,})+)",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "anthropic-api-key",
        description: "Anthropic API and admin keys (sk-ant-…)",
        keywords: &["sk-ant-"],
        pattern: r"\bsk-ant-[a-z]{3,10}\d{2}-[A-Za-z0-9_-]{20,}",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "openai-api-key",
        description: "OpenAI project, service-account, admin and legacy keys (sk-…)",
        keywords: &["sk-"],
        pattern: r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{48}\b",
        entropy: Some(3.5),
        allow: &[],
    },
    Rule {
        id: "aws-access-key-id",
        description: "AWS access key ids (AKIA…, ASIA…)",
        keywords: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        pattern: r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        entropy: Some(3.0),
        allow: &[&[r"EXAMPLE$"]],
    },
    Rule {
        id: "aws-secret-access-key",
        description: "AWS secret access keys next to an aws…secret or aws…key name",
        keywords: &["aws"],
        pattern: r#"(?i)aws[\w.-]{0,20}?(?:secret|key)[\w.-]{0,20}?["']?\s{0,4}(?:=|:|=>|:=)\s{0,4}["']?(?P<secret>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        entropy: Some(4.0),
        allow: &[],
    },
    Rule {
        id: "github-token",
        description: "GitHub personal, OAuth, app, refresh and fine-grained tokens",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})\b",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "gitlab-token",
        description: "GitLab personal, pipeline, deploy, runner and other tokens (glpat-…)",
        keywords: &["glpat-", "glptt-", "gldt-", "glrt-", "glsoat-", "glcbt-", "glft-", "glimt-", "glagent-", "gloas-"],
        pattern: r"\bgl(?:pat|ptt|dt|rt|soat|cbt|ft|imt|agent|oas)-[A-Za-z0-9_-]{20,}",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "slack-token",
        description: "Slack bot, user, app and configuration tokens, and incoming-webhook URLs",
        keywords: &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe", "xapp-", "hooks.slack.com"],
        pattern: r"\bxox[abprs]-[A-Za-z0-9-]{10,}|\bxoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{100,}|\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "stripe-key",
        description: "Stripe secret and restricted keys (sk_live_…, rk_test_…)",
        keywords: &["sk_live_", "sk_test_", "rk_live_", "rk_test_", "sk_prod_", "rk_prod_"],
        pattern: r"\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}\b",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "twilio-api-key",
        description: "Twilio API key sids (SK + 32 hex)",
        keywords: &["SK"],
        pattern: r"\bSK[0-9a-fA-F]{32}\b",
        entropy: Some(3.0),
        allow: &[],
    },
    Rule {
        id: "sendgrid-api-key",
        description: "SendGrid API keys (SG.….…)",
        keywords: &["SG."],
        pattern: r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "npm-token",
        description: "npm access tokens (npm_…)",
        keywords: &["npm_"],
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        entropy: Some(3.0),
        allow: &[],
    },
    Rule {
        id: "pypi-token",
        description: "PyPI upload tokens (pypi-AgEIcHlwaS5vcmc…)",
        keywords: &["pypi-AgEIcHlwaS5vcmc"],
        pattern: r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "dockerhub-token",
        description: "Docker Hub personal access tokens (dckr_pat_…)",
        keywords: &["dckr_pat_", "dckr_oat_"],
        pattern: r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "google-api-key",
        description: "Google API keys (AIza…)",
        keywords: &["AIza"],
        pattern: r"\bAIza[A-Za-z0-9_-]{35}\b",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "google-oauth",
        description: "Google OAuth client secrets (GOCSPX-…) and access tokens (ya29.…)",
        keywords: &["GOCSPX-", "ya29."],
        pattern: r"\bGOCSPX-[A-Za-z0-9_-]{28}\b|\bya29\.[A-Za-z0-9_-]{30,}",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "azure-storage-key",
        description: "Azure account keys and shared access keys in connection strings, and SAS signatures",
        keywords: &["AccountKey=", "SharedAccessKey=", "sig="],
        pattern: r"(?i)\b(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})|[?&]sig=(?P<sas>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "azure-client-secret",
        description: "Azure AD (Entra ID) application client secrets (…Q~…)",
        keywords: &["Q~"],
        pattern: r"(?:^|[^A-Za-z0-9_~.-])(?P<secret>[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|$)",
        entropy: Some(3.0),
        allow: &[],
    },
    Rule {
        id: "huggingface-token",
        description: "Hugging Face access tokens (hf_…)",
        keywords: &["hf_"],
        pattern: r"\bhf_[A-Za-z]{34}\b",
        entropy: Some(3.0),
        allow: &[],
    },
    Rule {
        id: "jwt",
        description: "JSON Web Tokens (eyJ….eyJ….…)",
        keywords: &["eyJ"],
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        entropy: None,
        allow: &[],
    },
    Rule {
        id: "url-password",
        description: "Passwords in URLs (postgres://user:password@host)",
        keywords: &["://"],
        pattern: r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:@/?#'\x22<>]{1,100}:(?P<secret>[^\s@/?#'\x22<>]{1,200})@[A-Za-z0-9.\[-]",
        entropy: None,
        allow: &[PLACEHOLDERS],
    },
    Rule {
        id: "authorization-header",
        description: "Credentials of Authorization (Bearer, Basic, Token) and API-key headers",
        keywords: &["authorization", "api-key", "api_key:", "x-auth-token", "private-token"],
        pattern: r#"(?i)\b(?:(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|bot|digest)\s+|(?:x-api-key|api-key|x-goog-api-key|x-auth-token|private-token)["']?\s*:\s*["']?)(?P<secret>[A-Za-z0-9\-._~+/=:]{8,})"#,
        entropy: None,
        allow: &[PLACEHOLDERS],
    },
    Rule {
        id: "cookie",
        description: "Cookie and Set-Cookie header values",
        keywords: &["cookie"],
        pattern: r#"(?i)\b(?:set-)?cookie["']?\s*:\s*["']?(?P<secret>[A-Za-z0-9_.-]+=[^\s;'"]{8,}(?:;\s*[A-Za-z0-9_.-]+=[^\s;'"]*)*)"#,
        entropy: None,
        allow: &[PLACEHOLDERS],
    },
    Rule {
        id: "generic-secret",
        description: "Values assigned to names such as password, secret, api_key, token (entropy-checked)",
        keywords: &[
            "passw",
            "passwd",
            "pwd",
            "secret",
            "api_key",
            "apikey",
            "api-key",
            "token",
            "access_key",
            "private_key",
            "credential",
        ],
        pattern: r#"(?i)(?:^|[^A-Za-z0-9])[A-Za-z0-9_.-]{0,30}(?:passw(?:or)?d|passwd|pwd|secret|api_?key|api-key|access_?key|private_?key|auth_?token|access_?token|refresh_?token|bearer_?token|credentials?|token)[A-Za-z0-9_.-]{0,20}["']?\s{0,4}(?:=|:|:=|=>)\s{0,4}["'`]?(?P<secret>[^\s"'`;,()\[\]{}<>]{8,200})"#,
        entropy: Some(3.2),
        allow: &[PLACEHOLDERS, CODE],
    },
];
