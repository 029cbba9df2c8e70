#!/usr/bin/env bash
# Measures the common-words rule (docs/search.md "Common words"): every
# development set's held-back half under `trine eval`, each embedder, the
# same collection read twice in one build — `[lexical] common_words = "none"`
# (every word scored, as before the rule) and `"auto"` (the default; and
# the set's own language for fr and de) —
# beside Qdrant's one call (dense + sparse) and each single channel.
#
#     ./scripts/common-words.sh        # CW_SETS, CW_EMBEDDERS to narrow it
#
# Sets (in $CW_DIR/devset, default ./common-words-work): small, fr, de (the
# slices in samples/), dialog (samples/devset-dialog), chat (make-convset.py,
# only where $REALTALK names a copy of REALTALK's data/ folder). Ingested
# collections are reused; each eval is redone. Not part of the test command.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${CW_DIR:-$repo/common-words-work}"
runs=-common-words
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"
sets="${CW_SETS:-small fr de dialog chat}"
embedders="${CW_EMBEDDERS:-minilm static}"

devset="$work/devset"
mkdir -p "$devset"
for s in small fr de; do
  src="$repo/samples/devset-$s-small"
  [[ $s == small ]] && src="$repo/samples/devset-small"
  [[ -d "$devset/$s" ]] || cp -r "$src" "$devset/$s"
done
[[ -d "$devset/dialog" ]] || cp -r "$repo/samples/devset-dialog" "$devset/dialog"
if [[ ! -f "$devset/chat/queries.jsonl" && -n "${REALTALK:-}" ]]; then
  python3 scripts/make-convset.py --realtalk "$REALTALK" --out "$devset" >&2
fi

for set in $sets; do
  if [[ ! -f "$devset/$set/queries.jsonl" ]]; then
    echo "common-words: no $set set (chat needs REALTALK=DIR): skipped" >&2
    continue
  fi
  for embedder in $embedders; do
    data="$work/data-$set-$embedder"
    if [[ ! -d "$data" ]]; then
      echo "common-words: ingesting $set with $embedder …" >&2
      "$trine" --log error --data "$data" --embedder "$embedder" --models "$models" \
        ingest "$devset/$set/memories.jsonl" --batch 256 >"$work/$set-$embedder.ingest.txt" 2>&1
    fi
    # French and German are also read under their own list (a setting:
    # their collections here do not stem, so `auto` takes English's).
    case "$set" in fr) own=french ;; de) own=german ;; *) own= ;; esac
    for words in none auto $own; do
      printf '[lexical]\ncommon_words = "%s"\n' "$words" >"$work/common-$words.toml"
      echo "common-words: evaluating $set with $embedder, common_words = $words …" >&2
      "$trine" --log error --config "$work/common-$words.toml" --data "$data" \
        --embedder "$embedder" --models "$models" \
        eval --queries "$devset/$set/queries.jsonl" --split held \
        --modes hybrid,semantic,lexical --strategies default,candidates,sparse --verbatim on \
        --native sparse --k 8 \
        --save "$work/eval-$set-$embedder-$words.json" >"$work/eval-$set-$embedder-$words.txt"
    done
  done
done
echo "common-words: reports in $work/eval-*.txt" >&2
