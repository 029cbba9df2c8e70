#!/usr/bin/env python3
"""Write the non-English development tiers: Debian's own French and German package descriptions.

    apt-get update -o Acquire::Languages=en,fr,de    # the translated descriptions (a later
                                                      # plain `apt-get update` drops them)
    python3 scripts/make-langset.py --out devset      # devset/{fr,de}/*.jsonl
    python3 scripts/make-langset.py --out devset --check
    python3 scripts/make-langset.py --out samples --small   # samples/devset-{fr,de}-small, the tests' slice

Each tier is one tenant of package descriptions in one language, as Debian's translators wrote
them (apt's Translation-fr and Translation-de lists; the packages' English descriptions are not
used). Memories: `PACKAGE: long description`. Queries, as make-devset.py's: `question` — a
package's translated synopsis, which finds its description (one gold memory; synopses that occur
twice or are verbatim in their own description are left out); `phrase` — five to seven words
that one description alone holds verbatim (trine's comparison: lowercased, whitespace folded).
Each kind split half `tune`, half `held` by a hash of the qid. Standard library only, one
`random.Random(11)` per tier: byte-identical output for the same apt lists.
"""

from __future__ import annotations

import argparse, importlib.util, os, random, sys, uuid
from collections import Counter

_spec = importlib.util.spec_from_file_location(
    "make_devset", os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-devset.py"))
devset = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(devset)  # type: ignore[union-attr]
fold, terms, words, Verbatim = devset.fold, devset.terms, devset.words, devset.Verbatim

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://trine.dev/langset/v1")
LANGUAGES = {"fr": "French", "de": "German"}
KINDS = ("question", "phrase")
# memories per tier (a sample of the language's descriptions, so that MiniLM ingests it in
# minutes), questions, phrases
SIZE = dict(memories=8000, q=300, p=100)
SMALL = dict(memories=400, q=40, p=20)  # the slice the test command runs


def build(lang: str, size: dict) -> tuple[list[dict], list[dict]]:
    rng = random.Random(11)
    every = devset.translations(lang)
    if not every:
        sys.exit(f"no {LANGUAGES[lang]} descriptions: run "
                 f"`apt-get update -o Acquire::Languages=en,fr,de` first")
    synopses = Counter(fold(s) for _, s, _ in every)
    # Questions first, then the rest of the sample around them.
    askable = [i for i, (pkg, syn, body) in enumerate(every)
               if len(words(syn)) >= 3 and synopses[fold(syn)] == 1
               and fold(syn) not in fold(f"{pkg}: {body}") and fold(syn) not in fold(f"debian-{lang}/{pkg}")]
    asked = rng.sample(askable, min(size["q"], len(askable)))
    rest = sorted(set(range(len(every))) - set(asked))
    taken = sorted(set(asked) | set(rng.sample(rest, max(0, min(len(rest), size["memories"] - len(asked))))))
    mems = [{"text": f"{every[i][0]}: {every[i][2]}", "source": f"debian-{lang}/{every[i][0]}"} for i in taken]
    pos = {i: n for n, i in enumerate(taken)}
    queries = [("question", every[i][1], [pos[i]]) for i in asked]
    index, used = Verbatim(mems), set()

    def phrase(n: int):
        ws = words(mems[n]["text"])
        for _ in range(10):
            drawn = devset.random_span(rng, ws)
            if drawn is None:
                return None
            span = " ".join(drawn)
            if all(any(c.isalpha() for c in w) for w in drawn) \
                    and len(terms(span)) >= 3 and fold(span) not in used and index.holders(span) == [n]:
                used.add(fold(span))
                return span, [n]
        return None
    phrases = 0
    for n in rng.sample(range(len(mems)), len(mems)):
        if phrases == size["p"]:
            break
        got = phrase(n)
        if got:
            queries.append(("phrase", *got))
            phrases += 1

    ids = [str(uuid.uuid5(NAMESPACE, f"{lang}/{m['source']}")) for m in mems]
    out_mems = [{"id": ids[n], "text": m["text"], "source": m["source"], "tenant": lang,
                 "project": f"debian-{lang}", "kind": "description"} for n, m in enumerate(mems)]
    out_q = [{"qid": f"{lang}-q{n:04d}", "query": q, "tenant": lang, "gold": [ids[g] for g in gold],
              "kind": kind} for n, (kind, q, gold) in enumerate(queries, 1)]
    devset.split_halves(out_q, KINDS)
    return out_mems, out_q


def check(folder: str) -> list[str]:
    try:
        mems, queries = devset.read_set(folder)
    except (OSError, ValueError) as e:
        return [f"cannot read: {e}"]
    errors, index = devset.duplicate_errors(mems, queries), Verbatim(mems)
    pos = {m["id"]: n for n, m in enumerate(mems)}
    if len({m["tenant"] for m in mems} | {q["tenant"] for q in queries}) != 1:
        errors.append("more than one tenant")
    for q in queries:
        if not q["gold"] or any(g not in pos for g in q["gold"]):
            errors.append(f"{q['qid']}: gold missing from the tier")
            continue
        gold = sorted(pos[g] for g in q["gold"])
        if q["kind"] == "question":
            if any(fold(q["query"]) in fold(mems[g]["text"]) for g in gold):
                errors.append(f"{q['qid']}: question {q['query']!r} is verbatim in its gold")
        elif index.holders(q["query"]) != gold or len(gold) != 1:
            errors.append(f"{q['qid']}: {q['query']!r} is not held verbatim by its one gold memory")
    return errors + devset.split_errors(queries, KINDS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="devset", help="output folder (default devset/): OUT/fr, OUT/de")
    ap.add_argument("--tiers", default="fr,de", help="comma-separated languages (fr, de)")
    ap.add_argument("--check", action="store_true", help="only re-read the outputs and check them")
    ap.add_argument("--small", action="store_true",
                    help=f"a slice ({SMALL['memories']} memories) into OUT/devset-LANG-small")
    args = ap.parse_args()
    langs = [t for t in args.tiers.split(",") if t]
    if any(t not in LANGUAGES for t in langs):
        ap.error(f"tiers are {', '.join(LANGUAGES)}")
    failed = False
    for lang in langs:
        folder = os.path.join(args.out, f"devset-{lang}-small" if args.small else lang)
        if not args.check:
            mems, queries = build(lang, SMALL if args.small else SIZE)
            os.makedirs(folder, exist_ok=True)
            devset.write_jsonl(os.path.join(folder, "memories.jsonl"), mems)
            devset.write_jsonl(os.path.join(folder, "queries.jsonl"), queries)
            per = Counter((q["kind"], q["split"]) for q in queries)
            print(f"{lang} ({LANGUAGES[lang]}): {len(mems)} memories; "
                  + ", ".join(f"{k} {per[k, 'tune'] + per[k, 'held']} (tune {per[k, 'tune']}, held "
                              f"{per[k, 'held']})" for k in KINDS))
        errors = check(folder)
        for e in errors[:20]:
            print(f"check {folder}: {e}", file=sys.stderr)
        failed |= bool(errors)
        if args.check and not errors:
            print(f"check {folder}: ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
