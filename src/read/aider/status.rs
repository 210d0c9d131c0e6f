//! Aider's notices (the `> ` lines of the chat history): what each says, and the figures of a
//! `Tokens:` line.

use serde_json::{Map, Value, json};

use crate::model::Usage;

/// What a notice says.
#[derive(Debug, PartialEq)]
pub(super) enum Notice<'a> {
    /// `Tokens: … sent, … received. Cost: …`: the usage of one message.
    Tokens(Tokens<'a>),
    /// `Applied edit to <path>`.
    Edit(&'a str),
    /// `Running <command>`.
    Shell(&'a str),
    /// `Aider v<version>`.
    Version(&'a str),
    /// `Main model: <model> with <format> edit format` (`Model:` before 0.60).
    Model { model: &'a str, edit_format: Option<&'a str> },
    /// `Restored previous conversation history.`: the run goes on from the run before it.
    Restored,
    /// Anything else: questions and answers, commits, files added, warnings and errors.
    Other,
}

impl<'a> Notice<'a> {
    /// What the text of a notice says (its first line without the `> `).
    pub(super) fn of(text: &'a str) -> Notice<'a> {
        if let Some(tokens) = Tokens::parse(text) {
            return Notice::Tokens(tokens);
        }
        let first = text.lines().next().unwrap_or_default();
        if let Some(path) = first.strip_prefix("Applied edit to ") {
            return Notice::Edit(path.trim());
        }
        if let Some(command) = text.strip_prefix("Running ") {
            return Notice::Shell(command.trim());
        }
        if let Some(version) = first.strip_prefix("Aider v") {
            return Notice::Version(version.trim());
        }
        if let Some(rest) = first.strip_prefix("Main model: ").or_else(|| first.strip_prefix("Model: ")) {
            let (model, edit_format) = match rest.split_once(" with ") {
                // `diff edit format, prompt cache, infinite output`
                Some((model, format)) => (model, format.split_once(" edit format").map(|(f, _)| f)),
                None => (rest, None),
            };
            return Notice::Model { model: model.trim(), edit_format: edit_format.map(str::trim) };
        }
        if first == "Restored previous conversation history." {
            return Notice::Restored;
        }
        Notice::Other
    }
}

/// The fields of a notice that is a question Aider asked and the answer
/// (`Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y`), or of a commit
/// (`Commit 1b2614a feat: …`); empty for other notices.
pub(super) fn details(text: &str) -> Map<String, Value> {
    let mut data = Map::new();
    if text.contains("(Y)es/(N)o")
        && let Some((question, answer)) = text.rsplit_once("]: ")
    {
        data.insert("question".into(), json!(format!("{question}]").trim()));
        data.insert("answer".into(), json!(answer.trim()));
    } else if let Some((hash, message)) = text.strip_prefix("Commit ").and_then(|rest| rest.split_once(' '))
        && hash.len() >= 7
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
    {
        data.insert("commit".into(), json!(hash));
        data.insert("message".into(), json!(message));
    }
    data
}

/// One count of a `Tokens:` line: as written, and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Count<'a> {
    /// The figure as written: `2.4k`, `104`.
    pub text: &'a str,
    /// Its value: 2,400 for `2.4k`.
    pub value: u64,
}

impl<'a> Count<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let value = match text.strip_suffix('k') {
            Some(thousands) => {
                let n: f64 = thousands.parse().ok()?;
                (n.is_finite() && n >= 0.0).then(|| (n * 1000.0).round() as u64)?
            }
            None => text.parse().ok()?,
        };
        Some(Count { text, value })
    }

    /// Whether Aider rounded the figure: it writes counts of 1,000 and more in thousands.
    pub fn is_rounded(&self) -> bool {
        self.text.ends_with('k')
    }
}

