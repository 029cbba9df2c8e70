//! The sparse lexical encoding (docs/design.md §3, `sparse`): a text becomes a tf
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
    // comparisons (no libm call: every vector read or kept is checked).
    const WHOLE: f32 = 16_777_216.0;
    v.indices.len() == v.values.len()
        && v.values
            .iter()
            .all(|w| *w >= 1.0 && *w <= WHOLE && (*w as u32) as f32 == *w)
}

/// A point's sparse vector as BM25 reads it, with what every read of it
/// would otherwise work out again over the whole vector: whether it is
/// trine's encoding ([`is_term_frequencies`]) and then its length in tokens.
/// Made once, where the vector is read from the store or kept. Trine's
/// encoding is held as (dimension, count) pairs, a dimension beside its
/// count (one cache line read, not two).
#[derive(Debug, Clone, PartialEq)]
pub struct TermVector(Held);

#[derive(Debug, Clone, PartialEq)]
enum Held {
    /// Term frequencies: the pairs, the sum of the counts, and whether the
    /// dimensions ascend (a dimension is then found from where its id
    /// falls: the ids are CRC-32s, spread evenly).
    Counts {
        pairs: Box<[(u32, u32)]>,
        tokens: u64,
        ascending: bool,
    },
    /// Another tool's weights, as read.
    Weights(SparseVector),
}

impl TermVector {
    /// Read from `vector`: trine's encoding becomes pairs without a copy
    /// of the vector; another tool's weights are copied as they are.
    pub fn new(vector: &SparseVector) -> Self {
        if !is_term_frequencies(vector) {
            return Self(Held::Weights(vector.clone()));
        }
        // Whole numbers of at most 2^24: exact as u32.
        let pairs: Box<[(u32, u32)]> = vector
            .indices
            .iter()
            .zip(&vector.values)
            .map(|(i, w)| (*i, *w as u32))
            .collect();
        let tokens = pairs.iter().map(|(_, c)| u64::from(*c)).sum();
        let ascending = pairs.windows(2).all(|w| w[0].0 < w[1].0);
        Self(Held::Counts {
            pairs,
            tokens,
            ascending,
        })
    }

    /// The vector as read.
    pub fn to_vector(&self) -> SparseVector {
        match &self.0 {
            Held::Counts { pairs, .. } => SparseVector {
                indices: pairs.iter().map(|(i, _)| *i).collect(),
                values: pairs.iter().map(|(_, c)| *c as f32).collect(),
            },
            Held::Weights(vector) => vector.clone(),
        }
    }

    /// The text's length in tokens, where the vector is term frequencies.
    pub fn tokens(&self) -> Option<u64> {
        match &self.0 {
            Held::Counts { tokens, .. } => Some(*tokens),
            Held::Weights(_) => None,
        }
    }

    /// The count of dimension `id` (its first, should it repeat), where the
    /// vector is term frequencies: 0 where it does not hold it.
    pub fn count(&self, id: u32) -> Option<u32> {
        let Held::Counts {
            pairs, ascending, ..
        } = &self.0
        else {
            return None;
        };
        let at = if *ascending {
            find_spread(pairs, id)
        } else {
            pairs.iter().position(|(i, _)| *i == id)
        };
        Some(at.map_or(0, |at| pairs[at].1))
    }
}

/// Where `id` is among ascending pairs whose ids spread evenly over `u32`:
/// from the place its value predicts, galloping out to bracket it, then
/// halving within the bracket (a few neighbouring reads, not a halving
/// over the whole vector).
fn find_spread(pairs: &[(u32, u32)], id: u32) -> Option<usize> {
    let n = pairs.len();
    if n == 0 {
        return None;
    }
    let guess = usize::try_from((u64::from(id) * n as u64) >> 32).unwrap_or(n - 1);
    let guess = guess.min(n - 1);
    let (mut lo, mut hi) = (guess, guess + 1);
    let mut step = 1;
    if pairs[guess].0 < id {
        // The bracket moves right until its end passes id.
        while hi < n && pairs[hi].0 < id {
            lo = hi;
            hi = (hi + step).min(n);
            step *= 2;
        }
        hi = (hi + 1).min(n);
    } else {
        // Left until its start is at or below id.
        while lo > 0 && pairs[lo].0 > id {
            hi = lo;
            lo = lo.saturating_sub(step);
            step *= 2;
        }
    }
    pairs[lo..hi]
        .binary_search_by_key(&id, |(i, _)| *i)
        .ok()
        .map(|at| lo + at)
}

/// A query's vector: weight 1 for each of its terms.
pub fn encode_query(query: &str, fold: Fold) -> SparseVector {
    encode_terms(&terms(query, fold), fold)
}

/// The vector of a query's terms ([`crate::terms`], or the ones its
/// lexical scoring keeps: [`crate::common::scored`]): weight 1 each.
pub fn encode_terms(terms: &[String], fold: Fold) -> SparseVector {
    to_vector(
        terms
            .iter()
            .map(|t| (token_id(&fold.stem(t.clone())), 1.0))
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
    fn a_dimension_is_found_wherever_it_falls() {
        // Ascending pairs, evenly spread or bunched at either end; every id
        // held is found, every id between or beyond them is not.
        let sets: Vec<Vec<u32>> = vec![
            vec![],
            vec![7],
            (0..500u32).map(|i| i.wrapping_mul(8_589_934)).collect(),
            (0..300).collect(),
            (0..300).map(|i| u32::MAX - 300 + i).collect(),
            vec![0, 1, 2, u32::MAX / 2, u32::MAX - 1, u32::MAX],
            (0..64)
                .map(|i| i * 3 + 1_000_000)
                .chain([u32::MAX])
                .collect(),
        ];
        for ids in sets {
            let pairs: Vec<(u32, u32)> = ids.iter().map(|i| (*i, i % 5 + 1)).collect();
            for (at, (id, _)) in pairs.iter().enumerate() {
                assert_eq!(
                    find_spread(&pairs, *id),
                    Some(at),
                    "{id} in {} ids",
                    ids.len()
                );
                for absent in [id.wrapping_add(1), id.wrapping_sub(1)] {
                    let want = pairs.iter().position(|(i, _)| *i == absent);
                    assert_eq!(find_spread(&pairs, absent), want, "{absent}");
                }
            }
            for absent in [0, 5, u32::MAX / 3, u32::MAX] {
                let want = pairs.iter().position(|(i, _)| *i == absent);
                assert_eq!(find_spread(&pairs, absent), want, "{absent}");
            }
        }
    }

    #[test]
    fn a_term_vector_reads_back_as_written() {
        let counts = encode_text("a b a c", Fold::CASE);
        let weights = SparseVector {
            indices: vec![3, 1],
            values: vec![0.5, 2.0],
        };
        for v in [counts.clone(), weights.clone()] {
            assert_eq!(TermVector::new(&v).to_vector(), v);
        }
        let tv = TermVector::new(&counts);
        assert_eq!(tv.tokens(), Some(4));
        assert_eq!(tv.count(token_id("a")), Some(2));
        assert_eq!(tv.count(token_id("z")), Some(0));
        assert_eq!(TermVector::new(&weights).count(1), None, "not counts");
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
