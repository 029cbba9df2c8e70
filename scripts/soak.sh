#!/usr/bin/env bash
# A soak run (not part of the test command): `trine serve` (release) on a
# copy of a large collection, under a fixed mixed load for an hour —
# searches at a fixed rate (`trine bench --rate`, open loop, one minute a
# sample) and writes at a fixed rate (`trine ingest --endpoint`, a batch a
# second, new memories) — with the serving process's resident memory (RSS)
# and the searches' p50/p99 sampled every minute. Writes the samples
# (soak.csv), a plot (soak.svg) and a markdown section (soak.md) into OUT;
# `SOAK_DOCS=docs` also copies the three into docs/ and replaces
# docs/benchmarks.md's "Soak" section (scripts/benchmarks-report.py carries
# docs/soak.md into the file it writes).
#
# Usage: scripts/soak.sh DATA QUERIES OUT
#   DATA     a data directory holding the collection (copied first: the
#            writes never touch it), e.g. the 385,000-memory scale corpus
#   QUERIES  a queries file for `trine bench` (JSON lines: query, tenant)
#   OUT      a directory for the results
# Environment: SOAK_MINUTES (60), SOAK_READ_RATE (searches a second, 20),
#   SOAK_WRITE_RATE (memories a second, 5), SOAK_EMBEDDER (the collection's,
#   read from its trine.json), SOAK_COLLECTION (memories), TRINE_BINARY
#   (target/release/trine), SOAK_CORPUS (how the report names DATA).
set -euo pipefail
[ $# -eq 3 ] || { sed -n 2,20p "$0"; exit 2; }
data_src="$1"; queries="$2"; out="$3"
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${TRINE_BINARY:-$here/target/release/trine}"
minutes="${SOAK_MINUTES:-60}"
read_rate="${SOAK_READ_RATE:-20}"
write_rate="${SOAK_WRITE_RATE:-5}"
collection="${SOAK_COLLECTION:-memories}"
embedder="${SOAK_EMBEDDER:-$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["embedder"]["name"])' "$data_src/$collection/trine.json")}"
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p trine (or set TRINE_BINARY)"; exit 1; }
mkdir -p "$out"
commit="$(git -C "$here" rev-parse --short HEAD)"
work="$(mktemp -d "${TMPDIR:-/var/tmp}/trine-soak.XXXXXX")"
server=""; writer=""
cleanup() {
  [ -n "$writer" ] && kill "$writer" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  # The logs stay with the results (why a run stopped, what serve said).
  for log in serve.log bench.log writer.log writer.errors; do
    [ -f "$work/$log" ] && cp "$work/$log" "$out/$log"
  done
  rm -rf "$work"
}
trap cleanup EXIT

echo "copying $data_src ($(du -sh "$data_src" | cut -f1)) ..."
cp -r --reflink=auto "$data_src" "$work/data"
rm -f "$work/data/$collection/lock"
trine() { env -u TRINE_CONFIG -u TRINE_QDRANT_URL "$bin" --data "$work/data" --collection "$collection" --embedder "$embedder" "$@"; }

# Not through the function: $! is then the server itself (env execs it).
env -u TRINE_CONFIG -u TRINE_QDRANT_URL "$bin" --data "$work/data" --collection "$collection" \
  --embedder "$embedder" serve --listen 127.0.0.1:0 --metrics off --ready-json \
  >"$work/ready.json" 2>"$work/serve.log" &
server=$!
for _ in $(seq 600); do [ -s "$work/ready.json" ] && break; sleep 0.5; done
[ -s "$work/ready.json" ] || { echo "serve did not start:"; tail "$work/serve.log"; exit 1; }
addr="http://$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["addr"])' "$work/ready.json")"
echo "serving at $addr (pid $server); waiting until it answers ..."
until trine health "$addr" >/dev/null 2>&1; do sleep 1; done

# The writer: a batch of new memories every second, tenants as the queries'.
: >"$work/writer.errors"
tenants=$(python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["tenant"] for l in open(sys.argv[1])})))' "$queries")
(
  n=0
  while true; do
    batch="$work/batch.jsonl"
    python3 - "$n" "$write_rate" "$tenants" >"$batch" <<'PY'
import json, sys, uuid
n, rate, tenants = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split()
for i in range(rate):
    k = n * rate + i
    t = tenants[k % len(tenants)]
    print(json.dumps({"id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"trine-soak/{k}")), "tenant": t,
                      "text": f"Soak note {k}: the release train for build {k % 97} left at {k % 24:02d}:{k % 60:02d}, owner team {k % 13}."}))
PY
    started=$(date +%s.%N)
    trine ingest --endpoint "$addr" "$batch" >/dev/null 2>>"$work/writer.log" || echo "write failed at batch $n" >>"$work/writer.errors"
    n=$((n + 1))
    sleep "$(python3 -c "import sys,time; print(max(0.0, 1.0 - (time.time() - float(sys.argv[1]))))" "$started")"
  done
) &
writer=$!

rss() { awk '/^VmRSS/ {print $2/1024}' "/proc/$server/status"; }
hwm() { awk '/^VmHWM/ {print $2/1024}' "/proc/$server/status"; }
echo "minute,rss_mib,hwm_mib,searches,failed,p50_ms,p99_ms,writes_failed" >"$out/soak.csv"
echo "minute 0: RSS $(rss) MiB"
for minute in $(seq 1 "$minutes"); do
  trine bench --endpoint "$addr" --queries "$queries" --rate "$read_rate" --concurrency 64 \
    --duration 60s --warmup 0s --json >"$work/bench.json" 2>>"$work/bench.log" || true
  # (bench exits non-zero when searches failed: they are counted below.)
  [ -s "$work/bench.json" ] || { echo "trine bench gave no report:"; tail "$work/bench.log"; exit 1; }
  failed_writes=$(wc -l <"$work/writer.errors")
  python3 - "$work/bench.json" "$minute" "$(rss)" "$(hwm)" "$failed_writes" >>"$out/soak.csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
