//! Query terms (docs/design.md §2).
//!
//! Text is split on every character that is not a letter or digit, and each
//! piece is normalised as the collection's index does it ([`Fold`]: ASCII
//! folding where the index folds, then lowercase, Unicode-aware). This is
//! exactly what the `word` tokenizer of Qdrant's full-text index does —
//! split first, then fold and lowercase each token — so that every term can
//! match the index. Query terms additionally drop stop words and keep first
//! occurrences only.

use std::collections::HashSet;

use crate::fold::Fold;

/// English stop words dropped from queries (Lucene's classic English set).
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// The tokens of a text as the full-text index sees them: split on every
/// non-alphanumeric character, each piece folded as the index folds and
/// stemmed where it stems, empty pieces dropped. Repeats kept.
pub fn tokens(text: &str, fold: Fold) -> impl Iterator<Item = String> + '_ {
    pieces(text).map(move |piece| fold.apply(piece))
}

/// The tokens of a text that are not stop words, as the index holds them:
/// a stop word is judged after folding and before stemming, as the index
/// judges it. Repeats kept.
pub fn content_tokens(text: &str, fold: Fold) -> impl Iterator<Item = String> + '_ {
    content_words(text, fold).map(move |word| fold.stem(word))
}

/// The words of a text folded as the index folds them, stop words left
/// out, not stemmed. Repeats kept.
fn content_words(text: &str, fold: Fold) -> impl Iterator<Item = String> + '_ {
    pieces(text)
        .map(move |piece| fold.normalize(piece))
        .filter(|word| !is_stop_word(word))
}

/// The non-empty pieces of a text split on every non-alphanumeric character.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|piece| !piece.is_empty())
}

/// Whether a token is a stop word.
pub fn is_stop_word(token: &str) -> bool {
    STOP_WORDS.contains(&token)
}

/// The terms of a query: its words as the index folds them, without stop
/// words, in query order, first occurrences only — one word per stem where
/// the index stems (`meetings meeting` is the term `meetings`). A term is
/// what a `MatchText` filter is given: the index stems it as it stemmed the
/// texts (a stem is not always its own stem, so a stem would not do); where
/// trine compares a term with a text's tokens it stems it first
/// ([`Fold::stem`]).
pub fn terms(query: &str, fold: Fold) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for word in content_words(query, fold) {
        if seen.insert(fold.stem(word.clone())) {
            out.push(word);
        }
    }
    out
}

/// The most terms the lexical channel counts and scores for one query: a
/// pasted paragraph of hundreds of terms would otherwise make as many exact
/// counts (docs/design.md §5's counts are one per term).
pub const MAX_COUNTED_TERMS: usize = 32;

/// At most `max` of the terms, in query order: the longest ones (earlier
/// first among equals) — length standing in for rarity, which is not known
/// before counting. Fewer terms than `max` are kept as they are.
pub fn bounded(terms: Vec<String>, max: usize) -> Vec<String> {
    if terms.len() <= max {
        return terms;
    }
    let mut by_length: Vec<usize> = (0..terms.len()).collect();
    by_length.sort_by_key(|&i| (std::cmp::Reverse(terms[i].chars().count()), i));
    let mut keep = vec![false; terms.len()];
    for &i in by_length.iter().take(max) {
        keep[i] = true;
    }
    terms
        .into_iter()
        .zip(keep)
        .filter_map(|(t, k)| k.then_some(t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(query: &str, expected: &[&str]) {
        assert_eq!(terms(query, Fold::CASE), expected, "terms of {query:?}");
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
    fn long_queries_keep_their_longest_terms_in_order() {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let table: &[(&[&str], usize, &[&str])] = &[
            (&["billing", "retry"], 2, &["billing", "retry"]),
            (
                &["a1", "billing", "of", "retry", "x"],
                2,
                &["billing", "retry"],
            ),
            (&["ab", "cd", "ef", "ghi"], 3, &["ab", "cd", "ghi"]),
            (&["ședință", "abcdefgh", "xyz"], 1, &["abcdefgh"]),
            (&[], 3, &[]),
        ];
        for (terms, max, want) in table {
            assert_eq!(
                bounded(owned(terms), *max),
                owned(want),
                "{terms:?} to {max}"
            );
        }
        let many: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
        assert_eq!(bounded(many, MAX_COUNTED_TERMS).len(), MAX_COUNTED_TERMS);
    }

    #[test]
    fn tokens_keep_stop_words_and_repeats() {
        let got: Vec<String> = tokens("The cat, the HAT", Fold::CASE).collect();
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
                terms(query, Fold::ASCII),
                *want,
                "folded terms of {query:?}"
            );
        }
    }

    #[test]
    fn stemmed_terms_meet_across_inflections() {
        let english = Fold::ASCII.with_stemmer(Some(crate::Language::English));
        let table: &[(&str, &[&str])] = &[
            // One word per stem, as written (folded): the index stems it.
            ("meetings meeting MEET", &["meetings"]),
            (
                "Meeting 2026-11-11 09:58",
                &["meeting", "2026", "11", "09", "58"],
            ),
            // Stop words are judged before stemming, as the index judges them.
            ("the theirs", &["theirs"]),
            ("retried billing retries", &["retried", "billing"]),
        ];
        for (query, want) in table {
            assert_eq!(terms(query, english), *want, "stemmed terms of {query:?}");
        }
        let content: Vec<String> = content_tokens("The meetings of it", english).collect();
        assert_eq!(content, ["meet"]);
        let all: Vec<String> = tokens("The meetings", english).collect();
        assert_eq!(all, ["the", "meet"]);
    }
}
