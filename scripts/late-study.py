#!/usr/bin/env python3
"""Study late interaction offline: rerank the default fusion's first N by MaxSim over token vectors.

    trine eval --queries Q --modes hybrid --strategies default --native none --k 8 --lists L.jsonl
    python3 scripts/late-study.py --set chat=L.jsonl:devset/chat/memories.jsonl:Q \\
        --set fr=L2.jsonl:devset/fr/memories.jsonl:Q2:french --weights 1,2 --depth 40

For each question (kinds as `fusion-study.py` counts them; titles, identifiers and phrases keep the
default order) the default fusion of its lists (`fusion-study.py`'s mirror of fusion.rs, for
`--embedder`) is cut at its first `--depth` hits; each of them is scored by MaxSim, the mean over the
question's tokens (all-MiniLM-L6-v2's last layer, one vector a word piece; special tokens,
punctuation and the set's NLTK common words left out) of the best cosine with any of the memory's
token vectors (the same model, special tokens left out); and the first N are fused again by RRF
(k 60) of the default order and the MaxSim order at 1 : WEIGHT. Prints MRR / s@8 per set, half and
kind, the default beside each weight. The model is the one `scripts/fetch-model.sh` installs, run
here in numpy (it reproduces trine's cosines to 1e-6); token vectors are cached in `--cache`.
`--tokens static` judges with the static model's table instead (`trine model distill`): one vector
a word piece, no context, each question piece weighted by its vector's length (its SIF weight), the
memory's pieces but punctuation all kept; nothing cached.
Needs numpy, scipy, safetensors and tokenizers from PyPI; the common-word lists are the NLTK files
of the `stop-words` crate trine builds with (in cargo's registry). Not in the test command.
"""

from __future__ import annotations

import argparse, glob, importlib.util, json, math, os, pickle, re, sys
from collections import defaultdict

import numpy as np
from safetensors.numpy import load_file
from scipy.special import erf
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("fusion_study", os.path.join(HERE, "fusion-study.py"))
fs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fs)  # type: ignore[union-attr]

SPECIAL = {"[CLS]", "[SEP]", "[PAD]"}
PUNCT = re.compile(r"^[^\w]+$")


class MiniLM:
    """all-MiniLM-L6-v2's encoder in numpy: token vectors of the last layer, unit length."""

    def __init__(self, models: str):
        d = os.path.join(models, "all-MiniLM-L6-v2")
        self.w = {k: v.astype(np.float32) for k, v in load_file(os.path.join(d, "model.safetensors")).items()}
        self.tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        self.tok.enable_truncation(256)
        self.tok.enable_padding()

    def _ln(self, x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def _lin(self, x, p):
        return x @ self.w[p + ".weight"].T + self.w[p + ".bias"]

    def tokens(self, texts: list[str]) -> list[tuple[np.ndarray, list[str]]]:
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc])
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        b, t = ids.shape
        w = self.w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
        x = self._ln(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        bias = (1 - mask)[:, None, None, :] * -1e9
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q, k, v = (self._lin(x, p + f"attention.self.{n}").reshape(b, t, 12, 32).transpose(0, 2, 1, 3)
                       for n in ("query", "key", "value"))
            a = q @ k.transpose(0, 1, 3, 2) / math.sqrt(32) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            o = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, 384)
            x = self._ln(self._lin(o, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self._lin(x, p + "intermediate.dense")
            x = self._ln(self._lin(0.5 * h * (1 + erf(h / math.sqrt(2))), p + "output.dense") + x,
                         p + "output.LayerNorm")
        out = []
        for j, e in enumerate(enc):
            n = int(mask[j].sum())
            v = x[j, :n] / np.linalg.norm(x[j, :n], axis=1, keepdims=True)
            out.append((v, e.tokens[:n]))
        return out


class Static:
    """The static model's table: unit rows, and each row's length (its SIF weight)."""

    def __init__(self, models: str):
        d = os.path.join(models, "static")
        table = load_file(os.path.join(d, "model.safetensors"))["embeddings"].astype(np.float32)
        self.length = np.linalg.norm(table, axis=1)
        self.unit = table / np.maximum(self.length, 1e-9)[:, None]
        self.tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))

    def pieces(self, text: str, common: set[str] | None = None) -> list[int]:
        e = self.tok.encode(text, add_special_tokens=False)
        kept = [i for i, t in zip(e.ids, e.tokens) if not PUNCT.match(t) and (common is None or t.lower() not in common)]
        return kept or list(e.ids)

    def scores(self, query: str, common: set[str], texts: list[str]) -> list[float]:
        q = self.pieces(query, common)
        weight = self.length[q]
        out = []
        for text in texts:
            best = (self.unit[q] @ self.unit[self.pieces(text)].T).max(1)
            out.append(float((best * weight).sum() / weight.sum()))
        return out


