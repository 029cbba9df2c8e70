//! Distils a static (Model2Vec-format) model from the installed MiniLM, the
//! way Model2Vec's `distill` does:
//!
//! 1. every vocabulary token goes through the encoder alone, as
//!    `[SEP] token [CLS]` (Model2Vec's order), and its vector is the mean of
//!    the three output states; `[unusedN]` tokens are skipped (Model2Vec
//!    removes them; we keep zero rows so token ids still line up);
//! 2. PCA to `dims` dimensions (scikit-learn's `PCA`: centred, signs fixed so
//!    each component's largest entry is positive);
//! 3. SIF weighting with Zipf-estimated frequencies (Model2Vec's default,
//!    `sif_coefficient = 1e-4`; it replaced the older `apply_zipf`, which
//!    scaled rows by `log(1 + rank)`): the row at rank `r` (vocabulary order)
//!    is scaled by `a / (a + p_r)` with `p_r ∝ 1 / (r + 2)`.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};

use crate::error::{EmbedError, Result};
use crate::minilm::MiniLm;
use crate::static_model::StaticConfig;

/// The static model's default dimension.
pub const DEFAULT_DIMS: usize = 256;

/// Model2Vec's default SIF coefficient.
pub const SIF_COEFFICIENT: f64 = 1e-4;

/// Tokens per forward pass.
const BATCH: usize = 1024;

/// Writes a static model distilled from `model` into `out_dir` (created if
/// needed): `model.safetensors`, `tokenizer.json`, `config.json`.
/// `progress(done, total)` is called after each batch of tokens.
pub fn distill(
    model: &MiniLm,
    out_dir: &Path,
    dims: usize,
    progress: &dyn Fn(usize, usize),
) -> Result<()> {
    let inner = model.inner();
    let hidden = inner.bert.config.hidden_size;
    if dims == 0 || dims > hidden {
        return Err(EmbedError::InvalidArgument(format!(
            "static model dimension {dims} must be between 1 and {hidden}"
        )));
    }
    let tokenizer = &inner.tokenizer;
    let vocab = tokenizer.get_vocab_size(true);

    // Model2Vec's way to find the special tokens: encode "A" and take the ends.
    let probe = tokenizer.encode("A", true).map_err(EmbedError::inference)?;
    let (bos, eos) = match probe.get_ids() {
        [first, .., last] => (*first, *last),
        _ => {
            return Err(EmbedError::inference(
                "the tokenizer adds no [CLS]/[SEP] tokens",
            ));
        }
    };
    let kept: Vec<u32> = (0..vocab as u32)
        .filter(|&id| tokenizer.id_to_token(id).is_some_and(|t| !is_unused(&t)))
        .collect();
    if kept.len() <= dims {
        return Err(EmbedError::InvalidArgument(format!(
            "the vocabulary has {} tokens, too few for {dims} dimensions",
            kept.len()
        )));
    }

    // 1. One forward pass per batch of `[SEP] token [CLS]` inputs.
    let mut states: Vec<f32> = Vec::with_capacity(kept.len() * hidden);
    for (n, chunk) in kept.chunks(BATCH).enumerate() {
        let ids: Vec<u32> = chunk.iter().flat_map(|&id| [eos, id, bos]).collect();
        let ids = Tensor::from_vec(ids, (chunk.len(), 3), &inner.device)?;
        let mask = Tensor::ones((chunk.len(), 3), DType::U32, &inner.device)?;
        let mean = inner.bert.forward(&ids, &mask)?.mean(1)?;
        states.extend(mean.flatten_all()?.to_vec1::<f32>()?);
        progress((n * BATCH + chunk.len()).min(kept.len()), kept.len());
    }
    let states = Tensor::from_vec(states, (kept.len(), hidden), &inner.device)?;

    // 2. PCA; 3. SIF weights by rank among the kept tokens.
    let pca = Pca::fit(&states, dims)?;
    let projected: Vec<Vec<f32>> = pca.transform(&states)?.to_dtype(DType::F32)?.to_vec2()?;
    let weights = sif_weights(kept.len(), SIF_COEFFICIENT);
    let mut table = vec![0.0f32; vocab * dims];
    for ((&id, row), weight) in kept.iter().zip(&projected).zip(&weights) {
        let start = id as usize * dims;
        if let Some(out) = table.get_mut(start..start + dims) {
            out.iter_mut().zip(row).for_each(|(o, x)| *o = x * weight);
        }
    }

    write_model(model, out_dir, table, vocab, dims)
}

