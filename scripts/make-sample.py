#!/usr/bin/env python3
"""Write the sample corpus and query set for trine's tests and `trine eval`.

    python3 scripts/make-sample.py            # writes samples/memories.jsonl, samples/queries.jsonl
    python3 scripts/make-sample.py --out DIR  # writes them into DIR instead

Standard library only, deterministic: every random choice comes from one
seeded `random.Random`, every id is `uuid5(NAMESPACE, "<tenant>/<key>")`, and
the output is byte-identical from run to run.

The corpus reproduces the situation of ADR 0172: an exact meeting title
(`Meeting 2026-11-11 09:58`) whose every term is common, near-duplicate titles
that hold the same terms, identifiers split into common tokens, and ordinary
questions that only semantic search can answer. The gold ids of the queries
are taken from the generated memories, and the invariants listed in
samples/README.md are checked before anything is written: a broken invariant
stops the script with an error instead of writing a misleading sample.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

SEED = 172  # ADR 0172
# The version suffix was chosen (the first of v1, v2, ... that works) so that
# the target meeting sorts last by point id among the acme memories holding
# all of its terms, and in the last tenth of those holding any: the
# point-id-order trap of ADR 0172. check() asserts it.
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://trine.dev/samples/memories/v16")
# The reference "now" of the sample: validity windows are past or future
# relative to this instant.
REFERENCE_NOW = datetime(2026, 11, 30, 0, 0, 0, tzinfo=timezone.utc)

ALLOWED_KEYS = (
    "id", "text", "source", "tenant", "project", "kind",
    "created_at", "valid_from", "valid_until", "metadata",
)
KINDS = ("meeting", "note", "decision", "code", "incident", "chat")
TARGET_TITLE = "Meeting 2026-11-11 09:58"

# Lucene's classic English stop words, as services/core/src/terms.rs.
STOP_WORDS = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
}


# --------------------------------------------------------------------------
# Text helpers (they mirror docs/design.md §2 and §4)
# --------------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    """Split on every non-alphanumeric character, lowercase each piece."""
    out, cur = [], []
    for ch in text:
        if ch.isalnum():
            cur.append(ch)
        elif cur:
            out.append("".join(cur).lower())
            cur = []
    if cur:
        out.append("".join(cur).lower())
    return out


def terms(query: str) -> list[str]:
    out: list[str] = []
    for t in tokens(query):
        if t not in STOP_WORDS and t not in out:
            out.append(t)
    return out


def fold(text: str) -> str:
    """Lowercase, every run of whitespace folded to one space, ends trimmed."""
    return " ".join(text.lower().split())


def ts(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc)


# --------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------

class Corpus:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.items: list[dict] = []
        self.by_key: dict[str, dict] = {}
        self.used_titles: set[tuple[str, str]] = set()

    def hexid(self) -> str:
        return f"{self.rng.getrandbits(32):08x}"

    def add(self, key: str, tenant: str, kind: str, project: str, text: str, *,
            source: str | None = None, created_at: datetime | None = None,
            valid_from: datetime | None = None, valid_until: datetime | None = None,
            metadata: dict | None = None) -> dict:
        full_key = f"{tenant}/{key}"
        assert full_key not in self.by_key, f"duplicate key {full_key}"
        assert kind in KINDS, kind
        m: dict = {"id": str(uuid.uuid5(NAMESPACE, full_key)), "text": text.strip()}
        if source is not None:
            m["source"] = source
        m["tenant"] = tenant
        m["project"] = project
        m["kind"] = kind
        if created_at is not None:
            m["created_at"] = ts(created_at)
        if valid_from is not None:
            m["valid_from"] = ts(valid_from)
        if valid_until is not None:
            m["valid_until"] = ts(valid_until)
        if metadata is not None:
            m["metadata"] = metadata
        self.items.append(m)
        self.by_key[full_key] = m
        return m

    def id(self, tenant: str, key: str) -> str:
        return self.by_key[f"{tenant}/{key}"]["id"]


def slack_source(channel: str, dt: datetime, rng: random.Random) -> str:
    return f"slack/#{channel}/{int(dt.timestamp())}.{rng.randrange(0, 999999):06d}"


# --------------------------------------------------------------------------
# Hand-written memories: the ones queries point at, and their distractors
# --------------------------------------------------------------------------

ROMANIAN_0958_CHUNK1 = """\
Meeting 2026-11-11 09:58
Andrei: Bună dimineața tuturor, începem ședința de sincronizare. Avem doar șapte minute, așa că trec direct la subiect.
Ioana: Mulțumesc. Migrarea bazei de date pentru facturare este aproape gata; am copiat tabelele mari peste noapte, iar replicarea logică a recuperat întârzierea până la ora opt.
Andrei: Ce ne mai lipsește înainte de comutare?
Ioana: Trebuie să verificăm indexurile de pe tabela de plăți și să rulăm testele de reconciliere pe datele din octombrie. Estimez încă două zile de lucru.
Mihai: Din partea echipei de mobil, versiunea nouă a aplicației e încă blocată în review la Apple. Am retrimis-o aseară, cu textul despre confidențialitate corectat.
Andrei: Bine. Să nu uităm de întâlnirea cu clientul din Cluj de joi; vor să vadă raportul lunar înainte să semneze prelungirea contractului.
Elena: Pregătesc eu raportul. Am nevoie de cifrele de utilizare până miercuri seară, altfel nu apuc să le verific.
Ioana: Le exportăm din depozitul de date, nu e nicio problemă. Ți le trimit pe canalul echipei.
Mihai: Încă ceva: alertele de noapte pentru serviciul de notificări au sunat de patru ori săptămâna asta, toate alarme false. Propun să ridicăm pragul de latență la 800 de milisecunde și să adăugăm o fereastră de cinci minute.
Andrei: De acord, dar documentează schimbarea în runbook și anunță pe canalul de gardă înainte s-o aplici.
Elena: Și cine preia garda în weekend? Radu e în concediu până luni.
Andrei: Preiau eu sâmbătă, iar Mihai duminică. Dacă apare ceva grav la facturare, o sunăm pe Ioana.
Ioana: Sigur, am telefonul la mine. Mulțumesc că m-ați anunțat din timp."""

ROMANIAN_0958_CHUNK2 = """\
Andrei: Ultimul punct: bugetul pentru servere pe trimestrul următor. Finanțele vor cifrele până pe douăzeci.
Elena: Am pregătit o estimare, e cu vreo zece la sută mai mică decât acum, pentru că renunțăm la clusterul vechi de staging.
Andrei: Perfect, trimite-o și mie înainte. Ne vedem la următoarea ședință vineri, la aceeași oră. Mulțumesc tuturor și o zi bună!"""

ROMANIAN_1112_0958 = """\
Meeting 2026-11-12 09:58
Andrei: Bună dimineața, ședința de azi e scurtă. Ioana, cum stăm cu migrarea?
Ioana: Indexurile de pe tabela de plăți sunt verificate. Testele de reconciliere au găsit trei facturi cu diferențe de rotunjire, le corectăm azi.
Mihai: Aplicația a trecut de review la Apple aseară, o lansăm treptat, zece la sută din utilizatori pe zi.
Elena: Raportul pentru clientul din Cluj e gata, îl mai citesc o dată înainte de întâlnire.
Andrei: Mulțumesc, ne vedem mâine."""

ROMANIAN_PHRASE_MEETING = """\
Meeting 2026-10-21 15:30
Sofia: Începem ședința cu o mică întârziere, scuze. Mulțumesc pentru răbdare.
Radu: Am terminat analiza incidentului de marți: certificatul intern a expirat pentru că reînnoirea automată rula pe un nod oprit.
Sofia: Ce schimbăm ca să nu se repete?
Radu: Mutăm reînnoirea într-un job din cluster și adăugăm o alertă cu paisprezece zile înainte de expirare.
Andrei: Bun. Trecem la planificarea sprintului; avem prea multe tichete deschise pe echipa de platformă.
Sofia: Propun să închidem tot ce e mai vechi de trei luni și nu are un responsabil.
Radu: De acord. Mulțumesc, ne auzim pe chat."""

ROMANIAN_SENTENCES = [
    "Bună ziua, începem ședința săptămânală.",
    "Mulțumesc tuturor că ați venit la întâlnire.",
    "Am discutat cu echipa de facturare despre termenele din decembrie.",
    "Versiunea nouă a aplicației mobile intră în testare de mâine.",
    "Alertele de latență au fost ajustate după discuția de ieri.",
    "Clientul a cerut un raport detaliat al consumului pe ultimele trei luni.",
    "Avem nevoie de încă un om în echipa de gardă pentru sărbători.",
    "Migrarea serverelor vechi se amână până după lansare.",
    "Propun să verificăm împreună jurnalele de erori după prânz.",
    "Documentația pentru procedura de restaurare trebuie actualizată.",
    "Bugetul pentru licențe a fost aprobat de conducere.",
    "Testele automate pică intermitent pe ramura principală.",
    "Săptămâna viitoare avem o întâlnire cu echipa de securitate.",
    "Mulțumesc, ne vedem la următoarea ședință.",
]


def add_target_meetings(c: Corpus) -> None:
    """The meeting of ADR 0172, its second chunk, its near-duplicates, and the
    globex copy."""
    c.add("meeting/0b85ed4a/chunk-1", "acme", "meeting", "meetings", ROMANIAN_0958_CHUNK1,
          source="recording/0b85ed4a/chunk-1", created_at=utc(2026, 11, 11, 10, 11, 43),
          metadata={"speaker_count": 4, "language": "ro", "duration_s": 421, "tags": ["standup", "q4"]})
    c.add("meeting/0b85ed4a/chunk-2", "acme", "meeting", "meetings", ROMANIAN_0958_CHUNK2,
          source="recording/0b85ed4a/chunk-2", created_at=utc(2026, 11, 11, 10, 11, 43),
          metadata={"speaker_count": 2, "language": "ro"})
    # The same memory in the other tenant: identical text and source, another id.
    c.add("meeting/0b85ed4a/chunk-1", "globex", "meeting", "meetings", ROMANIAN_0958_CHUNK1,
          source="recording/0b85ed4a/chunk-1", created_at=utc(2026, 11, 11, 10, 11, 43),
          metadata={"speaker_count": 4, "language": "ro", "duration_s": 421, "tags": ["standup", "q4"]})
    c.used_titles.add(("acme", TARGET_TITLE))
    c.used_titles.add(("globex", TARGET_TITLE))

    # Near-duplicates. Several hold every term of the target title
    # (meeting 2026 11 09 58) without holding the title itself.
    near = [
        ("meeting/title-2026-11-12-0958", "Meeting 2026-11-12 09:58", ROMANIAN_1112_0958,
         utc(2026, 11, 12, 10, 6, 2), {"speaker_count": 4, "language": "ro"}),
        ("meeting/title-2026-11-11-0945", "Meeting 2026-11-11 09:45",
         "Meeting 2026-11-11 09:45\n"
         "Priya: Quick pre-standup for the billing cutover, we have until 09:58 when the ședință starts.\n"
         "Tom: Replication lag is under a second, the copy of the big tables finished overnight.\n"
         "Priya: Then the only open item is the index check on payments. Ioana has it.\n"
         "Tom: I'll post the lag graph in #billing so nobody has to ask again.",
         utc(2026, 11, 11, 9, 57, 30), None),
        ("meeting/title-2026-11-11-1058", "Meeting 2026-11-11 10:58",
         "Meeting 2026-11-11 10:58\n"
         "Lukas: This is the security sync, moved from 09:30 because of the standup overrun.\n"
         "Sofia: The libwebp patch is rolled out on every image except the legacy PDF renderer.\n"
         "Lukas: What blocks the renderer?\n"
         "Sofia: It pins an old Chromium. We either rebuild it or put it behind the internal proxy only.\n"
         "Lukas: Put it behind the proxy this week and schedule the rebuild for the next sprint.",
         utc(2026, 11, 11, 11, 20, 14), {"speaker_count": 2, "tags": ["security"]}),
        ("meeting/title-2025-11-11-0958", "Meeting 2025-11-11 09:58",
         "Meeting 2025-11-11 09:58\n"
         "Andrei: Last year's planning session for the 2026 roadmap, re-imported from the old recorder.\n"
         "Elena: We want the mobile rewrite done by spring and the invoicing service split out of the monolith.\n"
         "Andrei: Hiring plan is four people, two of them on platform.\n"
         "Elena: And we move the on-call tooling to PagerDuty before the holidays.",
         utc(2025, 11, 11, 10, 40, 0), None),
        ("meeting/title-2026-11-09-1158", "Meeting 2026-11-09 11:58",
         "Meeting 2026-11-09 11:58\n"
         "Radu: Customer debrief. Northwind wants the usage export in CSV as well as PDF.\n"
         "Elena: That's cheap, the exporter already produces rows. Two days.\n"
         "Radu: They also asked whether we can keep invoices for ten years. Legal says yes, storage says it's fine.\n"
         "Elena: I'll write it up and send it before the 2026-11-11 standup.",
         utc(2026, 11, 9, 12, 30, 9), {"speaker_count": 2, "tags": ["customer"]}),
        ("meeting/title-2026-11-11-0958-prep", None,
         "Notes from the meeting prep on 2026-11-11: the standup was booked for 09:58 because the room "
         "was taken until then. Agenda: billing cutover, Apple review, Cluj client report, weekend "
         "on-call. Recording link goes into #meetings when the transcript is ready.",
         utc(2026, 11, 10, 17, 2, 45), None),
    ]
    for key, title, text, created, meta in near:
        if title is None:
            c.add(key, "acme", "note", "meetings", text,
                  source="notes/2026/11/standup-prep.md", created_at=created)
            continue
        c.used_titles.add(("acme", title))
        c.add(key, "acme", "meeting", "meetings", text,
              source=f"recording/{c.hexid()}/chunk-1", created_at=created, metadata=meta)

    # A log full of the target's numbers: high term frequency for 2026, 11, 09
    # and 58, with "meeting" in it, and still not the title.
    log_lines = [
        "2026-11-11 09:58:02 WARN notification-svc p99 latency 812ms over threshold 500ms",
        "2026-11-11 09:58:14 WARN notification-svc p99 latency 930ms over threshold 500ms",
        "2026-11-11 09:58:31 ERROR notification-svc push batch 58 failed: upstream timeout",
        "2026-11-11 09:58:47 INFO notification-svc retrying batch 58 (attempt 2)",
        "2026-11-11 09:59:05 INFO notification-svc batch 58 delivered",
    ]
    c.add("incident/notify-latency-2026-11-11", "acme", "incident", "platform",
          "Notification latency page during the morning meeting, false alarm per the standup.\n"
          + "\n".join(log_lines),
          source=slack_source("ops", utc(2026, 11, 11, 10, 2, 0), c.rng),
          created_at=utc(2026, 11, 11, 10, 2, 0))
    c.add("chat/recording-is-up", "acme", "chat", "meetings",
          "recording of the 09:58 meeting on 2026-11-11 is up, transcript in Romanian, chunk 2 has the budget bit",
          source=slack_source("meetings", utc(2026, 11, 11, 10, 15, 0), c.rng),
          created_at=utc(2026, 11, 11, 10, 15, 0))


def add_identifier_memories(c: Corpus) -> None:
    a = "acme"
    # CVE-2023-4863: exactly one acme memory.
    c.add("incident/cve-2023-4863", a, "incident", "security",
          "CVE-2023-4863 (libwebp heap buffer overflow in the lossless decoder) is exploitable through any "
          "image we decode server-side. Affected: thumbnailer (Pillow 9.5 bundles libwebp 1.3.1) and the "
          "legacy PDF renderer (Chromium 114). Patched thumbnailer with Pillow 10.0.1, renderer isolated "
          "behind the internal proxy until it is rebuilt. Tracked in OPS-1432.",
          source="notes/2026/11/cve-libwebp.md", created_at=utc(2026, 11, 3, 14, 12, 0),
          metadata={"severity": "high", "tags": ["security", "q4"]})
    c.add("note/other-cves", a, "note", "security",
          "Open CVE review, week 45: CVE-2023-4911 (glibc ld.so, Looney Tunables) fixed by libc6 "
          "1:2.36-9+deb12u3 on all bookworm hosts; CVE-2024-6387 (regreSSHion) patched via openssh "
          "1:9.2p1-2+deb12u3; CVE-2023-44487 (HTTP/2 rapid reset) mitigated at the ingress with a stream cap. "
          "Still open: CVE-2024-2961 on the build runners.",
          source="notes/2026/11/cve-review-w45.md", created_at=utc(2026, 11, 6, 9, 5, 0))
    c.add("incident/cve-2024-3094", a, "incident", "security",
          "CVE-2024-3094 check: no host runs xz-utils 5.6.0 or 5.6.1; the base image carries 5.4.1-0.2. "
          "Closing SEC-1432 as not affected.",
          source="notes/2026/10/xz-check.md", created_at=utc(2026, 10, 14, 11, 0, 0))
    c.add("chat/cve-heads-up", a, "chat", "security",
          "heads up: CVE-2023-38545 and CVE-2023-38546 are curl, we're on 7.88.1-10+deb12u8 which has both fixes",
          source=slack_source("security", utc(2026, 10, 30, 16, 40, 0), c.rng),
          created_at=utc(2026, 10, 30, 16, 40, 0))
    c.add("note/webp-decoder", a, "note", "security",
          "The WebP decoder bug last year taught us to never decode untrusted images in the API process. "
          "Image work now runs in the sandboxed thumbnailer only.",
          source="notes/2026/10/image-sandbox.md", created_at=utc(2026, 10, 9, 10, 0, 0))

    # libc6 1:2.36-9+deb12u4: exactly one memory.
    c.add("incident/libc6-deb12u4", a, "incident", "platform",
          "After the unattended upgrade to libc6 1:2.36-9+deb12u4 on the worker pool, three nodes came back "
          "with a stale nscd cache and failed DNS lookups for internal names. Restarting nscd fixed it; the "
          "upgrade itself is fine. Pinned the package on the remaining nodes until the reboot window.",
          source=slack_source("ops", utc(2026, 11, 6, 12, 20, 0), c.rng),
          created_at=utc(2026, 11, 6, 12, 20, 0))
    c.add("note/deb-versions", a, "note", "platform",
          "Bookworm package baseline for images built after 2026-11-01: libc6 1:2.36-9+deb12u7, "
          "libssl3 3.0.15-1~deb12u1, openssl 3.0.15-1~deb12u1, curl 7.88.1-10+deb12u8, "
          "ca-certificates 20230311. Anything older fails the image scan.",
          source="git/platform-images/BASELINE.md", created_at=utc(2026, 11, 1, 8, 0, 0))
    c.add("chat/libssl", a, "chat", "platform",
          "do we still have anything on libssl3 3.0.11-1~deb12u2? the scanner flags it on two old runners",
          source=slack_source("ops", utc(2026, 11, 2, 15, 3, 0), c.rng),
          created_at=utc(2026, 11, 2, 15, 3, 0))

    # IPs
    c.add("incident/ip-10-0-3-17", a, "incident", "platform",
          "Postgres replica at 10.0.3.17 fell 40 minutes behind after the vacuum on invoices; reads were "
          "moved to 10.0.3.18 and the lag cleared after the autovacuum finished. ERROR: canceling statement "
          "due to conflict with recovery (SQLSTATE 40001) appeared in the API logs meanwhile.",
          source=slack_source("ops", utc(2026, 11, 4, 3, 12, 0), c.rng),
          created_at=utc(2026, 11, 4, 3, 12, 0))
    c.add("note/ip-plan", a, "note", "platform",
          "Subnet plan for eu-1: 10.0.3.0/24 databases (primary 10.0.3.10, replicas 10.0.3.18 and 10.0.3.19), "
          "10.0.31.0/24 queues (10.0.31.7 is the RabbitMQ leader), 10.0.4.0/24 workers.",
          source="git/infra/network/README.md", created_at=utc(2026, 10, 2, 9, 0, 0))
    c.add("chat/ip-ping", a, "chat", "platform",
          "10.0.31.7 stopped answering health checks again, second time today",
          source=slack_source("ops", utc(2026, 11, 18, 13, 44, 0), c.rng),
          created_at=utc(2026, 11, 18, 13, 44, 0))

    # Versions
    c.add("note/release-v2-14-3", a, "note", "platform",
          "Gateway v2.14.3 released: fixes the header size regression from v2.14.2 (requests with large "
          "cookies got a 431) and bumps tonic. Deployed to prod-eu-1 at 14:20.",
          source="git/gateway/CHANGELOG.md", created_at=utc(2026, 11, 17, 14, 25, 0))
    c.add("chat/version-question", a, "chat", "platform",
          "is the mobile build on 2.14.3 of the SDK or still on v2.13.3?",
          source=slack_source("mobile", utc(2026, 11, 18, 10, 1, 0), c.rng),
          created_at=utc(2026, 11, 18, 10, 1, 0))
    c.add("note/v2-14-2", a, "note", "platform",
          "v2.14.2 is the last gateway version that still accepts the legacy auth header; v2.4.13 clients "
          "must upgrade before the header is removed.",
          source="notes/2026/11/gateway-auth-header.md", created_at=utc(2026, 11, 10, 11, 11, 0))

    # Tickets
    c.add("incident/ops-1432-followup", a, "incident", "security",
          "OPS-1432 follow-up: the PDF renderer rebuild on Chromium 130 is scheduled; until then the renderer "
          "accepts requests only from the internal proxy.",
          source="jira/OPS-1432", created_at=utc(2026, 11, 12, 16, 0, 0))
    c.add("chat/ops-tickets", a, "chat", "platform",
          "closed OPS-1431 and OPS-1423, both duplicates of the disk alert one",
          source=slack_source("ops", utc(2026, 11, 13, 9, 20, 0), c.rng),
          created_at=utc(2026, 11, 13, 9, 20, 0))

    # Code identifiers
    c.add("code/retry-policy", a, "code", "billing",
          "/// Backoff schedule for failed invoice charges; the scheduler calls\n"
          "/// billing::invoice::retry_policy for every unpaid invoice once an hour.\n"
          "pub fn retry_policy(attempt: u32) -> Option<Duration> {\n"
          "    match attempt {\n"
          "        0 => Some(Duration::from_secs(24 * 3600)),\n"
          "        1 => Some(Duration::from_secs(3 * 24 * 3600)),\n"
          "        2 => Some(Duration::from_secs(7 * 24 * 3600)),\n"
          "        _ => None,\n"
          "    }\n"
          "}",
          source="git/billing-core/src/invoice/retry.rs", created_at=utc(2026, 10, 28, 15, 30, 0))
    c.add("code/payment-retry", a, "code", "billing",
          "// billing::payment::retry_policy is separate from the invoice one: card network retries follow\n"
          "// the issuer's advice codes, not our schedule.\n"
          "pub fn retry_policy(advice: AdviceCode) -> RetryDecision { advice.into() }",
          source="git/billing-core/src/payment/retry.rs", created_at=utc(2026, 10, 28, 15, 31, 0))
    c.add("code/invoice-render", a, "code", "billing",
          "use billing::invoice::RetryPolicy;\nuse billing::invoice::render_pdf;\n\n"
          "let pdf = render_pdf(&invoice, Locale::Ro)?; // invoices for Romanian customers use ro-RO dates",
          source="git/billing-core/src/bin/render.rs", created_at=utc(2026, 10, 29, 9, 0, 0))
    c.add("code/foo-bar-baz", a, "code", "platform",
          "from foo_bar.baz import normalize_title\n\n"
          "def test_normalize_title():\n"
          "    assert normalize_title('  Meeting   2026-10-05 ') == 'meeting 2026-10-05'",
          source="git/agent-tools/tests/test_titles.py", created_at=utc(2026, 11, 5, 12, 0, 0))
    c.add("code/foo-bar-qux", a, "code", "platform",
          "# foo_bar.qux wraps the Qdrant client; foo.bar_baz is the old name kept for imports\n"
          "from foo_bar.qux import client_from_env\nclient = client_from_env()",
          source="git/agent-tools/foo_bar/__init__.py", created_at=utc(2026, 11, 5, 12, 1, 0))

    # Error codes
    c.add("incident/deadlock-40p01", a, "incident", "billing",
          "Nightly invoice job failed: ERROR: deadlock detected (SQLSTATE 40P01) between the ledger "
          "update and the dunning sweep. Both touch invoices in different orders; the sweep now locks "
          "rows with ORDER BY id. Re-ran the job at 06:10, all 1,284 invoices issued.",
          source="notes/2026/11/invoice-deadlock.md", created_at=utc(2026, 11, 16, 6, 30, 0))
    c.add("incident/oomkilled", a, "incident", "platform",
          "search-indexer pods OOMKilled (exit code 137) when a tenant ingested 40k memories in one batch. "
          "Limited batches to 1,000 and raised the memory limit to 2Gi.",
          source=slack_source("ops", utc(2026, 11, 19, 22, 5, 0), c.rng),
          created_at=utc(2026, 11, 19, 22, 5, 0))
    c.add("code/rust-e0502", a, "code", "platform",
          "error[E0502]: cannot borrow `self.cache` as mutable because it is also borrowed as immutable\n"
          "  --> lexical-svc/src/scorer.rs:88:9\n"
          "fix: clone the key before calling get_or_insert",
          source="git/trine/notes/borrow-error.md", created_at=utc(2026, 11, 20, 17, 0, 0))
    c.add("chat/tls-error", a, "chat", "mobile",
          "android beta shows ERR_TLS_CERT_ALTNAME_INVALID against api-staging, the cert is missing the new hostname",
          source=slack_source("mobile", utc(2026, 11, 14, 11, 2, 0), c.rng),
          created_at=utc(2026, 11, 14, 11, 2, 0))

    # globex identifiers
    g = "globex"
    c.add("incident/cve-2024-3094", g, "incident", "security",
          "CVE-2024-3094 (xz backdoor): two scanner hosts in the dock network ran xz-utils 5.6.1 from a "
          "testing repository. Rebuilt both from the golden image and rotated their SSH host keys.",
          source="notes/2026/10/xz-scanners.md", created_at=utc(2026, 10, 8, 10, 0, 0),
          metadata={"severity": "critical"})
    c.add("note/cve-list", g, "note", "security",
          "Quarterly CVE sweep: CVE-2023-4863 patched in the label printer service, CVE-2024-6387 patched "
          "on bastions, CVE-2023-5363 not applicable (no OpenSSL 3.0.11).",
          source="notes/2026/10/cve-sweep.md", created_at=utc(2026, 10, 20, 9, 0, 0))
    c.add("incident/globex-ip", g, "incident", "platform",
          "Scanner gateway 10.0.3.17 in the Rotterdam warehouse dropped off the VPN; the local switch "
          "was rebooted by the site lead and it came back at 07:40.",
          source="pagerduty/P7Q2K1", created_at=utc(2026, 11, 7, 7, 45, 0))


def add_semantic_golds(c: Corpus) -> None:
    """Memories that answer ordinary questions in their own words."""
    a = "acme"
    c.add("note/revert-bad-release", a, "note", "platform",
          "If a release goes bad, don't try to patch forward under pressure. In Argo CD, open the service's "
          "app, pick the previous revision in History and hit Sync; the prior ReplicaSet is kept warm for "
          "24 hours, so traffic returns to the old image in about two minutes. Migrations are never undone "
          "in that step: they are expand-only until the next release, which is why reverting the code is "
          "always safe. Post in #ops when you start and when you're done.",
          source="notes/2026/10/reverting-a-bad-release.md", created_at=utc(2026, 10, 6, 10, 30, 0),
          metadata={"tags": ["runbook"]})
    c.add("note/invoicing-escalation", a, "note", "billing",
          "Outside business hours, problems with invoicing and collections escalate to the Payments rotation "
          "in PagerDuty: primary first, secondary after 10 minutes. If neither acknowledges within 20 minutes, "
          "the engineering manager of the revenue team is phoned directly. The rotation hands over every "
          "Monday at 10:00 Bucharest time.",
          source="notes/2026/10/payments-escalation.md", created_at=utc(2026, 10, 12, 9, 0, 0))
    c.add("decision/hosting-allowance-q1", a, "decision", "platform",
          "Approved: the hosting allowance for January to March 2027 is capped at $182,000 across AWS and GCP "
          "combined, 9% below Q4. Reserved-instance renewals count against it, and anything above 90% of the "
          "cap needs the CFO's sign-off.",
          source="notes/2026/11/q1-2027-hosting.md", created_at=utc(2026, 11, 20, 16, 0, 0),
          metadata={"tags": ["budget", "q1"]})
    c.add("note/northwind-debrief", a, "note", "billing",
          "Spoke with Northwind Freight (Dana Kerr, their ops lead). She is frustrated that the monthly "
          "invoice PDFs arrive three to five days after month end, which holds up their own accounting "
          "close, and that the usage export cannot be opened in Excel. We promised PDFs by the second "
          "working day and a CSV export by the end of November.",
          source="notes/2026/11/northwind-debrief.md", created_at=utc(2026, 11, 9, 13, 0, 0))
    c.add("note/expand-contract", a, "note", "platform",
          "Postgres migrations in prod follow expand-and-contract: add the new column or table first, ship code "
          "that writes both, backfill in batches of 5,000 rows with a short sleep, switch reads, and drop the "
          "old column only a release later. Never take an ACCESS EXCLUSIVE lock on a hot table during "
          "business hours; use CREATE INDEX CONCURRENTLY and set lock_timeout to 3s so a blocked migration "
          "fails fast instead of queueing writes behind it.",
          source="notes/2026/10/postgres-migrations.md", created_at=utc(2026, 10, 15, 11, 0, 0),
          metadata={"tags": ["runbook", "postgres"]})
    c.add("decision/headcount-rust", a, "decision", "platform",
          "Headcount approved for two senior Rust developers on the platform team, server side, with start "
          "dates from February. Ioana owns the req; the loop is a take-home exercise plus a systems design "
          "round, and offers go out within a week of the final interview.",
          source="notes/2026/11/headcount-platform.md", created_at=utc(2026, 11, 18, 12, 0, 0))
    c.add("note/dunning", a, "note", "billing",
          "When a charge bounces, the subscriber gets an email right away and we try again automatically "
          "after 1, 3 and 7 days. After the third miss the workspace drops to read-only and the account "
          "owner sees a banner; nothing is deleted for 60 days.",
          source="notes/2026/10/dunning.md", created_at=utc(2026, 10, 27, 14, 0, 0))
    c.add("note/kubectl-onboarding", a, "note", "platform",
          "Onboarding: to obtain kubectl credentials for prod-eu-1, fill in the form in #infra-requests. A "
          "platform lead approves it and Teleport issues a certificate that lasts 12 hours. Roles are "
          "read-only by default; write roles need a second approver.",
          source="notes/2026/10/onboarding-kubectl.md", created_at=utc(2026, 10, 1, 9, 30, 0))
    c.add("incident/ios-launch", a, "incident", "mobile",
          "iOS build 4.12.0 died at launch for users whose keychain was empty after a device restore: "
          "SessionStore force-unwrapped a missing token. Hotfix 4.12.1 shipped on 2026-10-22; about 3% of "
          "sessions were affected for two days.",
          source="notes/2026/10/ios-4120-postmortem.md", created_at=utc(2026, 10, 23, 10, 0, 0))
    # Friday releases: a superseded decision and the current one.
    c.add("decision/friday-superseded", a, "decision", "platform",
          "No production pushes on Fridays, no exceptions.",
          source="notes/2026/03/release-days.md", created_at=utc(2026, 3, 2, 9, 0, 0),
          valid_until=utc(2026, 9, 30, 23, 59, 59))
    c.add("decision/friday-current", a, "decision", "platform",
          "From October, production pushes go out Monday to Thursday by default. A push on the last working "
          "day of the week needs an explicit OK from the on-call incident commander and must land before "
          "13:00, so there is an afternoon to watch it.",
          source="notes/2026/09/release-days-v2.md", created_at=utc(2026, 9, 28, 9, 0, 0),
          valid_from=utc(2026, 10, 1))

    g = "globex"
    c.add("note/inventory-snapshots", g, "note", "platform",
          "Every night at 02:00 UTC the inventory Postgres is snapshotted to S3 (eu-central-1) and kept for "
          "35 days; point-in-time recovery uses WAL archiving every 5 minutes. Restores are rehearsed on the "
          "first Tuesday of each month.",
          source="notes/2026/10/inventory-snapshots.md", created_at=utc(2026, 10, 5, 8, 0, 0))


def add_phrase_memories(c: Corpus) -> None:
    a = "acme"
    c.add("chat/cron-owners", a, "chat", "platform",
          "honestly nobody owns the cron jobs, half of them still mail a person who left in 2025",
          source=slack_source("ops", utc(2026, 11, 3, 17, 30, 0), c.rng),
          created_at=utc(2026, 11, 3, 17, 30, 0))
    c.add("meeting/queue-drained", a, "meeting", "meetings",
          "Meeting 2026-11-05 16:00\n"
          "Tom: Cutover retro. It went fine because the queue drained before we cut over, so there was nothing in flight.\n"
          "Priya: We got lucky with traffic, it was a quiet afternoon. Next time we should pause the producers explicitly.\n"
          "Tom: Agreed, I'll add a pause step to the runbook and a check that the queue depth is zero.",
          source=f"recording/{c.hexid()}/chunk-1", created_at=utc(2026, 11, 5, 16, 25, 0),
          metadata={"speaker_count": 2})
    c.used_titles.add((a, "Meeting 2026-11-05 16:00"))
    c.add("decision/error-budget", a, "decision", "platform",
          "Feature freeze on the gateway until December: the error budget is already spent for this quarter "
          "after the two header incidents, so only reliability fixes merge.",
          source="notes/2026/11/gateway-freeze.md", created_at=utc(2026, 11, 19, 10, 0, 0),
          valid_until=utc(2026, 12, 31, 23, 59, 59))
    c.add("note/old-endpoint", a, "note", "mobile",
          "The v1 sync API is deprecated, but we keep the old endpoint alive until March because 12% of "
          "Android installs have auto-update disabled.",
          source="notes/2026/11/v1-sync-deprecation.md", created_at=utc(2026, 11, 11, 15, 0, 0))
    c.add("meeting/romanian-phrase", a, "meeting", "meetings", ROMANIAN_PHRASE_MEETING,
          source=f"recording/{c.hexid()}/chunk-1", created_at=utc(2026, 10, 21, 16, 2, 0),
          metadata={"speaker_count": 3, "language": "ro"})
    c.used_titles.add((a, "Meeting 2026-10-21 15:30"))

    g = "globex"
    c.add("decision/dock-doors", g, "decision", "security",
          "Rotterdam site: the dock doors stay closed after six unless a supervisor is on the floor; "
          "late trucks wait at the gate.",
          source="notes/2026/11/dock-doors.md", created_at=utc(2026, 11, 2, 10, 0, 0))


# --------------------------------------------------------------------------
# Generated bulk: meetings, notes, decisions, code, incidents, chat
# --------------------------------------------------------------------------

PEOPLE = {
    "acme": ["Ana", "Radu", "Ioana", "Mihai", "Elena", "Andrei", "Sofia", "Tom", "Priya", "Lukas"],
    "globex": ["Hank", "Mara", "Jun", "Olu", "Greta", "Dev"],
}

MEETING_TOPICS = {
    "release": [
        "The release train leaves Tuesday; anything not merged by Monday noon waits a week.",
        "Canary looked clean for two hours, error rate flat at 0.2%.",
        "We should stop shipping schema work and feature work in the same release.",
        "The staging environment drifted again, someone applied a hotfix by hand.",
        "Can we automate the changelog from the merge titles?",
        "The Helm chart bump is ready, it only changes resource limits.",
        "I'd like a second reviewer on anything touching the ingress config.",
        "Argo CD sync waves are in place for the gateway now.",
        "Let's keep the release notes short, customers only read the first paragraph.",
    ],
    "oncall": [
        "Last week had nine pages, six of them for the same disk alert.",
        "The disk alert threshold is too tight on the log volumes.",
        "Handover notes were missing twice, please write them even when it was quiet.",
        "We need a runbook for the queue backlog alert, nobody knew what to check.",
        "Shadow shifts for the new people start next rotation.",
        "The escalation policy still points at someone who moved teams.",
        "Mean time to acknowledge went down to four minutes, nice work.",
        "Holiday cover is still open for the last week of December.",
    ],
    "billing": [
        "Tax rounding differs between the PDF and the ledger on three invoices.",
        "The dunning emails go out in English even for Romanian customers.",
        "Stripe webhooks were delayed for an hour yesterday, nothing lost.",
        "Finance wants a monthly export of credit notes.",
        "The proration logic for mid-cycle upgrades needs tests.",
        "We should move invoice numbering into the database sequence.",
        "Two enterprise customers asked for annual invoicing.",
        "The reconciliation job takes forty minutes, most of it in one query.",
    ],
    "mobile": [
        "The Android beta has a memory leak in the image carousel.",
        "Crash-free sessions are at 99.6% this week.",
        "Push notification opt-in dropped after the new onboarding screen.",
        "We need a decision on dropping iOS 15 support.",
        "The design team wants dark mode in the next release.",
        "App review asked for a demo account again.",
        "Offline sync conflicts are rare but confusing when they happen.",
        "The SDK upgrade broke deep links on older devices.",
    ],
    "security": [
        "The quarterly access review is due, managers have until Friday.",
        "We found two service accounts with admin roles they don't need.",
        "Dependency scanning now blocks merges on critical findings.",
        "The pen test report is in, mostly low findings.",
        "Secrets rotation for the database users is scheduled for the weekend.",
        "We should enforce hardware keys for production access.",
        "The WAF rules for the login endpoint need tuning, too many false positives.",
        "Phishing simulation click rate went down to 4%.",
    ],
    "hiring": [
        "We have three candidates in the final round for the platform role.",
        "The take-home exercise takes people too long, let's cut it to two hours.",
        "The recruiter wants feedback within a day of each interview.",
        "Two offers went out last week, one accepted.",
        "We should write down what a senior engineer is expected to do here.",
        "Interview panels need more diversity, please volunteer.",
        "The mobile role has been open for three months now.",
    ],
    "customer": [
        "The customer asked for SSO with Azure AD before renewal.",
        "They are happy with search quality but want faster exports.",
        "Churn risk is high for the two accounts on the old plan.",
        "The onboarding call went well, they start importing data next week.",
        "They reported slow dashboards in the afternoon, matches our peak.",
        "Sales promised a feature we don't have, we need to talk to them.",
        "Support tickets from this account doubled since the pricing change.",
    ],
    "planning": [
        "Q4 goals are mostly on track, the search latency goal is at risk.",
        "We should plan less for December, half the team is away.",
        "The roadmap review with leadership moved to next Thursday.",
        "Let's cut the scope of the reporting project to the two most requested reports.",
        "Infrastructure costs grew 6% month over month.",
        "We need an owner for the data retention work.",
        "The next planning session should start from customer feedback, not our wishlist.",
    ],
}

NOTE_TEMPLATES = [
    ("platform", "Runbook: {svc} restarts", "{svc} can be restarted safely at any time; it drains connections for 30 seconds. "
     "If it fails to come up, check the config map first, then the secrets mount. Last reviewed {date}."),
    ("platform", "Capacity {svc}", "Capacity notes for {svc}: peak at {n}k requests per minute around {hh}:00 UTC, "
     "CPU stays under 60%. Next review on {date}."),
    ("billing", "Invoice run {date}", "Monthly invoice run on {date}: {n} invoices, {m} failed on first attempt and were "
     "retried by the scheduler. Totals matched the ledger."),
    ("mobile", "Mobile metrics {date}", "Mobile weekly, {date}: crash-free sessions {pct}%, {n}k daily actives, "
     "store rating 4.{m}. The onboarding experiment is still running."),
    ("security", "Access review {date}", "Access review for {team}: {n} accounts checked, {m} roles removed, "
     "no shared credentials found. Signed off on {date}."),
    ("platform", "On-call handover {date}", "On-call handover {date}: quiet week apart from {n} pages for the "
     "{svc} disk alert; the threshold change is in review. Nothing carried over."),
    ("billing", "Customer note {cust}", "{cust} asked about annual invoicing and a purchase order field on the PDF. "
     "Account manager follows up on {date}."),
    ("platform", "Cost note {date}", "Hosting costs for the week to {date}: ${n},{m:03d}, mostly compute for "
     "{svc}. Storage flat."),
]

SERVICES = ["gateway", "search-indexer", "notification-svc", "billing-api", "auth", "export-worker",
            "lexical-svc", "semantic-svc", "scheduler"]
TEAMS = ["platform", "billing", "mobile", "data", "support"]
CUSTOMERS = ["Initech", "Umbrella Health", "Hooli", "Stark Logistics", "Wayne Retail", "Cyberdyne",
             "Soylent Foods", "Vandelay Imports"]

DECISION_TEMPLATES = [
    ("platform", "We standardise on {tool} for {area}; the old setup is removed by {date}."),
    ("billing", "Invoices for {cust} move to annual billing from {date}, with a 10% discount."),
    ("security", "All {area} credentials rotate every 90 days, starting {date}."),
    ("mobile", "Minimum supported iOS version becomes 16 from {date}."),
    ("platform", "{svc} gets its own node pool; noisy neighbours on the shared pool cost us two incidents."),
    ("security", "Production shell sessions are recorded from {date}; recordings kept 180 days."),
]
TOOLS = ["OpenTelemetry", "Argo CD", "Renovate", "Teleport", "Grafana Alloy", "sqlx", "cargo-deny"]
AREAS = ["tracing", "deploys", "dependency updates", "SSH", "metrics", "database", "CI"]

CODE_SNIPPETS = [
    ("platform", "git/trine/services/core/src/rrf.rs",
     "pub fn rrf(ranks: &[usize], k: f64) -> f64 {\n    ranks.iter().map(|r| 1.0 / (k + *r as f64)).sum()\n}"),
    ("platform", "git/trine/services/core/src/verbatim.rs",
     "fn fold(s: &str) -> String {\n    s.split_whitespace().collect::<Vec<_>>().join(\" \").to_lowercase()\n}"),
    ("billing", "git/billing-core/src/ledger/entry.rs",
     "#[derive(Debug, Clone, PartialEq)]\npub struct LedgerEntry {\n    pub invoice_id: Uuid,\n    pub amount_minor: i64,\n    pub currency: Currency,\n}"),
    ("billing", "git/billing-core/src/tax/ro.rs",
     "/// Romanian VAT is 19% for most services.\npub const VAT_RO: Decimal = dec!(0.19);"),
    ("mobile", "git/mobile-app/ios/Session/SessionStore.swift",
     "guard let token = keychain.string(forKey: \"session\") else {\n    return .signedOut\n}"),
    ("mobile", "git/mobile-app/android/app/src/main/java/app/sync/SyncWorker.kt",
     "override suspend fun doWork(): Result {\n    return if (sync.run()) Result.success() else Result.retry()\n}"),
    ("platform", "git/agent-tools/agent_tools/memory.py",
     "def store_memory(client, text: str, tenant: str) -> str:\n    point_id = str(uuid.uuid4())\n    client.upsert(collection_name='memories', points=[...])\n    return point_id"),
    ("platform", "git/infra/terraform/modules/qdrant/main.tf",
     "resource \"kubernetes_stateful_set\" \"qdrant\" {\n  metadata { name = \"qdrant\" }\n  spec { replicas = 3 }\n}"),
    ("security", "git/infra/policies/deny-privileged.rego",
     "deny[msg] {\n  input.spec.containers[_].securityContext.privileged\n  msg := \"privileged containers are not allowed\"\n}"),
    ("platform", "git/trine/lexical-svc/src/count.rs",
     "let counts = futures::future::try_join_all(terms.iter().map(|t| store.count(t, &filter))).await?;"),
    ("billing", "git/billing-core/src/dunning/mod.rs",
     "pub async fn sweep(db: &PgPool) -> Result<usize> {\n    let due = sqlx::query_as!(Due, \"SELECT id FROM invoices WHERE due_at < now() ORDER BY id FOR UPDATE SKIP LOCKED\")\n        .fetch_all(db).await?;\n    Ok(due.len())\n}"),
    ("platform", "git/agent-tools/agent_tools/search.py",
     "def search(client, query: str, limit: int = 8):\n    return client.query_points('memories', query=embed(query), limit=limit)"),
]

INCIDENT_TEMPLATES = [
    ("platform", "{svc} returned HTTP 503 for {n} minutes on {date}: upstream connect error or disconnect/reset before headers. Root cause: a node drain during the deploy."),
    ("platform", "Disk on {svc} volume hit 92% on {date}; old WAL segments were not archived. Archived manually, alert tuned."),
    ("billing", "Stripe webhook backlog of {n} events on {date}; the consumer was stuck on a poison message. Moved it to the dead-letter queue."),
    ("mobile", "Android build {ver} crashed on {n} devices with java.lang.IllegalStateException in SyncWorker on {date}. Rolled the staged rollout to 0%."),
    ("security", "Blocked {n} credential-stuffing attempts against /login on {date}; rate limit now 10 per minute per IP."),
    ("platform", "TLS certificate for {svc} expired on {date} at {hh}:{mm}; renewal job ran on a cordoned node. Renewed by hand."),
]

CHAT_LINES = [
    "anyone else seeing slow CI today?",
    "deploy of {svc} is done, watching dashboards",
    "who has the on-call phone this week?",
    "can someone review my PR for {svc}? it's small",
    "lunch at 13:00?",
    "the {svc} dashboard is red again, looking",
    "reminder: retro at {hh}:{mm} today",
    "I'm out tomorrow, {name} covers for me",
    "grafana is down, nothing to worry about, it's the upgrade",
    "merged the fix, it will go out with the next train",
    "thanks {name}!",
    "staging is broken, don't deploy there for an hour",
    "notes from the {date} standup are in the doc",
    "{cust} is asking for an ETA on the export fix",
    "the budget spreadsheet for {date} is shared in the finance folder",
    "who owns {svc} now?",
    "paged for {svc} at {hh}:{mm}, false alarm",
    "PSA: the VPN certificate changes on {date}",
    "who has the on-call phone this week? {name} said it's not them",
    "{svc} p99 is back under 300ms after the cache fix",
    "{name} can you approve the terraform plan for {svc}?",
    "the {date} invoice run finished, {n} invoices",
    "{cust} renewed for another year 🎉",
    "I'm reverting my change to {svc}, it broke the health check",
    "the flaky test in {svc} failed {m} times today, I'll quarantine it",
    "anyone know why {svc} logs are missing since {hh}:{mm}?",
    "standup notes: nothing blocked, {name} is on support",
    "reminder to fill in the access review by {date}",
]

GLOBEX_CODE = [
    ("warehouse", "git/wms/src/picking/path.rs",
     "pub fn next_bin(route: &Route, pos: BinId) -> Option<BinId> {\n    route.bins.iter().skip_while(|b| **b != pos).nth(1).copied()\n}"),
    ("warehouse", "git/wms/src/labels/printer.py",
     "def print_label(printer, order):\n    for attempt in range(3):\n        if printer.status() != 'paper_out':\n            return printer.send(render_zpl(order))\n        time.sleep(30)"),
    ("platform", "git/globex-infra/modules/vpn/main.tf",
     "resource \"aws_vpn_connection\" \"rotterdam\" {\n  customer_gateway_id = aws_customer_gateway.rtm.id\n  type                = \"ipsec.1\"\n}"),
    ("warehouse", "git/wms/src/carriers/dhl.rs",
     "const DHL_MAX_RPS: u32 = 10; // carrier limit, see the rate-limit note"),
    ("billing", "git/globex-billing/app/models/freight_invoice.rb",
     "class FreightInvoice < ApplicationRecord\n  belongs_to :shipment\n  validates :amount_cents, numericality: { greater_than: 0 }\nend"),
    ("security", "git/globex-infra/policies/ssh.yaml",
     "allowed_principals:\n  - ops-oncall\n  - site-leads\nmax_session: 8h"),
]

GLOBEX_NOTES = [
    "Rotterdam warehouse: scanner firmware 3.2 rolled out to all {n} handhelds, battery life improved.",
    "Pick-path optimisation cut average walking distance by {n}% in aisle block C.",
    "Carrier API from DHL changed their rate limit to {n} requests per second.",
    "Inventory count on {date}: {n} discrepancies, most in returns.",
    "The label printer service now retries on paper-out instead of failing the order (since {date}).",
    "Hamburg site goes live on the new WMS on {date}.",
    "Forklift telemetry dashboard added to the ops screen at the Rotterdam site; {n} trucks reporting.",
    "Returns backlog at Hamburg is {n} parcels; two temps start on {date}.",
    "Cold-storage sensors in bay {m} read 2 degrees high; recalibrated on {date}.",
    "Shift planning export for {date} is in the planning folder.",
]


def random_date(rng: random.Random, start: datetime, end: datetime) -> datetime:
    span = int((end - start).total_seconds())
    return start + timedelta(seconds=rng.randrange(span))


def meeting_title_time(rng: random.Random) -> tuple[int, int]:
    hour = rng.choices([9, 10, 11, 13, 14, 15, 16, 17], weights=[6, 4, 3, 1, 3, 3, 2, 1])[0]
    minute = rng.choices([0, 15, 30, 45, 58, 2, 28, 5, 50], weights=[5, 3, 5, 2, 3, 1, 1, 1, 1])[0]
    return hour, minute


def add_generated_meetings(c: Corpus, tenant: str, count: int, romanian: int) -> None:
    rng = c.rng
    people = PEOPLE[tenant]
    topics = sorted(MEETING_TOPICS)
    made = 0
    while made < count:
        day = utc(2026, 10, 1) + timedelta(days=rng.randrange(58))  # Oct 1 .. Nov 27
        if day.weekday() >= 5:
            continue
        hour, minute = meeting_title_time(rng)
        start = day.replace(hour=hour, minute=minute)
        title = f"Meeting {start:%Y-%m-%d %H:%M}"
        if (tenant, title) in c.used_titles:
            continue
        c.used_titles.add((tenant, title))
        ro = made < romanian
        if ro:
            pool = ROMANIAN_SENTENCES
            lines = rng.sample(pool, rng.randint(4, 7))
        else:
            topic = rng.choice(topics)
            pool = MEETING_TOPICS[topic]
            lines = rng.sample(pool, rng.randint(3, min(8, len(pool))))
        speakers = rng.sample(people, rng.randint(2, min(4, len(people))))
        body = "\n".join(f"{speakers[i % len(speakers)]}: {line}" for i, line in enumerate(lines))
        duration = timedelta(minutes=rng.randint(7, 55))
        created = start + duration + timedelta(seconds=rng.randint(60, 900))
        rec = c.hexid()
        meta = None
        if rng.random() < 0.2:
            meta = {"speaker_count": len(speakers), "tags": [rng.choice(["q4", "weekly", "sync", "retro"])]}
            if ro:
                meta["language"] = "ro"
        # A few recordings are old imports without a creation time.
        created_at = None if rng.random() < 0.06 else created
        c.add(f"meeting/{rec}/chunk-1", tenant, "meeting", "meetings", f"{title}\n{body}",
              source=f"recording/{rec}/chunk-1", created_at=created_at, metadata=meta)
        # Some longer meetings have a second chunk, without the title.
        if not ro and rng.random() < 0.15:
            extra = rng.sample(pool, min(3, len(pool)))
            body2 = "\n".join(f"{rng.choice(speakers)}: {line}" for line in extra)
            c.add(f"meeting/{rec}/chunk-2", tenant, "meeting", "meetings", body2,
                  source=f"recording/{rec}/chunk-2", created_at=created_at)
        made += 1


def fill_values(rng: random.Random, tenant: str, when: datetime) -> dict:
    """One set of template values; {date} is the day of `when`."""
    return dict(
        svc=rng.choice(SERVICES), date=f"{when:%Y-%m-%d}", n=rng.randint(3, 240), m=rng.randint(1, 9),
        pct=f"{rng.uniform(99.0, 99.9):.1f}", hh=f"{rng.randint(7, 18):02d}", mm=f"{rng.choice([0, 15, 30, 45, 58]):02d}",
        team=rng.choice(TEAMS), cust=rng.choice(CUSTOMERS), tool=rng.choice(TOOLS), area=rng.choice(AREAS),
        ver=f"4.{rng.randint(8, 11)}.{rng.randint(0, 5)}", name=rng.choice(PEOPLE[tenant]),
    )


def fill(rng: random.Random, template: str, tenant: str, when: datetime) -> str:
    return template.format(**fill_values(rng, tenant, when))


def slug(text: str) -> str:
    return "-".join(tokens(text))[:40].strip("-")


def add_generated_bulk(c: Corpus, tenant: str, notes: int, decisions: int, code: int,
                       incidents: int, chats: int) -> None:
    rng = c.rng
    lo, hi = utc(2026, 10, 1), utc(2026, 11, 28)

    for i in range(notes):
        when = random_date(rng, lo, hi)
        if tenant == "globex" and i % 2 == 0:
            project, text = "warehouse", fill(rng, rng.choice(GLOBEX_NOTES), tenant, when)
            while any(m["text"] == text for m in c.items if m["tenant"] == tenant):
                text = fill(rng, rng.choice(GLOBEX_NOTES), tenant, when)
            title = text[:30]
        else:
            project, title_t, body_t = rng.choice(NOTE_TEMPLATES)
            values = fill_values(rng, tenant, when)
            title = title_t.format(**values)
            text = f"{title}\n{body_t.format(**values)}"
        source = f"notes/{when:%Y/%m}/{slug(title)}.md"
        if rng.random() < 0.04:
            source = None
        created = None if rng.random() < 0.07 else when
        meta = {"tags": [project]} if rng.random() < 0.1 else None
        c.add(f"note/gen-{i}", tenant, "note", project, text, source=source, created_at=created, metadata=meta)

    for i in range(decisions):
        when = random_date(rng, lo, hi)
        project, template = rng.choice(DECISION_TEMPLATES)
        text = "Decision: " + fill(rng, template, tenant, when + timedelta(days=rng.randint(7, 40)))
        while any(m["text"] == text for m in c.items if m["tenant"] == tenant):
            text = "Decision: " + fill(rng, template, tenant, when + timedelta(days=rng.randint(7, 40)))
        valid_from = valid_until = None
        r = rng.random()
        if r < 0.15:  # superseded
            valid_until = when + timedelta(days=rng.randint(3, 20))
            valid_until = min(valid_until, REFERENCE_NOW - timedelta(days=1))
        elif r < 0.25:  # not yet in force
            valid_from = utc(2027, rng.choice([1, 2, 3]), 1)
        c.add(f"decision/gen-{i}", tenant, "decision", project, text,
              source=f"notes/{when:%Y/%m}/decision-{i:02d}.md", created_at=when,
              valid_from=valid_from, valid_until=valid_until)

    snippets = CODE_SNIPPETS if tenant == "acme" else GLOBEX_CODE
    for i in range(code):
        when = random_date(rng, lo, hi)
        project, path, snippet = snippets[i % len(snippets)]
        if i >= len(snippets):
            # A later revision of the same file: a commit message and the snippet.
            snippet = f"commit {rng.getrandbits(40):010x}: {rng.choice(['refactor', 'fix', 'tidy', 'test'])} {path.rsplit('/', 1)[-1]}\n{snippet}"
        c.add(f"code/gen-{i}", tenant, "code", project, snippet, source=path, created_at=when)

    for i in range(incidents):
        when = random_date(rng, lo, hi)
        project, template = rng.choice(INCIDENT_TEMPLATES)
        text = fill(rng, template, tenant, when)
        when += timedelta(minutes=rng.randint(20, 600))  # written up after the event
        source = f"pagerduty/P{rng.getrandbits(24):06X}" if rng.random() < 0.5 else slack_source("incidents", when, rng)
        c.add(f"incident/gen-{i}", tenant, "incident", project, text, source=source, created_at=when)

    seen = {m["text"] for m in c.items if m["tenant"] == tenant}
    for i in range(chats):
        when = random_date(rng, lo, hi)
        text = fill(rng, rng.choice(CHAT_LINES), tenant, when)
        while text in seen:  # chat repeats itself, but a sample should not
            text = fill(rng, rng.choice(CHAT_LINES), tenant, when)
        seen.add(text)
        channel = rng.choice(["ops", "general", "mobile", "billing", "incidents"])
        source = None if rng.random() < 0.03 else slack_source(channel, when, rng)
        project = {"ops": "platform", "general": "platform", "mobile": "mobile", "billing": "billing",
                   "incidents": "platform"}[channel]
        c.add(f"chat/gen-{i}", tenant, "chat", project, text, source=source,
              created_at=None if rng.random() < 0.05 else when)


def add_date_prose(c: Corpus) -> None:
    """Ordinary notes that mention November 2026 dates and times, as real notes do."""
    rng = c.rng
    items = [  # (kind, project, written on, text)
        ("chat", "meetings", (11, 12), "Standup moved to 09:30 from 2026-11-16 so the Cluj team can join."),
        ("note", "billing", (11, 10), "Budget review for 2026 closes on 2026-11-25; send estimates to Elena by 11:00 that day."),
        ("note", "platform", (11, 14), "Planned maintenance on 2026-11-21 from 22:00 to 23:58 UTC: Postgres minor upgrade."),
        ("chat", "meetings", (11, 9), "Hiring committee meets on 2026-11-13 at 14:00 to decide on the platform offers."),
        ("note", "billing", (11, 2), "The 2026 on-call compensation is paid with the November payroll, on 2026-11-28."),
        ("chat", "billing", (11, 17), "Customer call with Initech on 2026-11-19 at 16:00; they want SSO before renewal."),
        ("note", "platform", (11, 20), "Freeze for the holiday season starts 2026-12-18; last release train 2026-12-15."),
        ("chat", "platform", (10, 26), "Reminder: daylight saving time ended 2026-10-25, the 09:00 jobs now run at 08:00 UTC."),
        ("note", "security", (11, 3), "Quarterly security training deadline is 2026-11-30 at 23:59."),
        ("chat", "meetings", (11, 3), "The 11 o'clock customer sync on 2026-11-04 was cancelled, moved to 2026-11-05 at 11:58."),
        ("note", "billing", (11, 1), "Invoice cutoff for November 2026 is the 28th at 12:00."),
        ("chat", "platform", (11, 24), "Office closed on 2026-11-30 (Saint Andrew's Day) and 2026-12-01."),
    ]
    for i, (kind, project, (mo, d), text) in enumerate(items):
        when = utc(2026, mo, d, rng.randint(8, 18), rng.randrange(60), rng.randrange(60))
        source = (slack_source("general", when, rng) if kind == "chat"
                  else f"notes/{when:%Y/%m}/{slug(text)}.md")
        c.add(f"note/dated-{i}", "acme", kind, project, text, source=source, created_at=when)


POSTMORTEM = """\
Postmortem: month-end invoice PDFs late by up to 26 hours (2026-10-31 to 2026-11-01)
Summary: the October invoice run finished on time in the ledger, but 4,118 of 9,630 PDFs reached customers between 6 and 26 hours late. No amounts were wrong and nothing was lost.
Timeline (UTC): 2026-10-31 22:00 the invoice run starts; 22:41 ledger totals reconciled; 23:05 the export-worker queue passes 5,000 messages, the backlog alert fires but is routed to the platform rotation, which treats it as the usual month-end spike; 2026-11-01 03:30 queue depth 7,900 and growing; 07:12 a support agent escalates three customer emails; 07:40 the payments on-call finds the PDF workers crash-looping; 08:15 workers scaled from 4 to 16 with a higher memory limit; 23:58 the last PDF is sent.
Root cause: the new font bundle added for Romanian diacritics doubled the memory used per render. The workers ran at their limit, were killed mid-render, and the message went back to the queue, so the same large invoices were retried over and over and starved the small ones.
Contributing factors: the backlog alert went to the wrong rotation; the worker dashboards showed restarts but nobody looked at them overnight; load tests for the renderer use English invoices only.
What went well: the ledger and the PDFs were decoupled, so revenue recognition was unaffected; support had a template ready within the hour.
Action items: route the export-worker alerts to the payments rotation (done, OPS-1399); add a poison-message cap of 5 attempts per invoice (in review); subset the fonts per locale to cut render memory by 60% (planned); run the month-end load test with a realistic locale mix (owner Priya, before the November run); add a customer-facing status line when PDFs are more than an hour late.
Lessons: a retry without a cap turns one expensive message into an outage, and an alert nobody owns is the same as no alert."""


def add_long_and_sourceless(c: Corpus) -> None:
    c.add("incident/postmortem-invoice-pdfs", "acme", "incident", "billing", POSTMORTEM,
          source="notes/2026/11/postmortem-invoice-pdfs.md", created_at=utc(2026, 11, 4, 15, 0, 0),
          metadata={"severity": "major", "tags": ["postmortem", "q4"], "tickets": ["OPS-1399"]})
    # Memories an agent wrote itself, with no source document.
    for key, tenant, project, text, created in [
        ("note/pref-language", "acme", "meetings",
         "Andrei prefers meeting summaries in Romanian, with action items in English.", utc(2026, 10, 14, 9, 0, 0)),
        ("note/pref-format", "acme", "platform",
         "When summarising incidents for Sofia, lead with customer impact and keep it to five bullets.", None),
        ("note/pref-timezone", "acme", "meetings",
         "The team works on Bucharest time; convert UTC times before quoting them to Elena.", utc(2026, 11, 2, 8, 30, 0)),
        ("note/pref-globex", "globex", "warehouse",
         "Mara wants shift reports as a table, one row per site.", utc(2026, 10, 19, 7, 0, 0)),
    ]:
        c.add(key, tenant, "note", project, text, created_at=created)


def build() -> Corpus:
    c = Corpus(random.Random(SEED))
    add_target_meetings(c)
    add_identifier_memories(c)
    add_semantic_golds(c)
    add_phrase_memories(c)
    add_date_prose(c)
    add_long_and_sourceless(c)
    add_generated_meetings(c, "acme", count=58, romanian=3)
    add_generated_meetings(c, "globex", count=20, romanian=0)
    add_generated_bulk(c, "acme", notes=40, decisions=18, code=22, incidents=18, chats=38)
    add_generated_bulk(c, "globex", notes=22, decisions=8, code=12, incidents=8, chats=14)
    return c


# --------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------

def build_queries(c: Corpus) -> list[dict]:
    q: list[dict] = []

    def add(kind: str, query: str, tenant: str, *keys: str) -> None:
        q.append({"qid": f"q{len(q) + 1:02d}", "query": query, "tenant": tenant,
                  "gold": [c.id(tenant, k) for k in keys], "kind": kind})

    # Titles: the exact one among near-duplicates.
    add("title", TARGET_TITLE, "acme", "meeting/0b85ed4a/chunk-1")
    add("title", "Meeting 2026-11-11 09:45", "acme", "meeting/title-2026-11-11-0945")
    add("title", "Meeting 2026-11-12 09:58", "acme", "meeting/title-2026-11-12-0958")
    add("title", "Meeting 2026-11-11 10:58", "acme", "meeting/title-2026-11-11-1058")
    add("title", "Meeting 2025-11-11 09:58", "acme", "meeting/title-2025-11-11-0958")
    add("title", "Meeting 2026-11-09 11:58", "acme", "meeting/title-2026-11-09-1158")
    add("title", "meeting   2026-11-11 09:58", "acme", "meeting/0b85ed4a/chunk-1")
    add("title", TARGET_TITLE, "globex", "meeting/0b85ed4a/chunk-1")
    # One ordinary generated title, chosen deterministically.
    generated = sorted(m["text"].split("\n", 1)[0] for m in c.items
                       if m["tenant"] == "acme" and m["kind"] == "meeting"
                       and m["text"].startswith("Meeting 2026-10-"))
    pick = generated[len(generated) // 2]
    key = next(k.split("/", 1)[1] for k, m in c.by_key.items()
               if m["tenant"] == "acme" and m["text"].startswith(pick + "\n"))
    add("title", pick, "acme", key)

    # Identifiers.
    add("identifier", "CVE-2023-4863", "acme", "incident/cve-2023-4863")
    add("identifier", "libc6 1:2.36-9+deb12u4", "acme", "incident/libc6-deb12u4")
    add("identifier", "10.0.3.17", "acme", "incident/ip-10-0-3-17")
    add("identifier", "v2.14.3", "acme", "note/release-v2-14-3")
    add("identifier", "OPS-1432", "acme", "incident/cve-2023-4863", "incident/ops-1432-followup")
    add("identifier", "billing::invoice::retry_policy", "acme", "code/retry-policy")
    add("identifier", "foo_bar.baz", "acme", "code/foo-bar-baz")
    add("identifier", "40P01", "acme", "incident/deadlock-40p01")
    add("identifier", "CVE-2024-3094", "globex", "incident/cve-2024-3094")

    # Phrases that appear verbatim in exactly one memory of the tenant.
    add("phrase", "nobody owns the cron jobs", "acme", "chat/cron-owners")
    add("phrase", "the queue drained before we cut over", "acme", "meeting/queue-drained")
    add("phrase", "error budget is already spent", "acme", "decision/error-budget")
    add("phrase", "keep the old endpoint alive until March", "acme", "note/old-endpoint")
    add("phrase", "mulțumesc pentru răbdare", "acme", "meeting/romanian-phrase")
    add("phrase", "the dock doors stay closed after six", "globex", "decision/dock-doors")

    # Ordinary questions answered in other words.
    add("semantic", "how do we roll back a failed deploy?", "acme", "note/revert-bad-release")
    add("semantic", "who gets paged when billing goes down at night?", "acme", "note/invoicing-escalation")
    add("semantic", "how much can we spend on cloud infrastructure next quarter?", "acme", "decision/hosting-allowance-q1")
    add("semantic", "why was the logistics customer unhappy on the last call?", "acme", "note/northwind-debrief")
    add("semantic", "how do we change the database schema without downtime?", "acme", "note/expand-contract")
    add("semantic", "are we hiring more backend engineers?", "acme", "decision/headcount-rust")
    add("semantic", "what happens when a customer's credit card payment is declined?", "acme", "note/dunning")
    add("semantic", "how does a new hire get access to the production kubernetes cluster?", "acme", "note/kubectl-onboarding")
    add("semantic", "why did the iPhone app crash when opening it last month?", "acme", "incident/ios-launch")
    add("semantic", "can we release on Fridays?", "acme", "decision/friday-current")
    add("semantic", "how do we back up the warehouse data?", "globex", "note/inventory-snapshots")
    return q


# --------------------------------------------------------------------------
# Invariants
# --------------------------------------------------------------------------

def check(items: list[dict], queries: list[dict]) -> dict:
    """Raise AssertionError on any broken invariant; return measured figures."""
    ids = [m["id"] for m in items]
    assert len(ids) == len(set(ids)), "duplicate ids"
    by_id = {m["id"]: m for m in items}
    for m in items:
        assert set(m) <= set(ALLOWED_KEYS), f"unexpected keys in {m['id']}"
        assert {"id", "text", "tenant", "project", "kind"} <= set(m), m["id"]
        uuid.UUID(m["id"])
        assert m["tenant"] in ("acme", "globex") and m["kind"] in KINDS
        for k in ("created_at", "valid_from", "valid_until"):
            if k in m:
                datetime.strptime(m[k], "%Y-%m-%dT%H:%M:%SZ")
        if "valid_from" in m and "valid_until" in m:
            assert m["valid_from"] < m["valid_until"]

    def haystack(m: dict) -> list[str]:
        return [fold(m["text"]), fold(m.get("source", ""))]

    def verbatim(query: str, tenant: str) -> set[str]:
        needle = fold(query)
        return {m["id"] for m in items if m["tenant"] == tenant and any(needle in h for h in haystack(m))}

    def valid_now(m: dict) -> bool:
        now = ts(REFERENCE_NOW)
        return m.get("valid_from", "") <= now and ("valid_until" not in m or now < m["valid_until"])

    texts = Counter((m["tenant"], m["text"]) for m in items)
    assert all(n == 1 for n in texts.values()), "a text repeats within a tenant"

    acme = [m for m in items if m["tenant"] == "acme"]
    share = len(acme) / len(items)
    assert 0.70 <= share <= 0.80, f"acme share {share:.2f}"
    assert 300 <= len(items) <= 400, len(items)

    # The target title: exactly one memory per tenant, never in a source.
    assert len(verbatim(TARGET_TITLE, "acme")) == 1, "acme must hold the target title exactly once"
    assert len(verbatim(TARGET_TITLE, "globex")) == 1, "globex must hold the target title exactly once"
    target = by_id[next(iter(verbatim(TARGET_TITLE, "acme")))]
    assert target["source"] == "recording/0b85ed4a/chunk-1" and target["project"] == "meetings"
    assert len(target["text"]) >= 1500, len(target["text"])
    assert len(verbatim("CVE-2023-4863", "acme")) == 1, "CVE-2023-4863 must be in exactly one acme memory"
    assert len(verbatim("libc6 1:2.36-9+deb12u4", "acme") | verbatim("libc6 1:2.36-9+deb12u4", "globex")) == 1, \
        "libc6 1:2.36-9+deb12u4 must be in exactly one memory"

    # Near-duplicates that hold every term of the target title.
    want = set(terms(TARGET_TITLE))
    all_terms = [m for m in acme if want <= set(tokens(m["text"]))]
    assert len(all_terms) >= 5, len(all_terms)

    # Term frequencies over acme texts.
    df = Counter()
    for m in acme:
        df.update(set(tokens(m["text"])))
    freq = {t: df[t] / len(acme) for t in want}
    assert freq["2026"] >= 0.10 and freq["11"] >= 0.10, freq
    for t in ("meeting", "09", "58"):
        assert freq[t] >= 0.03, (t, freq)

    # Lengths, Romanian diacritics, optional fields.
    lengths = [len(m["text"]) for m in items]
    assert min(lengths) <= 80 and 1500 <= max(lengths) <= 2100, (min(lengths), max(lengths))
    ro = [m for m in items if m["kind"] == "meeting" and any(w in m["text"].lower() for w in ("ședinț", "întâlnir", "mulțumesc"))]
    assert len(ro) >= 4
    assert any("created_at" not in m for m in items)
    assert any("source" not in m for m in items)
    assert any("metadata" in m for m in items)
    assert any("valid_until" in m and m["valid_until"] < ts(REFERENCE_NOW) for m in items)
    assert any("valid_from" in m and m["valid_from"] > ts(REFERENCE_NOW) for m in items)

    # Queries.
    qids = [x["qid"] for x in queries]
    assert len(qids) == len(set(qids))
    for x in queries:
        assert set(x) == {"qid", "query", "tenant", "gold", "kind"}
        assert x["gold"], x["qid"]
        for g in x["gold"]:
            assert g in by_id and by_id[g]["tenant"] == x["tenant"], x["qid"]
            assert valid_now(by_id[g]), f"{x['qid']}: gold not valid at the reference time"
        if x["kind"] in ("title", "identifier", "phrase"):
            assert verbatim(x["query"], x["tenant"]) == set(x["gold"]), \
                f"{x['qid']}: {x['query']!r} verbatim in {len(verbatim(x['query'], x['tenant']))} memories"
        elif x["kind"] == "semantic":
            assert not verbatim(x["query"], x["tenant"]), x["qid"]
            qt = set(terms(x["query"]))
            for g in x["gold"]:
                shared = qt & set(tokens(by_id[g]["text"]))
                assert len(shared) * 2 < len(qt), f"{x['qid']} shares {sorted(shared)}"
        else:
            raise AssertionError(f"unknown kind {x['kind']}")

    # ADR 0172's point-id-order trap: the target should not be among the first
    # points by id of those holding its terms.
    holders = sorted(m["id"] for m in acme if want & set(tokens(m["text"])))
    rank = holders.index(target["id"]) + 1
    assert max(m["id"] for m in all_terms) == target["id"], "target not last by id among all-terms holders"
    assert rank >= 0.9 * len(holders), f"target {rank} of {len(holders)} by id"
    return {"freq": freq, "all_terms": len(all_terms), "target_rank_by_id": rank,
            "term_holders": len(holders), "max_len": max(lengths), "target_len": len(target["text"])}


# --------------------------------------------------------------------------

def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "samples")
    args = ap.parse_args()

    corpus = build()
    items = corpus.items
    queries = build_queries(corpus)
    try:
        figures = check(items, queries)
    except AssertionError as e:
        print(f"make-sample: invariant broken: {e}", file=sys.stderr)
        return 1

    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "memories.jsonl", items)
    write_jsonl(args.out / "queries.jsonl", queries)

    per_tenant = Counter(m["tenant"] for m in items)
    per_kind = {t: Counter(m["kind"] for m in items if m["tenant"] == t) for t in ("acme", "globex")}
    qkinds = Counter(x["kind"] for x in queries)
    kinds = "; ".join(f"{t} {per_tenant[t]} (" + ", ".join(f"{k} {per_kind[t][k]}" for k in KINDS) + ")"
                      for t in ("acme", "globex"))
    freq = ", ".join(f"{t} {figures['freq'][t]:.0%}" for t in terms(TARGET_TITLE))
    print(f"make-sample: {len(items)} memories — {kinds}; {len(queries)} queries ("
          + ", ".join(f"{k} {qkinds[k]}" for k in ("title", "identifier", "phrase", "semantic"))
          + f"); acme term df: {freq}; {figures['all_terms']} acme memories hold every term of "
          f"'{TARGET_TITLE}', the target is {figures['target_rank_by_id']} of {figures['term_holders']} by id")
    return 0


if __name__ == "__main__":
    sys.exit(main())
