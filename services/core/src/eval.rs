//! Ranking quality of one query and of a set of queries (`trine eval`):
//! success@1, success@k, reciprocal rank, nDCG@10 (binary relevance) and
//! recall@k, from the 1-based rank of each gold id in a result list.

use serde::Serialize;

/// The cut-off of nDCG.
pub const NDCG_AT: usize = 10;

/// The rank (from 1) of each gold id in `ranked`; `None` when absent.
pub fn gold_ranks<T: PartialEq>(ranked: &[T], gold: &[T]) -> Vec<Option<usize>> {
    gold.iter()
        .map(|g| ranked.iter().position(|r| r == g).map(|i| i + 1))
        .collect()
}

/// One query's figures.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct QueryScore {
    pub success_at_1: f64,
    pub success_at_k: f64,
    pub reciprocal_rank: f64,
    pub ndcg_at_10: f64,
    pub recall_at_k: f64,
}

impl QueryScore {
    /// The figures of one query from its gold ranks. A query without gold
    /// scores 0 everywhere.
    pub fn of(ranks: &[Option<usize>], k: usize) -> Self {
        if ranks.is_empty() {
            return Self::default();
        }
        let found: Vec<usize> = ranks.iter().flatten().copied().collect();
        let best = found.iter().min().copied();
        let within = |cut: usize| found.iter().filter(|&&r| r <= cut).count();
        let gain = |rank: usize| 1.0 / ((rank + 1) as f64).log2();
        // (A fold from +0.0: an empty `sum` of floats is -0.0.)
        let dcg = found
            .iter()
            .filter(|&&r| r <= NDCG_AT)
            .fold(0.0, |dcg, &r| dcg + gain(r));
        let ideal: f64 = (1..=ranks.len().min(NDCG_AT)).map(gain).sum();
        Self {
            success_at_1: f64::from(u8::from(best == Some(1))),
            success_at_k: f64::from(u8::from(best.is_some_and(|r| r <= k))),
            reciprocal_rank: best.map_or(0.0, |r| 1.0 / r as f64),
            ndcg_at_10: dcg / ideal,
            recall_at_k: within(k) as f64 / ranks.len() as f64,
        }
    }
}

/// The means over a set of queries.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Aggregate {
    pub queries: usize,
    pub success_at_1: f64,
    pub success_at_k: f64,
    pub mrr: f64,
    pub ndcg_at_10: f64,
    pub recall_at_k: f64,
}

impl Aggregate {
    pub fn of(scores: &[QueryScore]) -> Self {
        if scores.is_empty() {
            return Self::default();
        }
        let n = scores.len() as f64;
        let mean = |f: fn(&QueryScore) -> f64| scores.iter().map(f).sum::<f64>() / n;
        Self {
            queries: scores.len(),
            success_at_1: mean(|s| s.success_at_1),
            success_at_k: mean(|s| s.success_at_k),
            mrr: mean(|s| s.reciprocal_rank),
            ndcg_at_10: mean(|s| s.ndcg_at_10),
            recall_at_k: mean(|s| s.recall_at_k),
        }
    }
}

/// A paired difference with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Difference {
    /// mean(a) − mean(b).
    pub mean: f64,
    /// The 2.5th and 97.5th percentiles of the resampled mean difference.
    pub low: f64,
    pub high: f64,
}

impl Difference {
    /// "a is not worse than b": the interval reaches 0 or above.
    pub fn not_worse(&self) -> bool {
        self.high >= 0.0
    }
}

