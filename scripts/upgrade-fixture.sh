#!/usr/bin/env bash
# Rebuilds trine/tests/fixtures/trine-0.1.0.tar.gz, the collection the
# upgrade test (trine/tests/upgrade.rs) opens: the bundled sample ingested
# by the previous release's own binary (trine 0.1.0, commit bd5b5ec; the
# hash embedder), and that binary's answers to the sample's 35 queries
# (expected.jsonl: the query, its tenant, the ids of its first 8 hits).
#
# Usage: scripts/upgrade-fixture.sh [COMMIT]
# Builds COMMIT in a git worktree with the workspace's target directory, so
# that the dependencies are shared; the workspace's own crates hash alike in
# both trees (cargo hashes them by their path in the workspace), so once the
# binary is copied out they are cleaned and the current tree's `trine` is
# built again. A few minutes.
set -euo pipefail
release="${1:-bd5b5ec}"
name="trine-0.1.0"
here="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$here/target}"
work="$(mktemp -d)"
cleanup() {
  git -C "$here" worktree remove --force "$work/src" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

git -C "$here" worktree add --detach "$work/src" "$release" >/dev/null
echo "building trine at $release ..."
CARGO_TARGET_DIR="$target" cargo build --quiet --manifest-path "$work/src/Cargo.toml" -p trine
cp "$target/debug/trine" "$work/trine-previous"
members() {
  cargo metadata --format-version 1 --no-deps --manifest-path "$1/Cargo.toml" |
    python3 -c 'import json,sys; print(" ".join("-p " + p["name"] for p in json.load(sys.stdin)["packages"]))'
}
echo "building the current trine again ..."
# shellcheck disable=SC2046 # one argument a word
CARGO_TARGET_DIR="$target" cargo clean --quiet --manifest-path "$here/Cargo.toml" $(members "$work/src") $(members "$here")
CARGO_TARGET_DIR="$target" cargo build --quiet --manifest-path "$here/Cargo.toml" -p trine

previous() { env -u TRINE_CONFIG -u TRINE_QDRANT_URL "$work/trine-previous" --data "$work/fixture/data" --embedder hash "$@"; }
previous ingest "$here/samples/memories.jsonl" >/dev/null
: >"$work/fixture/expected.jsonl"
while IFS= read -r line; do
  query=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["query"])' "$line")
  tenant=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["tenant"])' "$line")
  previous search --json --tenant "$tenant" --limit 8 "$query" 2>/dev/null |
    python3 -c 'import json,sys; a=json.load(sys.stdin); print(json.dumps({"query": sys.argv[1], "tenant": sys.argv[2], "ids": [h["id"] for h in a["hits"]]}))' "$query" "$tenant" \
      >>"$work/fixture/expected.jsonl"
done <"$here/samples/queries.jsonl"
rm -f "$work/fixture/data/memories/lock"
tar -C "$work/fixture" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
  -czf "$here/trine/tests/fixtures/$name.tar.gz" data expected.jsonl
echo "wrote trine/tests/fixtures/$name.tar.gz ($(du -h "$here/trine/tests/fixtures/$name.tar.gz" | cut -f1)), $(wc -l <"$work/fixture/expected.jsonl") answers"
