//! MiniLM against the installed model (run scripts/fetch-model.sh first).
#![allow(clippy::unwrap_used)] // test helpers fail loudly

mod common;

use std::time::Instant;

use common::{dot, minilm, minilm_dir, models_dir, norm};
use trine_core::ErrorKind;
use trine_embed::{EmbedderKind, MiniLm};

#[test]
fn cosine_matches_sentence_transformers() {
    let v = minilm()
        .embed_sync(&["The new movie is awesome", "The new movie is so great"])
        .expect("embed");
    let cosine = dot(&v[0], &v[1]);
    println!("cosine = {cosine:.6}");
    // The sentence-transformers documentation's figure for this pair.
    assert!(
        (cosine - 0.8939).abs() < 0.001,
        "cosine {cosine}, want 0.8939 ± 0.001"
    );
}

#[test]
fn vectors_are_unit_length_and_384_wide() {
    let texts = [
        "",
        "a",
        "Qdrant stores the vectors.",
        "ünïcödé and emoji 🦀",
    ];
    for v in minilm().embed_sync(&texts).expect("embed") {
        assert_eq!(v.len(), 384);
        assert!((norm(&v) - 1.0).abs() < 1e-5, "norm {}", norm(&v));
    }
}

#[test]
fn related_sentences_are_closer() {
    let v = minilm()
        .embed_sync(&[
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The stock market fell today.",
        ])
        .expect("embed");
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.3);
}

#[test]
fn batch_equals_one_at_a_time() {
    // 40 texts of very different lengths: 3 batches, lots of padding.
    let texts: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "memory {i}: {}",
                "the agent remembered something useful. ".repeat(i % 7)
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batched = minilm().embed_sync(&refs).expect("embed batch");
    assert_eq!(batched.len(), 40);
    for (text, b) in refs.iter().zip(&batched) {
        let single = minilm().embed_sync(&[text]).expect("embed one");
        let diff = single[0]
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-4, "{text:?}: batched and single differ by {diff}");
    }
}

#[test]
fn long_text_is_truncated_at_256_tokens() {
    let long = "retrieval augmented memory ".repeat(200); // 600 tokens
    let longer = format!("{long} and this tail lies beyond the limit");
    let v = minilm().embed_sync(&[&long, &longer]).expect("embed long");
    assert!((norm(&v[0]) - 1.0).abs() < 1e-5);
    let diff = v[0]
        .iter()
        .zip(&v[1])
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(
        diff < 1e-5,
        "text past 256 tokens changed the vector by {diff}"
    );
}

#[tokio::test]
async fn embeds_through_the_trait() {
    minilm_dir();
    let embedder = trine_embed::load(EmbedderKind::MiniLm, &models_dir()).expect("load");
    assert_eq!((embedder.name(), embedder.dim()), ("minilm", 384));
    let texts: Vec<String> = (0..20).map(|i| format!("note number {i}")).collect();
    let vectors = embedder.embed(&texts).await.expect("embed");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let sync = minilm().embed_sync(&refs).expect("embed sync");
    for (a, b) in vectors.iter().zip(&sync) {
        assert!(a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5));
    }
    assert!(embedder.embed(&[]).await.expect("embed nothing").is_empty());
}

#[test]
fn query_latency() {
    let model = minilm();
    model.embed_sync(&["warm up"]).expect("embed");
    let queries = [
        "what did the user say about their travel plans",
        "qdrant hybrid search",
        "remind me of the meeting with Alice next week about the budget review",
        "favourite programming language",
    ];
    let rounds = 5;
    let start = Instant::now();
    for _ in 0..rounds {
        for q in queries {
            model.embed_sync(&[q]).expect("embed");
        }
    }
    let per_query = start.elapsed() / (rounds * queries.len()) as u32;
    let texts: Vec<String> = (0..64)
        .map(|i| format!("memory {i}: {}", queries[i % 4]))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let start = Instant::now();
    model.embed_sync(&refs).expect("embed");
    let per_text = start.elapsed() / 64;
    println!("minilm: {per_query:?} per single query, {per_text:?} per text in a batch of 64");
}

#[test]
fn missing_model_says_how_to_fix() {
    let empty = tempfile::tempdir().expect("tempdir");
    let err = MiniLm::load(empty.path())
        .err()
        .expect("loading an empty directory must fail");
    let message = err.to_string();
    assert!(message.contains("model.safetensors"), "{message}");
    assert!(message.contains("scripts/fetch-model.sh"), "{message}");
    assert_eq!(err.kind(), ErrorKind::FailedPrecondition);
}

#[test]
fn unknown_embedder_is_an_invalid_argument() {
    let err = EmbedderKind::parse("bert").expect_err("unknown name");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("minilm|static|hash"));
}

/// A text's tokens come from the same pass as its vector: one unit vector a
/// word piece of the last layer, the special ones left out; a question's
/// leave out punctuation and its common words too.
#[tokio::test]
async fn tokens_are_the_last_layers_pieces() {
    use trine_embed::Side;
    let embedder = trine_embed::load(EmbedderKind::MiniLm, &models_dir()).expect("load");
    let text = "When did Kate go hiking?".to_string();
    let vector = embedder
        .embed(std::slice::from_ref(&text))
        .await
        .expect("embed");
    // when, did, kate, go, hiking, ? (no word splits into pieces here)
    let english = Some(trine_core::Language::English);
    for (side, want) in [
        (Side::Memory(english), 3),
        (Side::Memory(None), 5),
        (Side::Query(english), 3),
        (Side::Query(None), 5),
    ] {
        let (v, tokens) = embedder
            .embed_tokens(std::slice::from_ref(&text), side)
            .await
            .expect("tokens")
            .remove(0);
        assert!(v.iter().zip(&vector[0]).all(|(a, b)| (a - b).abs() < 1e-5));
        assert_eq!((tokens.dim, tokens.len()), (384, want), "{side:?}");
        for row in tokens.iter() {
            assert!((norm(row) - 1.0).abs() < 1e-4, "{side:?}: a unit row");
        }
    }
}
