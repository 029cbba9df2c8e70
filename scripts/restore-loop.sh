#!/usr/bin/env bash
# Runs the cluster backup-and-restore test (trine/tests/backup.rs,
# a_cluster_backup_restores_exactly: 3 nodes, 3 shards, replication 2) N times
# in a row on one 3-node cluster from ../shared/qdrant, each run a fresh
# process, and prints each run's result and time and the count that passed.
# Exit 0 only when every run passed; a failed run's output is kept.
#   scripts/restore-loop.sh [N]     (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/trine/target}"
[ -x ../shared/qdrant/start-qdrant ] || { echo "restore-loop: no ../shared/qdrant: nothing to run against" >&2; exit 2; }
bin=$(cargo test -q -p trine --test backup --no-run --message-format json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "backup" and m.get("executable"):
        print(m["executable"])')
logs=$(mktemp -d)
cluster_env=$(../shared/qdrant/start-qdrant --nodes 3)
TRINE_QDRANT_CLUSTER_URLS=$(sed -n 's/^export TRINE_QDRANT_URLS=//p' <<<"$cluster_env")
TRINE_QDRANT_CLUSTER_DIR=$(sed -n 's/^export TRINE_QDRANT_DIR=//p' <<<"$cluster_env")
pids=$(sed -n 's/^export TRINE_QDRANT_PIDS=//p' <<<"$cluster_env")
export TRINE_QDRANT_CLUSTER_URLS TRINE_QDRANT_CLUSTER_DIR
trap 'TRINE_QDRANT_PIDS=$pids TRINE_QDRANT_DIR=$TRINE_QDRANT_CLUSTER_DIR ../shared/qdrant/stop-qdrant >/dev/null 2>&1 || true' EXIT
echo "restore-loop: $n runs on a 3-node cluster at $TRINE_QDRANT_CLUSTER_URLS (Qdrant 1.19.0)"
passed=0
for i in $(seq 1 "$n"); do
    start=$(date +%s%N)
    if "$bin" --exact a_cluster_backup_restores_exactly >"$logs/run-$i.log" 2>&1; then
        result=passed
        passed=$((passed + 1))
        rm -f "$logs/run-$i.log"
    else
        result="FAILED (output: $logs/run-$i.log)"
    fi
    ms=$((($(date +%s%N) - start) / 1000000))
    printf 'run %2d: %s in %d.%d s\n' "$i" "$result" $((ms / 1000)) $((ms % 1000 / 100))
done
echo "restore-loop: $passed of $n passed"
[ "$passed" -eq "$n" ]