/// Writes the three files of a static model directory.
fn write_model(
    model: &MiniLm,
    out_dir: &Path,
    table: Vec<f32>,
    vocab: usize,
    dims: usize,
) -> Result<()> {
    let write_err = |path: &Path, e: &dyn std::fmt::Display| EmbedError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(out_dir).map_err(|e| write_err(out_dir, &e))?;

    let mut tokenizer = model.inner().tokenizer.clone();
    tokenizer.with_padding(None);
    let tokenizer_path = out_dir.join("tokenizer.json");
    tokenizer
        .with_truncation(None)
        .map_err(|e| write_err(&tokenizer_path, &e))?;
    tokenizer
        .save(&tokenizer_path, false)
        .map_err(|e| write_err(&tokenizer_path, &e))?;

    let config = StaticConfig {
        model_type: "model2vec".to_string(),
        hidden_dim: dims,
        normalize: true,
        name: Some(format!("{}-distilled-{dims}", MiniLm::DIR)),
        extra: serde_json::json!({
            "architectures": ["StaticModel"],
            "tokenizer_name": format!("sentence-transformers/{}", MiniLm::DIR),
            "apply_pca": dims,
            "apply_zipf": null,
            "sif_coefficient": SIF_COEFFICIENT,
            "seq_length": 1_000_000,
        })
        .as_object()
        .cloned()
        .unwrap_or_default(),
    };
    let config_path = out_dir.join("config.json");
    let json = serde_json::to_string_pretty(&config).map_err(|e| write_err(&config_path, &e))?;
    std::fs::write(&config_path, json).map_err(|e| write_err(&config_path, &e))?;

    let weights_path = out_dir.join("model.safetensors");
    let embeddings = Tensor::from_vec(table, (vocab, dims), &Device::Cpu)?;
    let tensors = HashMap::from([("embeddings".to_string(), embeddings)]);
    candle_core::safetensors::save(&tensors, &weights_path)
        .map_err(|e| write_err(&weights_path, &e))
}

