#!/usr/bin/env python3
"""Write the conversational development set: long real chats between two people, a memory a message.

    git clone https://github.com/danny911kr/REALTALK      # anywhere that reaches GitHub
    python3 scripts/make-convset.py --realtalk REALTALK/data --out devset   # devset/chat/*.jsonl
    python3 scripts/make-convset.py --out devset --check

The source is REALTALK (Lee et al., 2025, arXiv 2502.13270): ten 21-day conversations between
pairs of people on a messaging app, 8,944 messages, each with its own timestamp, and 728 questions
about them annotated with the messages that answer them (`evidence`). Only the top-level
`data/Chat_*.json` files are read (the folder's `locomo/` copy of another benchmark is not); their
digests are in CHAT_SHA256, and a file that differs is refused. The repository states no licence,
so the set is not shipped: this script makes it from a copy the user fetched.

Each conversation is one tenant (`chat-1` ... `chat-10`) and each message one memory: `Speaker:
text`, with a shared photo's caption as `[photo: caption]`, `created_at` its timestamp (UTC),
`source` `chat-N/Dd:n`, `thread` its session (`chat-N/session-d`, one a day) and `seq` its place
in the session (0, 1, ...). `OUT/chat-nothreads` is the same set without `thread` and `seq`. Queries: the annotated questions, kind `multi-hop`, `temporal` or
`commonsense` (REALTALK's categories 1, 2, 3), gold = the evidence messages that exist in the file
(evidence strings such as `D5:12;D5:16` or `D12:3-D12:5` are split; a question none of whose
evidence exists is left out); and `phrase`: five to seven words that one message of its
conversation alone holds verbatim. Each kind split half `tune`, half `held` by a hash of the qid.
Standard library only; one `random.Random(11)`: byte-identical output for the same files.
"""

from __future__ import annotations

import argparse, hashlib, importlib.util, json, os, random, re, sys, uuid
from collections import Counter
from datetime import datetime, timezone

