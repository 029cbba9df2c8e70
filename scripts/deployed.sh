#!/usr/bin/env bash
# docs/benchmarks.md's deployed section, made by this one script: trine as
# deployed — `trine serve --role gateway|lexical|semantic|fusion` as four OS
# processes — over one Qdrant 1.19 server and over a 3-node cluster (shards 3,
# replication 2), on the scale corpus (scripts/gen-corpus.py) and on real text
# (the first N memories of make-devset.py's xl tier: Debian package
# descriptions and changelogs, man pages, sources), at each size and
# concurrency, each run followed by Qdrant's best one-call hybrid in 1.19 (dense +
# `sparse` prefetch fused by RRF; BM25 over the text index arrived in 1.20) on
# the same collection in the same run. Every row has the counts share p50/p95
# and the searches over the budget; no warm-up, so that the first, fresh
# queries are measured too. Release profile, static embedder.
#
#     ./scripts/deployed.sh                       # 40,000: ~12 min on 2 cores
#     DEPLOYED_SIZES="40000 385000" ./scripts/deployed.sh   # + 385,000: ~30 min more
#
# DEPLOYED_SIZES (default 40000), DEPLOYED_CORPORA ("scale real"),
# DEPLOYED_TOPOLOGIES ("server cluster"), DEPLOYED_CONCURRENCY ("1 16 64"),
# DEPLOYED_STRATEGIES ("candidates": the default; add `sparse`),
# DEPLOYED_DURATION (20s a run). The real text needs the xl development set:
# DEPLOYED_REALTEXT (a folder holding its memories.jsonl and queries.jsonl),
# else it is made here (scripts/fetch-realtext.sh, then make-devset.py; about
# 20 min the first time). Qdrant comes from ../shared/qdrant/start-qdrant, one
# server or cluster per topology, stopped after its runs. Work files go to
# $BENCH_DIR/deployed (default ./bench-work/deployed); the section is rendered
# by `benchmarks-report.py --deployed` and replaces docs/benchmarks.md's
# `## Deployed` section. Not part of the test command.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${BENCH_DIR:-$repo/bench-work}/deployed"
profile="${BENCH_PROFILE:-release}"
runs="" # its commit and profile: $work/commit.txt, profile.txt
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"
# shellcheck source=lib/four.sh
source "$repo/scripts/lib/four.sh"

sizes="${DEPLOYED_SIZES:-40000}"
corpora="${DEPLOYED_CORPORA:-scale real}"
topologies="${DEPLOYED_TOPOLOGIES:-server cluster}"
concurrency="${DEPLOYED_CONCURRENCY:-1 16 64}"
strategies="${DEPLOYED_STRATEGIES:-candidates}"
duration="${DEPLOYED_DURATION:-20s}"
start="$repo/../shared/qdrant/start-qdrant"
stop="$repo/../shared/qdrant/stop-qdrant"
[[ -x $start ]] || { echo "deployed: needs ../shared/qdrant/start-qdrant" >&2; exit 2; }