/// Whether `token` is a BERT placeholder like `[unused12]`.
fn is_unused(token: &str) -> bool {
    token
        .strip_prefix("[unused")
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Model2Vec's SIF weights for `n` rows in frequency order: `a / (a + p_r)`
/// with Zipf probabilities `p_r = (1 / (r + 2)) / Σ_j 1 / (j + 2)`.
fn sif_weights(n: usize, a: f64) -> Vec<f32> {
    let total: f64 = (0..n).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    (0..n)
        .map(|r| {
            let p = 1.0 / (r as f64 + 2.0) / total;
            (a / (a + p)) as f32
        })
        .collect()
}

/// A fitted principal component analysis (as scikit-learn's `PCA`).
#[derive(Debug, Clone)]
pub struct Pca {
    /// The column means, `[1, d]` (f64).
    mean: Tensor,
    /// The components as columns, `[d, k]` (f64), by decreasing variance.
    components: Tensor,
    /// The variance along each component (sample covariance eigenvalues).
    pub variances: Vec<f64>,
}

impl Pca {
    /// Fits `k` components to the rows of `x` (`[n, d]`, n ≥ 2).
    pub fn fit(x: &Tensor, k: usize) -> Result<Self> {
        let x = x.to_dtype(DType::F64)?;
        let (n, d) = x.dims2()?;
        if n < 2 || k == 0 || k > d {
            return Err(EmbedError::InvalidArgument(format!(
                "pca needs at least 2 rows and 1..={d} components, got {n} rows and {k} components"
            )));
        }
        let mean = x.mean_keepdim(0)?;
        let centred = x.broadcast_sub(&mean)?;
        let covariance = (centred.t()?.matmul(&centred)? / (n - 1) as f64)?;
        let covariance = covariance.flatten_all()?.to_vec1::<f64>()?;
        let (values, vectors) = symmetric_eigen(covariance, d);
        let mut columns = vec![0.0f64; d * k];
        for (j, vector) in vectors.iter().take(k).enumerate() {
            for (i, x) in vector.iter().enumerate() {
                if let Some(slot) = columns.get_mut(i * k + j) {
                    *slot = *x;
                }
            }
        }
        let components = Tensor::from_vec(columns, (d, k), x.device())?;
        Ok(Self {
            mean,
            components,
            variances: values.into_iter().take(k).collect(),
        })
    }

    /// Projects the rows of `x` (`[n, d]`) onto the components: `[n, k]`, f64.
    pub fn transform(&self, x: &Tensor) -> Result<Tensor> {
        let centred = x.to_dtype(DType::F64)?.broadcast_sub(&self.mean)?;
        Ok(centred.matmul(&self.components)?)
    }
}

/// Eigen-decomposition of the symmetric `n`×`n` matrix `a` (row-major) by
/// cyclic Jacobi rotations. Returns the eigenvalues in decreasing order and
/// the matching unit eigenvectors, each signed so that its largest-magnitude
/// entry is positive.
pub fn symmetric_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<Vec<f64>>) {
    a.resize(n * n, 0.0);
    // Row i of `vt` is the i-th eigenvector (column i of V in A = V Λ Vᵀ).
    let mut vt = vec![0.0f64; n * n];
    (0..n).for_each(|i| vt[i * n + i] = 1.0);
    let total: f64 = a.iter().map(|x| x * x).sum();
    for sweep in 0..64 {
        let off: f64 = (0..n)
            .map(|p| {
                a[p * n + p + 1..(p + 1) * n]
                    .iter()
                    .map(|x| x * x)
                    .sum::<f64>()
            })
            .sum();
        if off == 0.0 || off <= total * 1e-30 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                let (app, aqq) = (a[p * n + p], a[q * n + q]);
                // After a few sweeps, drop elements too small to change the diagonal.
                let g = 100.0 * apq.abs();
                if apq == 0.0
                    || (sweep > 3 && app.abs() + g == app.abs() && aqq.abs() + g == aqq.abs())
                {
                    a[p * n + q] = 0.0;
                    a[q * n + p] = 0.0;
                    continue;
                }
                // tan of the rotation angle that zeroes a[p][q] (the smaller root).
                let theta = (aqq - app) / (2.0 * apq);
                let t = if theta.abs() > 1e150 {
                    0.5 / theta
                } else {
                    theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                // A ← Jᵀ A J (J the rotation in the (p, q) plane), kept symmetric.
                a[p * n + p] = app - t * apq;
                a[q * n + q] = aqq + t * apq;
                a[p * n + q] = 0.0;
                a[q * n + p] = 0.0;
                for k in (0..n).filter(|&k| k != p && k != q) {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    let (new_p, new_q) = (c * akp - s * akq, s * akp + c * akq);
                    a[k * n + p] = new_p;
                    a[p * n + k] = new_p;
                    a[k * n + q] = new_q;
                    a[q * n + k] = new_q;
                }
                // V ← V J: rows p and q of Vᵀ.
                let (head, tail) = vt.split_at_mut(q * n);
                for (vp, vq) in head[p * n..(p + 1) * n].iter_mut().zip(&mut tail[..n]) {
                    let (x, y) = (*vp, *vq);
                    *vp = c * x - s * y;
                    *vq = s * x + c * y;
                }
            }
        }
    }
    sorted_eigenpairs(&a, &vt, n)
}

