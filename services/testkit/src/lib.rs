//! Helpers that start trine's real parts in-process for tests.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// The `trine` binary at `bin` (a test's `env!("CARGO_BIN_EXE_trine")`) on
/// the embedded store in `data` with the hash embedder, whatever the
/// caller's environment says about a server or a config file.
pub fn trine_cli(bin: &str, data: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("--data")
        .arg(data)
        .args(["--embedder", "hash"])
        .env_remove("TRINE_QDRANT_URL")
        .env_remove("TRINE_CONFIG");
    cmd
}
