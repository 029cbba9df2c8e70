//! sentence-transformers all-MiniLM-L6-v2 on candle (CPU, f32): WordPiece
//! tokens (at most 256, with [CLS]/[SEP]), a 6-layer BERT encoder, mean
//! pooling over the attention mask, L2 normalisation.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use candle_core::{Device, Tensor};
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, BertConfig, mean_pool};
use crate::error::{EmbedError, Result, require_file};
use crate::tokens::Side;
use crate::{Embedder, MAX_BATCH};
use trine_core::late::Tokens;

/// How to install a missing MiniLM file.
const FETCH_HINT: &str = "run scripts/fetch-model.sh";

/// The longest input in tokens, as sentence-transformers' `max_seq_length`.
pub const MAX_TOKENS: usize = 256;

/// The MiniLM embedder. Cheap to clone: the model sits behind an [`Arc`].
#[derive(Clone)]
pub struct MiniLm {
    inner: Arc<Inner>,
    /// Forward passes at once: each one's matrix products use every core, so
    /// more would only queue inside candle; calls beyond wait here, and the
    /// servers' in-flight limits bound how many wait.
    running: Arc<tokio::sync::Semaphore>,
}

/// What embedding some texts cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Work {
    pub texts: usize,
    /// Tokens the texts became (with [CLS] and [SEP], after truncation).
    pub tokens: usize,
    /// Token positions the forward passes computed: `tokens` plus padding.
    pub padded: usize,
    /// Floating-point operations of the forward passes.
    pub flops: f64,
}

impl Work {
    /// Adds `other`'s work to this.
    pub fn add(&mut self, other: Self) {
        self.texts += other.texts;
        self.tokens += other.tokens;
        self.padded += other.padded;
        self.flops += other.flops;
    }
}

/// The loaded model and tokenizer.
pub(crate) struct Inner {
    pub bert: Bert,
    pub tokenizer: Tokenizer,
    /// The id padding positions get (masked out of attention and pooling).
    pub pad_id: u32,
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
        let (tokenizer, pad_id) = load_tokenizer(
            &tokenizer_path,
            MAX_TOKENS.min(config.max_position_embeddings),
        )?;
        let device = Device::Cpu;
        let bert = Bert::load(&weights, config, &device)?;
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        Ok(Self {
            inner: Arc::new(Inner {
                bert,
                tokenizer,
                pad_id,
                device,
            }),
            running: Arc::new(tokio::sync::Semaphore::new(cores)),
        })
    }

    /// Embeds `texts` on the calling thread, [`MAX_BATCH`] texts per forward
    /// pass. Blocking: from async code use [`Embedder::embed`].
    pub fn embed_sync(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(self.inner.embed(texts)?.0)
    }

    /// As [`Self::embed_sync`], with what the forward passes cost: for
    /// `trine model speed`.
    pub fn embed_measured(&self, texts: &[&str]) -> Result<(Vec<Vec<f32>>, Work)> {
        self.inner.embed(texts)
    }

    /// GFLOP/s of candle's f32 matrix product on this machine, at the shape
    /// of MiniLM's largest layer over a full batch (`[16·256, hidden] ×
    /// [hidden, intermediate]`), timed for about `seconds`: the ceiling the
    /// model's own rate is read against.
    pub fn matmul_gflops(&self, seconds: f64) -> Result<f64> {
        let config = &self.inner.bert.config;
        let (m, k, n) = (
            MAX_BATCH * MAX_TOKENS,
            config.hidden_size,
            config.intermediate_size,
        );
        let device = &self.inner.device;
        let a = Tensor::ones((m, k), candle_core::DType::F32, device)?;
        let b = Tensor::ones((k, n), candle_core::DType::F32, device)?;
        a.matmul(&b)?; // warm the thread pool
        let started = std::time::Instant::now();
        let mut runs = 0u32;
        while runs == 0 || started.elapsed().as_secs_f64() < seconds {
            a.matmul(&b)?;
            runs += 1;
        }
        let flops = 2.0 * (m * k * n) as f64 * f64::from(runs);
        Ok(flops / started.elapsed().as_secs_f64() / 1e9)
    }

    /// The model and tokenizer, for distillation.
    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }
}

/// Reads `tokenizer.json` and replaces its fixed padding and truncation with
/// no padding (batches are padded by hand, [`Inner::embed`]) and truncation
/// at `max_tokens`; returns the padding token's id beside it.
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<(Tokenizer, u32)> {
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| EmbedError::bad_model(path, e))?;
    let pad_id = tokenizer
        .get_padding()
        .map(|p| p.pad_id)
        .or_else(|| tokenizer.token_to_id("[PAD]"))
        .unwrap_or(0);
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(|e| EmbedError::bad_model(path, e))?;
    Ok((tokenizer, pad_id))
}

/// The texts' positions, longest in tokens first, cut into forward passes
/// of at most [`MAX_BATCH`]: texts of like length share a pass, so little
/// of it is padding.
fn batches(lengths: &[usize]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(lengths[i]));
    order.chunks(MAX_BATCH).map(<[usize]>::to_vec).collect()
}

impl Inner {
    /// Embeds texts: each is tokenized once, then the texts go through the
    /// model in passes of like token length ([`batches`]), each padded to its
    /// longest text; results come back in order.
    fn embed(&self, texts: &[&str]) -> Result<(Vec<Vec<f32>>, Work)> {
        self.run(texts, None)
            .map(|(vectors, _, work)| (vectors, work))
    }

