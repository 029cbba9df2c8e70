//! Helpers that start trine's real parts in-process for tests.
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// The workspace's models directory (`TRINE_MODELS` overrides it).
pub fn models_dir() -> PathBuf {
    std::env::var_os("TRINE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"))
}

/// The workspace's root directory.
pub fn workspace_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
