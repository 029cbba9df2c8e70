#!/usr/bin/env bash
# The deployment brought up for real: the images built from deploy/Dockerfile,
# compose.yaml brought up by podman-compose (with compose.loopback.yaml: the
# host's network, as no container may reach another address here) on a
# 3-node Qdrant cluster, then driven as a user would:
#   1. images: Debian's base from Debian's packages (mmdebstrap), the four
#      roles' images (the Dockerfile's runtime stages on a release binary
#      built beside them: --build-context dist=...), Qdrant's from the binary
#      in ../shared/qdrant; their sizes;
#   2. up: Qdrant's three nodes, then the four roles, each until its health
#      check says SERVING; their start times;
#   3. ingest the sample through the gateway (`trine ingest --endpoint`);
#   4. the planted title found first;
#   5. semantic-svc stopped: searches answered, degraded, the title still
#      first; started again;
#   6. one Qdrant node killed (SIGKILL) under a search load and a stream of
#      writes: failed searches and acknowledged writes lost, both 0;
#   7. everything it started removed: containers, volumes, images, build
#      cache (all in a podman storage of its own), processes.
# Needs: root, podman, runc, mmdebstrap (Debian packages; installed when
# missing), python3 with pip (podman-compose from PyPI, pinned), Rust (the
# release build), ../shared/qdrant beside the clone. TRINE_BINARY: a release
# trine binary to use instead of building one; TRINE_SMOKE_KEEP=1: leave
# what it started, to look into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
shared="$repo/../shared/qdrant"
compose_version=1.6.0

say() { printf '%s\n' "$*"; }
step() { printf '\n== %s\n' "$*"; }
fail() {
    printf 'FAILED: %s\n' "$*"
    exit 1
}

# Prerequisites.
[ "$(id -u)" -eq 0 ] || fail "run as root (podman with runc, as this machine allows)"
[ -f "$shared/qdrant-1.19.0-x86_64-linux.xz" ] || fail "no ../shared/qdrant beside the clone"
missing=()
for tool in podman runc mmdebstrap; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
pc_dir="${TRINE_PODMAN_COMPOSE:-$HOME/.cache/trine/podman-compose}"
if ! PYTHONPATH="$pc_dir" python3 -c "import podman_compose" 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check --target "$pc_dir" \
        "podman-compose==$compose_version" 2>&1 | grep -v "Running pip as the 'root' user" >&2 || true
fi
PYTHONPATH="$pc_dir" python3 -c "import podman_compose" ||
    fail "podman-compose $compose_version could not be installed from PyPI"

# A podman of this run's own: storage, run state and settings under $work,
# so that removing $work removes every image, layer, volume and container.
work=$(mktemp -d /var/tmp/trine-smoke.XXXXXX)
mkdir -p "$work/storage" "$work/run" "$work/dist/models" "$work/qdrant"
cat >"$work/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$work/storage"
runroot = "$work/run"
EOF
# runc (crun refuses this machine's cgroup layout) and limits at or below
# the machine's own (it may not raise them).
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
EOF
export CONTAINERS_STORAGE_CONF="$work/storage.conf" CONTAINERS_CONF="$work/containers.conf"
project=trine-smoke
compose=(env PYTHONPATH="$pc_dir" python3 -m podman_compose -p "$project"
    -f deploy/compose.yaml -f deploy/compose.loopback.yaml)
QDRANT_API_KEY=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
export QDRANT_API_KEY TRINE_QDRANT_IMAGE=localhost/trine-qdrant:1.19.0

cleanup() {
    set +e
    if [ -n "${TRINE_SMOKE_KEEP:-}" ]; then
        say "kept (TRINE_SMOKE_KEEP): CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF CONTAINERS_CONF=$CONTAINERS_CONF podman ps -a"
        return
    fi
    step "7. remove everything started"
    "${compose[@]}" down -v -t 5 >"$work/down.log" 2>&1
    podman rm -af -t 0 >/dev/null 2>&1
    podman volume rm -af >/dev/null 2>&1
    podman rmi -af >/dev/null 2>&1
    left=$(podman ps -aq 2>/dev/null | wc -l)
    umount -R "$work/storage/overlay" 2>/dev/null
    rm -rf "$work"
    procs=$(pgrep -f "$work" | wc -l)
    say "   containers left: $left; processes left: $procs; $work removed: $([ -e "$work" ] && echo no || echo yes)"
}
trap cleanup EXIT

ms() { date +%s%3N; }

step "1. images"
trine="${TRINE_BINARY:-}"
if [ -z "$trine" ]; then
    say "   building trine (release)"
    cargo build -q --release --bin trine
    trine="${CARGO_TARGET_DIR:-$repo/target}/release/trine"