/// The paired bootstrap of mean(a) − mean(b) over the same queries:
/// `resamples` resamples of the query set with replacement, drawn from a
/// fixed-seed generator so that a report is reproducible. Empty or
/// mismatched inputs give 0 everywhere.
pub fn paired_bootstrap(a: &[f64], b: &[f64], resamples: usize) -> Difference {
    if a.is_empty() || a.len() != b.len() || resamples == 0 {
        return Difference::default();
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let n = diffs.len();
    let mean = diffs.iter().sum::<f64>() / n as f64;
    // xorshift64*: small, deterministic, good enough for resampling indices.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let total: f64 = (0..n)
                .map(|_| diffs[usize::try_from(next() % n as u64).unwrap_or(0)])
                .sum();
            total / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((resamples - 1) as f64 * q).round() as usize];
    Difference {
        mean,
        low: at(0.025),
        high: at(0.975),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn ranks_of_the_gold_ids() {
        let ranked = ["a", "b", "c"];
        assert_eq!(
            gold_ranks(&ranked, &["c", "x", "a"]),
            [Some(3), None, Some(1)]
        );
        assert_eq!(gold_ranks::<&str>(&[], &["a"]), [None]);
    }

    #[test]
    fn figures_of_one_query() {
        // (gold ranks, k, s@1, s@k, RR, nDCG@10, R@k)
        type Case<'a> = (&'a [Option<usize>], usize, f64, f64, f64, f64, f64);
        let log = |r: f64| 1.0 / (r + 1.0).log2();
        let cases: [Case; 7] = [
            (&[Some(1)], 10, 1.0, 1.0, 1.0, 1.0, 1.0),
            (&[Some(3)], 10, 0.0, 1.0, 1.0 / 3.0, log(3.0), 1.0),
            (&[Some(12)], 10, 0.0, 0.0, 1.0 / 12.0, 0.0, 0.0),
            (&[None], 10, 0.0, 0.0, 0.0, 0.0, 0.0),
            (
                &[Some(2), None],
                5,
                0.0,
                1.0,
                0.5,
                log(2.0) / (1.0 + log(2.0)),
                0.5,
            ),
            (&[Some(2), Some(1)], 1, 1.0, 1.0, 1.0, 1.0, 0.5),
            (&[], 10, 0.0, 0.0, 0.0, 0.0, 0.0),
        ];
        for (ranks, k, s1, sk, rr, ndcg, recall) in cases {
            let s = QueryScore::of(ranks, k);
            assert!(close(s.success_at_1, s1), "{ranks:?} s@1 {s:?}");
            assert!(close(s.success_at_k, sk), "{ranks:?} s@k {s:?}");
            assert!(close(s.reciprocal_rank, rr), "{ranks:?} rr {s:?}");
            assert!(close(s.ndcg_at_10, ndcg), "{ranks:?} ndcg {s:?}");
            assert!(close(s.recall_at_k, recall), "{ranks:?} recall {s:?}");
        }
    }

    #[test]
    fn the_paired_bootstrap() {
        // Equal lists: a zero difference, a zero-width interval.
        let same = paired_bootstrap(&[1.0, 0.5, 0.0], &[1.0, 0.5, 0.0], 500);
        assert_eq!((same.mean, same.low, same.high), (0.0, 0.0, 0.0));
        assert!(same.not_worse());
        // Always better by 0.5: the interval is that point.
        let better = paired_bootstrap(&[1.0, 1.0, 0.5], &[0.5, 0.5, 0.0], 500);
        assert!(close(better.mean, 0.5) && close(better.low, 0.5) && close(better.high, 0.5));
        // Worse on every query: the interval stays below 0.
        let worse = paired_bootstrap(&[0.0; 40], &[1.0; 40], 500);
        assert!(!worse.not_worse());
        // Mixed: the interval holds the mean, and reaches both sides of 0
        // when the sign is unclear.
        let a: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { 0.0 })
            .collect();
        let b: Vec<f64> = (0..40)
            .map(|i| if i % 3 == 0 { 1.0 } else { 0.0 })
            .collect();
        let mixed = paired_bootstrap(&a, &b, 1000);
        assert!(mixed.low <= mixed.mean && mixed.mean <= mixed.high);
        assert!(mixed.low < 0.0 && mixed.high > 0.0, "{mixed:?}");
        // The same inputs give the same interval.
        assert_eq!(mixed, paired_bootstrap(&a, &b, 1000));
        assert_eq!(paired_bootstrap(&[], &[], 10), Difference::default());
        assert_eq!(paired_bootstrap(&[1.0], &[], 10), Difference::default());
    }

    #[test]
    fn means_over_queries() {
        let scores = [
            QueryScore::of(&[Some(1)], 10),
            QueryScore::of(&[Some(4)], 10),
        ];
        let a = Aggregate::of(&scores);
        assert_eq!(a.queries, 2);
        assert!(close(a.success_at_1, 0.5));
        assert!(close(a.success_at_k, 1.0));
        assert!(close(a.mrr, (1.0 + 0.25) / 2.0));
        assert_eq!(Aggregate::of(&[]), Aggregate::default());
    }
}
