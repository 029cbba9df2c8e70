#!/usr/bin/env python3
"""Study fusions offline over the channel lists `trine eval --lists` wrote.

    trine eval --queries Q --modes hybrid,semantic,lexical --strategies candidates,bm25,sparse \\
        --native bm25,sparse --k 8 --lists L.jsonl --save R.json
    python3 scripts/fusion-study.py check --lists L.jsonl --report R.json --embedder minilm
    python3 scripts/fusion-study.py grid --embedder static --split tune \\
        --set chat=L1.jsonl:R1.json:Q1.jsonl --set fr=L2.jsonl:R2.json:Q2.jsonl
    python3 scripts/fusion-study.py ablate --embedder minilm --split held --set chat=L1.jsonl:R1.json:Q1.jsonl

`fuse` mirrors services/core/src/fusion.rs (score, rrf; the verbatim tier; the per-embedder
defaults of `Settings::for_embedder`), so that a grid of fusions can be tried on every
development set in seconds instead of one `trine eval --fusion` run each. `check` proves the
mirror: the default fusion of the lists must rank every query's gold exactly as the report's
`hybrid/candidates` run did (the test command runs it). `grid` scores each fusion on each set and
kind of one half: MRR and success@8 against the better single channel (every kind) and against
the better of Qdrant's one-call hybrids (question kinds), and prints the fusions by their worst
margin. `ablate` switches each rule of the embedder's default fusion off alone (the question
rule, the semantic trust, the lexical power, the adaptive weights) and prints what each buys, set
by set and kind by kind, as a Markdown table. What it finds is confirmed with `trine eval` itself
before it becomes a default.
"""

from __future__ import annotations

import argparse, json, math, re, sys
from collections import defaultdict

STOP_WORDS = set("a an and are as at be but by for if in into is it no not of on or such that the "
                 "their then there these they this to was will with".split())
QUESTION_KINDS = {"question", "semantic", "multi-hop", "temporal", "commonsense", "recall", "context"}
K = 8
DEFAULTS = {  # Settings::for_embedder
    "minilm": dict(method="score", norm="absolute", wl=1.0, ws=2.0, floor=0.2, power=2.0, adaptive=0.0,
                   confidence=1.5, question_confidence=0.3, late=2.0),
    "static": dict(method="score", norm="z_score", wl=1.0, ws=2.0, floor=0.2, power=1.0, adaptive=1.0,
                   confidence=0.0, question_confidence=0.0, late=0.5),
}
LATE_DEPTH = 40  # trine_core::late::DEPTH
DEFAULTS["hash"] = DEFAULTS["minilm"]


def terms(query: str) -> list[str]:
    out: list[str] = []
    for piece in "".join(c if c.isalnum() else " " for c in query.lower()).split():
        if piece not in STOP_WORDS and piece not in out:
            out.append(piece)
    return out


def shaped(query: str) -> bool:
    for token in query.split():
        letters, digits = any(c.isalpha() for c in token), any(c.isnumeric() for c in token)
        runs = [r for r in "".join(c if c.isalnum() else " " for c in token).split()]
        if (letters and digits) or len(runs) >= 2:
            return True
    return False


def normalise(scores: list[float], how: str, floor: float, ceiling: float) -> tuple[list[float], float]:
    if not scores:
        return [], 0.0
    top, low = max(scores), min(scores)
    if how in ("absolute", "fixed_floor"):
        t = ceiling if how == "absolute" and ceiling > floor else top
        return [max(0.0, (s - floor) / (t - floor)) if t > floor else 0.0 for s in scores], 0.0
    if how == "min_max":
        return [(s - low) / (top - low) if top > low else 1.0 for s in scores], 0.0
    mean = sum(scores) / len(scores)
    std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    if std <= 0:  # every score the list's best: one unit above the points not in it
        return [1.0] * len(scores), 0.0
    values = [(s - mean) / std for s in scores]
    return values, min(values)


def confidence(scores: list[float], floor: float) -> float:
    if len(scores) < 2 or scores[0] <= floor:
        return 0.0
    return min(1.0, max(0.0, (scores[0] - scores[min(len(scores), 10) - 1]) / (scores[0] - floor)))


