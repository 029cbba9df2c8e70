//! BM25 over a candidate set (DESIGN.md §1): document frequencies are exact
//! counts within the search's filters, N the exact count of points within
//! them; term frequency and length come from the point's own text.

use std::collections::HashMap;

use crate::fold::Fold;
use crate::terms::tokens;

/// BM25's free parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
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

/// The BM25 score of a text for the query terms, the text's tokens folded
/// as the terms were (`fold`).
pub fn score(
    terms: &[String],
    text: &str,
    fold: Fold,
    stats: &CorpusStats,
    params: Bm25Params,
) -> f64 {
    let mut tf: HashMap<String, u32> = HashMap::new();
    let mut len = 0usize;
    for token in tokens(text, fold) {
        len += 1;
        if terms.contains(&token) {
            *tf.entry(token).or_default() += 1;
        }
    }
    let avg = if stats.avg_len > 0.0 {
        stats.avg_len
    } else {
        len.max(1) as f64
    };
    let norm = params.k1 * (1.0 - params.b + params.b * len as f64 / avg);
    terms
        .iter()
        .filter_map(|term| {
            let f = f64::from(*tf.get(term)?);
            let df = stats.df.get(term).copied().unwrap_or(0);
            Some(idf(stats.n, df) * f * (params.k1 + 1.0) / (f + norm))
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
            Fold::Case,
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
        crate::terms(q, Fold::Case)
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
        let one = score(&terms("rare"), "rare words here now", Fold::Case, &s, p);
        assert!((one - idf(100, 1)).abs() < 1e-9, "{one}");
        let table: &[(&str, &str, &str)] = &[
            // (query, better text, worse text)
            ("rare common", "rare common", "common common"),
            ("rare", "rare", "rare and a much longer text"),
            ("rare", "rare rare x y", "rare x y z"),
        ];
        for (q, better, worse) in table {
            let (b, w) = (
                score(&terms(q), better, Fold::Case, &s, p),
                score(&terms(q), worse, Fold::Case, &s, p),
            );
            assert!(b > w, "{q:?}: {better:?} {b} <= {worse:?} {w}");
        }
        assert_eq!(
            score(&terms("absent"), "rare common", Fold::Case, &s, p),
            0.0
        );
    }

    #[test]
    fn a_folded_term_counts_in_a_text_with_diacritics() {
        let s = stats(100, 4.0, &[("sedinta", 1)]);
        let p = Bm25Params::default();
        let q = crate::terms("sedinta", Fold::Ascii);
        let text = "notes of the ședința today";
        assert!(score(&q, text, Fold::Ascii, &s, p) > 0.0, "folded text");
        assert_eq!(score(&q, text, Fold::Case, &s, p), 0.0, "unfolded text");
    }
}
