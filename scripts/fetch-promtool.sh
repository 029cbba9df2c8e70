#!/usr/bin/env bash
# Installs `promtool` (Prometheus's own checker) into ~/.cache/trine/promtool
# (or $TRINE_PROMTOOL_DIR), for trine/tests/telemetry.rs to check
# deploy/prometheus-alerts.yml and deploy/prometheus.yml as Prometheus reads
# them: Debian's `prometheus` package, downloaded by apt (which checks its
# signature) and unpacked without installing it (no service is started;
# only promtool is kept). Idempotent; without apt or its package lists it
# says so and the test skips.
set -euo pipefail
target="${TRINE_PROMTOOL_DIR:-$HOME/.cache/trine/promtool}"
[ -x "$target/promtool" ] && exit 0
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
    echo "promtool: no apt-get/dpkg-deb here: the Prometheus rules check will say it is skipped" >&2
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && apt-get download prometheus >/dev/null 2>&1); then
    echo "promtool: apt-get download prometheus failed (no package lists? apt-get update): the Prometheus rules check will say it is skipped" >&2
    exit 0
fi
dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
mkdir -p "$target"
cp "$work/x/usr/bin/promtool" "$target/promtool.tmp"
mv "$target/promtool.tmp" "$target/promtool"
echo "promtool: $("$target/promtool" --version 2>&1 | head -1) in $target" >&2
