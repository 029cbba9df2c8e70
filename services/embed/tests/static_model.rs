//! The static embedder on a small hand-made Model2Vec directory (the real
//! MiniLM tokenizer, a tiny embeddings table).
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use common::{dot, minilm_dir, norm};
use tokenizers::Tokenizer;
use trine_core::{ErrorKind, Language};
use trine_embed::{Embedder, Side, StaticEmbedder};

const DIM: usize = 4;

/// Writes a static model whose only non-zero rows are "cat" → e0, "dog" → e1,
/// "the" → e2, with embeddings of `dtype`.
fn write_model(dir: &Path, dtype: DType, hidden_dim: usize) {
    let tokenizer_path = minilm_dir().join("tokenizer.json");
    std::fs::copy(&tokenizer_path, dir.join("tokenizer.json")).expect("copy tokenizer");
    let tokenizer = Tokenizer::from_file(&tokenizer_path).expect("tokenizer");
    let vocab = tokenizer.get_vocab_size(true);
    let mut table = vec![0.0f32; vocab * DIM];
    for (axis, word) in ["cat", "dog", "the"].iter().enumerate() {
        let id = tokenizer.token_to_id(word).expect("word in vocabulary") as usize;
        table[id * DIM + axis] = 1.0;
    }
    let embeddings = Tensor::from_vec(table, (vocab, DIM), &Device::Cpu)
        .and_then(|t| t.to_dtype(dtype))
        .expect("tensor");
    let tensors = HashMap::from([("embeddings".to_string(), embeddings)]);
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).expect("save");
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": hidden_dim,
        "normalize": true,
        "name": "hand-made test model",
    });
    std::fs::write(dir.join("config.json"), config.to_string()).expect("config");
}

#[test]
fn loads_and_embeds_a_hand_made_model() {
    let h = std::f32::consts::FRAC_1_SQRT_2;
    for dtype in [DType::F32, DType::F16] {
        let dir = tempfile::tempdir().expect("tempdir");
        write_model(dir.path(), dtype, DIM);
        let model = StaticEmbedder::load(dir.path()).expect("load");
        assert_eq!((model.name(), model.dim()), ("static", DIM));
        assert_eq!(model.config().name.as_deref(), Some("hand-made test model"));
        // (text, expected vector): the normalised mean of the known rows.
        let cases: &[(&str, [f32; DIM])] = &[
            ("cat", [1.0, 0.0, 0.0, 0.0]),
            ("The DOG", [0.0, h, h, 0.0]),
            ("the cat the cat", [h, 0.0, h, 0.0]),
            (
                "dog dog dog cat",
                [1.0 / 3.162_277_7, 3.0 / 3.162_277_7, 0.0, 0.0],
            ),
            // No tokens, or only unknown ones ([UNK] is dropped): the first basis vector.
            ("", [1.0, 0.0, 0.0, 0.0]),
            ("🦀", [1.0, 0.0, 0.0, 0.0]),
        ];
        let texts: Vec<&str> = cases.iter().map(|(t, _)| *t).collect();
        let vectors = model.embed_sync(&texts).expect("embed");
        for ((text, want), got) in cases.iter().zip(&vectors) {
            assert!(
                (norm(got) - 1.0).abs() < 1e-5,
                "{dtype:?} {text:?}: {got:?}"
            );
            assert!(
                dot(got, want) > 0.9999,
                "{dtype:?} {text:?}: got {got:?}, want {want:?}"
            );
        }
    }
}

#[tokio::test]
async fn large_batches_match_inline_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_model(dir.path(), DType::F32, DIM);
    let model = StaticEmbedder::load(dir.path()).expect("load");
    let texts: Vec<String> = (0..50)
        .map(|i| ["the cat", "a dog", "cat and dog"][i % 3].to_string())
        .collect();
    let batched = model.embed(&texts).await.expect("embed");
    for (text, vector) in texts.iter().zip(&batched) {
        let single = model
            .embed(std::slice::from_ref(text))
            .await
            .expect("embed one");
        assert_eq!(&single[0], vector);
    }
}

#[test]
fn rejects_inconsistent_models() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_model(dir.path(), DType::F32, DIM + 1);
    let err = StaticEmbedder::load(dir.path())
        .err()
        .expect("hidden_dim mismatch must fail");
    assert!(err.to_string().contains("hidden_dim"), "{err}");
    assert_eq!(err.kind(), ErrorKind::FailedPrecondition);

    let empty = tempfile::tempdir().expect("tempdir");
    let err = StaticEmbedder::load(empty.path())
        .err()
        .expect("missing files must fail");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
    assert!(err.to_string().contains("scripts/fetch-model.sh"), "{err}");
}

/// A text's tokens: the table's row of each word piece once, punctuation
/// left out; a question's leave out its common words and keep each row's
/// length (its SIF weight), a memory's are unit length.
#[tokio::test]
async fn tokens_are_the_rows_of_the_kept_pieces() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_model(dir.path(), DType::F32, DIM);
    let model = StaticEmbedder::load(dir.path()).expect("load");
    let english = Side::Query(Some(Language::English));
    // (text, side, the rows' axes in order: cat e0, dog e1, the e2)
    let cases: &[(&str, Side, &[usize])] = &[
        ("the cat, the dog!", Side::Memory(None), &[2, 0, 1]),
        (
            "the cat, the dog!",
            Side::Memory(Some(Language::English)),
            &[0, 1],
        ),
        ("the cat, the dog!", english, &[0, 1]),
        ("the cat, the dog!", Side::Query(None), &[2, 0, 1]),
        // Only common words: every piece stays.
        ("the", english, &[2]),
    ];
    for (text, side, axes) in cases {
        let got = model
            .embed_tokens(&[text.to_string()], *side)
            .await
            .expect("tokens")
            .remove(0);
        let vector = model
            .embed(&[text.to_string()])
            .await
            .expect("embed")
            .remove(0);
        assert_eq!(got.0, vector, "{text:?}: the same vector as embed");
        let rows: Vec<&[f32]> = got.1.iter().collect();
        assert_eq!(rows.len(), axes.len(), "{text:?} {side:?}: {rows:?}");
        for (row, &axis) in rows.iter().zip(*axes) {
            assert!(
                (row[axis] - 1.0).abs() < 1e-6,
                "{text:?} {side:?}: {rows:?}"
            );
        }
    }
}
