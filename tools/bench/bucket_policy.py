#!/usr/bin/env python3
"""lshdb.spark's huge-bucket policy counted in Python on one corpus (not a
test): the LSH buckets of `Sketcher.band_keys`, and for several
(max_bucket, anchors) the candidate pairs the policy forms (with repeats
across bands) and the share of the exact truth it reaches. The truth file
is the one `spark_bench.py` caches (run it once at this threshold first).
Anchors are chosen by Python's hash here, not xxhash64: the recall of the
anchor rows is close to, not equal to, Spark's.

    target/py-venv/bin/python tools/bench/bucket_policy.py tools/data/debian-desc-long.jsonl 0.8
"""
import collections
import json
import sys
from pathlib import Path

import lshdb
import numpy as np

corpus, t = sys.argv[1], float(sys.argv[2])
docs = [(d["id"], d["text"]) for d in map(json.loads, open(corpus, encoding="utf-8"))]
sk = lshdb.Sketcher(threshold=t)
texts = [d[1] for d in docs]
keys = sk.band_keys(texts)
sets = sk.shingles(texts)
ids = [d[0] for d in docs]
idx = {k: i for i, k in enumerate(ids)}
truth = set()
for line in open(Path(__file__).resolve().parents[2] / "tools" / "data" / f"truth-{Path(corpus).stem}-{t}.tsv", encoding="utf-8"):
    a, b = line.rstrip("\n").split("\t"); truth.add((min(idx[a], idx[b]), max(idx[a], idx[b])))
print("docs", len(docs), "truth", len(truth), "bands", sk.bands, sk.rows)
setkey = [hash(bytes(np.asarray(s, dtype=np.uint32))) if len(s) else None for s in sets]
buckets = collections.defaultdict(list)
for i in range(len(docs)):
    if len(sets[i]) == 0: continue
    for b in range(sk.bands):
        buckets[(b, int(keys[i, b]))].append(i)
buckets = {k: v for k, v in buckets.items() if len(v) >= 2}
sizes = sorted((len(v) for v in buckets.values()), reverse=True)
print("buckets", len(buckets), "largest", sizes[:10], ">200:", sum(s > 200 for s in sizes), "allpairs", sum(s*(s-1)//2 for s in sizes))
# distinct sets per bucket
def distinct(v): return len({setkey[i] for i in v})
dsz = sorted((distinct(v) for v in buckets.values()), reverse=True)
print("distinct-set bucket sizes largest", dsz[:10], ">200:", sum(s > 200 for s in dsz), "distinct allpairs", sum(s*(s-1)//2 for s in dsz))
# best-bucket size for each truth pair: smallest bucket containing both
pairbest = {}
for k, v in buckets.items():
    n = len(v)
    vs = sorted(v)
    if n * n > 4e8: continue
    for x in range(len(vs)):
        for y in range(x + 1, len(vs)):
            p = (vs[x], vs[y])
            if p in truth and pairbest.get(p, 1 << 40) > n: pairbest[p] = n
print("truth pairs colliding in some bucket", len(pairbest), "=", len(pairbest) / len(truth))
def policy(maxb, anchors):
    found = set(); cand = 0
    for (b, key), v in buckets.items():
        n = len(v)
        if n <= maxb:
            cand += n * (n - 1) // 2
            continue
        h = sorted(v, key=lambda d: hash((d, b, 12345)))[:anchors]
        cand += anchors * n
        for a in h:
            for d in v:
                if d != a:
                    p = (min(a, d), max(a, d))
                    if p in truth: found.add(p)
    # small buckets: pairs with best bucket <= maxb
    for p, n in pairbest.items():
        if n <= maxb: found.add(p)
    return len(found) / len(truth), cand
for maxb, anc in [(200, 4), (200, 16), (1000, 4), (2000, 4), (5000, 4), (10**9, 4)]:
    r, c = policy(maxb, anc)
    print(f"max_bucket={maxb} anchors={anc}: recall {r:.4f} candidates(with dup) {c}")
hist = collections.Counter()
for p in truth:
    n = pairbest.get(p)
    hist["none" if n is None else ("<=200" if n <= 200 else "<=1000" if n <= 1000 else "<=5000" if n <= 5000 else ">5000")] += 1
print("truth pairs by smallest shared bucket", dict(hist))
same = sum(1 for p in truth if setkey[p[0]] == setkey[p[1]])
print("truth pairs with identical sets", same)
