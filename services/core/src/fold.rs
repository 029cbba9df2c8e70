//! How a token is normalised after the split (DESIGN.md §1, "Terms"): what
//! the collection's full-text index does, so that every term trine makes can
//! match the index and BM25, the sparse encoding and the verbatim check see
//! the words the index sees.
//!
//! `Fold::Ascii` is the index's `ascii_folding`: each character is replaced
//! by its ASCII equivalent where Lucene's ASCIIFoldingFilter has one
//! (`ș` → `s`, `ß` → `ss`, `æ` → `ae`), then the token is lowercased. A
//! query typed without diacritics, or with another inflection's, matches:
//! `sedinta`, `ședință` and `ședința` are all `sedinta`. `Fold::Case` only
//! lowercases: collections made before folding, until `trine text-index
//! --ascii-folding` upgrades them. The two agree on ASCII text.

use std::borrow::Cow;

/// A collection's token normalisation, read from its full-text index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fold {
    /// Lowercase only (an index without `ascii_folding`).
    Case,
    /// ASCII folding, then lowercase (an index with `ascii_folding`): what
    /// trine creates.
    #[default]
    Ascii,
}

impl Fold {
    /// The fold of an index that has `ascii_folding` set or not.
    pub fn of_index(ascii_folding: bool) -> Self {
        if ascii_folding {
            Self::Ascii
        } else {
            Self::Case
        }
    }

    /// Whether the index folds to ASCII.
    pub fn ascii_folding(self) -> bool {
        self == Self::Ascii
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Case => "lowercase",
            Self::Ascii => "ascii folding + lowercase",
        }
    }

    /// One piece of text (a token, or a whole text for the verbatim check)
    /// as the index normalises it: folded when the index folds, then
    /// lowercased.
    pub fn apply(self, piece: &str) -> String {
        match self {
            Self::Case => piece.to_lowercase(),
            Self::Ascii => to_ascii(piece).to_lowercase(),
        }
    }
}

/// The characters on which the full-text index's folding differs from
/// Lucene's list (the `asciifolding` crate), found by the per-character
/// agreement test against the index (`services/store/tests/
/// tokenizer_agreement.rs`): what the index makes of each.
const INDEX_DIFFERS: &[(char, &str)] = &[
    // LATIN CAPITAL LETTER SCHWA: Lucene folds it to `A`; the index keeps it
    // (and lowercases it to `ə`, which both fold to `a`).
    ('\u{018F}', "\u{018F}"),
];

/// `text` with every character the index folds replaced by its ASCII
/// equivalent; other characters are kept.
pub fn to_ascii(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut buf = [0u8; 4];
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if let Some((_, to)) = INDEX_DIFFERS.iter().find(|(from, _)| *from == c) {
            out.push_str(to);
        } else {
            out.push_str(&asciifolding::fold_to_ascii(c.encode_utf8(&mut buf)));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_follows_the_design() {
        let table: &[(&str, &str, &str)] = &[
            // text, Fold::Case, Fold::Ascii
            ("ședință", "ședință", "sedinta"),
            ("ȘEDINȚA", "ședința", "sedinta"),
            ("Straße", "straße", "strasse"),
            ("Ærøskøbing", "ærøskøbing", "aeroskobing"),
            ("ação", "ação", "acao"),
            ("Łódź", "łódź", "lodz"),
            ("naïve café", "naïve café", "naive cafe"),
            (
                "Meeting 2026-11-11 09:58",
                "meeting 2026-11-11 09:58",
                "meeting 2026-11-11 09:58",
            ),
            ("встреча", "встреча", "встреча"),
            ("会议", "会议", "会议"),
            ("Ə", "ə", "ə"),
            ("ə", "ə", "a"),
            ("", "", ""),
        ];
        for (text, case, ascii) in table {
            assert_eq!(Fold::Case.apply(text), *case, "lowercase of {text:?}");
            assert_eq!(Fold::Ascii.apply(text), *ascii, "folding of {text:?}");
        }
    }

    #[test]
    fn ascii_text_is_borrowed_and_the_folds_agree_on_it() {
        assert!(matches!(to_ascii("plain ASCII"), Cow::Borrowed(_)));
        for text in ["Meeting 2026-11-11", "CVE-2023-4863", "foo_bar.baz"] {
            assert_eq!(Fold::Case.apply(text), Fold::Ascii.apply(text));
        }
    }

    #[test]
    fn the_index_fold_is_read_from_its_flag() {
        assert_eq!(Fold::of_index(true), Fold::Ascii);
        assert_eq!(Fold::of_index(false), Fold::Case);
        assert!(Fold::default().ascii_folding());
    }
}
