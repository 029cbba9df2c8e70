//! The sparse lexical encoding (DESIGN.md §2, `sparse`): a text becomes a tf
//! vector over its tokens — split as query terms are — with each token's id
//! its CRC-32; a query becomes weight 1 per term. Qdrant's IDF modifier on the
//! sparse space supplies the inverse document frequency at query time.

use std::collections::BTreeMap;

use crate::fold::Fold;
use crate::model::SparseVector;
use crate::terms::{terms, tokens};

/// A token's dimension in the sparse space.
pub fn token_id(token: &str) -> u32 {
    crc32fast::hash(token.as_bytes())
}

fn to_vector(weights: BTreeMap<u32, f32>) -> SparseVector {
    let (indices, values) = weights.into_iter().unzip();
    SparseVector { indices, values }
}

/// A text's term-frequency vector over its tokens folded as the collection
/// folds, dimensions ascending. Tokens that share a CRC-32 add up.
pub fn encode_text(text: &str, fold: Fold) -> SparseVector {
    let mut tf: BTreeMap<u32, f32> = BTreeMap::new();
    for token in tokens(text, fold) {
        *tf.entry(token_id(&token)).or_default() += 1.0;
    }
    to_vector(tf)
}

/// Whether a sparse vector reads as trine's text encoding: every weight a
/// positive whole number (a term frequency). Another tool's encodings carry
/// fractional weights.
pub fn is_term_frequencies(v: &SparseVector) -> bool {
    // A whole number of at most 2^24 (every count an f32 holds exactly)
    // survives the round trip through u32; NaN and infinities fail the
    // comparisons. No libm call: this runs over every candidate's vector.
    const WHOLE: f32 = 16_777_216.0;
    v.indices.len() == v.values.len()
        && v.values
            .iter()
            .all(|w| *w >= 1.0 && *w <= WHOLE && (*w as u32) as f32 == *w)
}

/// A point's sparse vector as BM25 reads it, with what every read of it
/// would otherwise work out again over the whole vector: whether it is
/// trine's encoding ([`is_term_frequencies`]) and then its length in tokens,
/// and whether its dimensions ascend (a dimension is then found by halving).
/// Made once, where the vector is read from the store or kept.
#[derive(Debug, Clone, PartialEq)]
pub struct TermVector {
    vector: SparseVector,
    /// The sum of its term frequencies; `None`: another tool's weights.
    tokens: Option<u64>,
    ascending: bool,
}

impl TermVector {
    pub fn new(vector: SparseVector) -> Self {
        let tokens = is_term_frequencies(&vector)
            .then(|| vector.values.iter().map(|w| u64::from(*w as u32)).sum());
        let ascending = vector.indices.windows(2).all(|w| w[0] < w[1]);
        Self {
            vector,
            tokens,
            ascending,
        }
    }

    pub fn vector(&self) -> &SparseVector {
        &self.vector
    }

    /// The text's length in tokens, where the vector is term frequencies.
    pub fn tokens(&self) -> Option<u64> {
        self.tokens
    }

    /// The weight of dimension `id` (its first, should it repeat).
    pub fn weight(&self, id: u32) -> Option<f32> {
        let at = if self.ascending {
            self.vector.indices.binary_search(&id).ok()
        } else {
            self.vector.indices.iter().position(|i| *i == id)
        };
        at.and_then(|i| self.vector.values.get(i).copied())
    }
}

/// A query's vector: weight 1 for each of its terms.
pub fn encode_query(query: &str, fold: Fold) -> SparseVector {
    to_vector(
        terms(query, fold)
            .into_iter()
            .map(|t| (token_id(&fold.stem(t)), 1.0))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_encode_term_frequencies() {
        let v = encode_text("Meeting 2026-11-11 09:58", Fold::CASE);
        let id11 = token_id("11");
        let at = v.indices.iter().position(|i| *i == id11).unwrap();
        assert_eq!(v.values[at], 2.0, "11 occurs twice");
        assert_eq!(v.indices.len(), 5, "six tokens, five distinct: {v:?}");
        assert!(
            v.indices.windows(2).all(|w| w[0] < w[1]),
            "ascending dimensions"
        );
    }

    #[test]
    fn term_frequencies_are_whole_positive_weights() {
        let v = |values: &[f32]| SparseVector {
            indices: (0..values.len() as u32).collect(),
            values: values.to_vec(),
        };
        assert!(is_term_frequencies(&encode_text("a b a c", Fold::CASE)));
        assert!(is_term_frequencies(&v(&[])));
        assert!(!is_term_frequencies(&v(&[1.0, 0.37])), "a learned weight");
        assert!(!is_term_frequencies(&v(&[0.0])));
        assert!(!is_term_frequencies(&v(&[f32::NAN])));
        assert!(!is_term_frequencies(&v(&[f32::INFINITY])));
        assert!(!is_term_frequencies(&v(&[2.5])));
        assert!(!is_term_frequencies(&v(&[-3.0])));
        assert!(is_term_frequencies(&v(&[3.0, 16_777_216.0])));
        assert!(!is_term_frequencies(&v(&[33_554_434.0])), "beyond 2^24");
    }

    #[test]
    fn queries_weigh_each_term_once() {
        let table: &[(&str, usize)] = &[
            ("Meeting 2026-11-11 09:58", 5),
            ("the CVE-2023-4863", 3),
            ("", 0),
            ("the of", 0),
        ];
        for (query, dims) in table {
            let v = encode_query(query, Fold::CASE);
            assert_eq!(v.indices.len(), *dims, "{query:?}");
            assert!(v.values.iter().all(|w| *w == 1.0));
        }
    }

    #[test]
    fn ids_are_crc32_of_the_lowercased_token() {
        assert_eq!(
            encode_query("MEETING", Fold::CASE).indices,
            vec![token_id("meeting")]
        );
        assert_eq!(
            encode_query("ȘEDINȚĂ", Fold::ASCII).indices,
            encode_text("sedinta", Fold::ASCII).indices,
            "a folded query meets a folded text"
        );
        assert_eq!(
            crc32fast::hash(b"123456789"),
            0xCBF4_3926,
            "the IEEE CRC-32 check value"
        );
    }
}
