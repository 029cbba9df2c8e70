#!/usr/bin/env python3
"""Render docs/benchmarks.md from the outputs of scripts/benchmarks.sh.

    python3 scripts/benchmarks-report.py WORK_DIR > docs/benchmarks.md

Every figure comes from a file the runs wrote (`trine bench --save`,
`trine eval --save`, the generator's and the ingest's own reports); nothing
here is typed by hand. Standard library only.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

BUDGET = 0.1


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def sh(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def cpu() -> str:
    for line in sh("lscpu").splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "?"


def ms(x: float) -> str:
    return f"{x:.1f}"


def machine(work: Path) -> list[str]:
    mem = sh("sh", "-c", "free -g | awk '/Mem:/ {print $2}'")
    commit = work / "commit.txt"
    commit = commit.read_text(encoding="utf-8").strip() if commit.exists() else "?"
    runs = max((p.stat().st_mtime for p in work.glob("*.json")
                if not p.name.startswith(("scale-", "four-"))), default=0)
    profile = work / "profile.txt"
    profile = profile.read_text(encoding="utf-8").strip() if profile.exists() else "dev"
    profile = ("release profile" if profile == "release"
               else "dev profile (dependencies at opt-level 3)")
    return [
        f"- Runs: {datetime.fromtimestamp(runs, timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"trine at commit `{commit}` (a trailing + marks uncommitted changes)",
        f"- Machine: {sh('nproc')} cores ({cpu()}), {mem} GB RAM, {sh('rustc', '--version')}, "
        f"{profile}",
        "- Store: Qdrant Edge (embedded, one data directory); embedder: `static` "
        "(Model2Vec distilled from all-MiniLM-L6-v2, 256 dimensions)",
        f"- Work files: `{work.name}/` (the JSON reports below come from there)",
    ]


def corpus_section(work: Path) -> list[str]:
    out = ["## Corpora and ingest", ""]
    out += [
        "`scripts/gen-corpus.py --n N`: one tenant, the planted `Meeting 2026-11-11 09:58`",
        "last by point id, 320 near-duplicate titles holding all of its terms (more than",
        "the lexical cap of 256), each term at the ADR's rate. Ingest: `trine --embedder",
        "static ingest memories.jsonl --batch 1024` (writes, then one index build).",
        "",
    ]
    for n in (385000, 400000):
        gen = work / f"corpus-{n}.gen.txt"
        ingest = work / f"corpus-{n}" / "ingest.txt"
        out.append(f"**{n:,} memories**")
        out.append("")
        out.append("```")
        if gen.exists():
            # The generator names its output directory: say it relative to the work files.
            text = gen.read_text(encoding="utf-8").replace(f"{work.resolve()}/", f"{work.name}/")
            out += text.rstrip().splitlines()
        if ingest.exists():
            out += [line for line in ingest.read_text(encoding="utf-8").splitlines()
                    if line.strip() and not line.startswith(("ingest: ", "building indexes: "))]
        out.append("```")
        out.append("")
    rate = work / "write-rate.txt"
    if rate.exists():
        out += ["**Writes alone** (385,000 memories into an empty directory, `--no-optimize`):", "",
                "```"] + [line for line in rate.read_text(encoding="utf-8").splitlines()
                          if line.startswith("wrote")] + ["```", ""]
    return out


def stage(report: dict, name: str, q: str = "p50") -> str:
    s = report["stages"].get(name)
    return ms(s[q]) if s else "–"


def counts_ms(report: dict, q: str) -> str:
    """The counts stage to a hundredth of a millisecond: most counts take less than a tenth."""
    s = report["stages"].get("lexical.counts")
    return f"{s[q]:.2f}" if s else "–"


def counts_section(work: Path) -> list[str]:
    off, on, kept = work / "counts-off.json", work / "counts-cached.json", work / "counts-kept.json"
    if not (off.exists() and on.exists()):
        return []
    runs = [("off", off), ("cached", on)] + ([("kept (default)", kept)] if kept.exists() else [])
    out = [
        "## The counts budget at 400,000 memories (ADR 0172, second invalidation condition)",
        "",
        "`trine bench --queries bench-queries.jsonl --duration 60s --warmup 5s`, concurrency 1,",
        "hybrid, strategy `candidates`, in-process mesh; 1,000 varied searches (meeting titles,",
        "most not in the corpus, component/symptom phrases, questions) cycled. *Off*:",
        "`[lexical] count_cache_secs = 0` and `count_statistics = false`, every count made in",
        "the store on every search (docs/design.md §5). *Cached*: `count_statistics = false`, counts",
        "of ≥ 1,000 points (and zero counts) reused for 60 s and refreshed in the background for",
        "60 s more (lexical-svc/src/counts.rs). *Kept*: the default, the counts of the tenant and",
        "of each term read from the embedded store's per-tenant document frequencies",
        "(services/store/src/edge/kept.rs; the run starts once they are built). The share is",
        "the counts' time over the gateway's time for each search.",
        "",
        "| counts | searches/s | end to end p50 / p95 ms | lexical.counts p50 / p95 ms "
        "| share p50 | share p95 | share p99 | over budget |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, path in runs:
        r = load(path)
        s = r["counts_share"]
        out.append(
            f"| {name} | {r['throughput']:.1f} | {ms(r['end_to_end']['p50'])} / "
            f"{ms(r['end_to_end']['p95'])} | {counts_ms(r, 'p50')} / "
            f"{counts_ms(r, 'p95')} | {s['p50']:.3f} | {s['p95']:.3f} | "
            f"{s['p99']:.3f} | {r['over_budget']} of {s['n']} |"
        )
    out += ["", "Per stage, ms (p50 / p95):", "",
            "| stage | " + " | ".join(n for n, _ in runs) + " |",
            "| --- |" + " --- |" * len(runs)]
    reports = [load(p) for _, p in runs]
    for name in sorted(set().union(*(r["stages"] for r in reports))):
        out.append(f"| {name} | " + " | ".join(
            f"{stage(r, name)} / {stage(r, name, 'p95')}" for r in reports) + " |")
    return out + [""]


def never_repeated_section(work: Path) -> list[str]:
    runs = [(counts, c, work / f"never-repeated-{counts}-c{c}.json")
            for counts in ("cached", "kept") for c in (1, 16)]
    runs = [r for r in runs if r[2].exists()]
    if not runs:
        return []
    out = [
        "## The counts on queries never seen before (385,000 memories)",
        "",
        "`trine bench --no-repeat --queries bench-queries.jsonl --concurrency C` (hybrid, strategy",
        "`candidates`, in-process mesh): 20,000 distinct searches (`gen-corpus.py --bench-queries",
        "20000`: meeting titles, component/symptom phrases, questions), each sent at most once,",
        "warm-up included, so that no count is reused from a repeat. *Cached*: `[lexical]",
        "count_statistics = false`, the count cache alone. *Kept*: the default, the embedded",
        "store's document frequencies (the run starts once they are built). ADR 0172's budget:",
        "the counts under a tenth of each search's time.",
        "",
        "| counts | concurrency | searches/s | end to end p50 / p95 ms | lexical.counts p50 / p95 ms "
        "| share p50 | share p95 | share p99 | over budget |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for counts, c, path in runs:
        r = load(path)
        s = r["counts_share"]
        out.append(
            f"| {counts} | {c} | {r['throughput']:.1f} | {ms(r['end_to_end']['p50'])} / "
            f"{ms(r['end_to_end']['p95'])} | {counts_ms(r, 'p50')} / "
            f"{counts_ms(r, 'p95')} | {s['p50']:.3f} | {s['p95']:.3f} | "
            f"{s['p99']:.3f} | {r['over_budget']} of {s['n']} |"
        )
    return out + [""]


def eval_section(work: Path) -> list[str]:
    path = work / "eval.json"
    if not path.exists():
        return []
    r = load(path)
    k = r["k"]
    first = r["configurations"][0]["by_kind"]
    counts = ", ".join(f"{v['queries']} {kind}" for kind, v in first.items() if kind != "all")
    out = [
        "## Ranking quality at 385,000 memories (`trine eval`)",
        "",
        f"`trine eval --queries queries.jsonl --modes hybrid,semantic,lexical --verbatim on,1,off`:",
        f"{r['queries']} queries with known answers ({counts}, by kind; `q01` is the planted",
        f"title); k = {k}, ranks read to {r['depth']}. `verbatim-x1` weighs the verbatim list",
        "1 and `no-verbatim` leaves it out. Qdrant native: one Query API call, dense and",
        "BM25 (or sparse) prefetches of 256, Qdrant's RRF with k = 61 (0-based ranks:",
        "trine's k = 60). The fusion default against the better channel and RRF per kind,",
        "at every tenant size: docs/fusion.md.",
        "",
    ]
    kinds = sorted({kind for c in r["configurations"] for kind in c["by_kind"] if kind != "all"})
    head = "| configuration | planted meeting rank | all s@1 | all MRR | " + " | ".join(
        f"{kind} s@1" for kind in kinds) + f" | all s@{k} | ms/query |"
    out += [head, "| " + " | ".join(["---"] * (head.count("|") - 1)) + " |"]
    for c in r["configurations"]:
        if c["error"]:
            out.append(f"| {c['name']} | not run: {c['error']} |")
            continue
        planted = next((q for q in c["queries"] if q["qid"] == "q01"), None)
        rank = planted["ranks"][0] if planted else None
        rank = f">{r['depth']}" if rank is None else str(rank)
        a = c["by_kind"]["all"]
        cells = [f"{c['by_kind'][kind]['success_at_1']:.2f}" if kind in c["by_kind"] else "–"
                 for kind in kinds]
        out.append(
            f"| {c['name']} | {rank} | {a['success_at_1']:.3f} | {a['mrr']:.3f} | "
            + " | ".join(cells) + f" | {a['success_at_k']:.3f} | {c['mean_ms']:.1f} |"
        )
    return out + [""]


def bench_section(work: Path) -> list[str]:
    runs = [(s, work / f"bench-{s}.json") for s in ("candidates", "bm25", "sparse", "gate")]
    runs = [(s, p) for s, p in runs if p.exists()]
    if not runs:
        return []
    suffix = "-strategies" if (work / "commit-strategies.txt").exists() else ""
    out = [
        "## Latency at 385,000 memories: trine per strategy vs Qdrant's one-call hybrid",
        "",
        "`trine bench --queries bench-queries.jsonl --strategy S --native bm25|sparse --duration 60s`:",
        "concurrency 1, hybrid, in-process mesh (four gRPC services on loopback); then the same",
        "queries, one Query API call each (embed + dense and lexical prefetches of 256 + RRF,",
        "the hits read with their memories — from commit 25f3e6d on, ids only before),",
        "on the same collection in the same process. Milliseconds. " + runs_of(work, suffix),
        "",
        "| strategy | searches/s | p50 | p95 | p99 | counts share p50 / p95 | native | "
        "native searches/s | native p50 | native p95 | trine / native p50 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for strategy, path in runs:
        r = load(path)
        n = r.get("native") or {}
        e, ne = r["end_to_end"], n.get("end_to_end", {})
        ratio = e["p50"] / ne["p50"] if ne.get("p50") else float("nan")
        out.append(
            f"| {strategy} | {r['throughput']:.1f} | {ms(e['p50'])} | {ms(e['p95'])} | "
            f"{ms(e['p99'])} | {r['counts_share']['p50']:.3f} / {r['counts_share']['p95']:.3f} | "
            f"{n.get('strategy', '–')} | {n.get('throughput', 0):.1f} | "
            f"{ms(ne.get('p50', 0))} | {ms(ne.get('p95', 0))} | {ratio:.2f}× |"
        )
    names = sorted({name for _, p in runs for name in load(p)["stages"]})
    out += ["", "Per stage, p50 ms:", "",
            "| stage | " + " | ".join(s for s, _ in runs) + " |",
            "| --- |" + " --- |" * len(runs)]
    for name in names:
        out.append(f"| {name} | " + " | ".join(stage(load(p), name) for _, p in runs) + " |")
    errors = {s: load(p)["errors"] for s, p in runs if load(p)["errors"]}
    if errors:
        out += ["", f"Errors: {errors}"]
    return out + [""]


def sweep_section(work: Path) -> list[str]:
    runs = sorted(work.glob("sweep-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    loop = work / "open-loop.json"
    if not runs and not loop.exists():
        return []
    out = [
        "## Under load at 385,000 memories: a concurrency sweep and an open loop",
        "",
        "`trine bench --queries bench-queries.jsonl --concurrency C --native bm25` (closed "
        "loop), then `--rate R --concurrency 64` (open loop: at most 64 in flight, ticks "
        "beyond shed), strategy `candidates`, in-process mesh; Qdrant's one-call hybrid "
        "under the same load in the same run. Milliseconds, end to end as the client saw "
        "them; mesh overhead: the gateway's time beyond its slowest channel and fusion's "
        "own work.",
        "",
        "| load | trine p50 / p95 / p99 | trine searches/s | errors | mesh overhead p50 | "
        "native p50 / p95 / p99 | native searches/s | p50 ratio | throughput ratio |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for path in runs + ([loop] if loop.exists() else []):
        r = load(path)
        n = r.get("native") or {}
        e, ne = r["end_to_end"], n.get("end_to_end", {})
        label = (f"rate {r['rate']:g}/s (shed {r['shed']})" if r.get("rate")
                 else f"concurrency {r['concurrency']}")
        errors = sum(r["errors"].values()) if r["errors"] else 0
        ratio = lambda a, b: f"{a / b:.2f}x" if b else "–"
        out.append(
            f"| {label} | {ms(e['p50'])} / {ms(e['p95'])} / {ms(e['p99'])} | "
            f"{r['throughput']:.1f} | {errors} | {ms(r.get('mesh_overhead', {}).get('p50', 0))} | "
            + (f"{ms(ne['p50'])} / {ms(ne['p95'])} / {ms(ne['p99'])} | {n['throughput']:.1f} | "
               f"{ratio(e['p50'], ne['p50'])} | {ratio(r['throughput'], n['throughput'])} |"
               if ne else "– | – | – | – |"))
    return out + [""]


def runs_of(work: Path, suffix: str) -> str:
    """Which commit and profile a script's own runs measured (commit-SUFFIX.txt)."""
    read = lambda name: ((work / name).read_text(encoding="utf-8").strip()
                         if (work / name).exists() else "?")
    return (f"Runs: trine at commit `{read(f'commit{suffix}.txt')}`, "
            f"{read(f'profile{suffix}.txt')} profile.")


