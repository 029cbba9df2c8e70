//! Late interaction (docs/search.md, "Late interaction"): the fused list's
//! first hits judged again, word piece by word piece.
//!
//! A memory's tokens are its embedder's own vectors of its word pieces —
//! MiniLM's last layer before pooling, the static model's table rows — kept
//! beside its vector; a question's tokens are the same of its word pieces,
//! its common words and punctuation left out, each scaled by its weight.
//! MaxSim (ColBERT's rule, zero-shot) scores a memory by the sum over the
//! question's tokens of the best dot product with any of the memory's: the
//! store computes it over the ids it is given (Qdrant's multivector
//! `max_sim`). What is pure is here: which search is judged again
//! ([`judged`]) and the new order ([`rerank`]): the first `depth` hits
//! outside the verbatim tier fused again by RRF of their fused order
//! (weight 1) and their MaxSim order (`weight`). The tier stays on top,
//! hits after the depth keep their places, and the scores shown are the
//! fused list's, in the new order: they never rise down an answer.

use std::collections::HashMap;

use uuid::Uuid;

use crate::common::titled;
use crate::fusion::{Fused, Placing};

/// How many of the fused list's first hits are judged again by default.
pub const DEPTH: usize = 40;

/// The most hits a search may have judged again.
pub const MAX_DEPTH: usize = 256;

/// The most tokens a question is judged on (the embedders read at most 256
/// word pieces of a query).
pub const MAX_QUERY_TOKENS: usize = 256;

/// A text's token vectors: `rows` holds one vector of `dim` values a
/// token, row after row. A memory's are unit length; a query's are each
/// scaled by its token's weight.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tokens {
    pub dim: usize,
    pub rows: Vec<f32>,
}

impl Tokens {
    /// Tokens of `dim` values from rows, each checked to have `dim` values.
    pub fn of_rows<R: AsRef<[f32]>>(dim: usize, rows: &[R]) -> Option<Self> {
        let mut out = Vec::with_capacity(rows.len() * dim);
        for row in rows {
            let row = row.as_ref();
            if row.len() != dim {
                return None;
            }
            out.extend_from_slice(row);
        }
        Some(Self { dim, rows: out })
    }

