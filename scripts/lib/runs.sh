# Sourced by the measurement scripts (benchmarks.sh, fusion-eval.sh) after
# they set `repo` and `work`: fetches the model files, builds trine, records
# the commit the runs measure (a trailing + marks uncommitted changes) in
# $work/commit.txt, distils the static embedder when missing, and sets
# `trine` (the binary) and `models` (the model files directory).
mkdir -p "$work"
cd "$repo"
./scripts/fetch-model.sh >&2
cargo build --quiet --bin trine
git describe --always --dirty=+ >"$work/commit.txt"
trine="${CARGO_TARGET_DIR:-$repo/target}/debug/trine"
models="$repo/models"
[[ -f "$models/static/model.safetensors" ]] ||
  "$trine" --models "$models" model distill >&2
