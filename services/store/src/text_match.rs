//! How a full-text condition is written so that Qdrant's planner never scans
//! a tenant for it: the plan both backends translate (`edge::filter`,
//! `server::filter`).
//!
//! Qdrant's planner (read in qdrant-edge 0.9: `estimate_cardinality` of the
//! full-text index; the server runs the same segment code) estimates a
//! `text` (all tokens) or `phrase` match holding a token its index never saw
//! as "exactly 0 points" but gives it no primary clause. The planner then takes another condition
//! as the primary one — the tenant's keyword — and checks the text match on
//! every point of the tenant: about 5 ms at 385,000 memories, for a read
//! that finds nothing. A `text_any` match of one token never lacks its
//! primary clause: for an unseen token it is an empty posting list.
//!
//! So a term of one token is written as `text_any` of it (the same points),
//! and any other text match keeps its own condition and gets one `text_any`
//! guard per distinct token. Every guard is implied by the match (each of its
//! tokens is one of the match's tokens: `tokens` splits as the index does,
//! `tests/tokenizer_agreement.rs`), so no point is gained or lost; where all
//! tokens are known the match's own estimate is the smallest and it stays
//! the primary clause.

/// What one full-text condition matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matching {
    /// Every token of the text, anywhere (`all_terms`, the gate's terms).
    AllTokens,
    /// The tokens in order (`phrase`, `source_phrase`).
    Phrase,
}

/// One Qdrant condition of a full-text match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TextCondition<'a> {
    /// `text`: every token of it.
    All(&'a str),
    /// `phrase`: its tokens in order.
    Phrase(&'a str),
    /// `text_any` of one token.
    Any(&'a str),
}

/// The conditions, all `must`, that match `text` as `matching` says: the
/// match itself first (unless a one-token term, then its `text_any` alone),
/// then one `text_any` guard per distinct token, in text order. The split is
/// `trine_core::tokens`' before its fold: the index folds each guard itself,
/// as it folds the match.
pub(crate) fn conditions(text: &str, matching: Matching) -> Vec<TextCondition<'_>> {
    let mut pieces: Vec<&str> = Vec::new();
    for piece in text.split(|c: char| !c.is_alphanumeric()) {
        if !piece.is_empty() && !pieces.contains(&piece) {
            pieces.push(piece);
        }
    }
    let own = match (matching, pieces.as_slice()) {
        (Matching::AllTokens, [_]) => None,
        (Matching::AllTokens, _) => Some(TextCondition::All(text)),
        (Matching::Phrase, _) => Some(TextCondition::Phrase(text)),
    };
    own.into_iter()
        .chain(pieces.into_iter().map(TextCondition::Any))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use TextCondition::{All, Any, Phrase};

    #[test]
    fn each_match_is_written_with_a_guard_per_token() {
        let table: &[(&str, Matching, &[TextCondition])] = &[
            // A term of one token: text_any of it, nothing else.
            ("meeting", Matching::AllTokens, &[Any("meeting")]),
            ("Ședința", Matching::AllTokens, &[Any("Ședința")]),
            // A term the split cuts: the match and a guard per token.
            (
                "foo_bar",
                Matching::AllTokens,
                &[All("foo_bar"), Any("foo"), Any("bar")],
            ),
            // A phrase: the phrase, then its distinct tokens in order.
            (
                "Meeting 2026-11-11 09:58",
                Matching::Phrase,
                &[
                    Phrase("Meeting 2026-11-11 09:58"),
                    Any("Meeting"),
                    Any("2026"),
                    Any("11"),
                    Any("09"),
                    Any("58"),
                ],
            ),
            // A phrase of one token still keeps the phrase.
            (
                "deb12u4",
                Matching::Phrase,
                &[Phrase("deb12u4"), Any("deb12u4")],
            ),
        ];
        for (text, matching, want) in table {
            assert_eq!(
                conditions(text, *matching),
                *want,
                "{text:?} as {matching:?}"
            );
        }
    }
}
