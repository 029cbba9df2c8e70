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

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
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

# Four processes on free loopback ports; each is ready when its health service says SERVING.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
lexical="127.0.0.1:$(port)" semantic="127.0.0.1:$(port)" fusion="127.0.0.1:$(port)" gateway="127.0.0.1:$(port)"
serve() { # ROLE ADDR [args...]
  "$trine" "${server[@]}" --log error serve --role "$1" --listen "$2" --metrics off "${@:3}" \
    >"$work/four-$size-$1.log" 2>&1 &
  pids+=($!)
  echo $! >"$work/four-$size-$1.pid"
}
serve lexical "$lexical"
serve semantic "$semantic"
serve fusion "$fusion"
serve gateway "$gateway" --lexical-addr "http://$lexical" --semantic-addr "http://$semantic" \
  --fusion-addr "http://$fusion"
# Each ready once its own service serves (lexical-svc: its document
# frequencies built from the collection and its change journal).
for pair in "$lexical trine.v1.Lexical" "$semantic trine.v1.Semantic" "$fusion trine.v1.Fusion" \
  "$gateway trine.v1.Memory"; do
  read -r addr service <<<"$pair"
  for _ in $(seq 1 600); do
    "$trine" health "$addr" --service "$service" >/dev/null 2>&1 && break
    sleep 0.2
  done
  "$trine" health "$addr" --service "$service" >/dev/null ||
    { echo "four-process: $service at $addr never served" >&2; exit 1; }
done

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
for role in gateway lexical semantic fusion; do
  pid="$(cat "$work/four-$size-$role.pid")"
  awk -v role="$role" '/^VmHWM:/ {print role, $2}' "/proc/$pid/status"
done >"$work/four-$size-memory.txt"
# And the Qdrant server's, when this script started it.
if [[ -n ${started_qdrant:-} ]]; then
  for pid in ${TRINE_QDRANT_PIDS//,/ }; do
    awk '/^VmHWM:/ {print "qdrant", $2}' "/proc/$pid/status"
  done >>"$work/four-$size-memory.txt"
fi
echo "four-process runs in $work/four-$size-*.json" >&2
