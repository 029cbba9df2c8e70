//! fusion-svc: `Fusion.Fuse` — the lexical list, the semantic list and, for
//! queries of two terms or more, the third list of verbatim candidates in
//! lexical order, fused with reciprocal rank fusion (k = 60).
#![forbid(unsafe_code)]

mod service;

use trine_core::rrf::{self, Fused, ListKind, RankedList};
use uuid::Uuid;

pub use service::{FusionService, fuse_request, run};

/// Per-list weights: lexical 1, semantic 1, verbatim 2 by default.
///
/// With the verbatim list at 2, a verbatim match scores more than 2/61, the
/// most a hit that is not one can score (first in the lexical and the
/// semantic lists): an exact match outranks every other hit whatever BM25
/// makes of its length or term frequencies (DESIGN.md §1 says 1; trine eval
/// on the scale corpus measured both: docs/benchmarks.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub lexical: f64,
    pub semantic: f64,
    pub verbatim: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            lexical: 1.0,
            semantic: 1.0,
            verbatim: 2.0,
        }
    }
}

/// A lexical candidate as fusion sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalEntry {
    pub id: Uuid,
    pub score: f64,
    pub verbatim: bool,
}

/// Builds the three lists and fuses them: the verbatim list holds the
/// lexical candidates flagged verbatim, in lexical order, and exists only when
/// the query has two terms or more.
pub fn fuse(
    query: &str,
    lexical: &[LexicalEntry],
    semantic: &[(Uuid, f64)],
    weights: Weights,
    limit: usize,
) -> Vec<Fused> {
    let mut lists = vec![
        RankedList {
            kind: ListKind::Lexical,
            weight: weights.lexical,
            entries: lexical.iter().map(|c| (c.id, c.score)).collect(),
        },
        RankedList {
            kind: ListKind::Semantic,
            weight: weights.semantic,
            entries: semantic.to_vec(),
        },
    ];
    if trine_core::terms(query).len() >= 2 {
        lists.push(RankedList {
            kind: ListKind::Verbatim,
            weight: weights.verbatim,
            entries: lexical
                .iter()
                .filter(|c| c.verbatim)
                .map(|c| (c.id, c.score))
                .collect(),
        });
    }
    rrf::fuse(&lists, rrf::K, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn lex(n: u128, verbatim: bool) -> LexicalEntry {
        LexicalEntry {
            id: id(n),
            score: 1.0,
            verbatim,
        }
    }

    #[test]
    fn a_one_term_query_has_no_third_list() {
        let hits = fuse("meeting", &[lex(1, true)], &[], Weights::default(), 8);
        assert_eq!(hits[0].matched_by(), ["lexical"]);
        assert!((hits[0].score - 1.0 / 61.0).abs() < 1e-12);
    }

    #[test]
    fn a_verbatim_candidate_ranks_in_the_third_list_in_lexical_order() {
        let lexical = [lex(1, false), lex(2, true), lex(3, true)];
        let semantic = [(id(9), 0.9)];
        let hits = fuse(
            "Meeting 2026-11-11 09:58",
            &lexical,
            &semantic,
            Weights::default(),
            8,
        );
        assert_eq!(hits[0].id, id(2));
        assert_eq!(hits[0].matched_by(), ["lexical", "verbatim"]);
        assert_eq!(hits[0].placing(ListKind::Verbatim).unwrap().rank, 1);
        let third = hits.iter().find(|h| h.id == id(3)).unwrap();
        assert_eq!(third.placing(ListKind::Verbatim).unwrap().rank, 2);
    }

    #[test]
    fn weights_scale_a_list() {
        let weights = Weights {
            verbatim: 0.0,
            ..Weights::default()
        };
        let hits = fuse("a b c", &[lex(1, true)], &[], weights, 8);
        assert!((hits[0].score - 1.0 / 61.0).abs() < 1e-12);
    }
}
