# Sourced by the measurement scripts (quality.sh, regression.sh), from the
# repository's root: `make_devsets DIR` writes what is missing of the
# development sets in DIR — the small and medium tiers (make-devset.py),
# French and German (make-langset.py), the dialogue (make-dialset.py), and
# the chats with and without threads (make-convset.py) when $REALTALK names
# a copy of REALTALK's data/ folder.
make_devsets() { # DIR
  local devset=$1
  [[ -f "$devset/medium/queries.jsonl" ]] ||
    python3 scripts/make-devset.py --out "$devset" --tiers small,medium >&2
  [[ -f "$devset/de/queries.jsonl" ]] || python3 scripts/make-langset.py --out "$devset" >&2
  [[ -f "$devset/dialog/queries.jsonl" ]] || python3 scripts/make-dialset.py --out "$devset" >&2
  if [[ (! -f "$devset/chat/queries.jsonl" || ! -f "$devset/chat-nothreads/queries.jsonl") &&
        -n "${REALTALK:-}" ]]; then
    python3 scripts/make-convset.py --realtalk "$REALTALK" --out "$devset" >&2
  fi
}
