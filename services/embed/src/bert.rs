//! A small BERT encoder (as in all-MiniLM-L6-v2) on candle: embeddings, then
//! post-LayerNorm transformer layers with masked self-attention and a GELU
//! feed-forward block. Weights use the standard Hugging Face names, with or
//! without a `bert.` prefix.

use std::path::Path;

use candle_core::{D, DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, VarBuilder};
use serde::Deserialize;

use crate::error::{EmbedError, Result};

/// The fields of a Hugging Face `config.json` that the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_act() -> String {
    "gelu".to_string()
}

impl BertConfig {
    /// Reads and checks `config.json`.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| EmbedError::bad_model(path, e))?;
        let config: Self =
            serde_json::from_str(&text).map_err(|e| EmbedError::bad_model(path, e))?;
        if config.hidden_act != "gelu" {
            return Err(EmbedError::bad_model(
                path,
                format!(
                    "hidden_act {:?} is not supported, only gelu",
                    config.hidden_act
                ),
            ));
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(EmbedError::bad_model(
                path,
                "hidden_size is not a multiple of num_attention_heads",
            ));
        }
        Ok(config)
    }
}

impl BertConfig {
    /// Floating-point operations of one forward pass over `batch` texts
    /// padded to `seq` tokens, counting a multiply-add as two: per layer
    /// the four `hidden × hidden` projections and the two feed-forward
    /// matrices on every token, and the attention's scores and weighted sum
    /// (`seq × seq × hidden` each). Embedding lookups, normalisations and
    /// activations are left out (under 1 % here).
    pub fn forward_flops(&self, batch: usize, seq: usize) -> f64 {
        let (b, s) = (batch as f64, seq as f64);
        let (h, i) = (self.hidden_size as f64, self.intermediate_size as f64);
        let dense = 2.0 * b * s * (4.0 * h * h + 2.0 * h * i);
        let attention = 2.0 * 2.0 * b * s * s * h;
        self.num_hidden_layers as f64 * (dense + attention)
    }
}

/// Word + position + token-type embeddings, then LayerNorm.
struct Embeddings {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    norm: LayerNorm,
}

/// One transformer layer (post-LayerNorm, as in BERT).
struct Layer {
    query: Dense,
    key: Dense,
    value: Dense,
    attention_out: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
    heads: usize,
}

/// The encoder: token ids in, last hidden states out.
pub(crate) struct Bert {
    embeddings: Embeddings,
    layers: Vec<Layer>,
    pub config: BertConfig,
}

fn embedding(n: usize, dim: usize, vb: VarBuilder) -> candle_core::Result<Embedding> {
    Ok(Embedding::new(vb.get((n, dim), "weight")?, dim))
}

/// A linear layer whose weight is stored transposed and contiguous
/// (`[in, out]`): candle's CPU matmul is about twice as fast that way than
/// with the strided transpose `candle_nn::Linear` uses.
struct Dense {
    weight_t: Tensor,
    bias: Tensor,
}

fn dense(input: usize, output: usize, vb: VarBuilder) -> candle_core::Result<Dense> {
    let weight = vb.get((output, input), "weight")?;
    Ok(Dense {
        weight_t: weight.t()?.contiguous()?,
        bias: vb.get(output, "bias")?,
    })
}

impl Module for Dense {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let (b, s, d) = x.dims3()?;
        let y = x
            .reshape((b * s, d))?
            .matmul(&self.weight_t)?
            .broadcast_add(&self.bias)?;
        y.reshape((b, s, ()))
    }
}

fn layer_norm(dim: usize, eps: f64, vb: VarBuilder) -> candle_core::Result<LayerNorm> {
    candle_nn::layer_norm(dim, eps, vb)
}