def lexical_confidence(scores: list[float]) -> float:
    """fusion::lexical_confidence: one hit above BM25's floor stands out entirely."""
    return 1.0 if len(scores) == 1 and scores[0] > 0 else confidence(scores, 0.0)


def dedup(entries):
    seen, out = set(), []
    for e in entries:
        if e[0] not in seen:
            seen.add(e[0])
            out.append(e)
    return out


def for_questions(cfg: dict) -> dict:
    """Settings::for_questions: Qdrant's one call (RRF, 1:1) at the fusion's k."""
    return dict(method="rrf", k=cfg.get("k", 60), wl=1.0, ws=1.0)


def as_question(row: dict, cfg: dict) -> bool:
    """fusion::as_question: a question (its question strategy's list read, in the
    lists file's `question_lexical`) whose dense list is flat, under a fusion that
    fuses questions."""
    theta = cfg.get("question_confidence", 0.0)
    return (row.get("question_lexical") is not None and theta > 0
            and confidence([s for _, s in row["semantic"]], cfg.get("floor", 0.2)) < theta)


QUESTION_KEEP, QUESTION_SPREAD = 5, 8  # fusion::fuse_spread


def fuse(row: dict, cfg: dict) -> list[str]:
    """The ids in the gateway's order: fused (`fused`), then the first LATE_DEPTH outside
    the tier judged again by late interaction where the lists name their MaxSim scores
    (`late`, as `trine eval --lists` records the gateway's) and the query is judged
    (trine_core::late::rerank)."""
    ids, tier = fused(row, cfg)
    scores = dict(row.get("late") or [])
    if not scores or cfg.get("late", 0.0) <= 0 or not judged(row["query"]):
        return ids
    head = ids[:LATE_DEPTH]
    start = next((n for n, i in enumerate(head) if i not in tier), len(head))
    part = head[start:]
    by_late = sorted((n for n, i in enumerate(part) if i in scores), key=lambda n: -scores[part[n]])
    vote = [1.0 / (60 + n + 1) for n in range(len(part))]
    for place, n in enumerate(by_late):
        vote[n] += cfg["late"] / (60 + place + 1)
    order = sorted(range(len(part)), key=lambda n: (-vote[n], n))
    return head[:start] + [part[n] for n in order] + ids[LATE_DEPTH:]


def judged(query: str) -> bool:
    """trine_core::late::judged: not shaped like a title or identifier as its words see it
    (common::titled: an apostrophe or hyphen between letters joins a sentence's words)."""
    if not query.strip():
        return False
    for token in query.split():
        if any(c.isalpha() for c in token) and any(c.isnumeric() for c in token):
            return False
        start, end = 0, len(token)
        while start < end and not token[start].isalnum():
            start += 1
        while end > start and not token[end - 1].isalnum():
            end -= 1
        chars = token[start:end]
        for n, c in enumerate(chars):
            joins = c in "'\u2019-" and n > 0 and chars[n - 1].isalpha() and n + 1 < len(chars) and chars[n + 1].isalpha()
            if not c.isalnum() and not joins:
                return False
    return True


def fused(row: dict, cfg: dict) -> tuple[list[str], set[str]]:
    """The ids in fused order (tier first), as fusion.rs ranks them, and the tier:
    a question (its question strategy's list in `question_lexical`) whose dense
    list is flat fused from that list as Qdrant's one call fuses; one whose dense
    list stands out fused as any search, its first five kept, then filled to
    eight with the one call's best not yet in (fusion::fuse_spread)."""
    if as_question(row, cfg):
        row, cfg = dict(row, lexical=row["question_lexical"], reference=0.0), for_questions(cfg)
        return fuse_plain(row, cfg)
    own, tier = fuse_plain(row, cfg)
    if row.get("question_lexical") is None or cfg.get("question_confidence", 0.0) <= 0:
        return own, tier
    theirs = fuse_plain(dict(row, lexical=row["question_lexical"], reference=0.0), for_questions(cfg))[0]
    keep = max(QUESTION_KEEP, sum(1 for i in own[:len(tier)] if i in tier))
    out = own[:keep]
    placed = set(out)
    for i in theirs:
        if len(out) >= QUESTION_SPREAD:
            break
        if i not in placed:
            out.append(i)
            placed.add(i)
    return out + [i for i in own if i not in placed], tier


