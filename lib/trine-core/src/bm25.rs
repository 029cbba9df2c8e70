//! BM25 over a candidate set (DESIGN.md §1): document frequencies are exact
//! counts within the search's filters, N the exact count of points within
//! them; term frequency and length come from the point's own text, or from
//! its sparse encoding of that text (`TermCounts::of_sparse`: the same counts).

use std::collections::HashMap;

use crate::fold::Fold;
use crate::model::SparseVector;
use crate::sparse::token_id;
use crate::terms::tokens;

/// BM25's free parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
}

impl Default for Bm25Params {
    /// k1 1.2 and a light length normalisation, b 0.3 (Lucene's 0.75 made
    /// a one-line chat message holding a question's word outrank the long
    /// message that answers it: held-back halves, static embedder, the
    /// hybrid's MRR on the chats' multi-hop questions 0.259 → 0.289,
    /// commonsense 0.270 → 0.299, French +0.019, German +0.018, the medium
    /// English tier −0.005; docs/quality.md).
    fn default() -> Self {
        Self { k1: 1.2, b: 0.3 }
    }
}

/// The statistics a score needs, all within the search's filters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CorpusStats {
    /// Points within the filters.
    pub n: u64,
    /// Average length, in tokens, of a text.
    pub avg_len: f64,
    /// Points holding each term, within the filters.
    pub df: HashMap<String, u64>,
}

