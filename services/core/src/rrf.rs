//! Reciprocal rank fusion (DESIGN.md §1, "Fusion"): each point scores
//! `Σ weight / (k + rank)` over the lists that hold it, rank from 1; ties
//! break by point id. Every hit carries its rank and raw score in each list.

use std::collections::HashMap;

use uuid::Uuid;

/// trine's RRF constant.
pub const K: f64 = 60.0;

/// The three lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ListKind {
    Lexical,
    Semantic,
    Verbatim,
}

impl ListKind {
    pub const ALL: [ListKind; 3] = [ListKind::Lexical, ListKind::Semantic, ListKind::Verbatim];

    pub fn name(self) -> &'static str {
        match self {
            Self::Lexical => "lexical",
            Self::Semantic => "semantic",
            Self::Verbatim => "verbatim",
        }
    }
}

/// One ranked list: ids best first, with each one's raw score.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedList {
    pub kind: ListKind,
    pub weight: f64,
    pub entries: Vec<(Uuid, f64)>,
}

/// A hit's place in one list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placing {
    /// 1 for the first.
    pub rank: u32,
    pub score: f64,
}

/// A fused hit with its explain.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub id: Uuid,
    pub score: f64,
    /// Where the hit stood in each list that holds it, in `ListKind` order.
    pub placings: Vec<(ListKind, Placing)>,
}

impl Fused {
    pub fn placing(&self, kind: ListKind) -> Option<Placing> {
        self.placings
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, p)| *p)
    }

    /// The names of the lists that hold this hit.
    pub fn matched_by(&self) -> Vec<&'static str> {
        self.placings.iter().map(|(k, _)| k.name()).collect()
    }
}

/// Fuses the lists and returns the best `limit` hits. A point listed twice in
/// one list counts at its first place only.
pub fn fuse(lists: &[RankedList], k: f64, limit: usize) -> Vec<Fused> {
    let mut by_id: HashMap<Uuid, Fused> = HashMap::new();
    for list in lists {
        let mut rank = 0u32;
        for (id, raw) in &list.entries {
            rank += 1;
            let fused = by_id.entry(*id).or_insert_with(|| Fused {
                id: *id,
                score: 0.0,
                placings: Vec::new(),
            });
            if fused.placing(list.kind).is_some() {
                continue;
            }
            fused.score += list.weight / (k + f64::from(rank));
            fused
                .placings
                .push((list.kind, Placing { rank, score: *raw }));
        }
    }
    let mut hits: Vec<Fused> = by_id.into_values().collect();
    for hit in &mut hits {
        hit.placings.sort_by_key(|(kind, _)| *kind);
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    hits.truncate(limit);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn list(kind: ListKind, ids: &[u128]) -> RankedList {
        RankedList {
            kind,
            weight: 1.0,
            entries: ids.iter().map(|n| (id(*n), 0.0)).collect(),
        }
    }

    #[test]
    fn first_in_one_list_scores_one_over_61() {
        let hits = fuse(&[list(ListKind::Lexical, &[1, 2])], K, 10);
        assert!((hits[0].score - 1.0 / 61.0).abs() < 1e-12);
        assert_eq!(hits[0].matched_by(), ["lexical"]);
    }

    #[test]
    fn first_in_lexical_and_verbatim_scores_two_over_61() {
        let hits = fuse(
            &[
                list(ListKind::Lexical, &[7, 1]),
                list(ListKind::Semantic, &[2, 3]),
                list(ListKind::Verbatim, &[7]),
            ],
            K,
            10,
        );
        assert_eq!(hits[0].id, id(7));
        assert!((hits[0].score - 2.0 / 61.0).abs() < 1e-12);
        assert_eq!(hits[0].matched_by(), ["lexical", "verbatim"]);
        let p = hits[0].placing(ListKind::Verbatim).unwrap();
        assert_eq!(p.rank, 1);
    }

    #[test]
    fn rows_near_the_top_of_two_lists_beat_a_row_first_in_one() {
        // The ADR: a row first in one list only (1/61) loses to any row within
        // about 60 places of the top of both lists: 2/(60+r) > 1/61 iff r < 62.
        let table: &[(u32, bool)] = &[(1, true), (30, true), (61, true), (62, false), (100, false)];
        for (r, beats) in table {
            let both = id(1000);
            let mut lexical: Vec<u128> = (1..u128::from(*r)).map(|n| n + 10_000).collect();
            lexical.push(1000);
            let mut semantic = vec![1];
            semantic.extend((1..u128::from(*r) - 1).map(|n| n + 20_000));
            semantic.push(1000);
            let hits = fuse(
                &[
                    list(ListKind::Lexical, &lexical),
                    list(ListKind::Semantic, &semantic),
                ],
                K,
                usize::MAX,
            );
            let pos = |x: Uuid| hits.iter().position(|h| h.id == x).unwrap();
            assert_eq!(pos(both) < pos(id(1)), *beats, "both lists at rank {r}");
        }
    }

    #[test]
    fn ties_break_by_point_id_and_weights_scale() {
        let hits = fuse(
            &[
                list(ListKind::Lexical, &[5]),
                list(ListKind::Semantic, &[3]),
            ],
            K,
            10,
        );
        assert_eq!([hits[0].id, hits[1].id], [id(3), id(5)]);
        let mut semantic = list(ListKind::Semantic, &[3]);
        semantic.weight = 0.5;
        let hits = fuse(&[list(ListKind::Lexical, &[5]), semantic], K, 10);
        assert_eq!(hits[0].id, id(5));
        assert!((hits[1].score - 0.5 / 61.0).abs() < 1e-12);
    }

    #[test]
    fn limit_truncates_and_duplicates_count_once() {
        let hits = fuse(&[list(ListKind::Lexical, &[1, 1, 2, 3])], K, 2);
        assert_eq!(hits.len(), 2);
        assert!((hits[0].score - 1.0 / 61.0).abs() < 1e-12);
        assert_eq!(hits[1].placing(ListKind::Lexical).unwrap().rank, 3);
    }
}
