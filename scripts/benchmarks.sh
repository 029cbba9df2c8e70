#!/usr/bin/env bash
# Regenerates docs/benchmarks.md from runs: the scale corpora (385,000 and
# 400,000 memories, scripts/gen-corpus.py), their ingest with the static
# embedder, the counts budget without and with the count cache (400,000),
# `trine eval` of every configuration and Qdrant's native hybrid (385,000),
# and `trine bench` of each strategy against Qdrant's native hybrid (385,000).
#
#     ./scripts/benchmarks.sh            # ~1 hour on 2 cores, most of it two index builds
#
# Work files go to $BENCH_DIR (default ./bench-work); a corpus whose data
# directory exists is not ingested again (delete it to measure the ingest).
# Not part of the test command: the tests run a seconds-long smoke of the
# same commands (trine/tests/eval.rs, trine/tests/serve.rs).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${BENCH_DIR:-$repo/bench-work}"
duration="${BENCH_DURATION:-60s}"
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"

corpus() { # N -> DIR: generated and ingested once
  local n=$1 dir="$work/corpus-$1"
  if [[ ! -d "$dir/data" ]]; then
    python3 scripts/gen-corpus.py --out "$dir" --n "$n" >"$dir.gen.txt"
    mkdir -p "$dir"
    "$trine" --data "$dir/data" --embedder static --models "$models" \
      ingest "$dir/memories.jsonl" --batch 1024 2>"$dir/ingest.txt" >>"$dir/ingest.txt"
  fi
  echo "$dir"
}
at() { "$trine" --data "$1/data" --embedder static --models "$models" "${@:2}"; }

big="$(corpus 400000)"
adr="$(corpus 385000)"

# The write rate alone (no index build), into a scratch directory.
rm -rf "$work/scratch"
"$trine" --data "$work/scratch" --embedder static --models "$models" \
  ingest "$adr/memories.jsonl" --batch 1024 --no-optimize 2>"$work/write-rate.txt" >/dev/null
rm -rf "$work/scratch"

# The counts budget at 400,000: every count made on every search, then the default.
printf '[lexical]\ncount_cache_secs = 0\n' >"$work/no-count-cache.toml"
at "$big" --config "$work/no-count-cache.toml" bench --queries "$big/bench-queries.jsonl" \
  --duration "$duration" --warmup 5s --save "$work/counts-off.json" >/dev/null
at "$big" bench --queries "$big/bench-queries.jsonl" \
  --duration "$duration" --warmup 5s --save "$work/counts-cached.json" >/dev/null

# Quality at 385,000: every configuration, and Qdrant's native hybrid.
at "$adr" eval --queries "$adr/queries.jsonl" --modes hybrid,semantic,lexical \
  --verbatim on,1,off --save "$work/eval.json" >/dev/null || true

# Latency at 385,000: each strategy, then the same load on Qdrant native.
for strategy in candidates bm25 sparse gate; do
  native=bm25
  [[ $strategy == sparse ]] && native=sparse
  at "$adr" bench --queries "$adr/bench-queries.jsonl" --strategy "$strategy" \
    --native "$native" --duration "$duration" --warmup 5s \
    --save "$work/bench-$strategy.json" >/dev/null
done

python3 scripts/benchmarks-report.py "$work" >docs/benchmarks.md
echo "wrote docs/benchmarks.md" >&2
