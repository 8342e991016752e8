#!/usr/bin/env python3
"""Issue 22's bars, measured from Python in one run against the peers (a
benchmark, not a test).

    bash tools/bench/setup_peers.sh                  # tools/.venv: datasketch, rensa
    tools/.venv/bin/pip install ./python            # this checkout's lshdb, release build
    python3 tools/debian_corpus.py --long --out tools/data/debian-desc-long.jsonl
    python3 tools/pypi_corpus.py --out tools/data/pypi.jsonl
    tools/.venv/bin/python tools/bench/python_parity.py \\
        tools/data/debian-desc-long.jsonl tools/data/pypi.jsonl

For each corpus, one JSON object with:

- ``dedup``: ``insert_many`` (texts) against ``insert_unique_many`` (texts,
  at the index threshold) into fresh files, in docs/s, and their ratio (bar:
  ≥ 0.5); rensa's ``RMinHashDeduplicator.add_pairs`` on the same texts
  (its users shingle in Python, so that time counts).
- ``query_many``: 1,000 texts queried by a Python loop of ``query`` and by
  one ``query_many``, best of three, and the speed-up (bar: ≥ 1.6).
- ``top_k``: item sets (lower-cased word sets, as datasketch users index
  them) of the first ``--recall-limit`` documents (200,000: datasketch's
  ensemble of all 842k PyPI sets did not fit in 24 GiB beside the rest). Recall at k = 10 against the exact top-10 by Jaccard (brute force
  over the same sets, the query document itself left out; a returned key
  counts when its Jaccard is at least the exact 10th best): lshdb's
  ``query(items=, top=11)`` on a file created with ``containment=True``
  (top-k probes that prefix forest; bar ≥ 0.95) and datasketch's
  ``MinHashLSHForest`` (``query(m, 11)``), with p50 latency.
- ``containment``: recall at t = 0.8 against the exact containment sets
  |Q ∩ X| / |Q| ≥ 0.8: lshdb's ``query(items=, containment=0.8)`` on a
  file created with ``containment=True`` (bar ≥ 0.95) and datasketch's
  ``MinHashLSHEnsemble``, with p50 latency.

Speed figures on a shared 2-core machine move from run to run; the ratios,
taken within one run, are what the bars compare.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import lshdb
from corpus_io import read_corpus

WORD = re.compile(r"\w+")




def char_shingles(text: str, k: int = 5) -> list[str]:
    s = " ".join(text.lower().split())
    if len(s) <= k:
        return [s]
    return list({s[i : i + k] for i in range(len(s) - k + 1)})


def p50_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


def rate(n: int, seconds: float) -> int:
    return round(n / seconds)


# -- dedup on write ----------------------------------------------------------


def dedup(tmp: Path, keys: list[str], texts: list[str], t: float) -> dict:
    out: dict = {}
    db = lshdb.Database.create(tmp / "many.lshdb", t)
    start = time.perf_counter()
    db.insert_many(keys=keys, texts=texts)
    out["insert_many_docs_per_s"] = rate(len(keys), time.perf_counter() - start)
    db.close()
    db = lshdb.Database.create(tmp / "unique.lshdb", t)
    start = time.perf_counter()
    db.insert_unique_many(keys=keys, texts=texts, threshold=t)
    out["insert_unique_many_docs_per_s"] = rate(len(keys), time.perf_counter() - start)
    out["insert_unique_many_kept"] = len(db)
    db.close()
    out["unique_over_many"] = round(out["insert_unique_many_docs_per_s"] / out["insert_many_docs_per_s"], 3)
    from rensa import RMinHashDeduplicator

    start = time.perf_counter()
    rensa = RMinHashDeduplicator(threshold=t, num_perm=128, use_lsh=True)
    keep = rensa.add_pairs((k, char_shingles(x)) for k, x in zip(keys, texts))
    out["rensa_add_pairs_docs_per_s"] = rate(len(keys), time.perf_counter() - start)
    out["rensa_kept"] = sum(keep)
    return out


# -- query_many against a loop -----------------------------------------------


def query_many(tmp: Path, keys: list[str], texts: list[str], t: float, n: int) -> dict:
    db = lshdb.Database.open(tmp / "many.lshdb", read_only=True)
    sample = random.Random(7).sample(texts, min(n, len(texts)))
    db.query_many(sample)  # warm the caches once
    loop, many = [], []
    for _ in range(3):
        start = time.perf_counter()
        for text in sample:
            try:
                db.query(text)
            except lshdb.LshdbError:
                pass  # a text with no shingles; query_many gives it no hits
        loop.append(time.perf_counter() - start)
        start = time.perf_counter()
        db.query_many(sample)
        many.append(time.perf_counter() - start)
    db.close()
    return {
        "queries": len(sample),
        "loop_ms": round(min(loop) * 1000, 1),
        "query_many_ms": round(min(many) * 1000, 1),
        "speedup": round(min(loop) / min(many), 2),
    }


# -- exact truth over item sets -----------------------------------------------


class Exact:
    """Item sets as integer arrays, with an inverted index, for brute-force
    Jaccard and containment of a query against every set."""

    def __init__(self, sets: list[list[str]]) -> None:
        vocab: dict[str, int] = {}
        docs, items = [], []
        for d, s in enumerate(sets):
            for w in s:
                docs.append(d)
                items.append(vocab.setdefault(w, len(vocab)))
        docs_a, items_a = np.array(docs, dtype=np.int64), np.array(items, dtype=np.int64)
        order = np.argsort(items_a, kind="stable")
        bounds = np.searchsorted(items_a[order], np.arange(len(vocab) + 1))
        self.postings = [docs_a[order[bounds[i] : bounds[i + 1]]] for i in range(len(vocab))]
        self.vocab = vocab
        self.sizes = np.array([len(s) for s in sets], dtype=np.int64)

    def overlaps(self, items: list[str]) -> np.ndarray:
        ids = [self.vocab[w] for w in items]
        return np.bincount(np.concatenate([self.postings[i] for i in ids]), minlength=len(self.sizes))

    def jaccard(self, items: list[str]) -> np.ndarray:
        ov = self.overlaps(items)
        return ov / (len(items) + self.sizes - ov)


def topk_recall(found: list[list[int]], queries: list[int], exact: Exact, sets, k: int) -> float | None:
    scores = []
    for q, got in zip(queries, found):
        jac = exact.jaccard(sets[q])
        jac[q] = -1.0
        kth = np.partition(jac, -k)[-k]
        if kth <= 0:
            continue
        got = [g for g in got if g != q][:k]
        scores.append(min(k, sum(1 for g in got if jac[g] >= kth - 1e-12)) / k)
    return round(sum(scores) / len(scores), 4) if scores else None


def containment_recall(found: list[list[int]], queries: list[int], exact: Exact, sets, t: float) -> tuple:
    hit = total = 0
    for q, got in zip(queries, found):
        c = exact.overlaps(sets[q]) / len(sets[q])
        c[q] = 0.0
        truth = set(np.nonzero(c >= t - 1e-12)[0].tolist())
        hit += len(truth & set(got))
        total += len(truth)
    return (round(hit / total, 4) if total else None), total


# -- top-k and containment -----------------------------------------------------


def item_sets(texts: list[str]) -> list[list[str]]:
    return [sorted(set(WORD.findall(x.lower()))) for x in texts]


def minhashes(sets: list[list[str]]):
    from datasketch import MinHash

    out = []
    for s in sets:
        m = MinHash(num_perm=128)
        m.update_batch([w.encode("utf-8") for w in s])
        out.append(m)
    return out


def timed(fn, queries: list[int]) -> tuple[list, list[float]]:
    results, lat = [], []
    for q in queries:
        start = time.perf_counter()
        results.append(fn(q))
        lat.append(time.perf_counter() - start)
    return results, lat


def top_k(tmp: Path, keys, sets, exact: Exact, queries, sigs, k: int, t: float) -> dict:
    index = {key: i for i, key in enumerate(keys)}
    # top-k probes the prefix forest, which the containment index is
    db = lshdb.Database.create(tmp / "topk.lshdb", t, containment=True)
    db.insert_many(keys=keys, items=sets)
    found, lat = timed(lambda q: [index[h.key] for h in db.query(items=sets[q], top=k + 1)], queries)
    db.close()
    out = {"lshdb_recall": topk_recall(found, queries, exact, sets, k), "lshdb_p50_ms": p50_ms(lat)}
    from datasketch import MinHashLSHForest

    forest = MinHashLSHForest(num_perm=128)
    for i, m in enumerate(sigs):
        forest.add(i, m)
    forest.index()
    found, lat = timed(lambda q: list(forest.query(sigs[q], k + 1)), queries)
    out["datasketch_forest_recall"] = topk_recall(found, queries, exact, sets, k)
    out["datasketch_forest_p50_ms"] = p50_ms(lat)
    return out


def containment(tmp: Path, keys, sets, exact: Exact, queries, sigs, t: float, index_t: float) -> dict:
    index = {key: i for i, key in enumerate(keys)}
    db = lshdb.Database.create(tmp / "contain.lshdb", index_t, containment=True)
    db.insert_many(keys=keys, items=sets)
    found, lat = timed(lambda q: [index[h.key] for h in db.query(items=sets[q], containment=t)], queries)
    db.close()
    recall, truth = containment_recall(found, queries, exact, sets, t)
    out = {"truth_pairs": truth, "lshdb_recall": recall, "lshdb_p50_ms": p50_ms(lat)}
    from datasketch import MinHashLSHEnsemble

    ensemble = MinHashLSHEnsemble(threshold=t, num_perm=128, num_part=32)
    ensemble.index((i, m, len(s)) for i, (m, s) in enumerate(zip(sigs, sets)))
    found, lat = timed(lambda q: list(ensemble.query(sigs[q], len(sets[q]))), queries)
    out["datasketch_ensemble_recall"] = containment_recall(found, queries, exact, sets, t)[0]
    out["datasketch_ensemble_p50_ms"] = p50_ms(lat)
    return out


def corpus(path: Path, args, tmp: Path) -> dict:
    keys, texts = read_corpus(path, args.limit)
    t = args.threshold
    out: dict = {"corpus": path.name, "documents": len(keys), "threshold": t}
    out["dedup"] = dedup(tmp, keys, texts, t)
    if args.only_dedup:
        return out
    out["query_many"] = query_many(tmp, keys, texts, t, args.queries)
    # top-k and containment: the first --recall-limit documents (datasketch's
    # ensemble does not fit 842k sets in 24 GiB beside the rest)
    sets = item_sets(texts[: args.recall_limit])
    keys = keys[: args.recall_limit]
    out["recall_documents"] = len(sets)
    keep = [i for i, s in enumerate(sets) if s]
    keys, sets = [keys[i] for i in keep], [sets[i] for i in keep]
    exact = Exact(sets)
    queries = random.Random(11).sample([i for i, s in enumerate(sets) if len(s) >= 5], args.recall_queries)
    sigs = minhashes(sets)
    out["top_k"] = top_k(tmp, keys, sets, exact, queries, sigs, 10, t)
    out["containment"] = containment(tmp, keys, sets, exact, queries, sigs, 0.8, t)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpora", type=Path, nargs="+")
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--recall-queries", type=int, default=200)
    p.add_argument("--limit", type=int, default=None, help="read at most N documents of each corpus")
    p.add_argument("--recall-limit", type=int, default=200_000, help="top-k and containment on the first N documents")
    p.add_argument("--only-dedup", action="store_true", help="only the dedup-on-write rows (insert_unique_many against insert_many and rensa)")
    args = p.parse_args()
    results = []
    for path in args.corpora:
        tmp = Path(tempfile.mkdtemp(prefix="lshdb-parity-"))
        try:
            results.append(corpus(path, args, tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    json.dump({"lshdb": lshdb.__version__, "runs": results}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