def fuse_plain(row: dict, cfg: dict) -> tuple[list[str], set[str]]:
    """The ids in fused order (tier first) as fusion::fuse ranks them, and the tier."""
    lexical, semantic = dedup(row["lexical"]), dedup(row["semantic"])
    wl, ws = cfg["wl"], cfg["ws"]
    semantic_confidence = confidence([s for _, s in semantic], cfg.get("floor", 0.2))
    if cfg.get("adaptive", 0) > 0:
        wl *= (0.05 + lexical_confidence([s for _, s, _ in lexical])) ** cfg["adaptive"]
        ws *= (0.05 + semantic_confidence) ** cfg["adaptive"]
    if cfg.get("confidence", 0) > 0 and cfg["method"] == "score":  # semantic trust, pivot 0.5
        ws *= (semantic_confidence / 0.5) ** cfg["confidence"]
    score: dict[str, float] = defaultdict(float)
    if cfg["method"] == "rrf":
        for n, e in enumerate(lexical):
            score[e[0]] += wl / (cfg["k"] + n + 1)
        for n, e in enumerate(semantic):
            score[e[0]] += ws / (cfg["k"] + n + 1)
    else:
        lv, la = normalise([s for _, s, _ in lexical], cfg["norm"], 0.0, row["reference"])
        p = cfg.get("power", 1.0)
        if p != 1.0:
            lv, la = [math.copysign(abs(v) ** p, v) for v in lv], math.copysign(abs(la) ** p, la)
        sv, sa = normalise([s for _, s in semantic], cfg["norm"], cfg["floor"], 1.0)
        total = (wl if lexical else 0.0) + (ws if semantic else 0.0) or 1.0
        for (i, _, _), v in zip(lexical, lv):
            score[i] += wl * v / total
        for (i, _), v in zip(semantic, sv):
            score[i] += ws * v / total
        in_l, in_s = {e[0] for e in lexical}, {e[0] for e in semantic}
        for i in list(score):
            if la and lexical and i not in in_l:
                score[i] += wl * la / total
            if sa and semantic and i not in in_s:
                score[i] += ws * sa / total
    # The lists name the query's term count under the collection's fold
    # (older lists files: counted here under case folding).
    n_terms = row["terms"] if "terms" in row else len(terms(row["query"]))
    verbatim, query = [e[0] for e in lexical if e[2]], row["query"]
    tier = bool(verbatim) and n_terms > 0 and (
        (shaped(query) and len(verbatim) <= 3) if n_terms == 1 else (shaped(query) or len(verbatim) <= 3))
    first = set(verbatim) if tier else set()
    return sorted(score, key=lambda i: (i not in first, -score[i], i)), first


def rank(ids: list[str], gold: list[str]) -> int | None:
    g = set(gold)
    return next((n for n, i in enumerate(ids[:100], 1) if i in g), None)


def measure(ranks: list[int | None], k: int = K) -> tuple[float, float]:
    """MRR and success@k of each query's first gold rank (None: not found)."""
    n = len(ranks) or 1
    return sum(1 / r for r in ranks if r) / n, sum(1 for r in ranks if r and r <= k) / n


def first_rank(ranks: list) -> int | None:
    """A report's gold ranks of one query → the first (None: none found)."""
    return min((r for r in ranks if r), default=None)


def read_lists(path: str, strategy: str = "candidates") -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [r for r in map(json.loads, f) if r["strategy"] == strategy]


def report_ranks(path: str) -> dict[str, dict[str, int | None]]:
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    return {c["name"]: {q["qid"]: first_rank(q["ranks"]) for q in c["queries"]}
            for c in report["configurations"]}