def ingest_figures(path: Path) -> tuple[str, str]:
    """Write rate (memories/s) and index build seconds from an ingest's report."""
    rate = build = "–"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("wrote ") and "(" in line:
                rate = line.rsplit("(", 1)[1].split("/s", 1)[0]
            elif line.startswith("built indexes in "):
                build = line.removeprefix("built indexes in ").removesuffix(" s")
    return rate, build


def scaling_runs(work: Path) -> list[tuple[int, dict, dict, dict]]:
    """(memories, concurrency-1 run, concurrency-16 run, native-only run) per size."""
    sizes = sorted({int(p.name.split("-")[1]) for p in work.glob("scale-*-c1.json")})
    runs = []
    for n in sizes:
        paths = [work / f"scale-{n}-{k}.json" for k in ("c1", "c16", "native")]
        if all(p.exists() for p in paths):
            runs.append((n, *(load(p) for p in paths)))
    return runs


def svg_plot(runs: list[tuple[int, dict, dict, dict]]) -> str:
    """Two panels, p50 latency and throughput against corpus size (log scale),
    trine and native at concurrency 1 and 16. Standard library only."""
    import math

    series = [
        ("trine, concurrency 1", "#1f77b4", "", lambda r: r[1]),
        ("native, concurrency 1", "#ff7f0e", "", lambda r: r[1]["native"]),
        ("trine, concurrency 16", "#1f77b4", "6 4", lambda r: r[2]),
        ("native, concurrency 16", "#ff7f0e", "6 4", lambda r: r[2]["native"]),
    ]
    panels = [("p50 latency, ms", lambda rep: rep["end_to_end"]["p50"]),
              ("throughput, searches/s", lambda rep: rep["throughput"])]
    w, h, left, top, pw, ph = 1080, 380, 70, 40, 330, 260
    xs = [math.log10(r[0]) for r in runs]
    x0, x1 = min(xs) - 0.1, max(xs) + 0.1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    for i, (title, value) in enumerate(panels):
        ox = left + i * (pw + 110)
        top_value = max(value(get(r)) for r in runs for _, _, _, get in series) * 1.15
        sx = lambda x: ox + (x - x0) / (x1 - x0) * pw
        sy = lambda y: top + ph - y / top_value * ph
        out.append(f'<text x="{ox + pw / 2}" y="{top - 15}" text-anchor="middle" '
                   f'font-weight="bold">{title}</text>')
        out.append(f'<rect x="{ox}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
        for k in range(5):
            y = top_value * k / 4
            out.append(f'<line x1="{ox}" x2="{ox + pw}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#eee"/>')
            out.append(f'<text x="{ox - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:.0f}</text>')
        for r, x in zip(runs, xs):
            out.append(f'<text x="{sx(x):.1f}" y="{top + ph + 16}" text-anchor="middle">{r[0]:,}</text>')
        out.append(f'<text x="{ox + pw / 2}" y="{top + ph + 34}" text-anchor="middle">memories (log scale)</text>')
        for name, colour, dash, get in series:
            points = " ".join(f"{sx(x):.1f},{sy(value(get(r))):.1f}" for r, x in zip(runs, xs))
            out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"'
                       + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
            for r, x in zip(runs, xs):
                out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(value(get(r))):.1f}" r="3" fill="{colour}"/>')
    lx = left + 2 * pw + 110 + 10
    for j, (name, colour, dash, _) in enumerate(series):
        y = top + 10 + j * 20
        out.append(f'<line x1="{lx}" x2="{lx + 24}" y1="{y}" y2="{y}" stroke="{colour}" stroke-width="2"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        out.append(f'<text x="{lx + 30}" y="{y + 4}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def scaling_section(work: Path) -> list[str]:
    runs = scaling_runs(work)
    if not runs:
        return []
    svg = Path(__file__).resolve().parent.parent / "docs" / "scaling.svg"
    svg.write_text(svg_plot(runs), encoding="utf-8")
    out = [
        "## Scaling: latency, throughput, ingest and memory by corpus size",
        "",
        "`./scripts/scaling.sh`: the scale corpus at each size (`gen-corpus.py --n N`, static "
        "embedder); `trine bench --queries bench-queries.jsonl --concurrency C --native bm25` "
        "(strategy `candidates`, in-process mesh, then Qdrant's one-call hybrid with a `bm25` "
        "prefetch on the same collection in the same process); ingest figures from each "
        "ingest's own report (writes, then one index build); peak memory: the process's "
        "VmHWM after the concurrency-16 load — trine's in-process mesh (four services, the "
        "store and the embedder in one process), and a process serving native searches "
        "alone (`--native-only`). " + runs_of(work, "-scaling"),
        "",
        "![p50 latency and throughput by corpus size](scaling.svg)",
        "",
        "| memories | ingest writes/s | index build s | trine p50 c=1 / c=16 | "
        "native p50 c=1 / c=16 | trine searches/s c=1 / c=16 | native searches/s c=1 / c=16 | "
        "peak MiB trine / native |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, c1, c16, native in runs:
        rate, build = ingest_figures(work / f"corpus-{n}" / "ingest.txt")
        p50 = lambda r: ms(r["end_to_end"]["p50"])
        peak = lambda r: f"{r['peak_rss_mib']:.0f}" if r.get("peak_rss_mib") else "–"
        out.append(
            f"| {n:,} | {rate} | {build} | {p50(c1)} / {p50(c16)} | "
            f"{p50(c1['native'])} / {p50(c16['native'])} | "
            f"{c1['throughput']:.1f} / {c16['throughput']:.1f} | "
            f"{c1['native']['throughput']:.1f} / {c16['native']['throughput']:.1f} | "
            f"{peak(c16)} / {peak(native)} |"
        )
    return out + [""]


def four_section(work: Path) -> list[str]:
    sizes = sorted({int(p.name.split("-")[1]) for p in work.glob("four-*-ingest.txt")})
    out: list[str] = []
    for size in sizes:
        out += four_size_section(work, size)
    return out


def four_size_section(work: Path, size: int) -> list[str]:
    at = lambda name: work / f"four-{size}-{name}"
    runs = [(s, c) for s in ("candidates", "sparse") for c in (1, 16)
            if at(f"{s}-c{c}.json").exists()]
    if not runs:
        return []
    ingest = [line for line in at("ingest.txt").read_text(encoding="utf-8").splitlines()
              if line.startswith(("wrote ", "built indexes", "stored "))]
    out = [
        f"## Four processes over a Qdrant server ({size:,} memories)",
        "",
        "`./scripts/four-process.sh`: `trine serve --role gateway|lexical|semantic|fusion` as four "
        "OS processes over one Qdrant 1.19 server on loopback, the scale corpus ingested into it "
        "(static embedder); `trine bench --endpoint GATEWAY --native sparse`, then the same load "
        "on the in-process mesh over the same server, and Qdrant's one-call hybrid (dense + "
        "`sparse` prefetch; 1.19 has no BM25 over the text index) on the same collection in the "
        "same run. Milliseconds end to end; mesh overhead: the gateway's time beyond its slowest "
        "channel and fusion's own work. " + runs_of(work, f"-four-{size}"),
        "",
        "```",
        *ingest,
        "```",
        "",
        "| strategy | load | four processes p50 / p95 / p99 | searches/s | mesh overhead p50 | "
        "in-process p50 / searches/s | native p50 / searches/s | four / native p50 | "
        "four / native throughput | errors |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for strategy, c in runs:
        r = load(at(f"{strategy}-c{c}.json"))
        inproc = at(f"inproc-{strategy}-c{c}.json")
        i = load(inproc) if inproc.exists() else None
        n = r.get("native") or {}
        e, ne = r["end_to_end"], n.get("end_to_end", {})
        errors = sum(r["errors"].values()) + (sum(n.get("errors", {}).values()) if n else 0)
        out.append(
            f"| {strategy} | concurrency {c} | {ms(e['p50'])} / {ms(e['p95'])} / {ms(e['p99'])} | "
            f"{r['throughput']:.1f} | {ms(r['mesh_overhead']['p50'])} | "
            + (f"{ms(i['end_to_end']['p50'])} / {i['throughput']:.1f} | " if i else "– | ")
            + (f"{ms(ne['p50'])} / {n['throughput']:.1f} | {e['p50'] / ne['p50']:.2f}× | "
               f"{r['throughput'] / n['throughput']:.2f}× |" if ne else "– | – | – |")
            + f" {errors} |"
        )
    stages = [("gateway", "gateway"), ("lexical", "lexical call"), ("lexical.counts", "counts"),
              ("lexical.read", "read"), ("lexical.score", "score"), ("semantic", "semantic call"),
              ("semantic.embed", "embed"), ("semantic.query", "query"), ("fusion.call", "fusion call"),
              ("fusion", "fusion"), ("payload", "payload")]
    out += ["", "Per stage, four processes (p50, milliseconds; each service's own spans, the calls "
            "as the gateway saw them; the native run is one call to Qdrant, end to end):", "",
            "| strategy | load | " + " | ".join(label for _, label in stages) + " | native |",
            "| --- | --- " + "| --- " * len(stages) + "| --- |"]
    for strategy, c in runs:
        r = load(at(f"{strategy}-c{c}.json"))
        ne = (r.get("native") or {}).get("end_to_end", {})
        cells = [ms(r["stages"][k]["p50"]) if k in r["stages"] else "–" for k, _ in stages]
        out.append(f"| {strategy} | concurrency {c} | " + " | ".join(cells)
                   + f" | {ms(ne['p50']) if ne else '–'} |")
    memory = at("memory.txt")
    if memory.exists():
        peaks = [line.split() for line in memory.read_text(encoding="utf-8").splitlines() if line.strip()]
        out += ["", "Peak memory of each process after the runs (VmHWM): "
                + ", ".join(f"{role} {int(kb) / 1024:.0f} MiB" for role, kb in peaks) + "."]
    return out + [""]


VERSUS_HEAD = [
    "| strategy | load | trine p50 / p95 | trine searches/s | mesh overhead p50 | "
    "lexical.read + lexical.score p50 | native | native p50 / p95 | native searches/s | "
    "trine / native p50 | trine / native throughput |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
]


def versus_row(strategy: str, c: int, r: dict) -> str:
    """One run of trine beside native: a row under VERSUS_HEAD."""
    n = r.get("native") or {}
    e, ne = r["end_to_end"], n.get("end_to_end", {})
    read = r["stages"].get("lexical.read", {}).get("p50", 0) + \
        r["stages"].get("lexical.score", {}).get("p50", 0)
    return (
        f"| {strategy} | concurrency {c} | {ms(e['p50'])} / {ms(e['p95'])} | "
        f"{r['throughput']:.1f} | {ms(r['mesh_overhead']['p50'])} | {ms(read)} | "
        f"{n.get('strategy', '–')} | "
        + (f"{ms(ne['p50'])} / {ms(ne['p95'])} | {n['throughput']:.1f} | "
           f"{e['p50'] / ne['p50']:.2f}× | {r['throughput'] / n['throughput']:.2f}× |"
           if ne else "– | – | – | – |"))


def loaded_section(work: Path) -> list[str]:
    """Each strategy at 385,000 (scale corpus) at concurrency 16, beside native."""
    runs = [(s, work / f"bench-{s}-c16.json") for s in ("candidates", "bm25", "sparse", "gate")]
    runs = [(s, p) for s, p in runs if p.exists()]
    if not runs:
        return []
    suffix = "-strategies" if (work / "commit-strategies.txt").exists() else ""
    out = [
        "## Each strategy at 385,000 memories under load: concurrency 16",
        "",
        "`trine bench --queries bench-queries.jsonl --strategy S --concurrency 16 --native "
        "bm25|sparse --duration 30s` (in-process mesh, then Qdrant's one-call hybrid on the "
        "same collection in the same process); concurrency 1 is the table above. "
        + runs_of(work, suffix),
        "",
        *VERSUS_HEAD,
    ]
    out += [versus_row(s, 16, load(p)) for s, p in runs]
    return out + [""]


def realtext_section(work: Path) -> list[str]:
    """trine per strategy beside native on the real-text corpus (make-devset.py --tiers xl)."""
    dir = work / "realtext"
    runs = [(s, c) for s in ("candidates", "bm25", "sparse", "gate") for c in (1, 16)
            if (dir / f"bench-{s}-c{c}.json").exists()]
    if not runs:
        return []
    ingest = [line for line in (dir / "ingest.txt").read_text(encoding="utf-8").splitlines()
              if line.startswith(("wrote ", "built indexes", "stored "))] \
        if (dir / "ingest.txt").exists() else []
    read = lambda name: (dir / name).read_text(encoding="utf-8").strip() if (dir / name).exists() else "?"
    out = [
        "## Real text at 385,000 memories: trine per strategy vs Qdrant's one-call hybrid",
        "",
        "`scripts/fetch-realtext.sh && python3 scripts/make-devset.py --tiers xl --flat`: 385,000 "
        "memories of real text (Debian package descriptions and changelogs, the Python standard "
        "library, Rust sources of the Cargo registry, and chunks of the documentation of 24 Debian "
        "packages: the Linux kernel, Python, Rust, Java, Qt, Erlang, PostgreSQL, man pages, "
        "dictionaries and more), ingested with the static embedder; `trine bench --queries queries.jsonl "
        "--strategy S --concurrency C --native bm25|sparse` (in-process mesh, then Qdrant's "
        f"one-call hybrid on the same collection in the same process). Runs: trine at commit "
        f"`{read('commit.txt')}`, {read('profile.txt')} profile.",
        "",
        "```",
        *ingest,
        "```",
        "",
        *VERSUS_HEAD,
    ]
    out += [versus_row(s, c, load(dir / f"bench-{s}-c{c}.json")) for s, c in runs]
    return out + [""]

def embedded_section(work: Path) -> list[str]:
    """scripts/embedded.sh: the in-process mesh on real text at small sizes, beside native."""
    dirs = sorted((d for d in work.glob("real-*") if (d / "bench-c1.json").exists()),
                  key=lambda d: int(d.name.split("-")[1]))
    if not dirs:
        return []
    read = lambda d, name: (d / name).read_text(encoding="utf-8").strip() if (d / name).exists() else "?"
    out = [
        "## Embedded at small sizes: real text, one process",
        "",
        "`./scripts/embedded.sh`: the first N memories of the real-text corpus (make-devset.py's xl "
        "tier), ingested with the static embedder; `trine bench --queries queries.jsonl "
        "--concurrency C --native sparse` — the in-process mesh (the four services in one "
        "process over Qdrant Edge, as `trine serve` runs them without a Qdrant URL), then "
        "Qdrant's one-call hybrid (dense + `sparse` prefetch of 256 each, RRF, the hits read "
        "with their memories) on the same collection in the same process. Runs: trine at "
        f"commit `{read(dirs[0], 'commit.txt')}`, {read(work, 'profile.txt')} profile.",
        "",
        "What makes it so: the term reads of the `candidates` strategy are answered from "
        "postings the embedded store keeps with its document frequencies (no store call; "
        "the same points as the shard's scroll), each point's sparse vector kept read as "
        "counts (its length summed once, not at every search), a phrase read the postings "
        "show empty makes no call, and every call stays in the process: the gateway calls "
        "its three channels, and the in-process commands (`bench`, `search`, `mcp`) call the "
        "gateway, through each one's own server stack (its limits, metrics and shedding; no "
        "socket or HTTP/2 framing), as native's call is a call in the process. What is left "
        "(the stages below): the dense search (`semantic.query`, as in native's call), the "
        "lexical read's phrase reads, the payload of the hits, the messages encoded and "
        "decoded at each of the four calls, and fusion. On this 2-core VM the same build's "
        "ratios move from one run to the next: an earlier build's five runs at concurrency 1 and "
        "40,000 gave 1.00× to 1.06× p50 (±3 % around their mean); one run's ratio is not a "
        "measurement of another build's.",
        "",
    ]
    for d in dirs:
        size = int(d.name.split("-")[1])
        runs = [(c, load(d / f"bench-c{c}.json")) for c in (1, 16, 64)
                if (d / f"bench-c{c}.json").exists()]
        out += [f"{size:,} memories:", "", *VERSUS_HEAD]
        out += [versus_row("candidates", c, r) for c, r in runs]
        out += ["", "| load | " + " | ".join(label for _, label in EMBEDDED_STAGES)
                + " | mesh overhead | end to end | native |",
                "| --- " * (len(EMBEDDED_STAGES) + 4) + "|"]
        for c, r in runs:
            n = (r.get("native") or {}).get("end_to_end", {})
            out.append(f"| concurrency {c} | "
                       + " | ".join(stage(r, name) for name, _ in EMBEDDED_STAGES)
                       + f" | {ms(r['mesh_overhead']['p50'])} | {ms(r['end_to_end']['p50'])} | "
                       + (ms(n['p50']) if n else "–") + " |")
        out += ["", "Stages: p50, ms, as each response's timings report them."]
        cores = read(d, "cores.txt")
        loaded = [(c, r) for c, r in runs if cores.isdigit() and c >= 4 * int(cores)]
        for c, r in loaded:
            n = r.get("native") or {}
            if not n.get("throughput"):
                continue
            mine, theirs = int(cores) / r["throughput"] * 1000, int(cores) / n["throughput"] * 1000
            spent = (f"At concurrency {c} the {cores} cores are saturated: a search costs trine "
                     f"{mine:.2f} ms of CPU and native {theirs:.2f} ms ({mine - theirs:+.2f} ms).")
            if mine <= theirs:
                out += ["", spent + " Native's sparse prefetch over the whole index costs more "
                        "than trine's lexical read from memory and everything trine adds."]
                continue
            out += ["", spent + " That difference is the floor of this topology: what trine does "
                    "beyond native's one call — four calls in the process (the gateway's and its "
                    "three channels': each message encoded and decoded, the two channels' calls a task each), the "
                    "hits' payload as a second store call, the "
                    "fusion and the verbatim evidence — while its dense search is native's "
                    "dense prefetch and its lexical read is answered from memory."]
        out += [""]
    return out


EMBEDDED_STAGES = [("lexical", "lexical call"), ("lexical.read", "read"),
                   ("semantic", "semantic call"), ("semantic.query", "query"),
                   ("fusion.call", "fusion call"), ("payload", "payload")]


DEPLOYED_STAGES = [("lexical", "lexical call"), ("lexical.read", "read"), ("lexical.counts", "counts"),
                   ("semantic", "semantic call"), ("semantic.query", "query"),
                   ("fusion.call", "fusion call"), ("payload", "payload")]


def native_of(path: Path, run: dict) -> dict:
    """Native's report of a deployed run: inside it, or beside it (RUN.native.json)."""
    beside = path.with_suffix(".native.json")
    return run.get("native") or (load(beside) if beside.exists() else {})


def cpu_of(path: Path) -> dict[str, dict[str, float]]:
    """CPU seconds by process of each phase of a deployed run (deployed.sh's `measured`)."""
    if not path.exists():
        return {}
    phases: dict[str, dict[str, float]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for i in range(0, len(lines) - 5, 6):
        label = lines[i].strip()
        fields = {line.split(" ", 1)[0]: line.split(" ", 1)[1].split() if " " in line else []
                  for line in lines[i + 1:i + 6]}
        tick = float(fields["ticks"][0])
        spent: dict[str, float] = {}
        for name, a, b in zip(fields["names"], fields["before"], fields["after"]):
            spent[name] = spent.get(name, 0) + (int(b) - int(a)) / tick
        spent["load"] = sum(float(x) for x in fields["client"])
        phases[label] = spent
    return phases


def deployed_commits(work: Path) -> str:
    """Which commit each group of runs measured (RUN-commit.txt), else the last run's."""
    by_commit: dict[str, list[str]] = {}
    for path in sorted(work.glob("*-*-*-commit.txt")):
        commit = path.read_text(encoding="utf-8").strip()
        by_commit.setdefault(commit, []).append(path.name.removesuffix("-commit.txt"))
    if not by_commit:
        last = work / "commit.txt"
        return f"trine at commit `{last.read_text(encoding='utf-8').strip() if last.exists() else '?'}`"
    return "; ".join(f"trine at commit `{commit}` ({', '.join(groups)})"
                     for commit, groups in by_commit.items()) + \
        " (a trailing + marks uncommitted changes)"


def deployed_section(work: Path) -> list[str]:
    """trine as deployed (scripts/deployed.sh): four processes over a server and a cluster."""
    runs = []
    for path in work.glob("*-c*.json"):
        parts = path.stem.split("-")
        if len(parts) != 5 or not parts[4][1:].isdigit():
            continue  # a native run (RUN.native.json), read beside its trine run
        topology, corpus, size, strategy, c = parts
        runs.append((("server", "cluster").index(topology), ("scale", "real").index(corpus),
                     int(size), ("candidates", "sparse").index(strategy), int(c[1:]), path))
    runs.sort()
    if not runs:
        return []
    read = lambda name: (work / name).read_text(encoding="utf-8").strip() \
        if (work / name).exists() else "?"
    out = [
        "## Deployed: four processes over a Qdrant server and a cluster",
        "",
        "`./scripts/deployed.sh`: `trine serve --role gateway|lexical|semantic|fusion` as four OS "
        "processes over one Qdrant 1.19 server, and over a 3-node Qdrant cluster (shards 3, "
        "replication 2; every trine process given all three nodes), all on loopback; the scale "
        "corpus (`gen-corpus.py`) and real text (the first N memories of `make-devset.py --tiers "
        "xl`) ingested with the static embedder; `trine bench --endpoint GATEWAY --warmup 0s`, "
        "then at once `trine bench --native sparse --native-only --warmup 0s`: Qdrant's best "
        "one-call hybrid in 1.19 (dense + `sparse` prefetch, RRF; BM25 over the text index "
        "arrived in 1.20) on the same collection, with the same queries, concurrency and "
        "duration. No warm-up: the first searches, on queries never seen, are measured too. "
        "Milliseconds end to end; the counts share is the `lexical.counts` time over the search's "
        f"(budget {BUDGET}). Runs: {deployed_commits(work)}, {read('profile.txt')} profile.",
        "",
        "| topology | corpus | memories | strategy | load | trine p50 / p95 | trine searches/s | "
        "native p50 / p95 | native searches/s | trine / native p50 | trine / native throughput | "
        "counts share p50 / p95 | over the budget | errors |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for topology, corpus, size, strategy, c, path in runs:
        r = load(path)
        n = native_of(path, r)
        e, ne, cs = r["end_to_end"], n.get("end_to_end", {}), r["counts_share"]
        errors = sum(r["errors"].values()) + sum(n.get("errors", {}).values())
        out.append(
            f"| {('server', 'cluster')[topology]} | {('scale', 'real text')[corpus]} | {size:,} | "
            f"{('candidates', 'sparse')[strategy]} | concurrency {c} | {ms(e['p50'])} / "
            f"{ms(e['p95'])} | {r['throughput']:.1f} | "
            + (f"{ms(ne['p50'])} / {ms(ne['p95'])} | {n['throughput']:.1f} | "
               f"{e['p50'] / ne['p50']:.2f}× | {r['throughput'] / n['throughput']:.2f}× | "
               if ne else "– | – | – | – | ")
            + f"{cs.get('p50', 0):.3f} / {cs.get('p95', 0):.3f} | {r['over_budget']} of {r['ok']} | "
            f"{errors} |")
    out += ["", "Per stage (p50, milliseconds; each service's own spans, the calls as the gateway "
            "saw them; mesh overhead: the gateway's time beyond its slowest channel and fusion's "
            "own work; native: one call to Qdrant, end to end). The lexical read — each term's "
            "points with their sparse encodings, up to the cap of 256, answered from the "
            "postings lexical-svc keeps of the collection (`Tracked`), beside the phrase reads "
            "they cannot rule out, which go to the server — was the path that set trine's time "
            "before lexical-svc kept the postings (41–66 ms p50 at 16 in flight on one server); "
            "the last column is its p50 over native's whole call:", "",
            "| topology | corpus | memories | strategy | load | "
            + " | ".join(label for _, label in DEPLOYED_STAGES)
            + " | mesh overhead | native | read / native |",
            "| --- | --- | --- | --- | --- " + "| --- " * len(DEPLOYED_STAGES) + "| --- | --- | --- |"]
    for topology, corpus, size, strategy, c, path in runs:
        r = load(path)
        ne = native_of(path, r).get("end_to_end", {})
        cells = [ms(r["stages"][k]["p50"]) if k in r["stages"] else "–" for k, _ in DEPLOYED_STAGES]
        out.append(f"| {('server', 'cluster')[topology]} | {('scale', 'real text')[corpus]} | "
                   f"{size:,} | {('candidates', 'sparse')[strategy]} | concurrency {c} | "
                   + " | ".join(cells)
                   + f" | {ms(r['mesh_overhead']['p50'])} | {ms(ne['p50']) if ne else '–'} | "
                   + (f"{r['stages']['lexical.read']['p50'] / ne['p50']:.2f} |"
                      if ne and "lexical.read" in r["stages"] else "– |"))
    cpu_rows = []
    for topology, corpus, size, strategy, c, path in runs:
        cpu = cpu_of(path.with_suffix(".cpu.txt"))
        r, n = load(path), native_of(path, load(path))
        if "trine" not in cpu or "native" not in cpu or not n:
            continue
        t = {k: v * 1000 / max(r["ok"], 1) for k, v in cpu["trine"].items()}
        q = {k: v * 1000 / max(n["ok"], 1) for k, v in cpu["native"].items()}
        roles = [t.get(role, 0) for role in ("lexical", "semantic", "fusion", "gateway")]
        total_t, total_q = sum(t.values()), sum(q.values())
        cpu_rows.append(
            f"| {('server', 'cluster')[topology]} | {('scale', 'real text')[corpus]} | {size:,} | "
            f"{('candidates', 'sparse')[strategy]} | concurrency {c} | {t.get('qdrant', 0):.2f} | "
            + " | ".join(f"{x:.2f}" for x in roles)
            + f" | {sum(roles):.2f} | {t.get('load', 0):.2f} | {total_t:.2f} | "
            f"{q.get('qdrant', 0):.2f} | {q.get('load', 0):.2f} | {total_q:.2f} | "
            f"{t.get('qdrant', 0) / max(q.get('qdrant', 0), 1e-9):.2f}× | {total_t / total_q:.2f}× |")
    if cpu_rows:
        out += ["", "CPU per search (milliseconds of user + system time, every process of the "
                "run over the searches it answered; Qdrant: all its nodes; mesh: trine's four "
                "processes; load: `trine bench` itself, which for native also embeds the query). "
                "On 2 shared cores under load, throughput is the inverse of the total:", "",
                "| topology | corpus | memories | strategy | load | trine: Qdrant | lexical | "
                "semantic | fusion | gateway | mesh | load | total | native: Qdrant | load | total "
                "| Qdrant, trine / native | total, trine / native |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
                "--- | --- | --- | --- | --- |", *cpu_rows,
                "",
                "What a trine search costs Qdrant: the dense query, the phrase reads the kept "
                "postings cannot rule out, and the payload of the hits — its term reads are "
                "answered in lexical-svc — against the one call's dense and sparse prefetches over "
                "the whole index (the Qdrant ratio). What trine adds is its own four processes "
                "(the mesh column: each search crosses four gRPC hops). With the mesh on the same "
                "two cores as Qdrant, as here, the total ratio bounds the throughput ratio; with "
                "trine's processes on cores of their own, as a Kubernetes deployment places them, "
                "the Qdrant ratio does."]
    ingests = []
    for path in sorted(work.glob("*-ingest.txt")):
        stored = [line for line in path.read_text(encoding="utf-8").splitlines()
                  if line.startswith("stored ")]
        ingests += [f"{path.name.removesuffix('-ingest.txt')}: {line}" for line in stored]
    if ingests:
        out += ["", "Ingest through trine (`trine ingest --batch 1024`, static embedder):", "",
                "```", *ingests, "```"]
    peaks = []
    for path in sorted(work.glob("*-memory.txt")):
        roles = [line.split() for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
        peaks.append(f"{path.name.removesuffix('-memory.txt')}: "
                     + ", ".join(f"{role} {int(kb) / 1024:.0f} MiB" for role, kb in roles))
    if peaks:
        out += ["", "Peak memory of each process after its runs (VmHWM):", ""]
        out += [f"- {line}" for line in peaks]
    return out + [""]


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--deployed":
        print("\n".join(deployed_section(Path(sys.argv[2]))).rstrip())
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--embedded":
        print("\n".join(embedded_section(Path(sys.argv[2]))).rstrip())
        return
    if len(sys.argv) != 2:
        sys.exit("usage: benchmarks-report.py WORK_DIR | --deployed DEPLOYED_DIR | --embedded EMBEDDED_DIR")
    work = Path(sys.argv[1])
    lines = [
        "# Benchmarks",
        "",
        "Produced by `./scripts/benchmarks.sh` (which ends with",
        "`python3 scripts/benchmarks-report.py bench-work > docs/benchmarks.md`); every",
        "figure below is read from the runs' own reports. Benchmarks are not part of the",
        "test command; the tests run a seconds-long smoke of the same commands.",
        "",
    ]
    lines += machine(work) + [""]
    lines += corpus_section(work)
    lines += counts_section(work)
    lines += never_repeated_section(work)
    lines += eval_section(work)
    lines += bench_section(work)
    lines += loaded_section(work)
    lines += sweep_section(work)
    lines += realtext_section(work)
    lines += scaling_section(work)
    lines += embedded_section(work / "embedded")
    lines += four_section(work)
    lines += deployed_section(work / "deployed")
    # The soak run's section (scripts/soak.sh, an hour: run on its own).
    soak = Path(__file__).resolve().parent.parent / "docs" / "soak.md"
    if soak.exists():
        lines += [""] + soak.read_text().rstrip().splitlines()
    print("\n".join(lines).rstrip() + "\n")


if __name__ == "__main__":
    main()
