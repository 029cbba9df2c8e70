#!/usr/bin/env bash
# Regenerates docs/quality.md: every development set's held-back half under
# `trine eval` with both embedders — trine's default (no strategy named:
# questions take the question strategy), trine's hybrid under each lexical
# strategy, RRF at k = 60 of the same lists, each single channel, and
# Qdrant's one-call hybrids (dense + bm25, dense + sparse) on the same
# collection — rendered by scripts/quality-report.py; then the same again on
# a copy of each collection whose text index stems in the set's language
# (`trine text-index --stemmer`: English for small, medium, chat and dialog,
# French, German).
#
#     ./scripts/quality.sh       # QUALITY_SETS, QUALITY_EMBEDDERS to narrow it
#
# Sets (in $QUALITY_DIR/devset, default ./quality-work): small and medium
# (make-devset.py: English Debian descriptions, Python docstrings,
# changelogs), fr and de (make-langset.py: Debian's own translations), chat
# (make-convset.py: REALTALK's chats, made only when $REALTALK names a copy
# of its data/ folder; skipped otherwise, and the report says so), dialog
# (make-dialset.py: MADial-Bench's memories and conversations, shipped in
# samples/madial under its MIT licence). A set's
# data directory, once ingested, is reused; a run's report is redone each
# time. MiniLM ingests at ~8 long texts/s on 2 cores: the first full run
# takes about two hours. Not part of the test command.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${QUALITY_DIR:-$repo/quality-work}"
runs=-quality
# shellcheck source=lib/runs.sh
source "$repo/scripts/lib/runs.sh"
sets="${QUALITY_SETS:-small medium fr de chat dialog}"
embedders="${QUALITY_EMBEDDERS:-minilm static}"

devset="$work/devset"
# shellcheck source=lib/devsets.sh
source "$repo/scripts/lib/devsets.sh"
make_devsets "$devset"

for set in $sets; do
  if [[ ! -f "$devset/$set/queries.jsonl" ]]; then
    echo "quality: no $set set (chat needs REALTALK=DIR): skipped" >&2
    continue
  fi
  for embedder in $embedders; do
    data="$work/data-$set-$embedder"
    if [[ ! -d "$data" ]]; then
      echo "quality: ingesting $set with $embedder …" >&2
      "$trine" --log error --data "$data" --embedder "$embedder" --models "$models" \
        ingest "$devset/$set/memories.jsonl" --batch 256 >"$work/$set-$embedder.ingest.txt" 2>&1
    fi
    echo "quality: evaluating $set with $embedder …" >&2
    "$trine" --log error --data "$data" --embedder "$embedder" --models "$models" \
      eval --queries "$devset/$set/queries.jsonl" --split held \
      --modes hybrid,semantic,lexical --strategies default,candidates,bm25,sparse --verbatim on \
      --native bm25,sparse --k 8 --fusion rrf/k=60/w=1:1:0 \
      --lists "$work/lists-$set-$embedder.jsonl" \
      --save "$work/eval-$set-$embedder.json" >"$work/eval-$set-$embedder.txt"
    wc -l <"$devset/$set/memories.jsonl" >"$work/$set.size"

    # The same collection, its text index stemming in the set's language.
    case "$set" in fr) language=french ;; de) language=german ;; *) language=english ;; esac
    stemmed="$work/data-$set-$embedder-stemmed"
    [[ -d "$stemmed" ]] || cp -r "$data/." "$stemmed"
    echo "quality: evaluating $set with $embedder, stemmed ($language) …" >&2
    "$trine" --log error --data "$stemmed" --embedder "$embedder" --models "$models" \
      text-index --stemmer "$language" >"$work/$set-$embedder-stemmed.index.txt"
    "$trine" --log error --data "$stemmed" --embedder "$embedder" --models "$models" \
      eval --queries "$devset/$set/queries.jsonl" --split held \
      --modes hybrid,semantic,lexical --strategies default,candidates,bm25,sparse --verbatim on \
      --native bm25,sparse --k 8 \
      --save "$work/eval-$set-$embedder-stemmed.json" >"$work/eval-$set-$embedder-stemmed.txt"
  done
done

python3 scripts/quality-report.py "$work" >docs/quality.md
echo "wrote docs/quality.md" >&2
