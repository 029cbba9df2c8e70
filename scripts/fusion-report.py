#!/usr/bin/env python3
"""Render docs/fusion.md from the outputs of scripts/fusion-eval.sh.

    python3 scripts/fusion-report.py WORK_DIR > docs/fusion.md

Every figure comes from a `trine eval --save` report in WORK_DIR; nothing
here is typed by hand. Standard library only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

RUNS = [
    ("sample", "The bundled sample (`samples/`)", "MiniLM", "all queries"),
    ("small", "Development set, small tier (real text)", "MiniLM", "held-back half"),
    ("medium", "Development set, medium tier (real text)", "MiniLM", "held-back half"),
    ("large", "Development set, large tier (real text)", "static", "held-back half"),
    ("c385", "The scale corpus (`scripts/gen-corpus.py`)", "static", "all queries"),
]
HYBRID = "hybrid/default"
RRF = {
    "fused/candidates/rrf/k=60/w=1:1:2/tier=off": "RRF k=60, verbatim list ×2",
    "fused/candidates/rrf/k=60/w=1:1:0/tier=off": "RRF k=60, two lists",
}
SINGLE = {"semantic": "semantic only", "lexical/candidates": "lexical only"}
# A better channel without a row of its own: the same list as lexical/candidates.
ALSO = {"lexical/default": "lexical only"}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def f3(x: float) -> str:
    return f"{x:.3f}"


def interval(d: dict) -> str:
    return f"{d['mean']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"


def rank_of(config: dict, qid: str) -> str:
    for q in config["queries"]:
        if q["qid"] == qid:
            ranks = [r for r in q["ranks"] if r is not None]
            return str(min(ranks)) if ranks else "> depth"
    return "?"


def section(name: str, title: str, embedder: str, half: str, report: dict,
            size: str) -> list[str]:
    configs = {c["name"]: c for c in report["configurations"]}
    k = report["k"]
    kinds = [kd for kd in next(iter(configs.values()))["by_kind"] if kd != "all"]
    out = [f"## {title}, {size} memories", "",
           f"Embedder {embedder}; {half}, {report['queries']} queries; k = {k}, "
           f"ranks read to {report['depth']}. The default names no strategy (the `candidates` "
           "lists; a question also reads the sparse list, docs/search.md \"Questions\"); the "
           "baselines are fused from the same `candidates` lists.", "",
           "| kind | n | configuration | s@1 | s@8 | MRR |".replace("s@8", f"s@{k}"),
           "| --- | --- | --- | --- | --- | --- |"]
    names = [(HYBRID, "**default**")] + list(RRF.items()) + list(SINGLE.items())
    for kind in kinds:
        for cname, label in names:
            c = configs.get(cname)
            if c is None or kind not in c["by_kind"]:
                continue
            b = c["by_kind"][kind]
            out.append(f"| {kind} | {b['queries']} | {label} | {f3(b['success_at_1'])} | "
                       f"{f3(b['success_at_k'])} | {f3(b['mrr'])} |")
    out += ["", "Default minus the better single channel (paired bootstrap, 1,000 "
            "resamples, 95 % interval):", "",
            f"| kind | better channel | ΔMRR | Δs@{k} |", "| --- | --- | --- | --- |"]
    for row in report["against_better"]:
        if row["configuration"] != HYBRID or row["kind"] == "all":
            continue
        better = SINGLE.get(row["better"]) or ALSO.get(row["better"], row["better"])
        out.append(f"| {row['kind']} | {better} | "
                   f"{interval(row['mrr'])} | {interval(row['success_at_k'])} |")
    if name == "c385":
        hybrid = configs[HYBRID]
        out += ["", f"Under the default the planted title (q01) ranks "
                f"{rank_of(hybrid, 'q01')} and the ADR's long variant (q02, `meeting "
                f"transcript notes 11 November 2026 ședință`) ranks {rank_of(hybrid, 'q02')}; "
                f"under RRF k=60 with the verbatim list ×2 they rank "
                f"{rank_of(configs[next(iter(RRF))], 'q01')} and "
                f"{rank_of(configs[next(iter(RRF))], 'q02')}."]
    return out + [""]


def main() -> None:
    work = Path(sys.argv[1])
    commit = (work / "commit.txt").read_text(encoding="utf-8").strip() \
        if (work / "commit.txt").exists() else "?"
    runs = max((p.stat().st_mtime for p in work.glob("*.json")), default=0)
    lines = ["# Fusion", "",
             "Produced by `./scripts/fusion-eval.sh` (which ends with "
             "`python3 scripts/fusion-report.py fusion-work > docs/fusion.md`); every "
             "figure is read from a `trine eval --save` report.", "",
             f"- Runs: {datetime.fromtimestamp(runs, timezone.utc):%Y-%m-%d %H:%M} UTC, "
             f"trine at commit `{commit}`",
             "- The default is the configured `[fusion]` of each run's embedder "
             "(docs/search.md, \"Fusion\"); kinds: `question` (ordinary questions whose "
             "answer does not hold them verbatim), `semantic` (the sample's and the scale "
             "corpus's paraphrased questions), `title`, `identifier`, `phrase`, `variant`.", ""]
    for name, title, embedder, half in RUNS:
        path = work / f"{name}.json"
        size = work / f"{name}.size"
        size = f"{int(size.read_text()):,}" if size.exists() else "?"
        if path.exists():
            lines += section(name, title, embedder, half, load(path), size)
        else:
            lines += [f"## {title}", "", f"Not run (`{path.name}` missing).", ""]
    print("\n".join(lines).rstrip() + "\n")


if __name__ == "__main__":
    main()
