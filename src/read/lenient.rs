//! Optional fields read leniently: a value of the wrong kind in a field a reader can do without
//! is reported and read as absent, so the rest of the record survives.
//!
//! Parsing runs deep inside serde, which has no way to hand back a warning with the value. A
//! field's deserializer notes what it rejected here, with the address of the value in the line;
//! the line loop takes the notes after each line ([`take_rejected`]) and turns the address into
//! a column and a JSON path.

use std::cell::RefCell;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::model::MAX_COUNT;

/// A value a reader rejected: what it expected, what it found, and the address of the value.
#[derive(Debug, Clone)]
pub(crate) struct Rejected {
    /// What the field holds instead, such as "a token count (a whole number from 0 to …)".
    pub expected: &'static str,
    /// The value's text, shortened.
    pub found: String,
    /// Address of the value's first byte; 0 when it is not one value of the line.
    pub at: usize,
    /// The JSON path, when it is not found from the address.
    pub path: Option<&'static str>,
}

thread_local! {
    static REJECTED: RefCell<Vec<Rejected>> = const { RefCell::new(Vec::new()) };
}

/// Notes a rejected value: `raw` is the value as it sits in the line.
pub(crate) fn reject(expected: &'static str, raw: &RawValue) {
    let text = raw.get();
    let found = if text.chars().count() > 24 {
        format!("{}…", text.chars().take(24).collect::<String>())
    } else {
        text.to_owned()
    };
    REJECTED.with(|r| r.borrow_mut().push(Rejected { expected, found, at: text.as_ptr() as usize, path: None }));
}

/// Notes that the token counts at `path` add up past [`MAX_COUNT`]: the total is left unknown.
pub(crate) fn overflow(path: &'static str) {
    let rejected = Rejected {
        expected: "token counts that add up to at most 9223372036854775807",
        found: "a larger sum".into(),
        at: 0,
        path: Some(path),
    };
    REJECTED.with(|r| r.borrow_mut().push(rejected));
}

/// The values rejected on this thread since the last call.
pub(crate) fn take_rejected() -> Vec<Rejected> {
    REJECTED.with(|r| std::mem::take(&mut *r.borrow_mut()))
}

/// Whether values were rejected on this thread since [`take_rejected`] last ran.
pub(crate) fn has_rejected() -> bool {
    REJECTED.with(|r| !r.borrow().is_empty())
}

/// A token count as a source writes it: absent, a whole number from 0 to [`MAX_COUNT`], or
/// anything else (`-1`, `"5"`, `{}`, `1e400`), which is reported and counts as invalid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Count {
    /// Absent or `null`.
    #[default]
    Absent,
    /// A valid count.
    Valid(u64),
    /// Present, but not a count; reported.
    Invalid,
}

impl Count {
    /// The count, when valid.
    pub fn get(self) -> Option<u64> {
        match self {
            Count::Valid(n) => Some(n),
            _ => None,
        }
    }

    /// Whether the field held something that is not a count.
    pub fn is_invalid(self) -> bool {
        self == Count::Invalid
    }
}

/// What a token count must be, for messages.
const A_COUNT: &str = "a token count (a whole number from 0 to 9223372036854775807)";

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Some(raw) = Option::<&'de RawValue>::deserialize(deserializer)? else { return Ok(Count::Absent) };
        match raw.get().parse::<u64>() {
            Ok(n) if n <= MAX_COUNT => Ok(Count::Valid(n)),
            _ => {
                reject(A_COUNT, raw);
                Ok(Count::Invalid)
            }
        }
    }
}

/// Adds counts, `None` when the sum passes [`MAX_COUNT`].
pub fn checked_sum(counts: impl IntoIterator<Item = u64>) -> Option<u64> {
    counts.into_iter().try_fold(0u64, |sum, n| sum.checked_add(n)).filter(|sum| *sum <= MAX_COUNT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Usage {
        #[serde(default)]
        input_tokens: Count,
    }

    #[test]
    fn a_bad_count_is_invalid_and_noted_and_a_good_one_kept() {
        take_rejected();
        for (text, expected) in [
            (r#"{"input_tokens":12}"#, Count::Valid(12)),
            (r#"{"input_tokens":null}"#, Count::Absent),
            (r#"{}"#, Count::Absent),
            (r#"{"input_tokens":9223372036854775807}"#, Count::Valid(MAX_COUNT)),
        ] {
            assert_eq!(serde_json::from_str::<Usage>(text).unwrap().input_tokens, expected, "{text}");
        }
        assert!(take_rejected().is_empty());
        for bad in ["-1", "\"5\"", "{}", "1.5", "9223372036854775808", "18446744073709551616", "\"1e400\""] {
            let text = format!(r#"{{"input_tokens":{bad}}}"#);
            assert_eq!(serde_json::from_str::<Usage>(&text).unwrap().input_tokens, Count::Invalid, "{text}");
            let rejected = take_rejected();
            assert_eq!(rejected.len(), 1);
            assert_eq!(rejected[0].at - text.as_ptr() as usize, 16, "the address of the value in {text}");
        }
    }

    #[test]
    fn sums_past_the_largest_count_are_none() {
        assert_eq!(checked_sum([1, 2, 3]), Some(6));
        assert_eq!(checked_sum([MAX_COUNT, 1]), None);
        assert_eq!(checked_sum([u64::MAX, u64::MAX]), None);
    }
}