def check(args) -> int:
    """Each strategy's lists (`default`: none named, questions included; else
    `candidates`) fused by the mirror rank every gold as the report's hybrid run."""
    reports = report_ranks(args.report)
    failed = False
    for strategy in ("default", "candidates"):
        rows, ranks = read_lists(args.lists, strategy), reports.get(f"hybrid/{strategy}")
        if not rows or ranks is None:
            continue
        mirrored = ((r["qid"], rank(fuse(r, DEFAULTS[args.embedder]), r["gold"])) for r in rows)
        wrong = [(qid, mine, ranks[qid]) for qid, mine in mirrored if mine != ranks[qid]]
        for qid, mine, theirs in wrong[:10]:
            print(f"{qid}: the mirror ranks its gold {mine}, trine {theirs} ({strategy})", file=sys.stderr)
        questions = sum(1 for r in rows if as_question(r, DEFAULTS[args.embedder]))
        print(f"check: {len(rows) - len(wrong)} of {len(rows)} queries ranked as trine's default fusion "
              f"(strategy {strategy}, {questions} fused as questions)")
        failed = failed or bool(wrong) or not rows
    if not any(read_lists(args.lists, s) for s in ("default", "candidates")):
        print("check: no default or candidates lists", file=sys.stderr)
        return 1
    return 1 if failed else 0


def grid_configs():
    for k in (10, 20, 40, 60):
        for ws in (0.5, 1, 1.5, 2):
            yield dict(method="rrf", k=k, wl=1.0, ws=ws)
    for norm in ("z_score", "min_max", "absolute"):
        for ws in (0.5, 1, 1.5, 2, 4):
            for power in (1, 1.5, 2):
                for adaptive in (0, 0.5, 1, 2):
                    for trust in (0, 1, 1.5, 2):
                        yield dict(method="score", norm=norm, wl=1.0, ws=ws, power=power, adaptive=adaptive,
                                   floor=0.2, confidence=trust)


def load_sets(specs: list[str], split_name: str | None) -> list:
    """Each NAME=LISTS:REPORT:QUERIES set's rows of one half by kind, its references, and its
    report's ranks by configuration."""
    sets = []
    for spec in specs:
        name, paths = spec.split("=", 1)
        lists, report, queries = paths.split(":")
        with open(queries, encoding="utf-8") as f:
            split = {q["qid"]: q.get("split") for q in map(json.loads, f)}
        # A set without halves (the bundled sample) is used whole.
        # The default's lists (a question's sparse list beside) where the run
        # wrote them, else the candidates'.
        rows = [r for r in (read_lists(lists, "default") or read_lists(lists))
                if not split_name or split.get(r["qid"]) in (split_name, None)]
        base = report_ranks(report)
        kinds = defaultdict(list)
        for r in rows:
            kinds[r["kind"]].append(r)
        refs = {}
        for kind, rs in kinds.items():
            # The better single channel and native by MRR, each with its s@8.
            single = max(measure([rank([e[0] for e in r[ch]], r["gold"]) for r in rs])
                         for ch in ("lexical", "semantic"))
            native = max(measure([base[n].get(r["qid"]) for r in rs])
                         for n in ("qdrant-native/bm25", "qdrant-native/sparse") if n in base)
            refs[kind] = (single, native, measure([base.get("hybrid/default", base["hybrid/candidates"]).get(r["qid"]) for r in rs])[0])
        sets.append((name, kinds, refs, base))

    return sets


