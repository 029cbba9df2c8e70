//! Which word pieces become tokens for late interaction
//! ([`trine_core::late`]), the same for every embedder.
//!
//! A memory keeps every piece but the special ones (the static model, whose
//! pieces have no context, also leaves out punctuation); a query leaves out
//! punctuation and its language's common words (NLTK's, as the lexical
//! channel's, judged on the lowercased piece), unless nothing would be left:
//! then it keeps every piece.

use trine_core::common::is_common;
use trine_core::{Fold, Language};

/// Whose tokens are asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A memory's, stored beside its vector.
    Memory,
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

/// The positions of `pieces` that become tokens on `side`; `drop_punctuation`
/// leaves punctuation out of a memory's as well.
pub(crate) fn kept(pieces: &[&str], side: Side, drop_punctuation: bool) -> Vec<usize> {
    let plain: Vec<usize> = (0..pieces.len()).filter(|&i| !special(pieces[i])).collect();
    match side {
        Side::Memory if drop_punctuation => plain
            .iter()
            .copied()
            .filter(|&i| !punctuation(pieces[i]))
            .collect(),
        Side::Memory => plain,
        Side::Query(language) => {
            let fold = Fold::of_index(false, None);
            let meant: Vec<usize> = plain
                .iter()
                .copied()
                .filter(|&i| !punctuation(pieces[i]))
                .filter(|&i| {
                    language.is_none_or(|l| !is_common(&pieces[i].to_lowercase(), l, fold))
                })
                .collect();
            if meant.is_empty() { plain } else { meant }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_pieces_by_side() {
        let en = Side::Query(Some(Language::English));
        // (pieces, side, drop punctuation, kept positions)
        let table: &[(&[&str], Side, bool, &[usize])] = &[
            (
                &["[CLS]", "when", "did", "she", "go", "hiking", "?", "[SEP]"],
                en,
                false,
                &[4, 5],
            ),
            (
                &["[CLS]", "when", "did", "she", "go", "hiking", "?", "[SEP]"],
                Side::Memory,
                false,
                &[1, 2, 3, 4, 5, 6],
            ),
            (&["hiking", "?", "##."], Side::Memory, true, &[0]),
            // Common words only: every piece but the special ones stays.
            (&["[CLS]", "to", "be", "[SEP]"], en, false, &[1, 2]),
            // No language: only punctuation goes.
            (&["when", "did", "?"], Side::Query(None), false, &[0, 1]),
            (&["When", "hike"], en, false, &[1]),
        ];
        for (pieces, side, drop, want) in table {
            assert_eq!(kept(pieces, *side, *drop), *want, "{pieces:?} {side:?}");
        }
    }
}
