//! Redaction: secrets in events replaced by `[REDACTED:<rule-id>]` placeholders, and optional
//! keyed pseudonyms for user names, e-mail addresses, hosts and paths. It runs once, on each
//! event before any writer sees it, so every output format gets the same placeholders.
//!
//! Every string of an event is looked at after JSON decoding, the raw JSON of tool inputs,
//! results, `extra` and `data` included, except the fields that are never secrets and whose
//! change would break the output: ids, times, the source position, model and version names,
//! reasoning signatures, encrypted content, hashes, and image and document data (see
//! [`exempt_key`]).

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::model::{Event, Json, Part, Payload};

use json::Strings;

mod json;
mod pseudo;
pub mod rules;
mod scan;
#[cfg(test)]
mod tests;

pub use pseudo::Kinds;
pub use scan::{Hit, Scanner};

/// What a run redacts.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What to pseudonymise besides redacting secrets.
    pub pseudonymize: Kinds,
    /// The key of the pseudonyms; a random one for the run when `None`.
    pub key: Option<Vec<u8>>,
    /// Home directory user names to pseudonymise from the start (the running user's).
    pub users: Vec<String>,
}

/// Redacts events; built once per run and shared by the reading threads.
pub struct Redactor {
    scanner: Scanner,
    pseudonyms: Option<pseudo::Pseudonyms>,
    users: Vec<String>,
    found: Mutex<Found>,
}

/// What a run has redacted so far.
#[derive(Default)]
struct Found {
    findings: Vec<Finding>,
    by_rule: BTreeMap<&'static str, u64>,
    pseudonyms: u64,
}

/// Secrets of one rule found at one place of one event.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    /// The rule's id.
    pub rule: &'static str,
    /// The event's session id.
    pub session_id: String,
    /// The event's id.
    pub event_id: String,
    /// JSON Pointer (RFC 6901) of the string within the event's unified JSON line.
    pub path: String,
    /// How many secrets of the rule the string held.
    pub count: u64,
}

/// What a run redacted: the `--redact-report` file.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Secrets replaced, in all.
    pub redacted: u64,
    /// Secrets replaced, by rule.
    pub by_rule: BTreeMap<&'static str, u64>,
    /// Values replaced by pseudonyms.
    pub pseudonymized: u64,
    /// Where, by rule, session and event, in the order of the events' sources.
    pub findings: Vec<Finding>,
}

/// What redacting a group of inputs has learned: the home directory user names met so far.
#[derive(Default)]
pub struct Scope {
    users: Vec<String>,
}

impl Redactor {
    /// A redactor with the built-in rules.
    ///
    /// # Errors
    /// When no random key can be had for the pseudonyms.
    pub fn new(options: Options) -> Result<Self, String> {
        let scanner = Scanner::new()?;
        let pseudonyms = if options.pseudonymize.any() {
            let key = match options.key {
                Some(key) => key,
                None => {
                    let mut key = vec![0u8; 32];
                    getrandom::fill(&mut key).map_err(|e| format!("no random key for the pseudonyms: {e}"))?;
                    key
                }
            };
            Some(pseudo::Pseudonyms::new(options.pseudonymize, &key))
        } else {
            None
        };
        let users = options.users.into_iter().filter(|u| u.len() >= 3).collect();
        Ok(Redactor { scanner, pseudonyms, users, found: Mutex::new(Found::default()) })
    }

    /// What is known before the first event of a group is seen.
    pub fn scope(&self) -> Scope {
        Scope { users: self.users.clone() }
    }

    /// Redacts `event` in place and records what was found.
    pub fn event(&self, event: &mut Event, scope: &mut Scope) {
        let mut walk = Walk { redactor: self, scope, hits: Vec::new(), pseudonyms: 0 };
        walk.learn(event);
        walk.event(event);
        let Walk { mut hits, pseudonyms, .. } = walk;
        if hits.is_empty() && pseudonyms == 0 {
            return;
        }
        hits.sort_unstable();
        let mut found = self.found.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        found.pseudonyms += pseudonyms;
        for (path, rule) in hits {
            *found.by_rule.entry(rule).or_default() += 1;
            match found.findings.last_mut() {
                Some(last) if last.event_id == event.id && last.path == path && last.rule == rule => last.count += 1,
                _ => found.findings.push(Finding {
                    rule,
                    session_id: event.session_id.clone(),
                    event_id: event.id.clone(),
                    path,
                    count: 1,
                }),
            }
        }
    }

