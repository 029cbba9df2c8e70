#!/usr/bin/env python3
"""Write a scale corpus for `trine bench` and `trine eval`: ADR 0172's situation
at its size.

    python3 scripts/gen-corpus.py --out DIR                # 385,000 memories
    python3 scripts/gen-corpus.py --out DIR --n 400000     # any size >= 2,000

Writes DIR/memories.jsonl (for `trine ingest`), DIR/queries.jsonl (queries
with their gold ids, for `trine eval`) and DIR/bench-queries.jsonl (1,000
varied searches without gold, for `trine bench`: meeting titles, most of them
not in the corpus, component-and-symptom phrases and questions), then prints the measured rate of each term
of the planted title. Standard library only, deterministic (one seeded
`random.Random`): the same arguments give byte-identical files.

What the corpus holds, all in one tenant (`--tenant`, default `bench`):
- mixed agent-memory text (chat, notes, commits, incidents, log lines,
  tickets, meeting notes) in which each term of the planted title is common
  at the ADR's rates: meeting 0.3 %, 2026 8.9 %, 11 9.1 %, 09 4.9 %, 58 2.9 %;
- the planted meeting `Meeting 2026-11-11 09:58`, whose id is the largest
  point id of the corpus (last in point-id order: the ADR's trap);
- near-duplicate meeting titles holding every one of its terms
  (`Meeting 2026-09-11 11:58`, ...), more of them than the lexical cap (256),
  so that reading "the points holding every term" in point-id order misses it;
- one exact near-duplicate title (`Meeting 2026-11-12 09:58`), 50 identifiers,
  50 phrases of common words found once each, facts with paraphrased
  questions, and 40 ordinary meeting titles, each with its gold id in
  queries.jsonl;
- the planted meeting's transcript in Romanian (`începem ședința`), and the
  ADR's long variant of its query, `meeting transcript notes 11 November 2026
  ședință` (kind `variant`): another inflection's diacritics, found only
  where the text index folds them.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import uuid
from pathlib import Path

SEED = 172  # ADR 0172
TITLE = "Meeting 2026-11-11 09:58"
PLANTED_ID = "ffffffff-ffff-4fff-bfff-ffffffffffff"  # the largest UUID
# The fraction of memories holding each term of the title (ADR 0172).
RATES = {"meeting": 0.003, "2026": 0.089, "11": 0.091, "09": 0.049, "58": 0.029}
NEAR_DUPLICATES = 320
TITLE_QUERIES = 40
BENCH_QUERIES = 1_000  # > the default lexical cap of 256
CREATED = "2026-11-{day:02d}T{hour:02d}:{minute:02d}:00Z"

PEOPLE = ["Andrei", "Ioana", "Mara", "Dev", "Priya", "Tomas", "Lena", "Omar", "Keiko", "Sam",
          "Bianca", "Radu", "Elif", "Jonas", "Nadia", "Chen", "Lucia", "Pavel", "Grace", "Victor"]
COMPONENTS = ["billing service", "auth gateway", "search index", "payments queue", "ingest worker",
              "mobile app", "invoice exporter", "session cache", "rate limiter", "report builder",
              "notification fanout", "schema registry", "feature flags", "audit log", "web frontend",
              "data warehouse", "backup job", "load balancer", "email sender", "cron scheduler"]
VERBS = ["fixed", "reviewed", "deployed", "rolled back", "profiled", "documented", "refactored",
         "migrated", "tested", "paused", "restarted", "benchmarked", "patched", "monitored",
         "split", "cleaned up", "upgraded", "audited", "traced", "scaled"]
ISSUES = ["a memory leak", "slow queries", "duplicate events", "a flaky test", "stale caches",
          "timeouts under load", "a broken migration", "missing metrics", "a race on startup",
          "high tail latency", "wrong currency rounding", "an expired certificate",
          "retries piling up", "a noisy alert", "lost webhooks", "disk pressure"]
TOPICS = ["the quarterly roadmap", "on-call handover", "the hiring plan", "customer feedback",
          "the security review", "vendor contracts", "the design system", "release notes",
          "the incident postmortem", "capacity planning", "the pricing change", "onboarding docs"]
OPENERS = {
    "chat": "{p} wrote: {s}",
    "note": "Note: {s}",
    "commit": "commit: {s}",
    "incident": "Incident report. {s}",
    "log": "[{when}] INFO {s}",
    "ticket": "Ticket for the {c}: {s}",
}
FACTS = [
    ("The staging database password rotates every 45 days and Ioana owns the rotation runbook.",
     "who is responsible for rotating the staging db password"),
    ("Our office plants are watered by the facilities team on Tuesday mornings.",
     "when does someone water the plants in the office"),
    ("Customers on the legacy plan keep free exports until their contract renews.",
     "do old-plan customers still get exports without paying"),
    ("The mobile app crashes on launch for users with an empty avatar field.",
     "why does the phone app crash when it starts"),
    ("We chose Postgres over MongoDB because reporting needs joins and transactions.",
     "reason we picked postgres instead of mongo"),
    ("Lunch for the offsite in Lisbon is booked at a seafood place near the river.",
     "where are we eating during the Lisbon offsite"),
    ("The search cluster is sized for three times the current peak traffic.",
     "how much headroom does the search cluster have"),
    ("Interns get a laptop, a buddy and a first small bug on their first day.",
     "what do new interns receive when they start"),
]
IDENTIFIERS = ["INC-48213", "ERR-77812", "pay-gw-v3.14.2", "10.42.7.19", "CVE-2026-3141"]
EXTRA_IDENTIFIERS = 45
PHRASES = 50
LONG_VARIANT = "meeting transcript notes 11 November 2026 ședință"
TRANSCRIPT = ("Transcript, project meetings. Bună ziua tuturor, începem ședința de astăzi despre "
              "bugetul pe trimestrul patru; Radu prezintă cifrele, apoi discutăm planul de angajări.")


class Corpus:
    def __init__(self, n: int, tenant: str, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = n
        self.tenant = tenant

    def new_id(self) -> str:
        value = self.rng.getrandbits(128) & ~(1 << 127)  # below the planted id
        return str(uuid.UUID(int=value, version=4))

    def number(self, width: int = 2, high: int = 99) -> str:
        """A number that is none of the title's terms."""
        while True:
            raw = f"{self.rng.randint(0, high):0{width}d}"
            if raw not in RATES and raw.lstrip("0") not in ("11", "9", "58"):
                return raw

    def when(self, with_terms: set[str]) -> str:
        """A date and time holding exactly the title terms asked for."""
        year = "2026" if "2026" in with_terms else self.rng.choice(["2023", "2024", "2025"])
        slots = {"month": self.number(2, 12), "day": self.number(2, 28),
                 "hour": self.number(2, 23), "minute": self.number(2, 59)}
        slots = {k: ("01" if v == "00" and k in ("month", "day") else v) for k, v in slots.items()}
        free = ["month", "day", "hour", "minute"]
        self.rng.shuffle(free)
        if "58" in with_terms:
            free.remove("minute")
            slots["minute"] = "58"
        for term in ("11", "09"):
            if term in with_terms:
                slot = free.pop()
                slots[slot] = term
        return f"{year}-{slots['month']}-{slots['day']} {slots['hour']}:{slots['minute']}"

    def sentence(self) -> str:
        r = self.rng
        shape = r.randrange(4)
        if shape == 0:
            return f"{r.choice(PEOPLE)} {r.choice(VERBS)} the {r.choice(COMPONENTS)} after {r.choice(ISSUES)}."
        if shape == 1:
            return f"We talked about {r.choice(TOPICS)} and the {r.choice(COMPONENTS)}."
        if shape == 2:
            return (f"The {r.choice(COMPONENTS)} showed {r.choice(ISSUES)}; "
                    f"{r.choice(PEOPLE)} will follow up.")
        return f"{r.choice(PEOPLE)} asked {r.choice(PEOPLE)} about {r.choice(TOPICS)}."

    def body(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def generic(self, with_terms: set[str]) -> tuple[str, str]:
        """A memory's text and kind, holding exactly the title terms asked for."""
        r = self.rng
        if "meeting" in with_terms:
            title = f"Meeting {self.when(with_terms)}"
            return f"{title}\n{self.body(r.randint(2, 5))}", "meeting"
        kind = r.choice(list(OPENERS))
        dated = kind == "log" or bool(with_terms) or r.random() < 0.3
        when = self.when(with_terms) if dated else ""
        text = OPENERS[kind].format(p=r.choice(PEOPLE), c=r.choice(COMPONENTS),
                                    s=self.body(r.randint(1, 3)), when=when)
        if dated and kind != "log":
            text += f" ({when})"
        return text, kind

    def identifiers(self, n: int) -> list[str]:
        """Distinct identifiers of the shapes agents look up, holding none of
        the title's terms."""
        r = self.rng
        shapes = [
            lambda: f"INC-{r.randint(20_000, 99_999)}",
            lambda: f"ERR-{r.randint(20_000, 99_999)}",
            lambda: f"CVE-2025-{r.randint(2_000, 9_999)}",
            lambda: f"{r.getrandbits(28):07x}",
            lambda: f"{r.choice(['auth', 'pay', 'search', 'ingest'])}-svc-v{r.randint(2, 8)}."
                    f"{self.number(1, 9)}.{self.number(1, 9)}",
            lambda: f"10.{r.randint(20, 99)}.{r.randint(20, 99)}.{r.randint(20, 99)}",
        ]
        out: list[str] = []
        while len(out) < n:
            ident = r.choice(shapes)()
            if ident not in out and ident not in IDENTIFIERS and not terms(ident) & set(RATES):
                out.append(ident)
        return out

    def phrases(self, n: int) -> list[str]:
        """Distinct phrases of common words in a construction no other memory
        has (`... and the ... before ...`): found once, by its words in order."""
        r = self.rng
        out: list[str] = []
        while len(out) < n:
            first, second = r.sample(COMPONENTS, 2)
            phrase = f"{r.choice(VERBS)} the {first} and the {second} before {r.choice(TOPICS)}"
            if phrase not in out:
                out.append(phrase)
        return out

    def near_duplicate(self) -> str:
        """A meeting title holding every term of the planted one, never it."""
        r = self.rng
        title = r.choice(["Meeting 2026-09-11 11:58", "Meeting 2026-11-09 11:58",
                          "Meeting 2026-11-09 09:58 follow-up", "Meeting 2026-09-11 09:58",
                          "Meeting 2026-11-11 11:58 (09 agenda items)"])
        return f"{title}\n{self.body(r.randint(2, 5))}"

    def record(self, text: str, rid: str | None = None, kind: str = "note") -> dict:
        r = self.rng
        return {
            "id": rid or self.new_id(),
            "text": text,
            "tenant": self.tenant,
            "kind": kind,
            "source": f"bench/{kind}/{r.randrange(10_000):04d}",
            "created_at": CREATED.format(day=r.randint(1, 28), hour=r.randint(0, 23),
                                         minute=r.randint(0, 59)),
        }

    def build(self) -> tuple[list[dict], list[dict]]:
        r = self.rng
        special: list[tuple[dict, dict | None]] = []
        planted = self.record(f"{TITLE}\n{TRANSCRIPT} {self.body(2)}", PLANTED_ID, "meeting")
        special.append((planted, {"query": TITLE, "kind": "title"}))
        special.append((planted, {"query": LONG_VARIANT, "kind": "variant"}))
        twin = self.record(f"Meeting 2026-11-12 09:58\n{self.body(4)}", kind="meeting")
        special.append((twin, {"query": "Meeting 2026-11-12 09:58", "kind": "title"}))
        for ident in IDENTIFIERS + self.identifiers(EXTRA_IDENTIFIERS):
            text = f"{r.choice(PEOPLE)} traced {ident} to the {r.choice(COMPONENTS)}. {self.body(2)}"
            special.append((self.record(text, kind="incident"), {"query": ident, "kind": "identifier"}))
        for phrase in self.phrases(PHRASES):
            text = f"{r.choice(PEOPLE)} {phrase}. {self.body(2)}"
            special.append((self.record(text, kind="note"), {"query": phrase, "kind": "phrase"}))
        for fact, question in FACTS:
            special.append((self.record(fact, kind="note"), {"query": question, "kind": "semantic"}))
        special += [(self.record(self.near_duplicate(), kind="meeting"), None)
                    for _ in range(NEAR_DUPLICATES)]

        # One memory may answer several queries (the title and its long variant).
        unique = list({m["id"]: m for m, _ in special}.values())
        generic = self.n - len(unique)
        if generic < 1_000:
            sys.exit("gen-corpus: error: --n must be at least 2,000")
        # Each term's remaining quota is spread over the generic memories.
        held = {t: sum(t in terms(m["text"]) for m in unique) for t in RATES}
        p = {t: max(0.0, (RATES[t] * self.n - held[t]) / generic) for t in RATES}
        memories = list(unique)
        for _ in range(generic):
            text, kind = self.generic({t for t, q in p.items() if r.random() < q})
            memories.append(self.record(text, kind=kind))
        r.shuffle(memories)
        memories.sort(key=lambda m: m["id"] == PLANTED_ID)  # the planted one last in the file too
        asked = [(m, q) for m, q in special if q] + self.title_queries(memories)
        queries = [
            {"qid": f"q{i + 1:02d}", "query": q["query"], "tenant": self.tenant,
             "gold": [m["id"]], "kind": q["kind"]}
            for i, (m, q) in enumerate(asked)
        ]
        return memories, queries

    def title_queries(self, memories: list[dict]) -> list[tuple[dict, dict]]:
        """Ordinary meeting titles that occur once, as more title queries (a
        random of their own, so that the memories do not depend on them)."""
        titles: dict[str, list[dict]] = {}
        for m in memories:
            if m["kind"] == "meeting" and m["id"] != PLANTED_ID:
                titles.setdefault(m["text"].split("\n", 1)[0], []).append(m)
        once = sorted((t, ms[0]) for t, ms in titles.items() if len(ms) == 1)
        picked = random.Random(self.rng.random()).sample(once, min(TITLE_QUERIES, len(once)))
        return [(m, {"query": t, "kind": "title"}) for t, m in picked]


def bench_queries(tenant: str, seed: int, n: int = BENCH_QUERIES) -> list[dict]:
    """`n` distinct searches an agent might send, from a random of their own
    (distinct, so that `trine bench --no-repeat` can send each once)."""
    r = random.Random(seed + 1)
    out: list[dict] = []
    seen: set[str] = set()
    while len(out) < n:
        shape = r.random()
        if shape < 0.7:
            query = (f"Meeting {r.choice(['2024', '2025', '2026'])}-{r.randint(1, 12):02d}-"
                     f"{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}")
        elif shape < 0.85:
            query = f"{r.choice(COMPONENTS)} {r.choice(ISSUES)}"
            if n > BENCH_QUERIES:  # the 320 pairs alone would repeat
                query += f" {r.choice(PEOPLE)} {r.choice(VERBS)}"
        else:
            query = f"what did {r.choice(PEOPLE)} say about {r.choice(TOPICS)}"
            if n > BENCH_QUERIES:
                query += f" on {r.choice(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'])}"
                query += f" {r.randint(1, 28)}"
        if query in seen:
            continue
        seen.add(query)
        out.append({"qid": f"b{len(out) + 1:04d}", "query": query, "tenant": tenant})
    return out


def terms(text: str) -> set[str]:
    """The lowercased alphanumeric tokens of a text (docs/design.md §2)."""
    return {t.lower() for t in re.split(r"[^\w]|_", text) if t}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")
    parser.add_argument("--n", type=int, default=385_000, help="memories (default 385,000)")
    parser.add_argument("--tenant", default="bench")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--bench-queries", type=int, default=BENCH_QUERIES,
                        help=f"distinct bench queries to write (default {BENCH_QUERIES:,})")
    args = parser.parse_args()

    memories, queries = Corpus(args.n, args.tenant, args.seed).build()
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "memories.jsonl", "w", encoding="utf-8") as f:
        for m in memories:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    with open(args.out / "queries.jsonl", "w", encoding="utf-8") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    with open(args.out / "bench-queries.jsonl", "w", encoding="utf-8") as f:
        for q in bench_queries(args.tenant, args.seed, args.bench_queries):
            f.write(json.dumps(q, ensure_ascii=False) + "\n")

    counts = dict.fromkeys(RATES, 0)
    all_terms = phrase = 0
    for m in memories:
        held = terms(m["text"])
        for t in RATES:
            counts[t] += t in held
        all_terms += held >= set(RATES)
        phrase += TITLE.lower() in m["text"].lower()
    print(f"wrote {len(memories):,} memories and {len(queries)} queries to {args.out}")
    for t, c in counts.items():
        print(f"  {t:>7}: {c:>7,} memories ({c / len(memories):.2%}; target {RATES[t]:.1%})")
    print(f"  every term of {TITLE!r}: {all_terms:,} memories; the title itself: {phrase}")
    if phrase != 1:
        sys.exit("gen-corpus: error: the planted title must appear exactly once")
    exact = [q["query"].lower() for q in queries if q["kind"] in ("phrase", "identifier")]
    found = dict.fromkeys(exact, 0)
    for m in memories:
        text = m["text"].lower()
        for q in exact:
            found[q] += q in text
    twice = [q for q, c in found.items() if c != 1]
    if twice:
        sys.exit(f"gen-corpus: error: phrases or identifiers not found exactly once: {twice}")
    print(f"  {len(exact)} phrases and identifiers, each found exactly once")


if __name__ == "__main__":
    main()
