#!/usr/bin/env python3
"""Write the dialogue-memory development set: an assistant's dated memories of a person, recalled mid-conversation.

    python3 scripts/make-dialset.py --out devset          # devset/dialog/*.jsonl
    python3 scripts/make-dialset.py --out devset --check

The source is MADial-Bench (He et al., NAACL 2025; github.com/hejunqing/MADial-Bench at
572e3a10d6d01852a65e4508e0b3ab2a00d0710c, data/en; MIT licence), shipped in samples/madial/ with
its licence: 160 dated one-line memories of two people (Bart, Lisa), and 160 conversations between
one of them and an assistant, each with the turn where the assistant brings memories up
(`test-turn`) and the memories it should bring (`relevant-id`, labelled by people). Their digests
are in SOURCE_SHA256, and a file that differs is refused.

Each person is one tenant (`dialog-bart`, `dialog-lisa`) and each memory one memory: its event,
`created_at` its date. Queries, per conversation: `recall`, the person's last message before the
assistant's first memory turn (what an agent would search its memory with), and `context`, all the
person's messages up to that turn; gold = the labelled memories. And `phrase`: five to seven words
one memory of its tenant alone holds verbatim. A conversation's two queries fall in the same half
(`tune` or `held`, by a hash of the conversation); phrases split half and half by a hash of the qid.
Standard library only; one `random.Random(13)`: byte-identical output for the same files.
"""

from __future__ import annotations

import argparse, hashlib, importlib.util, json, os, random, re, sys, uuid
from collections import Counter

_spec = importlib.util.spec_from_file_location(
    "make_devset", os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-devset.py"))
devset = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(devset)  # type: ignore[union-attr]
fold, terms, words, Verbatim = devset.fold, devset.terms, devset.words, devset.Verbatim

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://trine.dev/dialset/v1")
KINDS = ("recall", "context", "phrase")
PHRASES = 12  # per tenant
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "madial")
SOURCE_SHA256 = {
    "MADial-Bench-en-memory.json": "d384b2d35e01ed364165001911af7f8193c808d168b106dea7b23435c7717aa5",
    "MADial-Bench-en-dialogue.json": "ba987172b4a720dd108c9a3b04855b8489ecde96fdf5d484d6522602ec6f4a31",
}
PEOPLE = {1: "bart", 2: "lisa"}
TURN = re.compile(r'^<([^>]+)>:\s*"?(.*?)"?\s*$', re.S)


def read(folder: str, name: str) -> list[dict]:
    path = os.path.join(folder, name)
    data = open(path, "rb").read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SOURCE_SHA256[name]:
        sys.exit(f"{path}: sha256 {digest}, not the {SOURCE_SHA256[name]} this set was made from")
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def build(folder: str) -> tuple[list[dict], list[dict]]:
    rng = random.Random(13)
    events = {}
    for row in read(folder, "MADial-Bench-en-memory.json"):
        for key, m in row.items():
            events[int(key)] = m
    dialogues = read(folder, "MADial-Bench-en-dialogue.json")
    owner: dict[int, str] = {}
    for d in dialogues:
        for r in d["relevant-id"]:
            owner.setdefault(r, PEOPLE[d["user-id"]])
    mems, id_of = [], {}
    for key in sorted(events):
        m = events[key]
        person = owner.get(key) or ("bart" if "Bart" in m["event"] else "lisa")
        id_of[key] = str(uuid.uuid5(NAMESPACE, f"{person}/{key}"))
        mems.append({"id": id_of[key], "text": m["event"].strip(), "source": f"madial/memory/{key}",
                     "tenant": f"dialog-{person}", "project": "madial", "kind": "memory",
                     "created_at": f"{m['time']}T00:00:00Z",
                     "metadata": {"scene": m["scene"], "emotion": m["emotion"]}})
    queries = []
    for n, d in enumerate(dialogues, 1):
        person, first = PEOPLE[d["user-id"]], min(d["test-turn"])
        said = []
        for line in d["dialogue"][:first]:
            turn = TURN.match(line.strip())
            if turn and turn.group(1) != "Assistant":
                said.append(turn.group(2).strip())
        gold = [id_of[r] for r in dict.fromkeys(d["relevant-id"])]
        if not said or not gold:
            continue
        half = "tune" if int(hashlib.sha256(f"d{n}".encode()).hexdigest(), 16) % 2 == 0 else "held"
        for kind, text in (("recall", said[-1]), ("context", " ".join(said))):
            queries.append({"qid": f"d-{kind}-{n:03d}", "query": text, "tenant": f"dialog-{person}",
                            "gold": gold, "kind": kind, "split": half})
    phrases = []
    for tenant in sorted({m["tenant"] for m in mems}):
        mine = [m for m in mems if m["tenant"] == tenant]
        index, used = Verbatim(mine), set()
        for i in rng.sample(range(len(mine)), len(mine)):
            if sum(1 for p in phrases if p["tenant"] == tenant) == PHRASES:
                break
            drawn = devset.random_span(rng, words(mine[i]["text"]))
            if drawn is None:
                continue
            span = " ".join(drawn)
            if len(terms(span)) >= 3 and fold(span) not in used and index.holders(span) == [i]:
                used.add(fold(span))
                phrases.append({"qid": f"d-phrase-{len(phrases) + 1:03d}", "query": span, "tenant": tenant,
                                "gold": [mine[i]["id"]], "kind": "phrase"})
    devset.split_halves(phrases, ("phrase",))
    return mems, queries + phrases