/// Inverse document frequency, the non-negative form Lucene uses:
/// `ln(1 + (N - df + 0.5) / (df + 0.5))`.
pub fn idf(n: u64, df: u64) -> f64 {
    let (n, df) = (n as f64, df.min(n) as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The score of a full match, BM25's scale for one query: a text holding
/// every query term once, at the average length, scores `Σ idf` (each term's
/// `tf · (k1 + 1) / (tf + k1)` is 1 there). Score fusion divides the lexical
/// scores by it (`absolute` normalisation).
pub fn reference(terms: &[String], stats: &CorpusStats) -> f64 {
    terms
        .iter()
        .map(|t| idf(stats.n, stats.df.get(t).copied().unwrap_or(0)))
        .sum()
}

/// Query terms (folded words, [`crate::terms`]) as the index holds them:
/// stemmed where it stems. What [`TermCounts`] matches; made once per query.
pub fn keys(terms: &[String], fold: Fold) -> Vec<String> {
    terms.iter().map(|t| fold.stem(t.clone())).collect()
}

/// What BM25 reads of one text: each query term's frequency (in query-term
/// order) and the text's length in tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermCounts {
    pub tf: Vec<u32>,
    pub len: usize,
}

impl TermCounts {
    /// The counts of the query's `keys` ([`keys`]) in a text, its tokens
    /// folded as the keys were (`fold`).
    pub fn of_text(keys: &[String], text: &str, fold: Fold) -> Self {
        let mut tf = vec![0u32; keys.len()];
        let mut len = 0usize;
        for token in tokens(text, fold) {
            len += 1;
            if let Some(i) = keys.iter().position(|t| *t == token) {
                tf[i] += 1;
            }
        }
        Self { tf, len }
    }

    /// The counts of a text from its sparse encoding ([`crate::sparse`]:
    /// term frequencies by token id): the same as [`TermCounts::of_text`]
    /// of the text it encodes, unless two of its tokens share a CRC-32.
    pub fn of_sparse(keys: &[String], sparse: &SparseVector) -> Self {
        // A weight as a count: rounded, nothing for a non-positive or
        // non-finite one (`as` saturates; no libm call, this runs over
        // every candidate's vector).
        let count = |v: f32| {
            if v.is_finite() && v > 0.0 {
                (v + 0.5) as u64
            } else {
                0
            }
        };
        let pairs = sparse.indices.len().min(sparse.values.len());
        let (indices, values) = (&sparse.indices[..pairs], &sparse.values[..pairs]);
        let len: u64 = values.iter().map(|v| count(*v)).sum();
        // Each key's first dimension: by halving where the dimensions
        // ascend (trine's encoding, and Qdrant's storage), else in order.
        let ascending = indices.windows(2).all(|w| w[0] < w[1]);
        let at = |id: u32| {
            if ascending {
                indices.binary_search(&id).ok()
            } else {
                indices.iter().position(|i| *i == id)
            }
        };
        Self {
            tf: keys
                .iter()
                .map(|k| at(token_id(k)).map_or(0, |i| count(values[i])))
                .map(|c| u32::try_from(c).unwrap_or(u32::MAX))
                .collect(),
            len: usize::try_from(len).unwrap_or(usize::MAX),
        }
    }
}

/// The BM25 score of a text for the query terms, the text's tokens folded
/// as the terms were (`fold`).
pub fn score(
    terms: &[String],
    text: &str,
    fold: Fold,
    stats: &CorpusStats,
    params: Bm25Params,
) -> f64 {
    score_counts(
        terms,
        &TermCounts::of_text(&keys(terms, fold), text, fold),
        stats,
        params,
    )
}

/// The BM25 score of a text from its counts.
pub fn score_counts(
    terms: &[String],
    counts: &TermCounts,
    stats: &CorpusStats,
    params: Bm25Params,
) -> f64 {
    let len = counts.len;
    let avg = if stats.avg_len > 0.0 {
        stats.avg_len
    } else {
        len.max(1) as f64
    };
    let norm = params.k1 * (1.0 - params.b + params.b * len as f64 / avg);
    terms
        .iter()
        .zip(&counts.tf)
        .filter(|(_, tf)| **tf > 0)
        .map(|(term, tf)| {
            let f = f64::from(*tf);
            let df = stats.df.get(term).copied().unwrap_or(0);
            idf(stats.n, df) * f * (params.k1 + 1.0) / (f + norm)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_a_full_match_at_the_average_length() {
        let s = stats(100, 4.0, &[("billing", 10), ("retry", 1)]);
        let terms = vec!["billing".to_string(), "retry".to_string()];
        let reference = reference(&terms, &s);
        assert!((reference - (idf(100, 10) + idf(100, 1))).abs() < 1e-12);
        let full = score(
            &terms,
            "billing retry w x",
            Fold::CASE,
            &s,
            Bm25Params::default(),
        );
        assert!((full - reference).abs() < 1e-9, "{full} vs {reference}");
        assert_eq!(super::reference(&[], &s), 0.0);
    }

    fn stats(n: u64, avg_len: f64, df: &[(&str, u64)]) -> CorpusStats {
        CorpusStats {
            n,
            avg_len,
            df: df.iter().map(|(t, d)| (t.to_string(), *d)).collect(),
        }
    }

    fn terms(q: &str) -> Vec<String> {
        crate::terms(q, Fold::CASE)
    }

    #[test]
    fn idf_is_lucenes() {
        let table = [
            (10, 1, 1.9924),
            (10, 10, 0.0465),
            (1000, 1, 6.5033),
            (10, 20, 0.0465),
        ];
        for (n, df, want) in table {
            let got = idf(n, df);
            assert!(
                (got - want).abs() < 1e-3,
                "idf({n}, {df}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn scores_follow_the_formula() {
        let s = stats(100, 4.0, &[("rare", 1), ("common", 90)]);
        let p = Bm25Params::default();
        // One occurrence of "rare" in a text of average length: idf * (k1 + 1) / (1 + k1).
        let one = score(&terms("rare"), "rare words here now", Fold::CASE, &s, p);
        assert!((one - idf(100, 1)).abs() < 1e-9, "{one}");
        let table: &[(&str, &str, &str)] = &[
            // (query, better text, worse text)
            ("rare common", "rare common", "common common"),
            ("rare", "rare", "rare and a much longer text"),
            ("rare", "rare rare x y", "rare x y z"),
        ];
        for (q, better, worse) in table {
            let (b, w) = (
                score(&terms(q), better, Fold::CASE, &s, p),
                score(&terms(q), worse, Fold::CASE, &s, p),
            );
            assert!(b > w, "{q:?}: {better:?} {b} <= {worse:?} {w}");
        }
        assert_eq!(
            score(&terms("absent"), "rare common", Fold::CASE, &s, p),
            0.0
        );
    }

    #[test]
    fn the_sparse_encoding_gives_the_texts_counts() {
        let table: &[(&str, &str, Fold)] = &[
            (
                "billing retry",
                "Billing retry: the billing job retries, billing again.",
                Fold::CASE,
            ),
            (
                "Meeting 2026-11-11 09:58",
                "Meeting 2026-11-11 09:58\nBună ziua",
                Fold::ASCII,
            ),
            (
                "sedinta de lucru",
                "o ședința de lucru, ședința",
                Fold::ASCII,
            ),
            ("absent words", "nothing of them here", Fold::CASE),
            ("x", "", Fold::CASE),
            (
                "meetings retried",
                "The meeting was retried; meetings retry.",
                Fold::ASCII.with_stemmer(Some(crate::Language::English)),
            ),
        ];
        for (query, text, fold) in table {
            let terms = crate::terms(query, *fold);
            let keys = keys(&terms, *fold);
            let from_text = TermCounts::of_text(&keys, text, *fold);
            let sparse = crate::sparse::encode_text(text, *fold);
            assert_eq!(
                TermCounts::of_sparse(&keys, &sparse),
                from_text,
                "{query:?} in {text:?}"
            );
        }
        let counts = TermCounts::of_text(
            &crate::terms("billing retry", Fold::CASE),
            "billing billing retry x",
            Fold::CASE,
        );
        assert_eq!(
            counts,
            TermCounts {
                tf: vec![2, 1],
                len: 4
            }
        );
    }

    #[test]
    fn any_sparse_vector_reads_as_counts() {
        let (a, b) = (token_id("a"), token_id("b"));
        let keys = ["a".to_string(), "b".to_string()];
        let v = |indices: &[u32], values: &[f32]| SparseVector {
            indices: indices.to_vec(),
            values: values.to_vec(),
        };
        // (vector, counts of "a" and "b", length)
        let table: &[(SparseVector, [u32; 2], usize)] = &[
            (v(&[], &[]), [0, 0], 0),
            (
                v(&[a.min(b), a.max(b)], &[2.0, 3.0]),
                if a < b { [2, 3] } else { [3, 2] },
                5,
            ),
            // Out of order, a key twice: its first dimension counts.
            (
                v(&[a.max(b), 7, a.max(b)], &[4.0, 1.0, 9.0]),
                if a > b { [4, 0] } else { [0, 4] },
                14,
            ),
            // Weights rounded; nothing for a negative, NaN or infinite one.
            (v(&[a, 1], &[1.6, -2.0]), [2, 0], 2),
            (v(&[a, 1, 2], &[f32::NAN, f32::INFINITY, 2.4]), [0, 0], 2),
            // More indices than values: the pairs only.
            (v(&[a, b], &[1.0]), [1, 0], 1),
        ];
        for (sparse, tf, len) in table {
            let counts = TermCounts::of_sparse(&keys, sparse);
            assert_eq!(
                (counts.tf.as_slice(), counts.len),
                (&tf[..], *len),
                "{sparse:?}"
            );
        }
    }

    #[test]
    fn a_folded_term_counts_in_a_text_with_diacritics() {
        let s = stats(100, 4.0, &[("sedinta", 1)]);
        let p = Bm25Params::default();
        let q = crate::terms("sedinta", Fold::ASCII);
        let text = "notes of the ședința today";
        assert!(score(&q, text, Fold::ASCII, &s, p) > 0.0, "folded text");
        assert_eq!(score(&q, text, Fold::CASE, &s, p), 0.0, "unfolded text");
    }
}