fi
scripts/fetch-model.sh >/dev/null
cp "$trine" "$work/dist/trine"
strip "$work/dist/trine" # as the Dockerfile's build stage does
cp -r models/all-MiniLM-L6-v2 "$work/dist/models/"
t0=$(ms)
# As Debian's slim images are made: minbase without manuals, documentation
# (copyright notices kept), locales and apt's lists.
mmdebstrap --quiet --variant=minbase \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    bookworm "$work/rootfs.tar" >"$work/mmdebstrap.log" 2>&1 ||
    fail "mmdebstrap (see $work/mmdebstrap.log)"
podman import -q "$work/rootfs.tar" docker.io/library/debian:bookworm-slim >/dev/null
rm -f "$work/rootfs.tar"
say "   base: Debian bookworm (minbase, slimmed) from Debian's packages, as debian:bookworm-slim, in $(($(ms) - t0)) ms"
for role in gateway lexical semantic fusion; do
    t0=$(ms)
    podman build -q --format docker --pull=never --network host -f deploy/Dockerfile \
        --target "$role" --build-context "dist=$work/dist" -t "trine/$role:dev" . \
        >"$work/build-$role.log" 2>&1 || fail "building $role (see $work/build-$role.log)"
    size=$(podman image inspect --format '{{.Size}}' "trine/$role:dev")
    say "   trine/$role:dev built in $(($(ms) - t0)) ms, $((size / 1000000)) MB"
done
xz -dc "$shared/qdrant-1.19.0-x86_64-linux.xz" >"$work/qdrant/qdrant"
chmod +x "$work/qdrant/qdrant"
printf '#!/bin/sh\nexec /qdrant/qdrant "$@"\n' >"$work/qdrant/entrypoint.sh"
chmod +x "$work/qdrant/entrypoint.sh"
cat >"$work/qdrant/Containerfile" <<'EOF'
# Qdrant laid out as its official image is (/qdrant, ./entrypoint.sh,
# /qdrant/storage), from the binary ../shared/qdrant holds.
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /qdrant
COPY qdrant entrypoint.sh /qdrant/
EOF
podman build -q --pull=never --network host -t "$TRINE_QDRANT_IMAGE" "$work/qdrant" >"$work/build-qdrant.log" 2>&1 ||
    fail "building Qdrant's image (see $work/build-qdrant.log)"
size=$(podman image inspect --format '{{.Size}}' "$TRINE_QDRANT_IMAGE")
say "   $TRINE_QDRANT_IMAGE built, $((size / 1000000)) MB"

step "2. up: Qdrant's three nodes, then the four roles"
health() { podman exec "${project}_$1_1" trine health --service "$2" "127.0.0.1:$3" >/dev/null 2>&1; }
ready_qdrant() { curl -fs "http://127.0.0.1:$1/readyz" >/dev/null 2>&1; }
since=0
wait_for() { # what, timeout s, command...: ready how long after $since
    local what=$1 limit=$2
    shift 2
    until "$@"; do
        [ $(($(ms) - since)) -lt $((limit * 1000)) ] || fail "$what: not ready in ${limit}s"
        sleep 0.1
    done
    say "   $what: ready $(($(ms) - since)) ms after its start"
}
up() { # services...: started (and `since` set)
    since=$(ms)
    "${compose[@]}" up -d --no-build --no-deps "$@" >>"$work/up.log" 2>&1 || fail "up $* (see $work/up.log)"
}
up qdrant-0
wait_for "qdrant-0" 60 ready_qdrant 6333
up qdrant-1 qdrant-2
wait_for "qdrant-1" 60 ready_qdrant 6343
wait_for "qdrant-2" 60 ready_qdrant 6353
peers() {
    [ "$(curl -fs -H "api-key: $QDRANT_API_KEY" http://127.0.0.1:6333/cluster |
        python3 -c 'import json,sys; print(len(json.load(sys.stdin)["result"]["peers"]))')" = 3 ]
}
wait_for "the cluster of 3 peers" 60 peers
up lexical semantic fusion
wait_for "lexical-svc (SERVING)" 120 health lexical trine.v1.Lexical 50052
wait_for "semantic-svc (SERVING)" 120 health semantic trine.v1.Semantic 50053
wait_for "fusion-svc (SERVING)" 120 health fusion trine.v1.Fusion 50054
up gateway
wait_for "gateway (SERVING)" 120 health gateway trine.v1.Memory 50051

gateway=http://127.0.0.1:50051
cli=("$work/dist/trine" --log error)

