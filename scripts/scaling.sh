#!/usr/bin/env bash
# The scaling curve: trine's default strategy (`candidates`) beside Qdrant's
# one-call hybrid (`bm25` prefetch) on the same collection, at 40,000,
# 100,000 and 385,000 memories of the scale corpus (SCALING_SIZES; add
# 1000000 for the million), concurrency 1 and 16; ingest throughput and index
# build time from each ingest's own report; and the serving process's peak
# memory (VmHWM) — trine's in-process mesh, and a process serving native
# searches alone (`trine bench --native-only`) — under the concurrency-16
# load. Release profile (BENCH_PROFILE=dev for the test profile).
#
#     ./scripts/scaling.sh   # ~20 min on 2 cores beyond the corpora already ingested
#
# Work files go to $BENCH_DIR (default ./bench-work), shared with
# benchmarks.sh, which runs this too; `scripts/benchmarks-report.py` renders
# the table and draws docs/scaling.svg. Not part of the test command.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${BENCH_DIR:-$repo/bench-work}"
duration="${SCALING_DURATION:-20s}"
profile="${BENCH_PROFILE:-release}"
runs=-scaling # its commit and profile: $work/commit-scaling.txt, profile-scaling.txt
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"

for n in ${SCALING_SIZES:-40000 100000 385000}; do
  dir="$(corpus "$n")"
  for c in 1 16; do
    at "$dir" bench --queries "$dir/bench-queries.jsonl" --concurrency "$c" --native bm25 \
      --duration "$duration" --warmup 5s --save "$work/scale-$n-c$c.json" >/dev/null
  done
  at "$dir" bench --queries "$dir/bench-queries.jsonl" --concurrency 16 --native bm25 \
    --native-only --duration "$duration" --warmup 5s --save "$work/scale-$n-native.json" >/dev/null
done
echo "scaling runs in $work/scale-*.json" >&2
