#!/usr/bin/env bash
# Coverage-guided fuzzing of trine's input edges with libFuzzer (`cargo fuzz`,
# the targets in fuzz/): each target runs for SECONDS on its committed seeds
# (fuzz/corpus/<target>) and what it finds; the first crash, panic or broken
# invariant stops that target, is saved under fuzz/artifacts/<target>/ and
# makes the script exit 1. Installs cargo-fuzz from crates.io when missing;
# runs on the stable toolchain (no sanitizer: `-s none`; Rust's own checks,
# debug assertions and overflow checks, are on).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   long runs (default 60 s, every target);
#                                           new inputs kept in $TRINE_FUZZ_CORPUS
#                                           (default ~/.cache/trine/fuzz-corpus)
#   scripts/fuzz.sh --check [SECONDS]       the test command's run: every target
#                                           a few seconds (default 4) on its seeds
#   scripts/fuzz.sh --seeded [SECONDS]      the seeded harness (trine-fuzz), no
#                                           coverage, stable and quick to build
#   scripts/fuzz.sh --list                  the targets
#
# Replay a finding: the target's binary with the artifact as its argument,
# e.g. ~/.cache/trine/fuzz-target/x86_64-unknown-linux-gnu/debug/mcp fuzz/artifacts/mcp/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(terms filters timestamps wire ingest http_json mcp keys config)
mode=long
case "${1:-}" in
    --check) mode=check; shift ;;
    --seeded) mode=seeded; shift ;;
    --list) printf '%s\n' "${targets[@]}"; exit 0 ;;
esac

if [ "$mode" = seeded ]; then
    seconds=${1:-300}
    seed=${2:-$(date +%s)}
    cargo build -q -p trine-fuzz
    echo "fuzz: the seeded harness for ${seconds} s from seed ${seed}"
    exec "${CARGO_TARGET_DIR:-target}/debug/trine-fuzz" --seconds "$seconds" --seed "$seed"
fi

if [ "$mode" = check ]; then
    seconds=${1:-4}
else
    seconds=${1:-60}
    shift || true
    [ $# -gt 0 ] && targets=("$@")
fi

if ! command -v c++ >/dev/null && ! command -v g++ >/dev/null; then
    echo "fuzz: SKIPPED: no C++ compiler here (libFuzzer is built from C++): install g++ to run it"
    exit 0
fi
version=0.13.2
if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $version" ]; then
    echo "fuzz: installing cargo-fuzz $version from crates.io" >&2
    cargo install --quiet --locked --version "$version" cargo-fuzz
fi
# cargo fuzz passes its instrumentation in RUSTFLAGS, which replaces
# .cargo/config.toml's build.rustflags: its toolchain workaround for
# qdrant-edge goes here too (remove both with Rust >= 1.97).
export RUSTFLAGS="${RUSTFLAGS:-} -Zcrate-attr=feature(assert_matches)"
# Instrumented builds differ from the workspace's: their own target folder.
export CARGO_TARGET_DIR="${TRINE_FUZZ_TARGET:-$HOME/.cache/trine/fuzz-target}"
triple=$(rustc -vV | sed -n 's/^host: //p')
started=$(date +%s)
cargo fuzz build --dev -s none >/dev/null 2>"$CARGO_TARGET_DIR.build.log" || {
    cat "$CARGO_TARGET_DIR.build.log" >&2
    exit 1
}
echo "fuzz: built in $(($(date +%s) - started)) s (cargo fuzz build --dev -s none; fuzz/Cargo.toml's profile)"
bin="$CARGO_TARGET_DIR/$triple/debug"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for t in "${targets[@]}"; do
    [ -x "$bin/$t" ] || { echo "fuzz: no target $t (scripts/fuzz.sh --list)" >&2; exit 2; }
    if [ "$mode" = check ]; then
        work="$scratch/$t"
    else
        work="${TRINE_FUZZ_CORPUS:-$HOME/.cache/trine/fuzz-corpus}/$t"
    fi
    mkdir -p "$work" "fuzz/artifacts/$t"
    log="$scratch/$t.log"
    # The first folder takes what the run finds; the committed seeds are read.
    if "$bin/$t" "$work" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=25 \
        -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" \
        >"$log" 2>&1; then
        result=ok
        rmdir "fuzz/artifacts/$t" 2>/dev/null || true
    else
        result=FAILED
        status=1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: //p' "$log")
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
    printf 'fuzz: %-10s %s  %s s, %s runs, coverage %s edges, %s features, corpus %s\n' \
        "$t" "$result" "$seconds" "${runs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
    if [ "$result" = FAILED ]; then
        grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -8 | sed 's/^/    /'
    fi
done
exit "$status"
