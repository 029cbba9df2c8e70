#!/usr/bin/env bash
# README's two commands on a bare machine: a Debian 12 root made from Debian's
# packages (mmdebstrap) with Python 3 and pip, the C linker Rust needs
# (gcc, libc6-dev), ca-certificates, git — and no protoc — plus this machine's
# Rust toolchain copied in; a fresh clone of the repository's HEAD inside;
# then, in a chroot, `./scripts/run-sample.sh` and `./scripts/test.sh` from
# start to end, each timed (the first one's build is a cold build: no
# registry, no target directory). Without ../shared beside the clone the
# test command skips the server tests and says so, as on any bare machine.
#
#     sudo ./scripts/bare-machine.sh           # BARE_DIR (default /tmp/trine-bare)
#
# Needs root (chroot, mount), mmdebstrap (installed from Debian's packages
# when missing) and rustup's toolchain in ~/.rustup. Not part of the test
# command: it takes a cold build (about half an hour on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work="${BARE_DIR:-/tmp/trine-bare}"
root="$work/root"
say() { printf '%s\n' "$*"; }
fail() {
    say "FAILED: $*"
    exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root (chroot)"
command -v mmdebstrap >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
toolchain=$(rustup show active-toolchain | awk '{print $1}')
[ -n "$toolchain" ] || fail "no default rustup toolchain"

cleanup() {
    for m in proc sys dev/pts dev; do umount "$root/$m" 2>/dev/null || true; done
}
trap cleanup EXIT
if [ ! -x "$root/usr/bin/python3" ]; then
    rm -rf "$work"
    mkdir -p "$work"
    say "bare-machine: Debian 12 from Debian's packages (python3, pip, gcc, git) …"
    mmdebstrap --quiet --variant=minbase \
        --include=python3,python3-pip,python3-venv,gcc,libc6-dev,ca-certificates,git \
        bookworm "$root" >"$work/mmdebstrap.log" 2>&1 ||
        fail "mmdebstrap (see $work/mmdebstrap.log)"
    mkdir -p "$root/root/.rustup/toolchains" "$root/root/.cargo/bin"
    cp -a "$HOME/.rustup/toolchains/$toolchain" "$root/root/.rustup/toolchains/"
    for tool in cargo rustc rustdoc cargo-fmt cargo-clippy rustfmt clippy-driver; do
        ln -sf "/root/.rustup/toolchains/$toolchain/bin/$tool" "$root/root/.cargo/bin/$tool"
    done
    cp /etc/resolv.conf "$root/etc/resolv.conf"
fi
# The network's own certificate authorities (a network that re-signs TLS,
# as this workplace's egress does, needs them; a machine on it has them):
# the host's, not the project's.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
# Every machine names itself: localhost in /etc/hosts (mmdebstrap leaves
# that to the container runtime).
[ -s "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$root/etc/hosts"
for tool in protoc; do
    if chroot "$root" sh -c "command -v $tool" >/dev/null; then fail "$tool is in the root"; fi
done
rm -rf "$root/src"
git clone --quiet "$repo" "$root/src/trine"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"

inside() {
    chroot "$root" env -i HOME=/root PATH=/root/.cargo/bin:/usr/local/bin:/usr/bin:/bin \
        TERM=dumb LANG=C.UTF-8 bash -c "cd /src/trine && $1"
}
say "bare-machine: rustc $(inside 'rustc --version'), $(inside 'python3 --version'), protoc: none"
for command in ./scripts/run-sample.sh ./scripts/test.sh; do
    say ""
    say "== $command"
    started=$(date +%s)
    status=0
    inside "$command" 2>&1 | tee "$work/$(basename "$command" .sh).log" || status=$?
    took=$(($(date +%s) - started))
    say "== $command: exit $status after $((took / 60)) min $((took % 60)) s"
    [ "$status" -eq 0 ] || fail "$command (log: $work/$(basename "$command" .sh).log)"
done
say "bare-machine: both of README's commands passed"
