//! The verbatim check (docs/design.md §4): the query appears in a
//! text, comparing both sides lowercased — and ASCII-folded where the
//! collection's index folds ([`Fold`]), so that the check confirms what the
//! index's phrase match finds — with every run of whitespace folded to one
//! space and the ends trimmed.

use crate::fold::Fold;

/// A text folded as the index folds (never stemmed: the check is for the
/// words as written), whitespace runs folded to one space, ends trimmed.
pub fn normalize(text: &str, fold: Fold) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&fold.normalize(word));
    }
    out
}

/// A query prepared for verbatim checks against many texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verbatim {
    needle: String,
    fold: Fold,
}

impl Verbatim {
    pub fn new(query: &str, fold: Fold) -> Self {
        Self {
            needle: normalize(query, fold),
            fold,
        }
    }

    /// Whether the query appears verbatim in `text`. An empty query matches
    /// nothing.
    pub fn in_text(&self, text: &str) -> bool {
        !self.needle.is_empty() && normalize(text, self.fold).contains(&self.needle)
    }

    /// Whether the query, normalised, is exactly this term: then every text
    /// holding the term as a token holds the query verbatim.
    pub fn is_token(&self, term: &str) -> bool {
        !self.needle.is_empty() && self.needle == term
    }

    /// Whether the query appears verbatim in the text or in the source.
    pub fn matches(&self, text: &str, source: Option<&str>) -> bool {
        self.in_text(text) || source.is_some_and(|s| self.in_text(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_follows_the_design() {
        let table: &[(&str, &str, Option<&str>, bool)] = &[
            (
                "Meeting 2026-11-11 09:58",
                "Meeting 2026-11-11 09:58\nBună ziua",
                None,
                true,
            ),
            (
                "meeting   2026-11-11 09:58",
                "MEETING 2026-11-11\t09:58",
                None,
                true,
            ),
            (
                "  Meeting 2026-11-11 09:58 ",
                "x meeting 2026-11-11 09:58 y",
                None,
                true,
            ),
            (
                "Meeting 2026-11-11 09:58",
                "Meeting 2026-11-11 09:45",
                None,
                false,
            ),
            (
                "Meeting 2026-11-11 09:58",
                "Meeting 2026 11 11 09 58",
                None,
                false,
            ),
            (
                "0b85ed4a",
                "a transcript",
                Some("recording/0b85ed4a/chunk-1"),
                true,
            ),
            ("0b85ed4a", "a transcript", None, false),
            ("ȘEDINȚĂ de lucru", "o ședință de lucru", None, true),
            ("", "anything", None, false),
            ("   ", "anything", Some("x"), false),
        ];
        for (query, text, source, want) in table {
            assert_eq!(
                Verbatim::new(query, Fold::CASE).matches(text, *source),
                *want,
                "{query:?} in {text:?} / {source:?}"
            );
        }
    }

    #[test]
    fn a_query_is_a_token_when_it_is_the_term_alone() {
        let table: &[(&str, &str, bool)] = &[
            ("943a48b", "943a48b", true),
            ("  Sedinta ", "sedinta", true),
            ("ȘEDINȚA", "sedinta", true),
            ("943a48b?", "943a48b", false),
            ("deb12u4", "deb", false),
            ("", "", false),
        ];
        for (query, term, want) in table {
            assert_eq!(
                Verbatim::new(query, Fold::ASCII).is_token(term),
                *want,
                "{query:?} / {term:?}"
            );
        }
    }

    #[test]
    fn normalize_folds_whitespace() {
        assert_eq!(normalize("  A\n\n b\tC  ", Fold::CASE), "a b c");
        assert_eq!(normalize("", Fold::ASCII), "");
    }

    #[test]
    fn folded_verbatim_meets_across_diacritics() {
        let table: &[(&str, &str, Fold, bool)] = &[
            ("sedinta de lucru", "o ședința de lucru", Fold::ASCII, true),
            ("ședință de lucru", "o sedinta de lucru", Fold::ASCII, true),
            ("sedinta de lucru", "o ședința de lucru", Fold::CASE, false),
            ("Straße 5", "strasse 5", Fold::ASCII, true),
            ("Straße 5", "strasse 5", Fold::CASE, false),
        ];
        for (query, text, fold, want) in table {
            assert_eq!(
                Verbatim::new(query, *fold).in_text(text),
                *want,
                "{query:?} in {text:?} under {fold:?}"
            );
        }
    }
}
