#!/usr/bin/env bash
# Runs trine embedded on the bundled sample: fetches the model, ingests
# samples/memories.jsonl into ./trine-data, prints doctor's report, then
# searches the sample for one of its meetings by title.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh
cargo build -q -p trine
trine() { cargo run -q -p trine -- "$@"; }
trine ingest samples/memories.jsonl
trine doctor
trine search --tenant acme --explain "Meeting 2026-11-11 09:58"
