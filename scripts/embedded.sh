#!/usr/bin/env bash
# docs/benchmarks.md's embedded section, made by this one script: `trine
# bench` on the in-process mesh (the four services in one process over Qdrant
# Edge, as `trine serve` runs them without a Qdrant URL) on real text — the
# first N memories of make-devset.py's xl tier (Debian package descriptions
# and changelogs, man pages, sources) — at each size and concurrency, each run
# followed by Qdrant's one-call hybrid (dense + `sparse` prefetch fused by RRF,
# the hits read with their memories) on the same collection in the same
# process. Release profile, static embedder.
#
#     ./scripts/embedded.sh                        # 40,000: ~3 min on 2 cores
#     EMBEDDED_SIZES="40000 100000" ./scripts/embedded.sh
#
# EMBEDDED_SIZES (default 40000), EMBEDDED_CONCURRENCY ("1 16"),
# EMBEDDED_DURATION (20s a run). The real text: EMBEDDED_REALTEXT (a folder
# holding the xl development set's memories.jsonl and queries.jsonl), else
# deployed.sh's copy, else it is made here (scripts/fetch-realtext.sh, then
# make-devset.py; about 20 min the first time). Work files go to
# $BENCH_DIR/embedded (default ./bench-work/embedded); the section is rendered
# by `benchmarks-report.py --embedded` and replaces docs/benchmarks.md's
# `## Embedded` section. Not part of the test command.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${BENCH_DIR:-$repo/bench-work}/embedded"
profile="${BENCH_PROFILE:-release}"
runs="" # its commit and profile: $work/commit.txt, profile.txt
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"

sizes="${EMBEDDED_SIZES:-40000}"
concurrency="${EMBEDDED_CONCURRENCY:-1 16}"
duration="${EMBEDDED_DURATION:-20s}"
devset="${EMBEDDED_REALTEXT:-${BENCH_DIR:-$repo/bench-work}/deployed/realtext-devset}"
if [[ ! -f $devset/memories.jsonl ]]; then
  ./scripts/fetch-realtext.sh >&2
  python3 scripts/make-devset.py --tiers xl --flat --out "$devset" >&2
fi

for size in $sizes; do
  dir="$work/real-$size"
  mkdir -p "$dir"
  if [[ ! -d $dir/data ]]; then
    have="$(wc -l <"$devset/memories.jsonl")"
    ((have >= size)) || { echo "embedded: real text has $have memories, not $size" >&2; exit 2; }
    head -n "$size" "$devset/memories.jsonl" >"$dir/memories.jsonl"
    cp "$devset/queries.jsonl" "$dir/bench-queries.jsonl"
    "$trine" --data "$dir/data" --embedder static --models "$models" \
      ingest "$dir/memories.jsonl" --batch 1024 >"$dir/ingest.txt" 2>&1
  fi
  cp "$work/commit.txt" "$dir/commit.txt" # the commit these runs measure
  nproc >"$dir/cores.txt"                  # what a saturated run spends
  for c in $concurrency; do
    echo "embedded: real text $size, concurrency $c" >&2
    "$trine" --data "$dir/data" --embedder static --models "$models" --log error bench \
      --queries "$dir/bench-queries.jsonl" --concurrency "$c" --duration "$duration" \
      --native sparse --save "$dir/bench-c$c.json" >"$dir/bench-c$c.txt" 2>&1
  done
done

# The section, in place of docs/benchmarks.md's own.
section="$(python3 scripts/benchmarks-report.py --embedded "$work")"
replace_section "## Embedded" "$section" "## Four processes"
echo "embedded: runs in $work; docs/benchmarks.md's embedded section rewritten" >&2
