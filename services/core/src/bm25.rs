//! BM25 over a candidate set (docs/design.md §5): document frequencies are exact
//! counts within the search's filters, N the exact count of points within
//! them; term frequency and length come from the point's own text, or from
//! its sparse encoding of that text (`TermCounts::of_vector`: the same counts).

use std::collections::HashMap;

use crate::fold::Fold;
use crate::sparse::{TermVector, token_id};
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
    /// `None` where the vector is not term frequencies (another tool's
    /// weights): the text must be read.
    pub fn of_vector(keys: &[String], vector: &TermVector) -> Option<Self> {
        let len = vector.tokens()?;
        Some(Self {
            tf: keys
                .iter()
                .map(|k| vector.count(token_id(k)).unwrap_or(0))
                .collect(),
            len: usize::try_from(len).unwrap_or(usize::MAX),
        })
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
    use crate::model::SparseVector;

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
            let sparse = TermVector::new(&crate::sparse::encode_text(text, *fold));
            assert_eq!(
                TermCounts::of_vector(&keys, &sparse),
                Some(from_text),
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
    fn term_frequencies_read_as_counts_and_other_weights_do_not() {
        let (a, b) = (token_id("a"), token_id("b"));
        let (lo, hi) = (a.min(b), a.max(b));
        let keys = ["a".to_string(), "b".to_string()];
        let ab = |lo_hi: [u32; 2]| if a < b { lo_hi } else { [lo_hi[1], lo_hi[0]] };
        let v = |indices: &[u32], values: &[f32]| SparseVector {
            indices: indices.to_vec(),
            values: values.to_vec(),
        };
        // (vector, counts of "a" and "b" and length; None: not counts)
        type Row = (SparseVector, Option<([u32; 2], usize)>);
        let table: &[Row] = &[
            (v(&[], &[]), Some(([0, 0], 0))),
            (v(&[lo, hi], &[2.0, 3.0]), Some((ab([2, 3]), 5))),
            (v(&[lo, 7, hi], &[1.0, 4.0, 1.0]), Some((ab([1, 1]), 6))),
            // Out of order, a dimension twice: its first weight counts.
            (v(&[hi, 7, hi], &[4.0, 1.0, 9.0]), Some((ab([0, 4]), 14))),
            (v(&[hi, lo], &[4.0, 1.0]), Some((ab([1, 4]), 5))),
            // Another tool's weights, or no pairs: the text must be read.
            (v(&[a, 1], &[1.6, 2.0]), None),
            (v(&[a, 1], &[f32::NAN, 2.0]), None),
            (v(&[a, b], &[1.0]), None),
        ];
        for (sparse, want) in table {
            let counts = TermCounts::of_vector(&keys, &TermVector::new(sparse));
            let got = counts.map(|c| (c.tf, c.len));
            let want = want.map(|(tf, len)| (tf.to_vec(), len));
            assert_eq!(got, want, "{sparse:?}");
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
