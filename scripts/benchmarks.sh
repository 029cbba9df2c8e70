#!/usr/bin/env bash
# Regenerates docs/benchmarks.md from runs: the scale corpora (385,000 and
# 400,000 memories, scripts/gen-corpus.py), their ingest with the static
# embedder, the counts budget without and with the count cache and the
# document frequencies (400,000) and on never-repeated queries (385,000),
# `trine eval` of every configuration and Qdrant's native hybrid (385,000),
# `trine bench` of each strategy against Qdrant's native hybrid (385,000), and
# a concurrency sweep (1, 4, 16, 64) and an open-loop rate run of the default
# strategy beside native (385,000), each strategy on real text (every memory
# of make-devset.py --tiers xl) at concurrency 1 and 16, and the scaling
# curve with peak memory (scripts/scaling.sh). Release profile (BENCH_PROFILE=dev for the test
# profile).
#
#     ./scripts/benchmarks.sh            # ~1.5 hours on 2 cores, most of it two index builds
#     BENCH_ONLY=realtext ./scripts/benchmarks.sh   # the real-text runs alone, then the report
#     BENCH_ONLY=strategies ./scripts/benchmarks.sh # each strategy at 385,000 at concurrency 1 and 16 alone, then the report
#
# Work files go to $BENCH_DIR (default ./bench-work); a corpus whose data
# directory exists is not ingested again (delete it to measure the ingest).
# Not part of the test command: the tests run a seconds-long smoke of the
# same commands (trine/tests/eval.rs, trine/tests/serve.rs).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${BENCH_DIR:-$repo/bench-work}"
duration="${BENCH_DURATION:-60s}"
sweep_duration="${BENCH_SWEEP_DURATION:-30s}"
profile="${BENCH_PROFILE:-release}"
only="${BENCH_ONLY:-}"
[[ -z $only || $only == realtext || $only == strategies ]] ||
  { echo "BENCH_ONLY is empty, realtext or strategies" >&2; exit 2; }
# The runs of one part alone record their own commit and profile.
[[ -n $only ]] && runs="-$only"
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"

if [[ -z $only ]]; then # every run but the strategies and the real text
# The strategies' runs below are this run's: no label of an earlier one.
rm -f "$work/commit-strategies.txt" "$work/profile-strategies.txt"
big="$(corpus 400000)"
adr="$(corpus 385000)"

# The write rate alone (no index build), into a scratch directory.
rm -rf "$work/scratch"
"$trine" --data "$work/scratch" --embedder static --models "$models" \
  ingest "$adr/memories.jsonl" --batch 1024 --no-optimize 2>"$work/write-rate.txt" >/dev/null
rm -rf "$work/scratch"

# The counts budget at 400,000: every count made on every search, then the
# count cache alone, then the default (the embedded store's document frequencies).
printf '[lexical]\ncount_cache_secs = 0\ncount_statistics = false\n' >"$work/no-count-cache.toml"
printf '[lexical]\ncount_statistics = false\n' >"$work/no-count-statistics.toml"
at "$big" --config "$work/no-count-cache.toml" bench --queries "$big/bench-queries.jsonl" \
  --duration "$duration" --warmup 5s --save "$work/counts-off.json" >/dev/null
at "$big" --config "$work/no-count-statistics.toml" bench --queries "$big/bench-queries.jsonl" \
  --duration "$duration" --warmup 5s --save "$work/counts-cached.json" >/dev/null
at "$big" bench --queries "$big/bench-queries.jsonl" \
  --duration "$duration" --warmup 5s --save "$work/counts-kept.json" >/dev/null

# Quality at 385,000: every configuration, and Qdrant's native hybrid.
at "$adr" eval --queries "$adr/queries.jsonl" --modes hybrid,semantic,lexical \
  --verbatim on,1,off --save "$work/eval.json" >/dev/null || true

# The counts on queries never seen before (385,000): 20,000 distinct searches,
# each sent at most once (--no-repeat), at concurrency 1 and 16, with the
# count cache alone and with the default.
[[ -f "$work/never-repeated/bench-queries.jsonl" ]] ||
  python3 scripts/gen-corpus.py --out "$work/never-repeated" --n 385000 --bench-queries 20000 >/dev/null