/// The eigenpairs of [`symmetric_eigen`] once the rotations are done: the
/// diagonal of `a` in decreasing order, with the matching rows of `vt`, each
/// signed so that its largest-magnitude entry is positive.
fn sorted_eigenpairs(a: &[f64], vt: &[f64], n: usize) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| a[j * n + j].total_cmp(&a[i * n + i]));
    let values = order.iter().map(|&i| a[i * n + i]).collect();
    let vectors = order
        .iter()
        .map(|&j| {
            let mut column = vt[j * n..(j + 1) * n].to_vec();
            let largest = column
                .iter()
                .copied()
                .fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
            if largest < 0.0 {
                column.iter_mut().for_each(|x| *x = -*x);
            }
            column
        })
        .collect();
    (values, vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn eigen_decomposes_known_matrices() {
        // (matrix, n, eigenvalues in decreasing order)
        let cases: &[(&[f64], usize, &[f64])] = &[
            (&[5.0], 1, &[5.0]),
            (&[2.0, 1.0, 1.0, 2.0], 2, &[3.0, 1.0]),
            (&[1.0, 0.0, 0.0, 4.0], 2, &[4.0, 1.0]),
            (
                &[2.0, 0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 4.0, 9.0],
                3,
                &[11.0, 2.0, 1.0],
            ),
            (&[4.0, -2.0, -2.0, 1.0], 2, &[5.0, 0.0]),
        ];
        for &(matrix, n, expected) in cases {
            let (values, vectors) = symmetric_eigen(matrix.to_vec(), n);
            for (got, want) in values.iter().zip(expected) {
                assert!(
                    close(*got, *want),
                    "{matrix:?}: eigenvalues {values:?}, want {expected:?}"
                );
            }
            // A v = λ v, |v| = 1, largest entry positive.
            for (lambda, v) in values.iter().zip(&vectors) {
                for i in 0..n {
                    let av: f64 = (0..n).map(|j| matrix[i * n + j] * v[j]).sum();
                    assert!(
                        close(av, lambda * v[i]),
                        "{matrix:?}: A v != λ v for λ = {lambda}"
                    );
                }
                assert!(close(v.iter().map(|x| x * x).sum(), 1.0));
                let largest = v
                    .iter()
                    .copied()
                    .fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
                assert!(largest > 0.0);
            }
        }
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn pca_matches_hand_computed_projections() {
        let r5 = 5.0f64.sqrt();
        // (rows, k, variances, projected rows)
        let cases: &[(&[[f64; 2]], usize, &[f64], &[&[f64]])] = &[
            // Points on y = 2x: one component along (1, 2)/√5.
            (
                &[[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]],
                1,
                &[5.0],
                &[&[-r5], &[0.0], &[r5]],
            ),
            // Independent axes with variances 16/3 and 4/3: the axes themselves.
            (
                &[[2.0, 1.0], [-2.0, 1.0], [2.0, -1.0], [-2.0, -1.0]],
                2,
                &[16.0 / 3.0, 4.0 / 3.0],
                &[&[2.0, 1.0], &[-2.0, 1.0], &[2.0, -1.0], &[-2.0, -1.0]],
            ),
            // The larger spread wins, whatever the column order.
            (
                &[[0.0, 10.0], [1.0, 0.0], [0.0, -10.0], [-1.0, 0.0]],
                1,
                &[200.0 / 3.0],
                &[&[10.0], &[0.0], &[-10.0], &[0.0]],
            ),
        ];
        for &(rows, k, variances, projected) in cases {
            let flat: Vec<f64> = rows.iter().flatten().copied().collect();
            let x = Tensor::from_vec(flat, (rows.len(), 2), &Device::Cpu).expect("tensor");
            let pca = Pca::fit(&x, k).expect("fit");
            for (got, want) in pca.variances.iter().zip(variances) {
                assert!(
                    close(*got, *want),
                    "{rows:?}: variances {:?}, want {variances:?}",
                    pca.variances
                );
            }
            let got: Vec<Vec<f64>> = pca
                .transform(&x)
                .and_then(|t| Ok(t.to_vec2()?))
                .expect("transform");
            for (g, w) in got.iter().zip(projected) {
                assert_eq!(g.len(), k);
                for (a, b) in g.iter().zip(w.iter()) {
                    assert!(
                        close(*a, *b),
                        "{rows:?}: projected {got:?}, want {projected:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn pca_rejects_bad_shapes() {
        let x = Tensor::zeros((1, 3), DType::F32, &Device::Cpu).expect("tensor");
        assert!(Pca::fit(&x, 1).is_err());
        let x = Tensor::zeros((4, 3), DType::F32, &Device::Cpu).expect("tensor");
        assert!(Pca::fit(&x, 4).is_err());
        assert!(Pca::fit(&x, 0).is_err());
    }

    #[test]
    fn sif_weights_follow_model2vec() {
        let w = sif_weights(30_000, SIF_COEFFICIENT);
        // Increasing with rank, below 1.
        assert!(w.windows(2).all(|p| p[0] < p[1]));
        assert!(w.iter().all(|&x| x > 0.0 && x < 1.0));
        // Rank 0: p = (1/2) / H, H = Σ 1/(j+2).
        let h: f64 = (0..30_000).map(|r| 1.0 / (r as f64 + 2.0)).sum();
        let want = 1e-4 / (1e-4 + 0.5 / h);
        assert!((f64::from(w[0]) - want).abs() < 1e-6);
    }

    #[test]
    fn unused_tokens_are_recognised() {
        for (token, unused) in [
            ("[unused0]", true),
            ("[unused993]", true),
            ("[unused]", false),
            ("[UNK]", false),
            ("unused1", false),
        ] {
            assert_eq!(is_unused(token), unused, "{token}");
        }
    }
}
