#!/usr/bin/env bash
# Regenerates docs/fusion.md: `trine eval` of the fusion default against the
# better single channel and RRF at k = 60, on the held-back half of each
# development tier (scripts/make-devset.py: small and medium with MiniLM,
# large with the static embedder), on the bundled sample (MiniLM) and on the
# 385,000-memory scale corpus (scripts/gen-corpus.py, static).
#
#     ./scripts/fusion-eval.sh     # ~1 hour the first time (the medium tier's MiniLM ingest), minutes after
#
# Work files go to $FUSION_DIR (default ./fusion-work): the development set,
# one data directory per tier (a tier whose data directory exists is not
# ingested again) and one JSON report per run. The development set needs the
# English package descriptions: `apt-get update -o Acquire::Languages=en`.
# Not part of the test command (trine/tests/eval.rs runs a smoke of it).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${FUSION_DIR:-$repo/fusion-work}"
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"

[[ -f "$work/devset/large/queries.jsonl" ]] ||
  python3 scripts/make-devset.py --out "$work/devset" >&2
[[ -f "$work/corpus-385000/queries.jsonl" ]] ||
  python3 scripts/gen-corpus.py --out "$work/corpus-385000" >"$work/corpus-385000.gen.txt"

# The baselines each run is compared with, fused from the same channel lists.
baselines=(--fusion rrf/k=60/w=1:1:2/tier=off --fusion rrf/k=60/w=1:1:0/tier=off)

run() { # NAME EMBEDDER MEMORIES QUERIES [eval args...]
  local name=$1 embedder=$2 memories=$3 queries=$4
  local data="$work/data-$name"
  wc -l <"$memories" >"$work/$name.size"
  if [[ ! -d "$data" ]]; then
    "$trine" --data "$data" --embedder "$embedder" --models "$models" \
      ingest "$memories" --batch 256 >"$work/$name.ingest.txt" 2>&1
  fi
  "$trine" --log error --data "$data" --embedder "$embedder" --models "$models" \
    eval --queries "$queries" --modes hybrid,semantic,lexical --strategies default,candidates \
    --verbatim on --native none --k 8 "${baselines[@]}" "${@:5}" \
    --save "$work/$name.json" >"$work/$name.txt"
}

run sample minilm samples/memories.jsonl samples/queries.jsonl
for tier in small medium; do
  run "$tier" minilm "$work/devset/$tier/memories.jsonl" "$work/devset/$tier/queries.jsonl" \
    --split held
done
run large static "$work/devset/large/memories.jsonl" "$work/devset/large/queries.jsonl" \
  --split held
run c385 static "$work/corpus-385000/memories.jsonl" "$work/corpus-385000/queries.jsonl"

python3 scripts/fusion-report.py "$work" >docs/fusion.md
echo "wrote docs/fusion.md" >&2
