#!/usr/bin/env bash
# Runs trine embedded on the bundled sample: fetches the model, ingests
# samples/memories.jsonl into ./trine-data and prints doctor's report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh
cargo build -q -p trine
trine() { cargo run -q -p trine -- "$@"; }
trine ingest samples/memories.jsonl
trine doctor
