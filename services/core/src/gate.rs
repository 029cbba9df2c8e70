//! The lexical gate (docs/design.md §3, `gate`): the query's salient tokens —
//! identifiers, IPs, versions and dates first, then content words — become a
//! `should` full-text condition; dense similarity ranks inside it.

use crate::fold::Fold;
use crate::terms::{is_stop_word, terms, tokens};

/// The most tokens a gate holds.
pub const MAX_GATE_TOKENS: usize = 16;

/// Whether a whitespace-separated word of the query is technical: it mixes
/// letters or digits with inner punctuation (`CVE-2023-4863`, `10.0.3.17`,
/// `v2.14.3`, `foo_bar.baz`, `2026-11-11`), or holds digits.
fn is_technical(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric());
    let has_digit = word.chars().any(|c| c.is_ascii_digit());
    let inner_punct = word.chars().any(|c| !c.is_alphanumeric());
    !word.is_empty() && (has_digit || inner_punct)
}

/// The gate's tokens, technical ones first, then content words (terms that
/// are not stop words and have at least three characters), without repeats,
/// at most [`MAX_GATE_TOKENS`]. Empty when the query has none: the caller
/// must refuse, never match everything.
pub fn salient_tokens(query: &str, fold: Fold) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: String| {
        if !out.contains(&t) && out.len() < MAX_GATE_TOKENS {
            out.push(t);
        }
    };
    // Words as the index folds them, before stemming: the index stems what
    // a filter gives it.
    let words = fold.with_stemmer(None);
    for word in query.split_whitespace().filter(|w| is_technical(w)) {
        tokens(word, words)
            .filter(|t| !is_stop_word(t))
            .for_each(&mut push);
    }
    for term in terms(query, fold) {
        if term.chars().count() >= 3 {
            push(term);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn technical_tokens_come_first() {
        let table: &[(&str, &[&str])] = &[
            (
                "is CVE-2023-4863 patched on the web tier",
                &["cve", "2023", "4863", "patched", "web", "tier"],
            ),
            (
                "errors from 10.0.3.17 after upgrade",
                &["10", "0", "3", "17", "errors", "from", "after", "upgrade"],
            ),
            ("the meeting on 2026-11-11", &["2026", "11", "meeting"]),
            (
                "libc6 1:2.36-9+deb12u4",
                &["libc6", "1", "2", "36", "9", "deb12u4"],
            ),
            (
                "how do we roll back a deploy",
                &["how", "roll", "back", "deploy"],
            ),
            ("a an of", &[]),
            ("   ", &[]),
        ];
        for (query, want) in table {
            assert_eq!(salient_tokens(query, Fold::CASE), *want, "{query:?}");
        }
    }

    #[test]
    fn gates_are_bounded() {
        let long: Vec<String> = (0..40).map(|i| format!("word{i}x")).collect();
        assert_eq!(
            salient_tokens(&long.join(" "), Fold::ASCII).len(),
            MAX_GATE_TOKENS
        );
    }
}
