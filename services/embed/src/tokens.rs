//! Which word pieces become tokens for late interaction
//! ([`trine_core::late`]), the same for every embedder.
//!
//! A memory and a query keep the same pieces: every piece but the special
//! ones, punctuation and the language's common words (NLTK's, as the
//! lexical channel's, judged on the lowercased piece), unless nothing would
//! be left: then every piece but the special ones. Late interaction's cost
//! grows with a memory's tokens (docs/benchmarks.md, "Late interaction's
//! cost"): of a Debian text's about 98 MiniLM word pieces, 58 are kept.

use trine_core::common::is_common;
use trine_core::{Fold, Language};

/// Whose tokens are asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A memory's, stored beside its vector; the language whose common
    /// words it leaves out (none: every word), the collection's, as a
    /// query's.
    Memory(Option<Language>),
    /// A query's; the language whose common words it leaves out (none:
    /// every word).
    Query(Option<Language>),
}

/// BERT's special tokens, never a token of a text.
const SPECIAL: &[&str] = &["[CLS]", "[SEP]", "[PAD]", "[MASK]"];

/// A piece made of punctuation only (`?`, `,`, `##.`).
pub(crate) fn punctuation(piece: &str) -> bool {
    !piece.chars().any(|c| c.is_alphanumeric() || c == '_')
}

pub(crate) fn special(piece: &str) -> bool {
    SPECIAL.contains(&piece)
}

impl Side {
    /// The language whose common words this side leaves out.
    pub fn language(self) -> Option<Language> {
        match self {
            Side::Memory(language) | Side::Query(language) => language,
        }
    }
}

/// The positions of `pieces` that become tokens on `side`.
pub(crate) fn kept(pieces: &[&str], side: Side) -> Vec<usize> {
    let plain: Vec<usize> = (0..pieces.len()).filter(|&i| !special(pieces[i])).collect();
    let fold = Fold::of_index(false, None);
    let language = side.language();
    let meant: Vec<usize> = plain
        .iter()
        .copied()
        .filter(|&i| !punctuation(pieces[i]))
        .filter(|&i| language.is_none_or(|l| !is_common(&pieces[i].to_lowercase(), l, fold)))
        .collect();
    if meant.is_empty() { plain } else { meant }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_pieces_by_side() {
        let en = Side::Query(Some(Language::English));
        let memory = Side::Memory(Some(Language::English));
        // (pieces, side, kept positions)
        let table: &[(&[&str], Side, &[usize])] = &[
            (
                &["[CLS]", "when", "did", "she", "go", "hiking", "?", "[SEP]"],
                en,
                &[4, 5],
            ),
            // A memory keeps what a query would.
            (
                &["[CLS]", "when", "did", "she", "go", "hiking", "?", "[SEP]"],
                memory,
                &[4, 5],
            ),
            (&["hiking", "?", "##."], memory, &[0]),
            (&["the", "cat", ",", "the", "dog"], memory, &[1, 4]),
            // Common words only: every piece but the special ones stays.
            (&["[CLS]", "to", "be", "[SEP]"], en, &[1, 2]),
            (&["[CLS]", "to", "be", "!", "[SEP]"], memory, &[1, 2, 3]),
            // No language: only punctuation goes.
            (&["when", "did", "?"], Side::Query(None), &[0, 1]),
            (&["when", "did", "?"], Side::Memory(None), &[0, 1]),
            (&["When", "hike"], en, &[1]),
        ];
        for (pieces, side, want) in table {
            assert_eq!(kept(pieces, *side), *want, "{pieces:?} {side:?}");
        }
    }
}
