# Sourced by the measurement scripts (benchmarks.sh, fusion-eval.sh) after
# they set `repo` and `work` (and `profile`: dev, the default, or release):
# fetches the model files, builds trine in that profile, records the commit
# the runs measure (a trailing + marks uncommitted changes) in
# $work/commit.txt and the profile in $work/profile.txt, distils the static
# embedder when missing, and sets `trine` (the binary) and `models` (the
# model files directory).
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
git describe --always --dirty=+ >"$work/commit.txt"
echo "$profile" >"$work/profile.txt"
models="$repo/models"
[[ -f "$models/static/model.safetensors" ]] ||
  "$trine" --models "$models" model distill >&2
