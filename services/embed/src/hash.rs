//! Feature hashing: a cheap, deterministic embedder for fast tests.

use async_trait::async_trait;

use crate::error::Result;
use crate::tokens::Side;
use crate::{Embedder, Tokens};

/// Hashes each token (lowercased alphanumeric runs, as
/// [`trine_core::tokens`]) to a signed dimension and L2-normalises the
/// counts. Texts sharing words get similar vectors; meaning plays no part.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
}

impl HashEmbedder {
    /// The dimension [`crate::load`] uses.
    pub const DEFAULT_DIM: usize = 256;

    /// The most tokens a text gets (its distinct words).
    pub const MAX_TOKENS: usize = 512;

    /// A hashing embedder of `dim` dimensions (at least 1).
    pub fn new(dim: usize) -> Self {
        Self { dim: dim.max(1) }
    }

    /// The vector of one text; a text without tokens gets the first basis vector.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        for token in trine_core::tokens(text, trine_core::Fold::CASE) {
            let h = fnv1a64(token.as_bytes());
            // Low bits pick the dimension, the top bit the sign.
            let slot = (h % self.dim as u64) as usize;
            let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
            if let Some(x) = v.get_mut(slot) {
                *x += sign;
            }
        }
        crate::vector::normalize(&mut v);
        v
    }
}

/// 64-bit FNV-1a: stable across runs and platforms.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[async_trait]
impl Embedder for HashEmbedder {
    fn name(&self) -> &str {
        "hash"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }

    /// Each word's own hashed vector is its token ([`crate::tokens::kept`]
    /// over the words, lowercased), each word once, at most
    /// [`Self::MAX_TOKENS`].
    async fn embed_tokens(&self, texts: &[String], side: Side) -> Result<Vec<(Vec<f32>, Tokens)>> {
        Ok(texts
            .iter()
            .map(|text| {
                let words: Vec<String> = trine_core::tokens(text, trine_core::Fold::CASE).collect();
                let pieces: Vec<&str> = words.iter().map(String::as_str).collect();
                let mut seen = std::collections::HashSet::new();
                let mut rows = Vec::new();
                for i in crate::tokens::kept(&pieces, side) {
                    if seen.len() < Self::MAX_TOKENS && seen.insert(pieces[i]) {
                        rows.extend(self.embed_one(pieces[i]));
                    }
                }
                let tokens = Tokens {
                    dim: self.dim,
                    rows,
                };
                (self.embed_one(text), tokens)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn fnv1a_matches_reference_values() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn deterministic_and_unit_length() {
        let e = HashEmbedder::new(HashEmbedder::DEFAULT_DIM);
        for text in ["The cat sat on the mat", "", "!!!", "Ünïcödé wörds 42"] {
            let a = e.embed_one(text);
            assert_eq!(a, e.embed_one(text), "{text:?}");
            assert_eq!(a.len(), HashEmbedder::DEFAULT_DIM);
            assert!((dot(&a, &a) - 1.0).abs() < 1e-5, "{text:?}");
        }
        assert_eq!(e.embed_one("")[0], 1.0);
    }

    #[test]
    fn case_and_punctuation_do_not_matter() {
        let e = HashEmbedder::new(64);
        assert_eq!(e.embed_one("Hello, World!"), e.embed_one("hello world"));
    }

    #[test]
    fn similar_texts_are_closer_than_unrelated_ones() {
        let e = HashEmbedder::new(HashEmbedder::DEFAULT_DIM);
        let a = e.embed_one("qdrant stores vectors for agent memory");
        let b = e.embed_one("agent memory vectors live in qdrant");
        let c = e.embed_one("the recipe needs two eggs and flour");
        assert!(dot(&a, &b) > 0.6, "{}", dot(&a, &b));
        assert!(dot(&a, &b) > dot(&a, &c) + 0.5, "{}", dot(&a, &c));
    }

    #[tokio::test]
    async fn tokens_are_each_words_vector_once() {
        let e = HashEmbedder::new(32);
        let english = Side::Query(Some(trine_core::Language::English));
        // (text, side, the words whose vectors are the rows, in order)
        let cases: &[(&str, Side, &[&str])] = &[
            (
                "The cat and the cat!",
                Side::Memory(None),
                &["the", "cat", "and"],
            ),
            (
                "The cat and the cat!",
                Side::Memory(Some(trine_core::Language::English)),
                &["cat"],
            ),
            ("The cat and the cat!", english, &["cat"]),
            ("to be or not", english, &["to", "be", "or", "not"]),
        ];
        for (text, side, words) in cases {
            let (vector, tokens) = e
                .embed_tokens(&[text.to_string()], *side)
                .await
                .unwrap()
                .remove(0);
            assert_eq!(vector, e.embed_one(text));
            let want: Vec<f32> = words.iter().flat_map(|w| e.embed_one(w)).collect();
            assert_eq!(tokens.rows, want, "{text:?} {side:?}");
        }
        let many: String = (0..600).map(|i| format!("w{i} ")).collect();
        let (_, tokens) = e
            .embed_tokens(&[many], Side::Memory(None))
            .await
            .unwrap()
            .remove(0);
        assert_eq!(tokens.len(), HashEmbedder::MAX_TOKENS);
    }

    #[tokio::test]
    async fn embeds_through_the_trait() {
        let e: &dyn Embedder = &HashEmbedder::new(32);
        let out = e.embed(&["a b".to_string(), "c".to_string()]).await;
        let out = out.expect("hash embedding cannot fail");
        assert_eq!((e.name(), e.dim(), out.len()), ("hash", 32, 2));
    }
}