/// The figures of a `Tokens:` line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tokens<'a> {
    /// Tokens sent: the prompt, cache reads and writes included.
    pub sent: Count<'a>,
    /// Of those, written to the prompt cache; absent when none.
    pub cache_write: Option<Count<'a>>,
    /// Of those, read from the prompt cache; absent when none.
    pub cache_hit: Option<Count<'a>>,
    /// Tokens received.
    pub received: Count<'a>,
    /// The message's cost in US dollars, as Aider computed it; absent for models without prices.
    pub message_cost: Option<f64>,
    /// The run's cost so far.
    pub session_cost: Option<f64>,
}

impl<'a> Tokens<'a> {
    /// The figures of a notice `Tokens: 9.4k sent, 1.2k cache write, 3.1k cache hit, 237
    /// received.`, then ` Cost: $0.0015 message, $0.01 session.` on the same line or the next;
    /// `None` for another notice.
    pub(super) fn parse(text: &'a str) -> Option<Self> {
        let rest = text.strip_prefix("Tokens: ")?;
        let end = rest.find(" received.")?;
        let (counts, after) = (&rest[..end + " received".len()], &rest[end + " received.".len()..]);
        let (mut sent, mut cache_write, mut cache_hit, mut received) = (None, None, None, None);
        for item in counts.split(", ") {
            let (figure, label) = item.split_once(' ')?;
            let count = Count::parse(figure)?;
            let slot = match label {
                "sent" => &mut sent,
                "cache write" => &mut cache_write,
                "cache hit" => &mut cache_hit,
                "received" => &mut received,
                _ => return None,
            };
            *slot = Some(count);
        }
        let (message_cost, session_cost) = match after.trim_start().strip_prefix("Cost: ") {
            Some(cost) => {
                let (message, session) = cost.split_once(", ")?;
                let dollars =
                    |s: &str, label: &str| s.trim().strip_prefix('$')?.strip_suffix(label)?.trim().parse().ok();
                (Some(dollars(message, " message")?), Some(dollars(session, " session.")?))
            }
            None if after.trim().is_empty() => (None, None),
            None => return None,
        };
        Some(Tokens { sent: sent?, cache_write, cache_hit, received: received?, message_cost, session_cost })
    }

    /// The usage these figures give: `input_tokens` is what was sent less the cache reads and
    /// writes; counts Aider does not write are null.
    pub(super) fn usage(&self, model: Option<&str>) -> Usage {
        let cached = self.cache_hit.map_or(0, |c| c.value) + self.cache_write.map_or(0, |c| c.value);
        Usage {
            input_tokens: Some(self.sent.value.saturating_sub(cached)),
            cache_read_tokens: self.cache_hit.map(|c| c.value),
            cache_write_tokens: self.cache_write.map(|c| c.value),
            cache_write_1h_tokens: None,
            output_tokens: Some(self.received.value),
            reasoning_tokens: None,
            total_tokens: Some(self.sent.value + self.received.value),
            cost_usd: self.message_cost,
            model: model.map(str::to_owned),
            response_id: None,
        }
    }

    /// The event's `data`: the line as written, each figure as written, whether any is rounded,
    /// and both costs.
    pub(super) fn data(&self, text: &str) -> Map<String, Value> {
        let figure = |c: Option<Count<'_>>| c.map_or(Value::Null, |c| json!(c.text));
        let counts = [Some(self.sent), self.cache_write, self.cache_hit, Some(self.received)];
        let mut data = Map::new();
        data.insert("text".into(), json!(text));
        data.insert("sent".into(), figure(Some(self.sent)));
        data.insert("cache_write".into(), figure(self.cache_write));
        data.insert("cache_hit".into(), figure(self.cache_hit));
        data.insert("received".into(), figure(Some(self.received)));
        data.insert("rounded".into(), json!(counts.iter().flatten().any(Count::is_rounded)));
        data.insert("message_cost_usd".into(), json!(self.message_cost));
        data.insert("session_cost_usd".into(), json!(self.session_cost));
        data
    }
}