    /// How many tokens.
    pub fn len(&self) -> usize {
        self.rows.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each token's vector.
    pub fn iter(&self) -> impl Iterator<Item = &[f32]> {
        self.rows.chunks_exact(self.dim.max(1))
    }
}

/// MaxSim: the sum over `query`'s tokens of the best dot product with any
/// of `memory`'s (0 when either has none): the score the store computes
/// over a multivector (Qdrant's `max_sim` comparator, dot product).
pub fn max_sim(query: &Tokens, memory: &Tokens) -> f64 {
    if query.dim != memory.dim || memory.is_empty() {
        return 0.0;
    }
    query
        .iter()
        .map(|q| {
            memory
                .iter()
                .map(|m| q.iter().zip(m).map(|(a, b)| f64::from(a * b)).sum::<f64>())
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .sum()
}

/// Whether a search's hits are judged again: every query but one shaped
/// like a title or an identifier as its words see it
/// ([`crate::common::titled`]: `Meeting 2026-11-11 09:58`, `libc6`; an
/// apostrophe or hyphen between letters joins a sentence's words), whose
/// answer is the exact match the lexical channel and the tier find; word
/// pieces of a date or a hash say nothing of meaning.
pub fn judged(query: &str) -> bool {
    !query.trim().is_empty() && !titled(query)
}

/// Reorders `hits` (an answer: the tier first, each part best first) by
/// late interaction. `maxsim` holds each judged hit's MaxSim score (a hit
/// without one — no tokens stored — keeps only its fused vote); `weight` is
/// the MaxSim order's vote beside the fused order's 1, `k` RRF's constant.
/// Each judged hit gets its late placing (rank and score in the MaxSim
/// order, its RRF term). With `weight` 0 or no score, nothing moves.
pub fn rerank(hits: &mut [Fused], maxsim: &HashMap<Uuid, f64>, weight: f64, k: f64, depth: usize) {
    let end = depth.min(hits.len());
    let start = hits[..end].iter().take_while(|h| h.tier).count();
    if weight <= 0.0 || maxsim.is_empty() || end <= start + 1 {
        return;
    }
    let head = &mut hits[start..end];
    let shown: Vec<f64> = head.iter().map(|h| h.score).collect();
    // The MaxSim order over the judged hits that have a score; ties keep
    // the fused order.
    let mut by_late: Vec<usize> = (0..head.len())
        .filter(|&i| maxsim.contains_key(&head[i].id))
        .collect();
    by_late.sort_by(|&a, &b| maxsim[&head[b].id].total_cmp(&maxsim[&head[a].id]));
    let mut vote: Vec<f64> = (0..head.len()).map(|i| rrf(1.0, k, i)).collect();
    for (place, &i) in by_late.iter().enumerate() {
        let term = rrf(weight, k, place);
        vote[i] += term;
        head[i].late = Some(Placing {
            rank: u32::try_from(place + 1).unwrap_or(u32::MAX),
            score: maxsim[&head[i].id],
            normalized: term,
        });
    }
    let mut order: Vec<usize> = (0..head.len()).collect();
    order.sort_by(|&a, &b| vote[b].total_cmp(&vote[a]).then(a.cmp(&b)));
    let mut reordered: Vec<Fused> = order.iter().map(|&i| head[i].clone()).collect();
    for (hit, score) in reordered.iter_mut().zip(shown) {
        hit.score = score;
    }
    head.clone_from_slice(&reordered);
}

/// The ids whose MaxSim [`rerank`] takes: the first `depth` of `hits`
/// outside the tier; none where fewer than two, which no order could
/// change.
pub fn scored_ids(hits: &[Fused], depth: usize) -> Vec<Uuid> {
    let ids: Vec<Uuid> = hits
        .iter()
        .take(depth)
        .filter(|h| !h.tier)
        .map(|h| h.id)
        .collect();
    if ids.len() < 2 { Vec::new() } else { ids }
}

/// RRF's term of the 0-based `place` in a list of weight `weight`.
fn rrf(weight: f64, k: f64, place: usize) -> f64 {
    weight / (k + place as f64 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(spec: &[(u128, f64, bool)]) -> Vec<Fused> {
        spec.iter()
            .map(|&(n, score, tier)| Fused {
                id: Uuid::from_u128(n),
                score,
                fused: score,
                tier,
                placings: Vec::new(),
                late: None,
            })
            .collect()
    }

    fn ids(hits: &[Fused]) -> Vec<u128> {
        hits.iter().map(|h| h.id.as_u128()).collect()
    }

    #[test]
    fn the_scored_ids_are_the_first_depth_outside_the_tier() {
        // (hits: id, score, tier; depth; the ids scored)
        type Hits<'a> = &'a [(u128, f64, bool)];
        let table: &[(Hits, usize, &[u128])] = &[
            (
                &[(1, 0.9, true), (2, 0.8, false), (3, 0.7, false)],
                3,
                &[2, 3],
            ),
            (
                &[(1, 0.9, false), (2, 0.8, false), (3, 0.7, false)],
                2,
                &[1, 2],
            ),
            // The tier counts towards the depth.
            (&[(1, 0.9, true), (2, 0.8, false), (3, 0.7, false)], 2, &[]),
            (&[(1, 0.9, false)], 40, &[]),
            (&[], 40, &[]),
        ];
        for (spec, depth, want) in table {
            let got: Vec<u128> = scored_ids(&hits(spec), *depth)
                .iter()
                .map(|id| id.as_u128())
                .collect();
            assert_eq!(got, *want, "{spec:?} at depth {depth}");
        }
    }

    #[test]
    fn max_sim_sums_each_query_tokens_best_match() {
        let t = |rows: &[[f32; 2]]| Tokens::of_rows(2, rows).unwrap();
        // (query, memory, MaxSim)
        let table = [
            (t(&[[1.0, 0.0]]), t(&[[1.0, 0.0], [0.0, 1.0]]), 1.0),
            (t(&[[1.0, 0.0], [0.0, 1.0]]), t(&[[0.6, 0.8]]), 1.4),
            // A weighted token counts its weight.
            (
                t(&[[2.0, 0.0], [0.0, 0.5]]),
                t(&[[1.0, 0.0], [0.0, 1.0]]),
                2.5,
            ),
            (t(&[[1.0, 0.0]]), t(&[]), 0.0),
            (t(&[]), t(&[[1.0, 0.0]]), 0.0),
        ];
        for (query, memory, want) in table {
            let got = max_sim(&query, &memory);
            assert!((got - want).abs() < 1e-6, "{query:?} {memory:?}: {got}");
        }
        assert!(Tokens::of_rows(2, &[vec![1.0f32]]).is_none(), "a short row");
        assert_eq!(t(&[[1.0, 0.0], [0.0, 1.0]]).len(), 2);
    }

    #[test]
    fn judged_leaves_titles_and_identifiers_alone() {
        let table = [
            ("When did she go to the support group?", true),
            ("rust borrow checker lifetimes", true),
            ("I'm really looking forward to that evening!", true),
            ("What did Kate's well-known friend say?", true),
            ("Meeting 2026-11-11 09:58", false),
            ("CVE-2023-4863", false),
            ("libc6", false),
            ("   ", false),
        ];
        for (query, want) in table {
            assert_eq!(judged(query), want, "{query:?}");
        }
    }

    #[test]
    fn rerank_moves_what_maxsim_prefers_and_keeps_the_tier_and_the_tail() {
        // (hits: id, shown score, tier; MaxSim scores; weight; depth;
        //  the order after; the shown scores after)
        type Row = (
            &'static [(u128, f64, bool)],
            &'static [(u128, f64)],
            f64,
            usize,
            &'static [u128],
            &'static [f64],
        );
        let plain: &[(u128, f64, bool)] = &[(1, 0.9, false), (2, 0.8, false), (3, 0.7, false)];
        let table: &[Row] = &[
            // MaxSim reverses the order at weight 2: 3 gets 2/61 + 1/63 >
            // 1's 1/61 + 2/63.
            (
                plain,
                &[(1, 0.1), (2, 0.2), (3, 0.3)],
                2.0,
                40,
                &[3, 2, 1],
                &[0.9, 0.8, 0.7],
            ),
            // At weight 1 the vote ties 1 and 3 (1/61 + 1/63 each) and the
            // fused order breaks it: 1 stays first.
            (
                plain,
                &[(1, 0.1), (2, 0.2), (3, 0.3)],
                1.0,
                40,
                &[1, 3, 2],
                &[0.9, 0.8, 0.7],
            ),
            // Weight 0, or no score at all: nothing moves.
            (
                plain,
                &[(1, 0.1), (3, 0.3)],
                0.0,
                40,
                &[1, 2, 3],
                &[0.9, 0.8, 0.7],
            ),
            (plain, &[], 2.0, 40, &[1, 2, 3], &[0.9, 0.8, 0.7]),
            // A hit with no tokens keeps its fused vote only.
            (
                plain,
                &[(2, 0.1), (3, 0.9)],
                2.0,
                40,
                &[3, 2, 1],
                &[0.9, 0.8, 0.7],
            ),
            // The depth: only the first two are judged; 3 keeps its place.
            (
                plain,
                &[(1, 0.1), (2, 0.2), (3, 0.9)],
                2.0,
                2,
                &[2, 1, 3],
                &[0.9, 0.8, 0.7],
            ),
            // The tier stays on top, whatever MaxSim says.
            (
                &[(1, 2.0, true), (2, 0.8, false), (3, 0.7, false)],
                &[(1, 0.0), (2, 0.1), (3, 0.9)],
                2.0,
                40,
                &[1, 3, 2],
                &[2.0, 0.8, 0.7],
            ),
        ];
        for (spec, scores, weight, depth, want, shown) in table {
            let mut got = hits(spec);
            let maxsim = scores
                .iter()
                .map(|&(n, s)| (Uuid::from_u128(n), s))
                .collect();
            rerank(&mut got, &maxsim, *weight, 60.0, *depth);
            assert_eq!(ids(&got), *want, "{spec:?} {scores:?} w {weight}");
            let after: Vec<f64> = got.iter().map(|h| h.score).collect();
            assert_eq!(after, *shown, "{spec:?} {scores:?}");
        }
    }

    #[test]
    fn each_judged_hit_carries_its_late_placing() {
        let mut got = hits(&[(1, 0.9, false), (2, 0.8, false)]);
        let maxsim = [(Uuid::from_u128(1), 0.2), (Uuid::from_u128(2), 0.5)].into();
        rerank(&mut got, &maxsim, 2.0, 60.0, DEPTH);
        let placing = |n: u128| {
            got.iter()
                .find(|h| h.id.as_u128() == n)
                .and_then(|h| h.late)
                .unwrap()
        };
        assert_eq!(placing(2).rank, 1);
        assert_eq!(placing(2).score, 0.5);
        assert!((placing(2).normalized - 2.0 / 61.0).abs() < 1e-12);
        assert_eq!(placing(1).rank, 2);
    }
}
