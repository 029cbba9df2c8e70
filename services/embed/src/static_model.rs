//! Model2Vec-format static embeddings: one vector per token id; a text's
//! embedding is the L2-normalised mean of its tokens' rows.
//!
//! A model directory holds `model.safetensors` (tensor `embeddings`,
//! `[vocab, dim]`, f32 or f16), `tokenizer.json` and `config.json`
//! (`{"model_type":"model2vec","hidden_dim":..,"normalize":true,"name":..}`).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use candle_core::{DType, Device};
use serde::{Deserialize, Serialize};
use tokenizers::{ModelWrapper, Tokenizer};

use crate::error::{EmbedError, Result, require_file};
use crate::tokens::Side;
use crate::{Embedder, Tokens};

/// How to create a missing static model.
const DISTILL_HINT: &str = "run scripts/fetch-model.sh, then `trine model distill`";

/// The longest input in tokens; Model2Vec's default `max_length`.
pub const MAX_TOKENS: usize = 512;

/// Batches larger than this run on a blocking thread, smaller ones inline.
const INLINE_TEXTS: usize = 8;

/// The fields of a Model2Vec `config.json` that trine reads and writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StaticConfig {
    /// Always `model2vec`.
    pub model_type: String,
    /// The vectors' dimension.
    pub hidden_dim: usize,
    /// Whether embeddings are normalised (trine always normalises).
    #[serde(default = "yes")]
    pub normalize: bool,
    /// A human-readable name of the model, e.g. where it was distilled from.
    #[serde(default)]
    pub name: Option<String>,
    /// Model2Vec's other fields, kept as they are.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

fn yes() -> bool {
    true
}

/// The static embedder. Cheap to clone.
#[derive(Clone)]
pub struct StaticEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    /// `[vocab * dim]`, row-major.
    vectors: Vec<f32>,
    dim: usize,
    tokenizer: Tokenizer,
    unk_id: Option<u32>,
    config: StaticConfig,
}

impl StaticEmbedder {
    /// The model's directory under the models directory.
    pub const DIR: &str = "static";

    /// Loads a Model2Vec-format directory.
    pub fn load(dir: &Path) -> Result<Self> {
        let weights = dir.join("model.safetensors");
        let tokenizer_path = dir.join("tokenizer.json");
        let config_path = dir.join("config.json");
        for path in [&weights, &tokenizer_path, &config_path] {
            require_file(path, DISTILL_HINT)?;
        }

        let text = std::fs::read_to_string(&config_path)
            .map_err(|e| EmbedError::bad_model(&config_path, e))?;
        let config: StaticConfig =
            serde_json::from_str(&text).map_err(|e| EmbedError::bad_model(&config_path, e))?;
        if config.model_type != "model2vec" {
            let reason = format!(
                "model_type is {:?}, expected \"model2vec\"",
                config.model_type
            );
            return Err(EmbedError::bad_model(&config_path, reason));
        }

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| EmbedError::bad_model(&tokenizer_path, e))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| EmbedError::bad_model(&tokenizer_path, e))?;

        let mut tensors = candle_core::safetensors::load(&weights, &Device::Cpu)
            .map_err(|e| EmbedError::bad_model(&weights, e))?;
        let embeddings = tensors
            .remove("embeddings")
            .ok_or_else(|| EmbedError::bad_model(&weights, "no tensor named \"embeddings\""))?;
        let (rows, dim) = embeddings
            .dims2()
            .map_err(|e| EmbedError::bad_model(&weights, e))?;
        if dim != config.hidden_dim || dim == 0 {
            let reason = format!(
                "embeddings have {dim} columns but config.json says hidden_dim {}",
                config.hidden_dim
            );
            return Err(EmbedError::bad_model(&weights, reason));
        }
        let vocab = tokenizer.get_vocab_size(true);
        if rows != vocab {
            let reason =
                format!("embeddings have {rows} rows but the tokenizer has {vocab} tokens");
            return Err(EmbedError::bad_model(&weights, reason));
        }
        let vectors = embeddings
            .to_dtype(DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| EmbedError::bad_model(&weights, e))?;

        let unk_id = unk_id(&tokenizer);
        Ok(Self {
            inner: Arc::new(Inner {
                vectors,
                dim,
                tokenizer,
                unk_id,
                config,
            }),
        })
    }

    /// The model's `config.json`.
    pub fn config(&self) -> &StaticConfig {
        &self.inner.config
    }

    /// Embeds `texts` on the calling thread.
    pub fn embed_sync(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.inner.embed(texts)
    }
}

