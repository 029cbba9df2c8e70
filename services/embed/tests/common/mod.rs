//! Shared helpers of the integration tests: where the models are, and the
//! MiniLM model loaded once per test binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use trine_embed::MiniLm;

/// `$TRINE_MODELS`, or `<workspace>/models`.
pub fn models_dir() -> PathBuf {
    match std::env::var_os("TRINE_MODELS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"),
    }
}

/// The installed MiniLM directory; fails the test when it is not installed.
pub fn minilm_dir() -> PathBuf {
    let dir = models_dir().join(MiniLm::DIR);
    for file in ["model.safetensors", "tokenizer.json", "config.json"] {
        let path = dir.join(file);
        assert!(
            path.is_file(),
            "{} is missing: run scripts/fetch-model.sh (or set TRINE_MODELS)",
            path.display()
        );
    }
    dir
}

/// MiniLM, loaded once; fails the test when the model is not installed.
pub fn minilm() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| match MiniLm::load(&minilm_dir()) {
        Ok(model) => model,
        Err(e) => panic!("cannot load minilm: {e} (run scripts/fetch-model.sh)"),
    })
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub fn norm(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}
