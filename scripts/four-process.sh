#!/usr/bin/env bash
# trine as deployed: gateway, lexical-svc, semantic-svc and fusion-svc as four
# OS processes (`trine serve --role ...`) over a Qdrant server, under the same
# load as the in-process mesh over the same server, each beside Qdrant's
# one-call hybrid on the same collection in the same run, and each process's
# peak memory (VmHWM from /proc). The scale corpus of FOUR_SIZE memories
# (default 40,000: a server ingest of 385,000 and its index build take most of
# an hour here), static embedder, concurrency 1 and 16, strategies
# `candidates` and `sparse`; native uses a `sparse` prefetch (Qdrant 1.19 has
# no BM25 over the text index; that arrived in 1.20). Release profile.
#
#     ./scripts/four-process.sh   # ~10 min on 2 cores
#
# Needs a Qdrant server: FOUR_QDRANT_URL (gRPC) or, in the developers'
# environment, ../shared/qdrant/start-qdrant (started here and stopped at the
# end). Work files go to $BENCH_DIR (default ./bench-work), named four-SIZE-*; the report is
# rendered by scripts/benchmarks-report.py. Not part of the test command.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${BENCH_DIR:-$repo/bench-work}"
duration="${FOUR_DURATION:-20s}"
size="${FOUR_SIZE:-40000}"
profile="${BENCH_PROFILE:-release}"
runs="-four-$size" # its commit and profile: $work/commit-four-SIZE.txt, profile-four-SIZE.txt
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"

# shellcheck source=lib/four.sh
source "$repo/scripts/lib/four.sh"
cleanup() {
  four_stop
  if [[ -n ${started_qdrant:-} ]]; then "$repo/../shared/qdrant/stop-qdrant" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

url="${FOUR_QDRANT_URL:-}"
if [[ -z $url ]]; then
  start="$repo/../shared/qdrant/start-qdrant"
  [[ -x $start ]] || { echo "four-process: no Qdrant server: set FOUR_QDRANT_URL" >&2; exit 2; }
  eval "$("$start")"
  started_qdrant=1
  url="$TRINE_QDRANT_URL"
fi

# The corpus (generated once, shared with the other scripts), ingested into the server.
dir="$work/corpus-$size"
[[ -f "$dir/memories.jsonl" ]] || {
  mkdir -p "$dir"
  python3 scripts/gen-corpus.py --out "$dir" --n "$size" >"$dir.gen.txt"
}
server=(--qdrant "$url" --collection "four_$size" --embedder static --models "$models")
# FOUR_CONFIG: a config file every process reads (e.g. `[lexical]
# count_statistics = false`, to measure counts made on the server); its name
# suffixes the runs' files.
tag=""
if [[ -n ${FOUR_CONFIG:-} ]]; then
  server+=(--config "$FOUR_CONFIG")
  tag="-$(basename "$FOUR_CONFIG" .toml)"
fi
"$trine" "${server[@]}" ingest "$dir/memories.jsonl" --batch 1024 \
  >"$work/four-$size-ingest.txt" 2>&1

# Four processes on free loopback ports, each ready when its health service says SERVING.
four_start "$work/four-$size" "${server[@]}"

for strategy in candidates sparse; do
  for c in 1 16; do
    # Four processes, then the in-process mesh over the same server.
    "$trine" "${server[@]}" --log error bench --endpoint "http://$gateway" \
      --queries "$dir/bench-queries.jsonl" --strategy "$strategy" --concurrency "$c" \
      --native sparse --duration "$duration" --warmup 5s \
      --save "$work/four-$size$tag-$strategy-c$c.json" >/dev/null
    "$trine" "${server[@]}" --log error bench \
      --queries "$dir/bench-queries.jsonl" --strategy "$strategy" --concurrency "$c" \
      --duration "$duration" --warmup 5s --save "$work/four-$size$tag-inproc-$strategy-c$c.json" >/dev/null
  done
done

# Each role's peak resident memory, from the kernel.
four_peaks >"$work/four-$size-memory.txt"
# And the Qdrant server's, when this script started it.
if [[ -n ${started_qdrant:-} ]]; then
  for pid in ${TRINE_QDRANT_PIDS//,/ }; do
    awk '/^VmHWM:/ {print "qdrant", $2}' "/proc/$pid/status"
  done >>"$work/four-$size-memory.txt"
fi
echo "four-process runs in $work/four-$size-*.json" >&2