/// The id of the tokenizer model's unknown token, if it has one.
fn unk_id(tokenizer: &Tokenizer) -> Option<u32> {
    let token = match tokenizer.get_model() {
        ModelWrapper::WordPiece(m) => Some(m.unk_token.clone()),
        ModelWrapper::WordLevel(m) => Some(m.unk_token.clone()),
        ModelWrapper::BPE(m) => m.unk_token.clone(),
        ModelWrapper::Unigram(_) => None,
    }?;
    tokenizer.token_to_id(&token)
}

impl Inner {
    /// Each text's vector ([`Inner::embed`]) and its tokens on `side`: the
    /// table's rows of its kept pieces ([`crate::tokens::kept`], punctuation
    /// left out of a memory's too: a piece without context says nothing),
    /// each once, at most [`MAX_TOKENS`]. A memory's are unit length; a
    /// query's keep their length, the piece's SIF weight (a rare piece's row
    /// is longer), so that MaxSim weighs a question's rare words more.
    fn embed_tokens(&self, texts: &[&str], side: Side) -> Result<Vec<(Vec<f32>, Tokens)>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), false)
            .map_err(EmbedError::inference)?;
        Ok(encodings
            .iter()
            .map(|encoding| {
                let vector = self.mean(encoding.get_ids());
                let pieces: Vec<&str> = encoding.get_tokens().iter().map(String::as_str).collect();
                let ids = encoding.get_ids();
                let mut seen = std::collections::HashSet::new();
                let mut rows = Vec::new();
                for i in crate::tokens::kept(&pieces, side) {
                    let id = ids[i];
                    if Some(id) == self.unk_id || !seen.insert(id) || seen.len() > MAX_TOKENS {
                        continue;
                    }
                    let start = id as usize * self.dim;
                    if let Some(row) = self.vectors.get(start..start + self.dim) {
                        let mut row = row.to_vec();
                        if matches!(side, Side::Memory(_)) {
                            crate::vector::normalize(&mut row);
                        }
                        rows.extend_from_slice(&row);
                    }
                }
                (
                    vector,
                    Tokens {
                        dim: self.dim,
                        rows,
                    },
                )
            })
            .collect())
    }

    /// Mean of the token rows of each text (no special tokens, unknown tokens
    /// dropped, at most [`MAX_TOKENS`]), L2-normalised.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), false)
            .map_err(EmbedError::inference)?;
        Ok(encodings
            .iter()
            .map(|encoding| self.mean(encoding.get_ids()))
            .collect())
    }

    /// The normalised mean of the rows of `ids` (unknown tokens dropped, at
    /// most [`MAX_TOKENS`]).
    fn mean(&self, ids: &[u32]) -> Vec<f32> {
        let mut sum = vec![0.0f32; self.dim];
        let ids = ids.iter().filter(|&&id| Some(id) != self.unk_id);
        for &id in ids.take(MAX_TOKENS) {
            let start = id as usize * self.dim;
            if let Some(row) = self.vectors.get(start..start + self.dim) {
                sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
            }
        }
        // The mean's direction is the sum's: normalising is enough.
        crate::vector::normalize(&mut sum);
        sum
    }
}

#[async_trait]
impl Embedder for StaticEmbedder {
    fn name(&self) -> &str {
        "static"
    }

    fn dim(&self) -> usize {
        self.inner.dim
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.off_executor(texts, |inner, refs| inner.embed(refs))
            .await
    }

    async fn embed_tokens(&self, texts: &[String], side: Side) -> Result<Vec<(Vec<f32>, Tokens)>> {
        self.off_executor(texts, move |inner, refs| inner.embed_tokens(refs, side))
            .await
    }
}

impl StaticEmbedder {
    /// `work` over `texts`: inline for at most [`INLINE_TEXTS`], on a
    /// blocking thread for more.
    async fn off_executor<T: Send + 'static>(
        &self,
        texts: &[String],
        work: impl FnOnce(&Inner, &[&str]) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if texts.len() <= INLINE_TEXTS {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            return work(&self.inner, &refs);
        }
        let inner = Arc::clone(&self.inner);
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            work(&inner, &refs)
        })
        .await
        .map_err(|e| EmbedError::inference(format!("embedding task failed: {e}")))?
    }
}
