#!/usr/bin/env bash
# Runs trine's checks and tests: the command README.md gives and CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --no-fail-fast