_spec = importlib.util.spec_from_file_location(
    "make_devset", os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-devset.py"))
devset = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(devset)  # type: ignore[union-attr]
fold, terms, words, Verbatim = devset.fold, devset.terms, devset.words, devset.Verbatim

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://trine.dev/convset/v1")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
KINDS = (*CATEGORIES.values(), "phrase")
PHRASES = 10  # per conversation
# github.com/danny911kr/REALTALK at b903e06a9770bf4e5fe9018c3e132889666d3b4a, data/
CHAT_SHA256 = {
    "Chat_1_Emi_Elise.json": "4e947998a751a1ba2c3710fc873b90fbcbc234fda7a5e4e75db2b762e0f25a36",
    "Chat_2_Kevin_Elise.json": "4ac6e319c206731aa9a025c93325eb1edb43686cf39473f058c87ae7deb2d62a",
    "Chat_3_Kevin_Paola.json": "10c9208016538cbe7a28aafa6cfd72587b072677964c36ec242159fdf58961f2",
    "Chat_4_Emi_Paola.json": "80aa012ed6a918f5b317bd942b4d4811a158d27a6e07b7a5c6182994107a9367",
    "Chat_5_Nicolas_Nebraas.json": "32dd7c45786b1a26861dc1574a1bb698a855196fd2ae3fc0c091f3c9ab2d6d06",
    "Chat_6_Vanessa_Nicolas.json": "9d5ee072ab5a0667ef71d5644d7cd3a4c6777a1e6e2252bf306f310d982e40ac",
    "Chat_7_Nebraas_Vanessa.json": "b5716bb093217980e747dec0d98996829b569febc09587a025efc6b79806e9ce",
    "Chat_8_Akib_Muhhamed.json": "814f64ad7e8a46f0398f550fe84184e2ba495a292290b9ff96ffc95448280800",
    "Chat_9_Fahim_Akib.json": "05b9b4331bf0e25a2a64dc89c404622c83a61ab5e7c935fb7d844449caf6dd39",
    "Chat_10_Fahim_Muhhamed.json": "26135a9e3482f40bea4c71de570a2d994a361848111067e60587be1dd82a0127",
}
DIA = re.compile(r"D(\d+):(\d+)")


def evidence_ids(items: list[str]) -> list[str]:
    """`D5:12;D5:16`, `D12:3-D12:5`, `D3:4.` → the single ids, in order."""
    out: list[str] = []
    for item in items:
        for part in re.split(r"[;,\s]+", str(item)):
            part = part.strip().rstrip(".")
            span = re.fullmatch(r"D(\d+):(\d+)\s*-\s*(?:D(\d+):)?(\d+)", part)
            if span and (span.group(3) in (None, span.group(1))):
                day, first, last = span.group(1), int(span.group(2)), int(span.group(4))
                out += [f"D{day}:{n}" for n in range(first, last + 1)] if last >= first else []
            elif DIA.fullmatch(part):
                out.append(part)
    return list(dict.fromkeys(out))


def when(stamp: str) -> str:
    return datetime.strptime(stamp.strip(), "%d.%m.%Y, %H:%M:%S").replace(
        tzinfo=timezone.utc).isoformat().replace("+00:00", "Z")


def conversation(path: str, n: int, rng: random.Random) -> tuple[list[dict], list[tuple], Counter]:
    data = json.load(open(path, encoding="utf-8"))
    tenant, stats = f"chat-{n}", Counter()
    sessions = sorted((int(k.split("_")[1]), v) for k, v in data.items()
                      if re.fullmatch(r"session_\d+", k) and isinstance(v, list))
    mems, by_dia = [], {}
    for session, turns in sessions:
        seq = 0
        for t in turns:
            text = (t.get("clean_text") or "").strip()
            caption = (t.get("blip_caption") or "").strip()
            if caption:
                text = f"{text} [photo: {caption}]".strip()
            if not text or t["dia_id"] in by_dia:
                continue
            by_dia[t["dia_id"]] = len(mems)
            mems.append({"id": str(uuid.uuid5(NAMESPACE, f"{tenant}/{t['dia_id']}")),
                         "text": f"{t['speaker'].strip().capitalize()}: {text}",
                         "source": f"{tenant}/{t['dia_id']}", "tenant": tenant, "project": "realtalk",
                         "kind": "message", "created_at": when(t["date_time"]),
                         "thread": f"{tenant}/session-{session}", "seq": seq})
            seq += 1
    queries = []
    for qa in data.get("qa", []):
        found = [by_dia[d] for d in evidence_ids(qa.get("evidence", [])) if d in by_dia]
        kind = CATEGORIES.get(qa.get("category"))
        stats["questions"] += 1
        if not found or not kind or not str(qa.get("question", "")).strip():
            stats["left out"] += 1
            continue
        queries.append((kind, qa["question"].strip(), found))
    index, used = Verbatim(mems), set()
    phrases = 0
    for i in rng.sample(range(len(mems)), len(mems)):
        if phrases == PHRASES:
            break
        drawn = devset.random_span(rng, words(mems[i]["text"].split(": ", 1)[1]))
        if drawn is None:
            continue
        span = " ".join(drawn)
        if len(terms(span)) >= 3 and fold(span) not in used and index.holders(span) == [i]:
            used.add(fold(span))
            queries.append(("phrase", span, [i]))
            phrases += 1
    return mems, [(tenant, *q) for q in queries], stats


def build(folder: str) -> tuple[list[dict], list[dict]]:
    rng = random.Random(11)
    mems, queries = [], []
    for n, name in enumerate(CHAT_SHA256, 1):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            sys.exit(f"{path} is missing: --realtalk names REALTALK's data/ folder")
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if CHAT_SHA256[name] and digest != CHAT_SHA256[name]:
            sys.exit(f"{path}: sha256 {digest}, not the {CHAT_SHA256[name]} this set was made from")
        got, qs, stats = conversation(path, n, rng)
        mems += got
        queries += qs
        print(f"{name}: {len(got)} messages, {stats['questions']} questions "
              f"({stats['left out']} with no evidence in the file left out)")
    ids = {i: m["id"] for i, m in enumerate(mems)}
    offset, out_q = {}, []
    for n, m in enumerate(mems):
        offset.setdefault(m["tenant"], n)
    for n, (tenant, kind, q, gold) in enumerate(queries, 1):
        out_q.append({"qid": f"c-q{n:04d}", "query": q, "tenant": tenant,
                      "gold": [ids[offset[tenant] + g] for g in gold], "kind": kind})
    devset.split_halves(out_q, KINDS)
    return mems, out_q


def check(folder: str) -> list[str]:
    try:
        mems, queries = devset.read_set(folder)
    except (OSError, ValueError) as e:
        return [f"cannot read: {e}"]
    errors = devset.duplicate_errors(mems, queries)
    tenant_of = {m["id"]: m["tenant"] for m in mems}
    for q in queries:
        if not q["gold"] or any(tenant_of.get(g) != q["tenant"] for g in q["gold"]):
            errors.append(f"{q['qid']}: gold missing from its conversation")
        if q["kind"] == "phrase":
            held = Verbatim([m for m in mems if m["tenant"] == q["tenant"]])
            mine = [m["id"] for m in mems if m["tenant"] == q["tenant"]]
            if [mine[i] for i in held.holders(q["query"])] != q["gold"]:
                errors.append(f"{q['qid']}: {q['query']!r} is not held by its one gold message")
    return errors + devset.split_errors(queries, KINDS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="devset", help="output folder (default devset/): OUT/chat")
    ap.add_argument("--realtalk", help="REALTALK's data/ folder (its Chat_*.json files)")
    ap.add_argument("--check", action="store_true", help="only re-read the outputs and check them")
    args = ap.parse_args()
    folder = os.path.join(args.out, "chat")
    if not args.check:
        if not args.realtalk:
            ap.error("--realtalk DIR is needed to make the set (see the script's help)")
        mems, queries = build(args.realtalk)
        os.makedirs(folder, exist_ok=True)
        devset.write_jsonl(os.path.join(folder, "memories.jsonl"), mems)
        devset.write_jsonl(os.path.join(folder, "queries.jsonl"), queries)
        # The same set without threads: what a thread-less ingest sees.
        flat = os.path.join(args.out, "chat-nothreads")
        os.makedirs(flat, exist_ok=True)
        devset.write_jsonl(os.path.join(flat, "memories.jsonl"),
                           [{k: v for k, v in m.items() if k not in ("thread", "seq")} for m in mems])
        devset.write_jsonl(os.path.join(flat, "queries.jsonl"), queries)
        per = Counter((q["kind"], q["split"]) for q in queries)
        print(f"chat: {len(mems)} messages in {len({m['tenant'] for m in mems})} conversations; "
              + ", ".join(f"{k} {per[k, 'tune'] + per[k, 'held']} (held {per[k, 'held']})" for k in KINDS))
    errors = check(folder)
    for e in errors[:20]:
        print(f"check {folder}: {e}", file=sys.stderr)
    if args.check and not errors:
        print(f"check {folder}: ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
