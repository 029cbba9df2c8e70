#!/usr/bin/env bash
# Checks the dependency tree against deny.toml: known advisories (RustSec, read
# offline from ../shared/advisory-db's snapshot), licences (an allow list),
# sources (crates.io only) and duplicate versions (each one kept says why).
# Installs cargo-deny from crates.io first when it is missing. Run by the test
# command (scripts/test.sh); without ../shared/advisory-db it says that the
# advisories are not checked and checks the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.20.2
if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $version" ]; then
    echo "deny: installing cargo-deny $version from crates.io" >&2
    cargo install --quiet --locked --version "$version" cargo-deny
fi

snapshot=../shared/advisory-db/advisory-db.tar.xz
checks=(advisories bans licenses sources)
if [ -f "$snapshot" ]; then
    # cargo-deny looks for the database under db-path in a folder named after
    # its URL; the snapshot unpacks as `advisory-db`.
    TRINE_ADVISORY_DB=$(mktemp -d)
    trap 'rm -rf "$TRINE_ADVISORY_DB"' EXIT
    tar xJf "$snapshot" -C "$TRINE_ADVISORY_DB"
    mv "$TRINE_ADVISORY_DB/advisory-db" "$TRINE_ADVISORY_DB/advisory-db-3157b0e258782691"
    echo "deny: advisories from $snapshot ($(git -C "$TRINE_ADVISORY_DB/advisory-db-3157b0e258782691" log -1 --format='%h, %cs' 2>/dev/null || echo 'a snapshot'))"
else
    TRINE_ADVISORY_DB=/nonexistent
    checks=(bans licenses sources)
    echo "deny: SKIPPED the advisories check: no $snapshot (the RustSec snapshot); licences, sources and duplicates are checked"
fi
export TRINE_ADVISORY_DB
# cargo-deny reads every target's crates offline: fetch those this
# machine's builds never needed (other platforms') from crates.io first.
cargo fetch --locked --quiet
cargo deny --offline --color never check "${checks[@]}"