failed = sum(r["errors"].values())
print(f'{sys.argv[2]},{float(sys.argv[3]):.1f},{float(sys.argv[4]):.1f},{r["requests"]},{failed},{r["end_to_end"]["p50"]:.2f},{r["end_to_end"]["p99"]:.2f},{sys.argv[5]}')
PY
  tail -1 "$out/soak.csv"
done

python3 - "$out" "$minutes" "$read_rate" "$write_rate" "$embedder" "$data_src" "$commit" <<'PY'
import csv, os, sys
out, minutes, read_rate, write_rate, embedder, data, commit = sys.argv[1:]
corpus = os.environ.get("SOAK_CORPUS") or f"`{data}`"
rows = list(csv.DictReader(open(f"{out}/soak.csv")))
rss = [float(r["rss_mib"]) for r in rows]
p99 = [float(r["p99_ms"]) for r in rows]
p50 = [float(r["p50_ms"]) for r in rows]
searches = sum(int(r["searches"]) for r in rows)
failed = sum(int(r["failed"]) for r in rows)
writes_failed = int(rows[-1]["writes_failed"])
# The plot: RSS and p99 a minute, two panels.
W, H, pad = 720, 200, 40
def panel(values, y0, label, unit, color):
    # The axis stops at four times the median: a spike (the start, other
    # work on the machine) is drawn at the top, its value in the csv.
    top = min(max(values) * 1.1, 4 * sorted(values)[len(values) // 2]) or 1
    clipped = [min(v, top) for v in values]
    pts = " ".join(f"{pad + i * (W - 2 * pad) / max(1, len(values) - 1):.1f},{y0 + H - pad - v / top * (H - 2 * pad):.1f}" for i, v in enumerate(clipped))
    return (f'<text x="{pad}" y="{y0 + 20}" font-size="13">{label} ({unit}; median {sorted(values)[len(values) // 2]:.1f}, max {max(values):.1f}; axis to {top:.0f})</text>'
            f'<line x1="{pad}" y1="{y0 + H - pad}" x2="{W - pad}" y2="{y0 + H - pad}" stroke="#999"/>'
            f'<line x1="{pad}" y1="{y0 + pad}" x2="{pad}" y2="{y0 + H - pad}" stroke="#999"/>'
            f'<text x="{pad - 4}" y="{y0 + pad + 4}" font-size="10" text-anchor="end">{top:.0f}</text>'
            f'<text x="{pad - 4}" y="{y0 + H - pad}" font-size="10" text-anchor="end">0</text>'
            f'<text x="{W - pad}" y="{y0 + H - pad + 14}" font-size="10" text-anchor="end">minute {len(values)}</text>'
            f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>')
svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{2 * H}" font-family="sans-serif">'
       + panel(rss, 0, "resident memory of trine serve", "MiB", "#1f77b4")
       + panel(p99, H, "search p99", "ms", "#d62728") + "</svg>\n")
open(f"{out}/soak.svg", "w").write(svg)
first, last = rss[0], rss[-1]
half = len(rss) // 2
growth = (sum(rss[half:]) / len(rss[half:])) - (sum(rss[:half]) / max(1, len(rss[:half])))
md = f"""## Soak

`scripts/soak.sh` (commit {commit}): `trine serve` (release, embedded, {embedder}) on a copy of
{corpus}, {minutes} minutes of {read_rate} searches a second (`trine bench --rate`, open loop)
and {write_rate} new memories a second (`trine ingest --endpoint`, a batch a second), on this
2-core machine; the serving process's RSS and the searches' latency sampled every minute
(`soak.csv`). {searches:,} searches, {failed} failed; {writes_failed} write batches failed.

![RSS and p99 a minute](soak.svg)

| minute | RSS MiB | p50 ms | p99 ms |
| --- | --- | --- | --- |
""" + "".join(f"| {r['minute']} | {r['rss_mib']} | {r['p50_ms']} | {r['p99_ms']} |\n" for r in rows if int(r["minute"]) in (1, 2, 5) or int(r["minute"]) % 10 == 0) + f"""
RSS went from {first:.0f} MiB (minute 1) to {last:.0f} MiB (minute {len(rss)}); the second half's
mean is {growth:+.1f} MiB from the first half's. p99: median {sorted(p99)[len(p99)//2]:.1f} ms,
max {max(p99):.1f} ms; p50 median {sorted(p50)[len(p50)//2]:.2f} ms.
"""
open(f"{out}/soak.md", "w").write(md)
print(md)
PY
if [ -n "${SOAK_DOCS:-}" ]; then
  cp "$out/soak.md" "$out/soak.svg" "$out/soak.csv" "$SOAK_DOCS/"
  python3 - "$SOAK_DOCS/benchmarks.md" "$out/soak.md" <<'PY'
import re, sys
doc, section = open(sys.argv[1]).read(), open(sys.argv[2]).read()
if "\n## Soak\n" in doc:
    doc = re.sub(r"\n## Soak\n.*?(?=\n## |\Z)", "\n" + section.rstrip("\n") + "\n", doc, flags=re.S)
else:
    doc = doc.rstrip("\n") + "\n\n" + section
open(sys.argv[1], "w").write(doc)
PY
  echo "updated $SOAK_DOCS/benchmarks.md"
fi