for c in 1 16; do
  at "$adr" --config "$work/no-count-statistics.toml" bench --no-repeat \
    --queries "$work/never-repeated/bench-queries.jsonl" --concurrency "$c" \
    --duration "$sweep_duration" --warmup 5s --save "$work/never-repeated-cached-c$c.json" >/dev/null
  at "$adr" bench --no-repeat --queries "$work/never-repeated/bench-queries.jsonl" --concurrency "$c" \
    --duration "$sweep_duration" --warmup 5s --save "$work/never-repeated-kept-c$c.json" >/dev/null
done

# Concurrency sweep at 385,000 (closed loop), then an open loop at a fixed
# rate with at most 64 in flight: trine's default strategy beside native bm25.
for c in 1 4 16 64; do
  at "$adr" bench --queries "$adr/bench-queries.jsonl" --concurrency "$c" --native bm25 \
    --duration "$sweep_duration" --warmup 5s --save "$work/sweep-$c.json" >/dev/null
done
at "$adr" bench --queries "$adr/bench-queries.jsonl" --rate "${BENCH_RATE:-50}" --concurrency 64 \
  --native bm25 --duration "$sweep_duration" --warmup 5s --save "$work/open-loop.json" >/dev/null

fi

# Each strategy at 385,000: concurrency 1, then under load (16), each beside
# the same load on Qdrant native.
if [[ -z $only || $only == strategies ]]; then
adr="$(corpus 385000)"
for strategy in candidates bm25 sparse gate; do
  native=bm25
  [[ $strategy == sparse ]] && native=sparse
  at "$adr" bench --queries "$adr/bench-queries.jsonl" --strategy "$strategy" \
    --native "$native" --duration "$duration" --warmup 5s \
    --save "$work/bench-$strategy.json" >/dev/null
done
for strategy in candidates bm25 sparse gate; do
  native=bm25
  [[ $strategy == sparse ]] && native=sparse
  at "$adr" bench --queries "$adr/bench-queries.jsonl" --strategy "$strategy" \
    --native "$native" --concurrency 16 --duration "$sweep_duration" --warmup 5s \
    --save "$work/bench-$strategy-c16.json" >/dev/null
done
fi

# Real text at 385,000 (make-devset.py --tiers xl: this machine's sources and the
# documentation packages fetch-realtext.sh unpacks), each strategy beside native
# at concurrency 1 and 16.
if [[ -z $only || $only == realtext ]]; then
real="$work/realtext"
mkdir -p "$real"
if [[ ! -f "$real/devset/memories.jsonl" ]]; then
  scripts/fetch-realtext.sh
  python3 scripts/make-devset.py --tiers xl --flat --out "$real/devset" >"$real/devset.txt"
fi
[[ -d "$real/data" ]] ||
  "$trine" --data "$real/data" --embedder static --models "$models" \
    ingest "$real/devset/memories.jsonl" --batch 1024 >"$real/ingest.txt" 2>&1
cp "$work/commit${runs:-}.txt" "$real/commit.txt"
cp "$work/profile${runs:-}.txt" "$real/profile.txt"
for strategy in candidates bm25 sparse gate; do
  native=bm25
  [[ $strategy == sparse ]] && native=sparse
  for c in 1 16; do
    "$trine" --data "$real/data" --embedder static --models "$models" bench \
      --queries "$real/devset/queries.jsonl" --strategy "$strategy" --native "$native" \
      --concurrency "$c" --duration "$sweep_duration" --warmup 5s \
      --save "$real/bench-$strategy-c$c.json" >/dev/null
  done
done
fi

# The scaling curve (40,000 to 385,000 memories), with peak memory.
[[ -n $only ]] || BENCH_DIR="$work" BENCH_PROFILE="$profile" ./scripts/scaling.sh

python3 scripts/benchmarks-report.py "$work" >docs/benchmarks.md
echo "wrote docs/benchmarks.md" >&2
