# Sourced by the measurement scripts (benchmarks.sh, fusion-eval.sh) after
# they set `repo` and `work` (and `profile`: dev, the default, or release):
# fetches the model files, builds trine in that profile, records the commit
# the runs measure (a trailing + marks uncommitted changes) in
# $work/commit${runs}.txt and the profile in $work/profile${runs}.txt (`runs`:
# empty, or a suffix naming a script's own runs, e.g. -scaling), distils the static
# embedder when missing, and sets `trine` (the binary) and `models` (the
# model files directory), and the functions `corpus N` (the scale corpus of N
# memories, generated and ingested with the static embedder once, in
# $work/corpus-N) and `at DIR ARGS...` (trine on that corpus).
mkdir -p "$work"
cd "$repo"
profile="${profile:-dev}"
./scripts/fetch-model.sh >&2
if [[ $profile == release ]]; then
  cargo build --quiet --release --bin trine
  trine="${CARGO_TARGET_DIR:-$repo/target}/release/trine"
else
  cargo build --quiet --bin trine
  trine="${CARGO_TARGET_DIR:-$repo/target}/debug/trine"
fi
git describe --always --dirty=+ >"$work/commit${runs:-}.txt"
echo "$profile" >"$work/profile${runs:-}.txt"
models="$repo/models"
[[ -f "$models/static/model.safetensors" ]] ||
  "$trine" --models "$models" model distill >&2

corpus() { # N -> DIR: generated and ingested once
  local n=$1 dir="$work/corpus-$1"
  if [[ ! -d "$dir/data" ]]; then
    mkdir -p "$dir"
    python3 scripts/gen-corpus.py --out "$dir" --n "$n" >"$dir.gen.txt"
    "$trine" --data "$dir/data" --embedder static --models "$models" \
      ingest "$dir/memories.jsonl" --batch 1024 2>"$dir/ingest.txt" >>"$dir/ingest.txt"
  fi
  echo "$dir"
}
at() { "$trine" --data "$1/data" --embedder static --models "$models" "${@:2}"; }

# Puts SECTION (markdown starting with HEAD, a "## " heading's beginning) in
# docs/benchmarks.md: in place of the section starting with HEAD, or, where
# there is none, before the section starting with BEFORE (else at the end).
replace_section() { # HEAD SECTION [BEFORE]
  python3 - "$repo/docs/benchmarks.md" "$@" <<'PY'
import sys
path, head, section = sys.argv[1], sys.argv[2], sys.argv[3].rstrip() + "\n"
before = sys.argv[4] if len(sys.argv) > 4 else None
text = open(path, encoding="utf-8").read()
if head in text:
    start = text.index(head)
    end = text.find("\n## ", start + len(head))
    text = text[:start] + section + ("\n" + text[end + 1:] if end >= 0 else "")
elif before and ("\n" + before) in text:
    at = text.index("\n" + before)
    text = text[:at + 1] + section + "\n" + text[at + 1:]
else:
    text = text.rstrip() + "\n\n" + section
open(path, "w", encoding="utf-8").write(text)
PY
}
