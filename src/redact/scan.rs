//! Finding secrets in one text: a keyword pass over the whole text picks the rules that can
//! match, and only their patterns run.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::{Regex, RegexBuilder, RegexSet};

/// The lazy DFA cache of each rule's pattern, per thread. The default (2 MiB) is too small for
/// the generic rule, whose counted repetitions make many states: the cache is cleared and
/// rebuilt over and over, a quarter of a redacted run's time.
const DFA_CACHE_BYTES: usize = 32 << 20;

use super::rules::{RULES, Rule};

/// The compiled rules; built once per run and shared by the reading threads.
pub struct Scanner {
    /// The keywords of the rules whose patterns ignore case (`(?i)`), ASCII case ignored, and
    /// of the others, case kept: a keyword must then appear as the pattern spells it.
    keywords: [Keywords; 2],
    compiled: Vec<Compiled>,
}

/// Keywords in one automaton, and the rule of each.
struct Keywords {
    automaton: AhoCorasick,
    rule_of_keyword: Vec<usize>,
}

struct Compiled {
    rule: &'static Rule,
    regex: Regex,
    allow: Option<RegexSet>,
}

/// A secret found in a text: its byte range and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Start of the secret in the text.
    pub start: usize,
    /// End of the secret in the text.
    pub end: usize,
    /// The rule's id.
    pub rule: &'static str,
}

impl Scanner {
    /// Compiles [`RULES`].
    ///
    /// # Errors
    /// When a pattern does not compile (a bug, caught by the tests).
    pub fn new() -> Result<Self, String> {
        // Keywords and their rules: [case ignored, case kept].
        let mut words: [(Vec<&str>, Vec<usize>); 2] = Default::default();
        let mut compiled = Vec::new();
        for (i, rule) in RULES.iter().enumerate() {
            let (list, rules) = &mut words[usize::from(!rule.pattern.starts_with("(?i)"))];
            list.extend(rule.keywords);
            rules.extend(rule.keywords.iter().map(|_| i));
            let regex = RegexBuilder::new(rule.pattern)
                .dfa_size_limit(DFA_CACHE_BYTES)
                .build()
                .map_err(|e| format!("rule {}: {e}", rule.id))?;
            let allow: Vec<&str> = rule.allow.iter().flat_map(|list| list.iter().copied()).collect();
            let allow = if allow.is_empty() {
                None
            } else {
                Some(RegexSet::new(allow).map_err(|e| format!("rule {}: {e}", rule.id))?)
            };
            compiled.push(Compiled { rule, regex, allow });
        }
        assert!(RULES.len() <= 64, "candidate rules are kept in a u64");
        let [folded, exact] = words;
        Ok(Scanner { keywords: [Keywords::new(folded, true)?, Keywords::new(exact, false)?], compiled })
    }

    /// Whether a keyword of some rule appears in `text`; false means no rule can match it.
    pub fn may_match(&self, text: &str) -> bool {
        self.keywords.iter().any(|k| k.automaton.is_match(text))
    }

    /// The rules whose keywords appear in `text`, as a bit set of rule indexes.
    fn candidates(&self, text: &str) -> u64 {
        let mut set = 0u64;
        for keywords in &self.keywords {
            // A quick search first: most texts hold no keyword at all.
            if !keywords.automaton.is_match(text) {
                continue;
            }
            // Overlapping, so that a keyword inside another (`token` in `x-auth-token`) counts.
            for found in keywords.automaton.find_overlapping_iter(text) {
                set |= 1 << keywords.rule_of_keyword[found.pattern().as_usize()];
            }
        }
        set
    }

    /// The secrets in `text`, in order and not overlapping; where matches of two rules
    /// overlap, they become one hit named by the earlier rule.
    pub fn hits(&self, text: &str) -> Vec<Hit> {
        let mut set = self.candidates(text);
        if set == 0 {
            return Vec::new();
        }
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        while set != 0 {
            let i = set.trailing_zeros() as usize;
            set &= set - 1;
            let rule = &self.compiled[i];
            for captures in rule.regex.captures_iter(text) {
                // The first group that took part is the secret; without one, the whole match.
                let span = captures.iter().skip(1).flatten().next().or_else(|| captures.get(0));
                let Some(span) = span else { continue };
                if rule.accepts(span.as_str()) {
                    found.push((span.start(), span.end(), i));
                }
            }
        }
        found.sort_unstable();
        let mut hits: Vec<(usize, usize, usize)> = Vec::with_capacity(found.len());
        for (start, end, i) in found {
            match hits.last_mut() {
                Some(last) if start < last.1 => {
                    last.1 = last.1.max(end);
                    last.2 = last.2.min(i);
                }
                _ => hits.push((start, end, i)),
            }
        }
        hits.into_iter().map(|(start, end, i)| Hit { start, end, rule: RULES[i].id }).collect()
    }
}

impl Keywords {
    fn new((list, rule_of_keyword): (Vec<&str>, Vec<usize>), ignore_case: bool) -> Result<Self, String> {
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(ignore_case)
            .match_kind(MatchKind::Standard)
            .build(list)
            .map_err(|e| e.to_string())?;
        Ok(Keywords { automaton, rule_of_keyword })
    }
}

impl Compiled {
    /// Whether a matched value is a secret: random enough, and not a known non-secret.
    fn accepts(&self, value: &str) -> bool {
        if self.rule.entropy.is_some_and(|floor| entropy(value) < floor) {
            return false;
        }
        !self.allow.as_ref().is_some_and(|allow| allow.is_match(value))
    }
}

/// Shannon entropy of the bytes of `text`, in bits per byte.
pub fn entropy(text: &str) -> f64 {
    let mut counts = [0u32; 256];
    for &b in text.as_bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = text.len() as f64;
    counts.iter().filter(|&&n| n > 0).map(|&n| f64::from(n) / len).map(|p| -p * p.log2()).sum()
}
