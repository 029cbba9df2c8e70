//! sentence-transformers all-MiniLM-L6-v2 on candle (CPU, f32): WordPiece
//! tokens (at most 256, with [CLS]/[SEP]), a 6-layer BERT encoder, mean
//! pooling over the attention mask, L2 normalisation.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use candle_core::{Device, Tensor};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::bert::{Bert, BertConfig, mean_pool};
use crate::error::{EmbedError, Result, require_file};
use crate::{Embedder, MAX_BATCH};

/// How to install a missing MiniLM file.
const FETCH_HINT: &str = "run scripts/fetch-model.sh";

/// The longest input in tokens, as sentence-transformers' `max_seq_length`.
pub const MAX_TOKENS: usize = 256;

/// The MiniLM embedder. Cheap to clone: the model sits behind an [`Arc`].
#[derive(Clone)]
pub struct MiniLm {
    inner: Arc<Inner>,
}

/// The loaded model and tokenizer.
pub(crate) struct Inner {
    pub bert: Bert,
    pub tokenizer: Tokenizer,
    pub device: Device,
}

impl MiniLm {
    /// The model's directory under the models directory.
    pub const DIR: &str = "all-MiniLM-L6-v2";

    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let weights = dir.join("model.safetensors");
        let tokenizer_path = dir.join("tokenizer.json");
        let config_path = dir.join("config.json");
        for path in [&weights, &tokenizer_path, &config_path] {
            require_file(path, FETCH_HINT)?;
        }
        let config = BertConfig::read(&config_path)?;
        let tokenizer = load_tokenizer(
            &tokenizer_path,
            MAX_TOKENS.min(config.max_position_embeddings),
        )?;
        let device = Device::Cpu;
        let bert = Bert::load(&weights, config, &device)?;
        Ok(Self {
            inner: Arc::new(Inner {
                bert,
                tokenizer,
                device,
            }),
        })
    }

    /// Embeds `texts` on the calling thread, [`MAX_BATCH`] texts per forward
    /// pass. Blocking: from async code use [`Embedder::embed`].
    pub fn embed_sync(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.inner.embed(texts)
    }

    /// The model and tokenizer, for distillation.
    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }
}

/// Reads `tokenizer.json` and replaces its fixed padding and truncation with
/// padding to the longest text of a batch and truncation at `max_tokens`.
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer> {
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| EmbedError::bad_model(path, e))?;
    let mut padding = tokenizer.get_padding().cloned().unwrap_or_default();
    padding.strategy = PaddingStrategy::BatchLongest;
    if tokenizer.token_to_id(&padding.pad_token).is_none() {
        padding = PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        };
    }
    tokenizer.with_padding(Some(padding));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(|e| EmbedError::bad_model(path, e))?;
    Ok(tokenizer)
}

impl Inner {
    /// Embeds texts in batches of at most [`MAX_BATCH`]; longest texts are
    /// batched together to keep padding small, results come back in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(MAX_BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    /// One forward pass over `texts`.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(EmbedError::inference)?;
        let seq = encodings
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0);
        let mut ids = Vec::with_capacity(texts.len() * seq);
        let mut mask = Vec::with_capacity(texts.len() * seq);
        for encoding in &encodings {
            if encoding.get_ids().len() != seq {
                return Err(EmbedError::inference(
                    "tokenizer did not pad the batch to one length",
                ));
            }
            ids.extend_from_slice(encoding.get_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (texts.len(), seq), &self.device)?;
        let mask = Tensor::from_vec(mask, (texts.len(), seq), &self.device)?;
        let hidden = self.bert.forward(&ids, &mask)?;
        let pooled = mean_pool(&hidden, &mask)?;
        let mut vectors: Vec<Vec<f32>> = pooled.to_vec2()?;
        vectors.iter_mut().for_each(|v| crate::vector::normalize(v));
        Ok(vectors)
    }
}

#[async_trait]
impl Embedder for MiniLm {
    fn name(&self) -> &str {
        "minilm"
    }

    fn dim(&self) -> usize {
        self.inner.bert.config.hidden_size
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let inner = Arc::clone(&self.inner);
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            inner.embed(&refs)
        })
        .await
        .map_err(|e| EmbedError::inference(format!("embedding task failed: {e}")))?
    }
}