step "3. ingest the sample through the gateway"
"${cli[@]}" ingest --endpoint "$gateway" samples/memories.jsonl >"$work/ingest.log" 2>&1 ||
    fail "ingest: $(tail -3 "$work/ingest.log")"
say "   $(grep -i "stored\|wrote" "$work/ingest.log" | tail -1)"

step "4. the planted title found first"
planted=f801e3d2-5e9d-5cc7-a643-8b38a0ae15d1
first() { # the first hit's id and whether the answer was degraded
    "${cli[@]}" search --endpoint "$gateway" --tenant acme --json "Meeting 2026-11-11 09:58" |
        python3 -c 'import json,sys; r=json.load(sys.stdin); h=r.get("hits") or [{}]; print(h[0].get("id",""), bool(r.get("degraded")))'
}
read -r id degraded <<<"$(first)"
[ "$id" = "$planted" ] || fail "the first hit is $id, not the planted meeting $planted"
say "   first: $id (degraded: $degraded)"

step "5. semantic-svc stopped: degraded answers"
podman stop -t 5 "${project}_semantic_1" >>"$work/podman.log" 2>&1
read -r id degraded <<<"$(first)"
[ "$id" = "$planted" ] || fail "semantic-svc down: the first hit is $id"
[ "$degraded" = True ] || fail "semantic-svc down: the answer does not say it is degraded"
say "   first: $id (degraded: $degraded)"
since=$(ms)
podman start "${project}_semantic_1" >>"$work/podman.log" 2>&1
wait_for "semantic-svc started again (SERVING)" 120 health semantic trine.v1.Semantic 50053

step "6. a Qdrant node killed under load"
python3 - "$work" <<'EOF'
import json, sys, uuid
work = sys.argv[1]
with open(f"{work}/queries.jsonl", "w") as q:
    for i, line in enumerate(open("samples/memories.jsonl")):
        m = json.loads(line)
        q.write(json.dumps({"qid": f"q{i}", "query": m["text"].split("\n")[0][:120], "tenant": m["tenant"]}) + "\n")
with open(f"{work}/writes.jsonl", "w") as w:
    for i in range(400):
        w.write(json.dumps({"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"trine-smoke/{i}")), "tenant": "smoke",
                            "text": f"smoke write {i}: a memory written while a Qdrant node dies"}) + "\n")
EOF
"${cli[@]}" bench --endpoint "$gateway" --queries "$work/queries.jsonl" --concurrency 4 \
    --duration 20s --warmup 0s --save "$work/bench.json" >"$work/bench.log" 2>&1 &
bench=$!
"${cli[@]}" ingest --endpoint "$gateway" --batch 8 "$work/writes.jsonl" >"$work/writes.log" 2>&1 &
writes=$!
sleep 5
podman kill "${project}_qdrant-2_1" >>"$work/podman.log" 2>&1
say "   qdrant-2 killed (SIGKILL) 5 s into the load"
wait "$bench" || true
wait "$writes" || true
failed_searches=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["requests"] - r["ok"])' "$work/bench.json" 2>/dev/null || echo "no report")
searches=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"])' "$work/bench.json" 2>/dev/null || echo 0)
# Acknowledged: every line the ingest did not report failed.
python3 - "$work" >"$work/acked.txt" <<'EOF'
import json, re, sys
work = sys.argv[1]
log = open(f"{work}/writes.log").read()
# A batch the store did not take stops the ingest, which names the last
# line stored; a line refused alone is named `line N: why`.
stopped = re.search(r"memories through line (\d+) were stored", log)
refused = {int(n) for n in re.findall(r"^line (\d+):", log, re.M)}
for i, line in enumerate(open(f"{work}/writes.jsonl"), 1):
    if (stopped is None or i <= int(stopped.group(1))) and i not in refused:
        print(json.loads(line)["id"])
EOF
acked=$(wc -l <"$work/acked.txt")
found=$(xargs "${cli[@]}" get --endpoint "$gateway" --tenant smoke <"$work/acked.txt" | grep -c '"id"' || true)
lost=$((acked - found))
say "   searches: $searches, failed: $failed_searches"
say "   writes acknowledged: $acked of 400, lost: $lost"
say "   $(tail -1 "$work/writes.log")"
[ "$failed_searches" = 0 ] || fail "$failed_searches search(es) failed (see $work/bench.log)"
[ "$lost" -eq 0 ] || fail "$lost acknowledged write(s) lost"
[ "$acked" -gt 0 ] || fail "no write was acknowledged"

say ""
say "smoke: passed — failed searches 0, acknowledged writes lost 0"