    /// [`Inner::embed`], and with `side` each text's tokens too: the last
    /// layer's vector of each kept word piece ([`crate::tokens::kept`]),
    /// unit length, from the same forward pass.
    fn run(&self, texts: &[&str], side: Option<Side>) -> Result<Embedded> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(EmbedError::inference)?;
        let lengths: Vec<usize> = encodings.iter().map(|e| e.get_ids().len()).collect();
        let mut out = vec![Vec::new(); texts.len()];
        let mut tokens = vec![Tokens::default(); if side.is_some() { texts.len() } else { 0 }];
        let mut work = Work::default();
        for batch in batches(&lengths) {
            let seq = batch.iter().map(|&i| lengths[i]).max().unwrap_or(0);
            let mut ids = Vec::with_capacity(batch.len() * seq);
            let mut mask = Vec::with_capacity(batch.len() * seq);
            for &i in &batch {
                let real = encodings[i].get_ids();
                ids.extend_from_slice(real);
                ids.resize(ids.len() + seq - real.len(), self.pad_id);
                mask.extend(std::iter::repeat_n(1u32, real.len()));
                mask.resize(mask.len() + seq - real.len(), 0);
            }
            let (vectors, hidden) = self.forward(ids, mask, batch.len(), seq, side.is_some())?;
            if let Some(side) = side {
                for (&i, rows) in batch.iter().zip(hidden) {
                    let pieces: Vec<&str> = encodings[i]
                        .get_tokens()
                        .iter()
                        .map(String::as_str)
                        .collect();
                    tokens[i] = unit_rows(&rows, &crate::tokens::kept(&pieces, side));
                }
            }
            work.add(Work {
                texts: batch.len(),
                tokens: batch.iter().map(|&i| lengths[i]).sum(),
                padded: batch.len() * seq,
                flops: self.bert.config.forward_flops(batch.len(), seq),
            });
            for (i, vector) in batch.into_iter().zip(vectors) {
                out[i] = vector;
            }
        }
        Ok((out, tokens, work))
    }

    /// One forward pass over `batch` texts of `seq` token ids each (padded),
    /// with their attention mask: pooled, normalised vectors, and with
    /// `hidden` each text's last layer (`seq` rows, padding included).
    fn forward(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        batch: usize,
        seq: usize,
        hidden: bool,
    ) -> Result<(Vec<Vec<f32>>, Vec<Layer>)> {
        if batch == 0 || seq == 0 {
            return Ok((vec![Vec::new(); batch], vec![Vec::new(); batch]));
        }
        let ids = Tensor::from_vec(ids, (batch, seq), &self.device)?;
        let mask = Tensor::from_vec(mask, (batch, seq), &self.device)?;
        let last = self.bert.forward(&ids, &mask)?;
        let pooled = mean_pool(&last, &mask)?;
        let mut vectors: Vec<Vec<f32>> = pooled.to_vec2()?;
        vectors.iter_mut().for_each(|v| crate::vector::normalize(v));
        let rows = if hidden { last.to_vec3()? } else { Vec::new() };
        Ok((vectors, rows))
    }
}

/// One text's last layer: a vector a token position.
type Layer = Vec<Vec<f32>>;

/// A text's vectors, tokens (empty unless asked for) and the work done.
type Embedded = (Vec<Vec<f32>>, Vec<Tokens>, Work);

/// The rows at `kept`, each scaled to unit length.
fn unit_rows(rows: &[Vec<f32>], kept: &[usize]) -> Tokens {
    let dim = rows.first().map_or(0, Vec::len);
    let mut out = Vec::with_capacity(kept.len() * dim);
    for &i in kept {
        let Some(row) = rows.get(i) else { continue };
        let mut row = row.clone();
        crate::vector::normalize(&mut row);
        out.extend_from_slice(&row);
    }
    Tokens { dim, rows: out }
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
        self.off_executor(texts, |inner, refs| {
            inner.embed(refs).map(|(vectors, _)| vectors)
        })
        .await
    }

    async fn embed_tokens(&self, texts: &[String], side: Side) -> Result<Vec<(Vec<f32>, Tokens)>> {
        self.off_executor(texts, move |inner, refs| {
            let (vectors, tokens, _) = inner.run(refs, Some(side))?;
            Ok(vectors.into_iter().zip(tokens).collect())
        })
        .await
    }
}

impl MiniLm {
    /// `work` over `texts` on the blocking pool, one forward pass at a
    /// time (the `running` permit); nothing for no texts.
    async fn off_executor<T: Default + Send + 'static>(
        &self,
        texts: &[String],
        work: impl FnOnce(&Inner, &[&str]) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if texts.is_empty() {
            return Ok(T::default());
        }
        let inner = Arc::clone(&self.inner);
        let texts = texts.to_vec();
        let _running = self
            .running
            .acquire()
            .await
            .map_err(|e| EmbedError::inference(format!("embedder closed: {e}")))?;
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            work(&inner, &refs)
        })
        .await
        .map_err(|e| EmbedError::inference(format!("embedding task failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_group_like_lengths_longest_first_and_keep_every_text() {
        let table: [(&[usize], &[&[usize]]); 3] = [
            (&[], &[]),
            (&[3, 9, 5], &[&[1, 2, 0]]),
            // 20 texts: the 16 longest share the first pass.
            (
                &[
                    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                ],
                &[
                    &[19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4],
                    &[3, 2, 1, 0],
                ],
            ),
        ];
        for (lengths, expected) in table {
            let got = batches(lengths);
            let expected: Vec<Vec<usize>> = expected.iter().map(|b| b.to_vec()).collect();
            assert_eq!(got, expected, "{lengths:?}");
        }
    }
}