qdrant_up=""
cleanup() {
  four_stop
  if [[ -n $qdrant_up ]]; then "$stop" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# Runs CMD, appending to FILE what each process spent on CPU meanwhile
# (seconds, user + system): the Qdrant nodes and trine's roles from /proc,
# the command itself (the load generator) from bash's `time`.
measured() { # FILE LABEL CMD...
  local file=$1 label=$2 names=() pids=() pid entry role
  for pid in ${TRINE_QDRANT_PIDS//,/ }; do names+=(qdrant); pids+=("$pid"); done
  for entry in "${four_roles[@]}"; do
    read -r role pid <<<"$entry"
    names+=("$role")
    pids+=("$pid")
  done
  ticks() { for pid in "${pids[@]}"; do awk '{printf "%d ", $14 + $15}' "/proc/$pid/stat"; done; }
  local before after client
  before="$(ticks)"
  client="$({ TIMEFORMAT='%U %S'; time "${@:3}" >/dev/null 2>>"$file.log"; } 2>&1)" ||
    { echo "deployed: $label run failed: $(tail -3 "$file.log")" >&2; exit 1; }
  after="$(ticks)"
  printf '%s\nnames %s\nticks %s\nbefore %s\nafter %s\nclient %s\n' "$label" "${names[*]}" \
    "$(getconf CLK_TCK)" "$before" "$after" "$client" >>"$file"
}

# The corpus of N memories and its queries: DIR with memories.jsonl and bench-queries.jsonl.
corpus_of() { # CORPUS N -> DIR
  local kind=$1 n=$2 dir="$work/$1-$2"
  if [[ ! -f $dir/bench-queries.jsonl ]]; then
    mkdir -p "$dir"
    if [[ $kind == scale ]]; then
      python3 scripts/gen-corpus.py --out "$dir" --n "$n" >"$dir.gen.txt"
    else
      local devset="${DEPLOYED_REALTEXT:-$work/realtext-devset}"
      if [[ ! -f $devset/memories.jsonl ]]; then
        ./scripts/fetch-realtext.sh >&2
        python3 scripts/make-devset.py --tiers xl --flat --out "$devset" >&2
      fi
      local have
      have="$(wc -l <"$devset/memories.jsonl")"
      ((have >= n)) || { echo "deployed: real text has $have memories, not $n" >&2; exit 2; }
      head -n "$n" "$devset/memories.jsonl" >"$dir/memories.jsonl"
      cp "$devset/queries.jsonl" "$dir/bench-queries.jsonl"
    fi
  fi
  echo "$dir"
}

for topology in $topologies; do
  case $topology in
    server) eval "$("$start")" ;;
    cluster) eval "$("$start" --nodes 3)" ;;
    *) echo "deployed: unknown topology $topology (server, cluster)" >&2; exit 2 ;;
  esac
  qdrant_up=1
  config="$work/$topology.toml"
  if [[ $topology == cluster ]]; then
    printf 'shards = 3\nreplication_factor = 2\n' >"$config"
  else
    : >"$config"
  fi
  for corpus in $corpora; do
    for size in $sizes; do
      dir="$(corpus_of "$corpus" "$size")"
      at="$work/$topology-$corpus-$size"
      server=(--qdrant "$TRINE_QDRANT_URLS" --collection "${corpus}_$size" --config "$config"
        --embedder static --models "$models")
      "$trine" "${server[@]}" ingest "$dir/memories.jsonl" --batch 1024 >"$at-ingest.txt" 2>&1
      four_start "$at" "${server[@]}"
      cp "$work/commit.txt" "$at-commit.txt" # the commit these runs measure
      for strategy in $strategies; do
        for c in $concurrency; do
          echo "deployed: $topology, $corpus $size, $strategy, concurrency $c" >&2
          run="$at-$strategy-c$c"
          : >"$run.cpu.txt"
          # trine through the gateway, then Qdrant's one call alone, each
          # with the CPU every process spent on it.
          measured "$run.cpu.txt" trine "$trine" "${server[@]}" --log error bench \
            --endpoint "http://$gateway" --queries "$dir/bench-queries.jsonl" \
            --strategy "$strategy" --concurrency "$c" --duration "$duration" --warmup 0s \
            --save "$run.json" --server-pids "$TRINE_QDRANT_PIDS"
          measured "$run.cpu.txt" native "$trine" "${server[@]}" --log error bench \
            --queries "$dir/bench-queries.jsonl" --concurrency "$c" --native sparse --native-only \
            --duration "$duration" --warmup 0s --save "$run.native.json" --server-pids "$TRINE_QDRANT_PIDS"
        done
      done
      four_peaks >"$at-memory.txt"
      four_stop
    done
  done
  for pid in ${TRINE_QDRANT_PIDS//,/ }; do
    awk '/^VmHWM:/ {print "qdrant", $2}' "/proc/$pid/status"
  done >"$work/$topology-qdrant-memory.txt"
  "$stop" >/dev/null 2>&1 || true
  qdrant_up=""
done

# The section, in place of docs/benchmarks.md's own.
section="$(python3 scripts/benchmarks-report.py --deployed "$work")"
replace_section "## Deployed" "$section"
echo "deployed: runs in $work; docs/benchmarks.md's deployed section rewritten" >&2
