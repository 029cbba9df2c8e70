#!/usr/bin/env bash
# Compares this checkout's search with an earlier commit's on the
# development sets, the same embeddings under both: REV is built (release)
# in a worktree, each set is ingested once by REV's binary, copied and
# upgraded in place (`trine upgrade`) for this build, and both run `trine
# eval` on each half (held, tune) with the same configurations — this
# build's with `--baseline` REV's saved report, so every configuration that
# ran in both is compared per kind, paired query by query, with the
# bootstrap interval and the verdict (docs/cli.md). Writes
# $REGRESSION_DIR/summary.md: `hybrid/default` (a search that names
# nothing) per set, embedder, half and kind. A collection upgraded in
# place keeps no tokens (a collection made before them has no `tokens`
# space), so late interaction judges nothing there: REGRESSION_FRESH=1
# ingests this build's copy anew instead (the same embeddings; twice the
# embedding time).
#
#     ./scripts/regression.sh afe8998   # REGRESSION_SETS, REGRESSION_EMBEDDERS to narrow it
#
# Sets (in $QUALITY_DIR/devset, made as scripts/quality.sh makes them):
# small, medium, fr, de, dialog and chat-nothreads (the REALTALK chats
# without threads; only when $REALTALK names its data/ folder or the set is
# there) — the sets whose memories name no thread. A commit from before
# protoc came from crates.io builds with the vendored protoc of this one.
# MiniLM ingests the medium tier in about 25 minutes on 2 cores. Not part of
# the test command.
set -euo pipefail

rev="${1:?usage: scripts/regression.sh REV (an earlier commit)}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quality="${QUALITY_DIR:-$repo/quality-work}"
work="${REGRESSION_DIR:-$repo/regression-work}"
sets="${REGRESSION_SETS:-small medium fr de dialog chat-nothreads}"
embedders="${REGRESSION_EMBEDDERS:-static minilm}"
mkdir -p "$work"
sha="$(git -C "$repo" rev-parse --short "$rev^{commit}")"

# REV's binary, built first: the shared target directory's release binary
# is this build's again once runs.sh has built it.
old="$work/trine-$sha"
if [[ ! -x "$old" ]]; then
  tree="$work/tree-$sha"
  [[ -d "$tree" ]] || git -C "$repo" worktree add --detach "$tree" "$sha" >&2
  protoc="$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -path '*protoc-bin-vendored-linux-x86_64*' \
    -name protoc -type f 2>/dev/null | head -n1 || true)"
  (cd "$tree" && PROTOC="${PROTOC:-$protoc}" cargo build --quiet --release --bin trine)
  cp "${CARGO_TARGET_DIR:-$tree/target}/release/trine" "$old"
  git -C "$repo" worktree remove --force "$tree"
fi

profile=release
runs=-regression
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"
echo "$sha" >"$work/baseline.txt"

devset="$quality/devset"
# shellcheck source=lib/devsets.sh
source "$repo/scripts/lib/devsets.sh"
make_devsets "$devset"

for set in $sets; do
  if [[ ! -f "$devset/$set/queries.jsonl" ]]; then
    echo "regression: no $set set (chat-nothreads needs REALTALK=DIR): skipped" >&2
    continue
  fi
  for embedder in $embedders; do
    then_data="$work/data-$set-$embedder-$sha"
    now_data="$work/data-$set-$embedder-now"
    if [[ ! -d "$then_data" ]]; then
      echo "regression: ingesting $set with $embedder under $sha …" >&2
      "$old" --log error --data "$then_data" --embedder "$embedder" --models "$models" \
        ingest "$devset/$set/memories.jsonl" --batch 256 >"$work/$set-$embedder.ingest.txt" 2>&1
    fi
    rm -rf "$now_data"
    if [[ ${REGRESSION_FRESH:-0} == 1 ]]; then
      # Ingested anew by this build: with the tokens late interaction reads.
      "$trine" --log error --data "$now_data" --embedder "$embedder" --models "$models" \
        ingest "$devset/$set/memories.jsonl" --batch 256 >"$work/$set-$embedder.now.ingest.txt" 2>&1
    else
      cp -r "$then_data" "$now_data"
      "$trine" --log error --data "$now_data" --embedder "$embedder" --models "$models" \
        upgrade >"$work/$set-$embedder.upgrade.txt"
    fi
    for split in held tune; do
      echo "regression: $set, $embedder, $split …" >&2
      args=(--queries "$devset/$set/queries.jsonl" --split "$split" --k 8
        --modes hybrid,semantic,lexical --strategies default,candidates,sparse
        --verbatim on --native sparse,bm25)
      "$old" --log error --data "$then_data" --embedder "$embedder" --models "$models" \
        eval "${args[@]}" --save "$work/eval-$set-$embedder-$split-then.json" \
        >"$work/eval-$set-$embedder-$split-then.txt"
      "$trine" --log error --data "$now_data" --embedder "$embedder" --models "$models" \
        eval "${args[@]}" --save "$work/eval-$set-$embedder-$split-now.json" \
        --baseline "$work/eval-$set-$embedder-$split-then.json" \
        >"$work/eval-$set-$embedder-$split-now.txt"
    done
  done
done

python3 - "$work" "$sha" "$(cat "$work/commit${runs}.txt")" >"$work/summary.md" <<'PY'
import glob, json, os, sys
work, then, now = sys.argv[1:4]
print(f"# `hybrid/default` at {now} against {then}\n")
print("The same embeddings under both builds; `trine eval --baseline`, k = 8, "
      "paired bootstrap 95 % intervals. MRR / s@8 then → now.\n")
print("| set | embedder | half | kind | n | MRR | ΔMRR [interval] | s@8 | Δs@8 [interval] | verdict |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
worse = 0
for path in sorted(glob.glob(os.path.join(work, "eval-*-now.json"))):
    name = os.path.basename(path)[len("eval-"):-len("-now.json")]
    set_, embedder, half = name.rsplit("-", 2)
    report = json.load(open(path))
    for c in report.get("against_baseline", []):
        if c["configuration"] != "hybrid/default":
            continue
        d = lambda x: f"{x['mean']:+.3f} [{x['low']:+.3f}, {x['high']:+.3f}]"
        worse += c["verdict"] != "not worse"
        print(f"| {set_} | {embedder} | {half} | {c['kind']} | {c['queries']} | "
              f"{c['mrr_then']:.3f} → {c['mrr_now']:.3f} | {d(c['mrr'])} | "
              f"{c['success_at_k_then']:.3f} → {c['success_at_k_now']:.3f} | "
              f"{d(c['success_at_k'])} | {c['verdict']} |")
print(f"\n{worse} row(s) WORSE.")
PY
echo "wrote $work/summary.md" >&2