def common_words(language: str) -> set[str]:
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = glob.glob(os.path.join(home, "registry/src/*/stop-words-0.9.*/src/nltk", language))
    if not found:
        sys.exit(f"late-study: no NLTK list '{language}' of the stop-words crate under {home}/registry "
                 "(build trine once so that cargo fetches it)")
    return set(open(found[0], encoding="utf-8").read().split())


def memory_tokens(model: MiniLM, cache: str, name: str, texts: dict[str, str], ids: set[str]) -> dict:
    path = os.path.join(cache, f"{name}.tokens.pkl")
    have = pickle.load(open(path, "rb")) if os.path.exists(path) else {}
    need = sorted((i for i in ids if i not in have), key=lambda i: len(texts[i]))
    for start in range(0, len(need), 32):
        batch = need[start:start + 32]
        for i, (v, toks) in zip(batch, model.tokens([texts[i] for i in batch])):
            have[i] = v[[k for k, t in enumerate(toks) if t not in SPECIAL]].astype(np.float16)
    if need:
        os.makedirs(cache, exist_ok=True)
        pickle.dump(have, open(path, "wb"))
    return have


def question_tokens(model: MiniLM, query: str, common: set[str]) -> np.ndarray:
    v, toks = model.tokens([query])[0]
    keep = [k for k, t in enumerate(toks) if t not in SPECIAL and not PUNCT.match(t) and t.lower() not in common]
    return v[keep] if keep else v[[k for k, t in enumerate(toks) if t not in SPECIAL]]


def rrf(lists: list[list[str]], weights: list[float], k: int = 60) -> list[str]:
    score: dict[str, float] = defaultdict(float)
    for ids, w in zip(lists, weights):
        for r, i in enumerate(ids):
            score[i] += w / (k + r + 1)
    return sorted(score, key=lambda i: -score[i])


def study(name: str, spec: str, args, model: MiniLM | Static) -> None:
    parts = spec.split(":")
    lists, memories, queries = parts[:3]
    common = common_words(parts[3] if len(parts) > 3 else "english")
    split = {q["qid"]: q.get("split") for q in map(json.loads, open(queries))}
    texts = {m["id"]: m["text"] for m in map(json.loads, open(memories))}
    rows = [r for r in map(json.loads, open(lists)) if r["strategy"] == "default"]
    cfg = fs.DEFAULTS[args.embedder]
    fused = {r["qid"]: fs.fused(r, cfg)[0] for r in rows}  # the fused order, before any late scores
    asked = [r for r in rows if r["kind"] in fs.QUESTION_KINDS]
    if isinstance(model, MiniLM):
        toks = memory_tokens(model, args.cache, name, texts, {i for r in asked for i in fused[r["qid"]][:args.depth]})
    tally: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows:
        ranked = {"default": fused[r["qid"]]}
        if r["kind"] in fs.QUESTION_KINDS:
            head = fused[r["qid"]][:args.depth]
            if isinstance(model, MiniLM):
                q = question_tokens(model, r["query"], common)
                sim = [float((q @ toks[i].astype(np.float32).T).max(1).mean()) for i in head]
            else:
                sim = model.scores(r["query"], common, [texts[i] for i in head])
            order = [head[j] for j in np.argsort(-np.array(sim), kind="stable")]
            for w in args.weights:
                ranked[f"late 1:{w:g}"] = rrf([head, order], [1.0, w]) + fused[r["qid"]][args.depth:]
        else:
            for w in args.weights:
                ranked[f"late 1:{w:g}"] = fused[r["qid"]]
        for label, ids in ranked.items():
            first = fs.rank(ids, r["gold"])
            for kind in ("all", r["kind"]):
                t = tally[(label, split.get(r["qid"]), kind)]
                t[0] += 1 / first if first else 0.0
                t[1] += 1 if first and first <= fs.K else 0
                t[2] += 1
    for key in sorted(tally, key=lambda k: (str(k[1]), k[2] != "all", k[2], k[0] != "default", k[0])):
        mrr, hits, n = tally[key]
        print(f"{name}\t{key[1]}\t{key[2]}\t{key[0]}\t{n}\t{mrr / n:.3f} / {hits / n:.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", required=True,
                    help="NAME=LISTS:MEMORIES:QUERIES[:NLTK language, default english]")
    ap.add_argument("--embedder", default="minilm", choices=sorted(fs.DEFAULTS))
    ap.add_argument("--depth", type=int, default=40)
    ap.add_argument("--weights", type=lambda s: [float(x) for x in s.split(",")], default=[1.0, 2.0])
    ap.add_argument("--models", default=os.path.join(HERE, "..", "models"))
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/trine/late-study"))
    ap.add_argument("--tokens", default="minilm", choices=["minilm", "static"],
                    help="whose token vectors judge: MiniLM's contextual ones, or the static table's rows")
    args = ap.parse_args()
    model = MiniLM(args.models) if args.tokens == "minilm" else Static(args.models)
    print("set\thalf\tkind\tranking\tqueries\tMRR / s@8")
    for spec in args.set:
        name, _, rest = spec.partition("=")
        study(name, rest, args, model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
