#!/usr/bin/env bash
# Runs trine's checks and tests: the command README.md gives and CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?
# One closing line over every test binary (cargo prints one per binary).
awk '/^test result:/ { p += $4; f += $6 } END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
