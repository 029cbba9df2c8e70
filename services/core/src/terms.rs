//! Query terms (DESIGN.md §1, "Terms").
//!
//! Text is split on every character that is not a letter or digit, and each
//! piece is normalised as the collection's index does it ([`Fold`]: ASCII
//! folding where the index folds, then lowercase, Unicode-aware). This is
//! exactly what the `word` tokenizer of Qdrant's full-text index does —
//! split first, then fold and lowercase each token — so that every term can
//! match the index. Query terms additionally drop stop words and keep first
//! occurrences only.

use crate::fold::Fold;

/// English stop words dropped from queries (Lucene's classic English set).
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// The tokens of a text as the full-text index sees them: split on every
/// non-alphanumeric character, each piece folded as the index folds,
/// empty pieces dropped. Repeats kept.
pub fn tokens(text: &str, fold: Fold) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|piece| !piece.is_empty())
        .map(move |piece| fold.apply(piece))
}

/// Whether a token is a stop word.
pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.contains(&token)
}

/// The terms of a query: its tokens without stop words, first occurrences
/// only, in query order.
pub fn terms(query: &str, fold: Fold) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in tokens(query, fold) {
        if !is_stop_word(&token) && !out.contains(&token) {
            out.push(token);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(query: &str, expected: &[&str]) {
        assert_eq!(terms(query, Fold::Case), expected, "terms of {query:?}");
    }

    #[test]
    fn terms_follow_the_design() {
        let table: &[(&str, &[&str])] = &[
            (
                "Meeting 2026-11-11 09:58",
                &["meeting", "2026", "11", "09", "58"],
            ),
            ("CVE-2023-4863", &["cve", "2023", "4863"]),
            ("ședință", &["ședință"]),
            ("ȘEDINȚĂ de lucru", &["ședință", "de", "lucru"]),
            ("foo_bar.baz", &["foo", "bar", "baz"]),
            ("1:2.36-9+deb12u4", &["1", "2", "36", "9", "deb12u4"]),
            ("the error in the handling", &["error", "handling"]),
            ("   ", &[]),
            ("", &[]),
            ("---", &[]),
            ("a the of", &[]),
            ("Straße STRASSE", &["straße", "strasse"]),
            ("x x X", &["x"]),
            ("10.0.0.1", &["10", "0", "1"]),
        ];
        for (query, expected) in table {
            check(query, expected);
        }
    }

    #[test]
    fn tokens_keep_stop_words_and_repeats() {
        let got: Vec<String> = tokens("The cat, the HAT", Fold::Case).collect();
        assert_eq!(got, ["the", "cat", "the", "hat"]);
    }

    #[test]
    fn folded_terms_meet_across_diacritics() {
        let table: &[(&str, &[&str])] = &[
            ("ședință", &["sedinta"]),
            ("sedinta", &["sedinta"]),
            ("ȘEDINȚA de lucru", &["sedinta", "de", "lucru"]),
            ("ședință ședința sedinta", &["sedinta"]),
            ("Straße STRASSE", &["strasse"]),
            (
                "Meeting 2026-11-11 09:58",
                &["meeting", "2026", "11", "09", "58"],
            ),
            ("façade—café", &["facade", "cafe"]),
        ];
        for (query, want) in table {
            assert_eq!(
                terms(query, Fold::Ascii),
                *want,
                "folded terms of {query:?}"
            );
        }
    }
}
