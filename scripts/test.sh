#!/usr/bin/env bash
# Runs trine's checks and tests: the command README.md gives and CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh
scripts/fetch-mcp-sdk.sh
scripts/fetch-k8s-tools.sh
scripts/fetch-promtool.sh
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The dependency tree: advisories, licences, sources, duplicates (deny.toml).
scripts/deny.sh
# Coverage-guided fuzzing (fuzz/): every target a few seconds on its seeds.
scripts/fuzz.sh --check
# The test binaries are built before any Qdrant starts: the servers do not
# idle through the build, and the tests meet a cluster that has just formed.
cargo test --workspace --no-run

log=$(mktemp)
# A test that cannot run what it is about here (no server, no tool) says
# so through trine_testkit::skipped, a line in this file: the closing line
# counts them by reason.
TRINE_SKIPPED=$(mktemp)
export TRINE_SKIPPED
# The server half of the tests (the store's contract suite, the strategies,
# tenancy and doctor on a server) runs against TRINE_QDRANT_URL: the caller's
# server if set, else a Qdrant started here from ../shared/qdrant (the
# developers' machines and CI) and stopped whatever happens.
started=""
cluster=""
cleanup() {
    rm -f "$log" "$TRINE_SKIPPED"
    if [ -n "$started" ]; then ../shared/qdrant/stop-qdrant >/dev/null 2>&1 || true; fi
    if [ -n "$cluster" ]; then
        # The cluster test restarts a node: its pids file names the new one.
        pids=$(cat "$TRINE_QDRANT_CLUSTER_DIR/pids" 2>/dev/null || echo "$TRINE_QDRANT_CLUSTER_PIDS")
        TRINE_QDRANT_PIDS="$pids" TRINE_QDRANT_DIR="$TRINE_QDRANT_CLUSTER_DIR" \
            ../shared/qdrant/stop-qdrant >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
if [ -n "${TRINE_QDRANT_URL:-}" ]; then
    echo "qdrant: $TRINE_QDRANT_URL (TRINE_QDRANT_URL): the server tests run against it"
elif [ -x ../shared/qdrant/start-qdrant ]; then
    started=1
    eval "$(../shared/qdrant/start-qdrant)"
    echo "qdrant: started from ../shared/qdrant at $TRINE_QDRANT_URL: the server tests run against it"
    # And a 3-node cluster for the cluster test, under names of its own.
    cluster_env=$(../shared/qdrant/start-qdrant --nodes 3)
    cluster=1
    TRINE_QDRANT_CLUSTER_URLS=$(sed -n 's/^export TRINE_QDRANT_URLS=//p' <<<"$cluster_env")
    TRINE_QDRANT_CLUSTER_PIDS=$(sed -n 's/^export TRINE_QDRANT_PIDS=//p' <<<"$cluster_env")
    TRINE_QDRANT_CLUSTER_DIR=$(sed -n 's/^export TRINE_QDRANT_DIR=//p' <<<"$cluster_env")
    export TRINE_QDRANT_CLUSTER_URLS TRINE_QDRANT_CLUSTER_PIDS TRINE_QDRANT_CLUSTER_DIR
    echo "qdrant: a 3-node cluster at $TRINE_QDRANT_CLUSTER_URLS for the cluster test"
else
    echo "qdrant: none (TRINE_QDRANT_URL unset, no ../shared/qdrant): the server tests are skipped"
fi
status=0
cargo test --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?
# One closing line over every test binary (cargo prints one per binary).
if [ -n "$cluster" ] && [ -f "$TRINE_QDRANT_CLUSTER_DIR/summary" ]; then
    cat "$TRINE_QDRANT_CLUSTER_DIR/summary"
fi
skipped=$(wc -l <"$TRINE_SKIPPED")
awk -v skipped="$skipped" '/^test result:/ { p += $4; f += $6 }
    END { printf "tests: %d passed, %d failed; %d skipped (cargo counts them as passed), why:\n", p, f, skipped }' "$log"
if [ "$skipped" -gt 0 ]; then
    cut -f1 "$TRINE_SKIPPED" | sort | uniq -c | sort -rn | sed 's/^ *\([0-9]*\) /  \1 × /'
fi
exit "$status"