    /// `text` with its secrets replaced, for text shown outside events (diagnostics).
    pub fn text(&self, text: &str) -> Option<String> {
        replace_hits(text, &self.scanner.hits(text))
    }

    /// Secrets replaced so far.
    pub fn redacted(&self) -> u64 {
        self.found.lock().unwrap_or_else(std::sync::PoisonError::into_inner).by_rule.values().sum()
    }

    /// Values pseudonymised so far.
    pub fn pseudonymized(&self) -> u64 {
        self.found.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pseudonyms
    }

    /// What the run redacted; findings sorted by rule, session, event and path, so that the
    /// report does not depend on the number of threads.
    pub fn report(&self) -> Report {
        let found = self.found.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut findings = found.findings.clone();
        findings.sort_unstable_by(|a, b| {
            (&a.session_id, &a.event_id, &a.path, a.rule).cmp(&(&b.session_id, &b.event_id, &b.path, b.rule))
        });
        Report {
            redacted: found.by_rule.values().sum(),
            by_rule: found.by_rule.clone(),
            pseudonymized: found.pseudonyms,
            findings,
        }
    }
}

/// `text` with `hits` replaced by placeholders; `None` when there are none.
fn replace_hits(text: &str, hits: &[Hit]) -> Option<String> {
    if hits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for hit in hits {
        out.push_str(&text[copied..hit.start]);
        out.push_str("[REDACTED:");
        out.push_str(hit.rule);
        out.push(']');
        copied = hit.end;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Whether the value under `key` in a JSON object is never redacted: ids, hashes,
/// signatures, encrypted content, and the base64 data of images and documents. Changing any
/// of them would break joins or the data, and none holds a credential.
pub fn exempt_key(key: &str, entries: &[(String, &RawValue)]) -> bool {
    let is = |name: &str| key.eq_ignore_ascii_case(name);
    let ends = |suffix: &str| {
        key.len() >= suffix.len()
            && key.is_char_boundary(key.len() - suffix.len())
            && key[key.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    let id_like =
        is("id") || ends("uuid") || ends("_id") || (key.ends_with("Id") && key.len() > 2) || key.ends_with("ID");
    let hash_like = ["hash", "sha", "sha1", "sha256", "checksum", "digest", "etag"].into_iter().any(is)
        || ends("_hash")
        || key.ends_with("Hash");
    let sealed = ["signature", "encrypted_content", "encryptedcontent", "redacted_thinking"].into_iter().any(is);
    let media = key == "data"
        && entries
            .iter()
            .any(|(k, v)| (k == "type" && v.get() == "\"base64\"") || k == "media_type" || k == "mime_type");
    id_like || hash_like || sealed || media
}

/// Whether a string is inline image or document data (`data:image/png;base64,…`).
fn is_data_url(text: &str) -> bool {
    text.starts_with("data:") && text[..text.len().min(100)].contains(";base64,")
}

/// One event's redaction.
struct Walk<'r, 's> {
    redactor: &'r Redactor,
    scope: &'s mut Scope,
    hits: Vec<(String, &'static str)>,
    pseudonyms: u64,
}

impl Walk<'_, '_> {
    /// Adds the home directory user names of the event's working directory and source to
    /// those of the scope, so that they are replaced as words elsewhere too.
    fn learn(&mut self, event: &Event) {
        let Some(pseudonyms) = &self.redactor.pseudonyms else { return };
        if !pseudonyms.kinds().user {
            return;
        }
        for text in [event.context.cwd.as_deref(), Some(event.source.file.as_str())].into_iter().flatten() {
            for user in pseudonyms.users_in(text) {
                if !self.scope.users.iter().any(|u| u == user) {
                    self.scope.users.push(user.to_owned());
                }
            }
        }
    }

    fn event(&mut self, event: &mut Event) {
        let mut path = String::new();
        match &mut event.payload {
            Payload::Message(m) => {
                let text_only = m.written_parts().is_empty() && !m.parts.is_empty();
                self.string(&|| "/payload/text".into(), &mut m.text);
                if text_only {
                    // The one part is the text, written once: it is redacted with it.
                    m.parts = vec![Part::Text { text: m.text.clone() }];
                } else {
                    self.parts("/payload/parts", &mut m.parts);
                }
                if let Some(phase) = &mut m.phase {
                    self.string(&|| "/payload/phase".into(), phase);
                }
            }
            Payload::Reasoning(r) => {
                self.string(&|| "/payload/text".into(), &mut r.text);
                if let Some(raw) = &mut r.raw_text {
                    self.string(&|| "/payload/raw_text".into(), raw);
                }
            }
            Payload::ToolCall(c) => {
                if let Some(input) = &mut c.input {
                    self.json("/payload/input", input, &mut path);
                }
                if let Some(text) = &mut c.input_text {
                    self.string(&|| "/payload/input_text".into(), text);
                }
            }
            Payload::ToolOutput(o) => {
                self.string(&|| "/payload/text".into(), &mut o.text);
                self.parts("/payload/parts", &mut o.parts);
                if let Some(result) = &mut o.result {
                    self.json("/payload/result", result, &mut path);
                }
            }
            Payload::Meta(m) => {
                if let Some(data) = &mut m.data {
                    self.json("/payload/data", data, &mut path);
                }
            }
        }
        if let Some(extra) = &mut event.extra {
            self.json("/extra", extra, &mut path);
        }
        if let Some(cwd) = &mut event.context.cwd {
            self.string(&|| "/context/cwd".into(), cwd);
        }
        // The source file is a place on this machine, not content: pseudonyms only.
        if let Some(pseudonyms) = &self.redactor.pseudonyms
            && let Some(new) = pseudonyms.file(&event.source.file, &self.scope.users, &mut self.pseudonyms)
        {
            event.source.file = new;
        }
    }

    fn parts(&mut self, at: &str, parts: &mut [Part]) {
        for (i, part) in parts.iter_mut().enumerate() {
            match part {
                Part::Text { text } => self.string(&|| format!("{at}/{i}/text"), text),
                Part::Image { url: Some(url), .. } | Part::Document { url: Some(url), .. } if !is_data_url(url) => {
                    self.string(&|| format!("{at}/{i}/url"), url);
                }
                _ => {}
            }
        }
    }

    /// Redacts a string field; `path` makes its JSON Pointer, only when a secret is found.
    fn string(&mut self, path: &dyn Fn() -> String, text: &mut String) {
        if let Some(new) = self.text(path, text) {
            *text = new;
        }
    }

    fn json(&mut self, at: &str, value: &mut Json, path: &mut String) {
        if !self.may_change(value.get()) {
            return;
        }
        path.clear();
        path.push_str(at);
        if let Some(new) = json::rewrite(value.raw(), path, self) {
            *value = Json::parse(&new).expect("rewritten JSON is valid");
        }
    }

    /// `text` with its secrets replaced and then its pseudonyms, or `None` when unchanged.
    fn text(&mut self, path: &dyn Fn() -> String, text: &str) -> Option<String> {
        if is_data_url(text) {
            return None;
        }
        let hits = self.redactor.scanner.hits(text);
        let redacted = replace_hits(text, &hits);
        self.hits.extend(hits.iter().map(|hit| (path(), hit.rule)));
        let current = redacted.as_deref().unwrap_or(text);
        match self.pseudonymize(current) {
            Some(new) => Some(new),
            None => redacted,
        }
    }

    fn pseudonymize(&mut self, text: &str) -> Option<String> {
        let pseudonyms = self.redactor.pseudonyms.as_ref()?;
        pseudonyms.apply(text, &self.scope.users, &mut self.pseudonyms)
    }
}

impl json::Strings for Walk<'_, '_> {
    /// Keywords and the characters pseudonyms look for are ASCII and hold no `"` or `\`, so
    /// they appear in the raw text whenever they appear in a decoded string, unless a `\u` or
    /// `\/` escape spells them.
    fn may_change(&self, raw: &str) -> bool {
        if self.redactor.pseudonyms.is_some() || raw.contains("\\u") || raw.contains("\\/") {
            return true;
        }
        self.redactor.scanner.may_match(raw)
    }

    fn exempt(&self, key: &str, entries: &[(String, &RawValue)]) -> bool {
        exempt_key(key, entries)
    }

    fn value(&mut self, path: &str, text: &str) -> Option<String> {
        self.text(&|| path.to_owned(), text)
    }

    fn key(&mut self, _path: &str, key: &str) -> Option<String> {
        self.pseudonymize(key)
    }
}