def check(folder: str) -> list[str]:
    try:
        mems, queries = devset.read_set(folder)
    except (OSError, ValueError) as e:
        return [f"cannot read: {e}"]
    errors = devset.duplicate_errors(mems, queries)
    tenant_of = {m["id"]: m["tenant"] for m in mems}
    for q in queries:
        if not q["gold"] or any(tenant_of.get(g) != q["tenant"] for g in q["gold"]):
            errors.append(f"{q['qid']}: gold not among its tenant's memories")
        if q["kind"] == "phrase":
            mine = [m for m in mems if m["tenant"] == q["tenant"]]
            if [mine[i]["id"] for i in Verbatim(mine).holders(q["query"])] != q["gold"]:
                errors.append(f"{q['qid']}: {q['query']!r} is not held by its one gold memory")
    halves = {}
    for q in queries:
        if q["kind"] != "phrase":
            halves.setdefault(q["qid"].rsplit("-", 1)[1], set()).add(q["split"])
    errors += [f"conversation {n}: its queries are in both halves" for n, s in halves.items() if len(s) > 1]
    return errors + devset.split_errors([q for q in queries if q["kind"] == "phrase"], ("phrase",))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="devset", help="output folder (default devset/): OUT/dialog")
    ap.add_argument("--source", default=SOURCE, help="MADial-Bench's data/en files (default samples/madial)")
    ap.add_argument("--flat", action="store_true", help="write OUT/*.jsonl, not OUT/dialog/*.jsonl")
    ap.add_argument("--check", action="store_true", help="only re-read the outputs and check them")
    args = ap.parse_args()
    folder = args.out if args.flat else os.path.join(args.out, "dialog")
    if not args.check:
        mems, queries = build(args.source)
        os.makedirs(folder, exist_ok=True)
        devset.write_jsonl(os.path.join(folder, "memories.jsonl"), mems)
        devset.write_jsonl(os.path.join(folder, "queries.jsonl"), queries)
        per = Counter((q["kind"], q["split"]) for q in queries)
        print(f"dialog: {len(mems)} memories of {len({m['tenant'] for m in mems})} people; "
              + ", ".join(f"{k} {per[k, 'tune'] + per[k, 'held']} (held {per[k, 'held']})" for k in KINDS))
    errors = check(folder)
    for e in errors[:20]:
        print(f"check {folder}: {e}", file=sys.stderr)
    if args.check and not errors:
        print(f"check {folder}: ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