def grid(args) -> int:
    sets = load_sets(args.set, args.split)

    def score(cfg):
        rows = []
        for name, kinds, refs, _ in sets:
            for kind, rs in sorted(kinds.items()):
                mrr, s8 = measure([rank(fuse(r, cfg), r["gold"]) for r in rs])
                (single, single8), (native, native8), default = refs[kind]
                margin = mrr - single
                if args.objective == "mrr+s8":
                    margin = min(margin, s8 - single8)
                if kind in QUESTION_KINDS:
                    margin = min(margin, mrr - native)
                    if args.objective == "mrr+s8":
                        margin = min(margin, s8 - native8)
                rows.append((name, kind, len(rs), mrr, s8, single, native, default, margin))
        return min(r[-1] for r in rows), rows

    scored = sorted(((*score(cfg), cfg) for cfg in [DEFAULTS[args.embedder], *grid_configs()]),
                    key=lambda x: -x[0])
    taken = "MRR and s@8" if args.objective == "mrr+s8" else "MRR"
    print(f"worst margin ({taken} against the better single channel; on question kinds the better "
          f"native too), {args.split or 'all'} queries:")
    for worst, _, cfg in scored[: args.top]:
        print(f"  {worst:+.3f}  {json.dumps(cfg)}")
    for title, (worst, rows, cfg) in (("best", scored[0]),
                                      ("default", next(s for s in scored if s[2] is DEFAULTS[args.embedder]))):
        print(f"\n{title}: {json.dumps(cfg)} (worst {worst:+.3f})")
        print(f"  {'set':8} {'kind':12} {'n':>4}  {'MRR':>6} {'s@8':>6}  {'single':>6} {'native':>6} "
              f"{'default':>7}  margin")
        for name, kind, n, mrr, s8, single, native, default, margin in rows:
            print(f"  {name:8} {kind:12} {n:4}  {mrr:6.3f} {s8:6.3f}  {single:6.3f} {native:6.3f} "
                  f"{default:7.3f}  {margin:+.3f}")
    return 0


# The rules of the default fusion that an embedder's defaults turn on, each
# switched off alone by `ablate`.
RULES = (("no question rule", "question_confidence", 0.0), ("no semantic trust", "confidence", 0.0),
         ("lexical power 1", "power", 1.0), ("no adaptive weights", "adaptive", 0.0))


def ablate(args) -> int:
    """What each rule of the default fusion buys: every set and kind of one half
    fused by the default, then by the default with one rule switched off, beside
    Qdrant's better one call (MRR / s@8; a variant's change against the default)."""
    sets = load_sets(args.set, args.split)
    default = DEFAULTS[args.embedder]
    variants = [(name, dict(default, **{key: off})) for name, key, off in RULES
                if default.get(key, 0.0) != off]
    print(f"{args.embedder}, {args.split or 'all'} queries: MRR / s@8 of the default, and each rule "
          f"switched off alone (its change against the default)")
    print("| set | kind | n | Qdrant's better call | default | " + " | ".join(n for n, _ in variants) + " |")
    print("| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in variants) + " |")
    for name, kinds, _, base in sets:
        for kind, rs in sorted(kinds.items()):
            native = max((measure([base[n].get(r["qid"]) for r in rs])
                          for n in ("qdrant-native/bm25", "qdrant-native/sparse") if n in base), default=(0.0, 0.0))
            mrr, s8 = measure([rank(fuse(r, default), r["gold"]) for r in rs])
            cells = []
            for _, cfg in variants:
                m, s = measure([rank(fuse(r, cfg), r["gold"]) for r in rs])
                cells.append(f"{m - mrr:+.3f} / {s - s8:+.3f}")
            print(f"| {name} | {kind} | {len(rs)} | {native[0]:.3f} / {native[1]:.3f} | {mrr:.3f} / {s8:.3f} | "
                  + " | ".join(cells) + " |")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="the mirror ranks as trine's default fusion did")
    c.add_argument("--lists", required=True)
    c.add_argument("--report", required=True, help="trine eval --save of the same run")
    c.add_argument("--embedder", choices=sorted(DEFAULTS), required=True)
    g = sub.add_parser("grid", help="fusions by their worst margin over sets and kinds")
    g.add_argument("--set", action="append", required=True, help="NAME=LISTS:REPORT:QUERIES")
    g.add_argument("--embedder", choices=sorted(DEFAULTS), required=True)
    g.add_argument("--split", choices=("tune", "held"))
    g.add_argument("--top", type=int, default=10)
    g.add_argument("--objective", choices=("mrr", "mrr+s8"), default="mrr",
                   help="the margins taken: MRR only, or MRR and success@8")
    a = sub.add_parser("ablate", help="what each rule of the default fusion buys, per set and kind")
    a.add_argument("--set", action="append", required=True, help="NAME=LISTS:REPORT:QUERIES")
    a.add_argument("--embedder", choices=sorted(DEFAULTS), required=True)
    a.add_argument("--split", choices=("tune", "held"))
    args = ap.parse_args()
    return {"check": check, "grid": grid, "ablate": ablate}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
