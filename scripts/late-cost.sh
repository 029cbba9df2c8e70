#!/usr/bin/env bash
# What issue 46's defaults cost a search (docs/benchmarks.md, "Late
# interaction's cost"): one release build, one collection with tokens (the
# first 40,000 memories of make-devset.py's xl tier, static embedder or
# LATE_COST_EMBEDDER's),
# `trine bench` over its queries, the sides alternately, three runs each
# (LATE_COST_ROUNDS) at concurrency 1 and 16 (10 s after 3 s of warm-up).
# Before: this build with common words scored, the thread window off and
# late interaction off (TRINE_LEXICAL__COMMON_WORDS=none
# TRINE_CONTEXT__LEXICAL=0 TRINE_FUSION__LATE_WEIGHT=0); late off: the
# defaults but late interaction; after: the defaults. Embedded (the
# in-process mesh over Qdrant Edge), and with LATE_COST_SERVER=1 four
# processes (`trine serve --role …`, lib/four.sh) over one Qdrant 1.19
# server from ../shared/qdrant (LATE_COST_EMBEDDED=0: those alone). With LATE_COST_BEFORE=BIN (a trine binary built from the
# commit before issue 46, e.g. afe8998) a fourth side, `pre-issue`, runs that
# binary at its defaults on a copy of the memories it ingested itself
# ($work/data-pre; on the server the collection `memories_pre`).
#
#     LATE_COST_REALTEXT=DIR ./scripts/late-cost.sh   # DIR: the xl set's memories.jsonl, queries.jsonl
#
# One line a run (topology, side, concurrency, p50, p95, searches/s, the
# `late` stage's p50) appended to $LATE_COST_DIR/runs.tsv (default
# ./late-cost-work).
# Not part of the test command.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${LATE_COST_DIR:-$repo/late-cost-work}"
runs=-late-cost
profile="${BENCH_PROFILE:-release}"
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"
devset="${LATE_COST_REALTEXT:?give LATE_COST_REALTEXT, a folder with the xl set (make-devset.py --tiers xl --flat)}"
size="${LATE_COST_SIZE:-40000}"
embedder="${LATE_COST_EMBEDDER:-static}"
mkdir -p "$work"
head -n "$size" "$devset/memories.jsonl" >"$work/memories.jsonl"
cp "$devset/queries.jsonl" "$work/queries.jsonl"
out="$work/runs.tsv"
[[ -f $out ]] || : >"$out"

sides=(before late-off after)
pre="${LATE_COST_BEFORE:-}"
[[ -z $pre ]] || sides=(pre-issue "${sides[@]}")
settings() { # SIDE: its environment
  case $1 in
    before) echo TRINE_LEXICAL__COMMON_WORDS=none TRINE_CONTEXT__LEXICAL=0 TRINE_FUSION__LATE_WEIGHT=0 ;;
    late-off) echo TRINE_FUSION__LATE_WEIGHT=0 ;;
    after | pre-issue) echo "" ;;
  esac
}
# The binary of SIDE, and where it reads its own copy of the memories.
binary() { if [[ $1 == pre-issue ]]; then echo "$pre"; else echo "$trine"; fi; }
own() { # SIDE: the target arguments of that side's copy
  case $topology:$1 in
    embedded:pre-issue) echo --data "$work/data-pre" ;;
    embedded:*) echo --data "$work/data" ;;
    four:*) echo --endpoint "http://$gateway" ;;
  esac
}

# One bench run against SIDE's copy under its settings, its line appended.
bench() { # TOPOLOGY SIDE CONCURRENCY
  local json
  # shellcheck disable=SC2046 # the settings and the target are words
  json="$(env $(settings "$2") "$(binary "$2")" --log error --embedder "$embedder" --models "$models" \
    bench --queries "$work/queries.jsonl" --concurrency "$3" --duration 10s --warmup 3s --json \
    $(own "$2"))"
  python3 - "$json" "$1" "$2" "$3" >>"$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
e, late = r["end_to_end"], r["stages"].get("late", {}).get("p50", 0.0)
print("\t".join(sys.argv[2:5] + ["%.2f" % e["p50"], "%.2f" % e["p95"], "%.0f" % r["throughput"], "%.2f" % late]))
PY
}

if [[ ! -d $work/data ]]; then
  "$trine" --log error --data "$work/data" --embedder "$embedder" --models "$models" \
    ingest "$work/memories.jsonl" --batch 1024 >"$work/ingest.txt" 2>&1
fi
if [[ -n $pre && ! -d $work/data-pre ]]; then
  "$pre" --log error --data "$work/data-pre" --embedder "$embedder" --models "$models" \
    ingest "$work/memories.jsonl" --batch 1024 >"$work/ingest-pre.txt" 2>&1
fi
rounds="${LATE_COST_ROUNDS:-3}"
topology=embedded
if [[ ${LATE_COST_EMBEDDED:-1} == 1 ]]; then
  for c in 1 16; do
    for _ in $(seq "$rounds"); do
      for side in "${sides[@]}"; do bench embedded "$side" "$c"; done
    done
  done
fi

if [[ ${LATE_COST_SERVER:-0} == 1 ]]; then
  eval "$("$repo/../shared/qdrant/start-qdrant")"
  trap '"$repo/../shared/qdrant/stop-qdrant" >/dev/null 2>&1 || true' EXIT
  server=(--qdrant "$TRINE_QDRANT_URL" --embedder "$embedder" --models "$models")
  "$trine" --log error "${server[@]}" ingest "$work/memories.jsonl" --batch 1024 \
    >"$work/ingest-server.txt" 2>&1
  if [[ -n $pre ]]; then
    TRINE_COLLECTION=memories_pre "$pre" --log error "${server[@]}" ingest \
      "$work/memories.jsonl" --batch 1024 >"$work/ingest-server-pre.txt" 2>&1
  fi
  topology=four
  this="$trine"
  # shellcheck source=lib/four.sh
  source "$repo/scripts/lib/four.sh"
  for side in "${sides[@]}"; do
    # The gateway reads the settings; every role gets them (a bare `export`
    # would print the environment).
    env_of_side="$(settings "$side")"
    # shellcheck disable=SC2086 # the settings are words
    [[ -z $env_of_side ]] || export $env_of_side
    trine="$this"
    if [[ $side == pre-issue ]]; then trine="$pre" && export TRINE_COLLECTION=memories_pre; fi
    four_start "$work/four-$side" "${server[@]}"
    for c in 1 16; do
      for _ in $(seq "$rounds"); do bench four "$side" "$c"; done
    done
    four_stop
    # shellcheck disable=SC2046
    unset $(sed 's/=[^ ]*//g' <<<"$env_of_side") TRINE_COLLECTION
    trine="$this"
  done
fi
echo "late-cost: $out" >&2