impl Bert {
    /// Loads the weights in `weights` (safetensors) described by `config`.
    pub fn load(weights: &Path, config: BertConfig, device: &Device) -> Result<Self> {
        let bytes = std::fs::read(weights).map_err(|e| EmbedError::bad_model(weights, e))?;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, device)
            .map_err(|e| EmbedError::bad_model(weights, e))?;
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        Self::from_var_builder(vb, config).map_err(|e| EmbedError::bad_model(weights, e))
    }

    fn from_var_builder(vb: VarBuilder, config: BertConfig) -> candle_core::Result<Self> {
        let (h, eps) = (config.hidden_size, config.layer_norm_eps);
        let e = vb.pp("embeddings");
        let embeddings = Embeddings {
            word: embedding(config.vocab_size, h, e.pp("word_embeddings"))?,
            position: embedding(
                config.max_position_embeddings,
                h,
                e.pp("position_embeddings"),
            )?,
            token_type: embedding(config.type_vocab_size, h, e.pp("token_type_embeddings"))?,
            norm: layer_norm(h, eps, e.pp("LayerNorm"))?,
        };
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                Ok(Layer {
                    query: dense(h, h, a.pp("self.query"))?,
                    key: dense(h, h, a.pp("self.key"))?,
                    value: dense(h, h, a.pp("self.value"))?,
                    attention_out: dense(h, h, a.pp("output.dense"))?,
                    attention_norm: layer_norm(h, eps, a.pp("output.LayerNorm"))?,
                    intermediate: dense(h, config.intermediate_size, l.pp("intermediate.dense"))?,
                    output: dense(config.intermediate_size, h, l.pp("output.dense"))?,
                    output_norm: layer_norm(h, eps, l.pp("output.LayerNorm"))?,
                    heads: config.num_attention_heads,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Self {
            embeddings,
            layers,
            config,
        })
    }

    /// Last hidden states `[batch, seq, hidden]` for `input_ids` and
    /// `attention_mask` (both `[batch, seq]`, u32; mask 1 = real token).
    /// Token types are all 0 (single sentences).
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
    ) -> candle_core::Result<Tensor> {
        let (_, seq) = input_ids.dims2()?;
        let device = input_ids.device();
        let positions = Tensor::arange(0u32, seq as u32, device)?;
        let token_types = input_ids.zeros_like()?;
        let e = &self.embeddings;
        let x = e
            .word
            .forward(input_ids)?
            .broadcast_add(&e.position.forward(&positions)?)?
            .add(&e.token_type.forward(&token_types)?)?;
        let mut x = e.norm.forward(&x)?;
        // Additive mask [batch, 1, 1, seq]: 0 for tokens, a large negative for padding.
        let bias = ((attention_mask.to_dtype(DType::F32)? - 1.0)? * 1e9)?
            .unsqueeze(1)?
            .unsqueeze(1)?;
        for layer in &self.layers {
            x = layer.forward(&x, &bias)?;
        }
        Ok(x)
    }
}

impl Layer {
    fn forward(&self, x: &Tensor, mask_bias: &Tensor) -> candle_core::Result<Tensor> {
        let (b, s, h) = x.dims3()?;
        let head_dim = h / self.heads;
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((b, s, self.heads, head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(self.query.forward(x)?)?;
        let k = split(self.key.forward(x)?)?;
        let v = split(self.value.forward(x)?)?;
        let scores = (q.matmul(&k.t()?)? / (head_dim as f64).sqrt())?.broadcast_add(mask_bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs.matmul(&v)?.transpose(1, 2)?.reshape((b, s, h))?;
        let x = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + x)?)?;
        let ff = self.intermediate.forward(&x)?.gelu_erf()?;
        self.output_norm.forward(&(self.output.forward(&ff)? + x)?)
    }
}

/// Mean of `hidden` (`[batch, seq, dim]`) over the positions where `mask`
/// (`[batch, seq]`) is 1, as sentence-transformers' mean pooling.
pub(crate) fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(D::Minus1)?;
    let sum = hidden.broadcast_mul(&mask)?.sum(1)?;
    let count = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
    sum.broadcast_div(&count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minilm() -> BertConfig {
        BertConfig {
            vocab_size: 30522,
            hidden_size: 384,
            num_hidden_layers: 6,
            num_attention_heads: 12,
            intermediate_size: 1536,
            max_position_embeddings: 512,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
            hidden_act: "gelu".to_string(),
        }
    }

    #[test]
    fn forward_flops_count_the_matrices_and_the_attention() {
        // (batch, seq, expected): per token 6 × 2 × (4·384² + 2·384·1536)
        // = 21,233,664 for the matrices, plus 6 × 4 × seq × 384 for attention.
        let table = [
            (0, 128, 0.0),
            (1, 1, 21_233_664.0 + 9_216.0),
            (1, 128, 128.0 * (21_233_664.0 + 9_216.0 * 128.0)),
            (16, 256, 16.0 * 256.0 * (21_233_664.0 + 9_216.0 * 256.0)),
        ];
        let config = minilm();
        for (batch, seq, expected) in table {
            assert_eq!(
                config.forward_flops(batch, seq),
                expected,
                "{batch} × {seq}"
            );
        }
    }
}
