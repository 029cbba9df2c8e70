#!/usr/bin/env bash
# Fuzzes trine's input edges — query terms, filters, timestamps, every wire
# request message, ingest lines — for a bounded time (default 300 s), round-
# robin over the targets, and exits 1 on the first panic or broken invariant,
# printing its seed (replay: trine-fuzz --target T --seed S --cases 1).
#   scripts/fuzz.sh [SECONDS] [FIRST-SEED]
# The test command runs a short run of every target (wiring/trine-fuzz's tests).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
seed=${2:-$(date +%s)}
cargo build -q -p trine-fuzz
echo "fuzzing for ${seconds} s from seed ${seed}"
exec "${CARGO_TARGET_DIR:-target}/debug/trine-fuzz" --seconds "$seconds" --seed "$seed"
