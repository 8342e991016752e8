#!/usr/bin/env python3
"""Single-machine lshdb against lshdb.spark on one corpus (issue 14's
parity check; not a test): loads the JSONL into a database, takes its
`pairs()` and `groups()` (what `lshdb pairs` / `lshdb groups` print) and
compares the groups with the clusters of size ≥ 2 in a `dedup` output that
`spark_bench.py --keep-dedup DIR` saved. One JSON object on stdout.

    target/py-venv/bin/python tools/bench/spark_parity.py tools/data/debian-desc-long.jsonl 0.8 target/runs/dedup-0.8
"""

from __future__ import annotations

import collections
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, FrozenSet

import lshdb
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]


def summary(m: Dict[str, FrozenSet[str]]) -> Dict[str, int]:
    clusters = set(m.values())
    return {"clusters": len(clusters), "docs_in_clusters": sum(len(c) for c in clusters)}


def main() -> None:
    corpus, t, dedup_dir = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    docs = [(d["id"], d["text"]) for d in map(json.loads, open(corpus, encoding="utf-8"))]
    with tempfile.TemporaryDirectory(dir=ROOT / "target") as tmp:
        with lshdb.Database.create(Path(tmp) / "d.lshdb", threshold=t) as db:
            db.insert_many([(k, x) for k, x in docs if x.strip()])
            start = time.perf_counter()
            found = {(min(p.a, p.b), max(p.a, p.b)) for p in db.pairs(t)}
            pairs_s = time.perf_counter() - start
            start = time.perf_counter()
            groups = list(db.groups(t))
            groups_s = time.perf_counter() - start
    single: Dict[str, FrozenSet[str]] = {}
    for g in groups:
        members = frozenset(h.key for h in g)
        single.update((k, members) for k in members)
    table = pq.read_table(dedup_dir, columns=["id", "cluster"])
    by = collections.defaultdict(set)
    for i, c in zip(table["id"].to_pylist(), table["cluster"].to_pylist()):
        by[c].add(i)
    spark: Dict[str, FrozenSet[str]] = {}
    for members in by.values():
        if len(members) >= 2:
            f = frozenset(members)
            spark.update((k, f) for k in members)
    differ = [d for d in set(single) | set(spark) if single.get(d, frozenset([d])) != spark.get(d, frozenset([d]))]
    out = {
        "threshold": t,
        "single_pairs": len(found),
        "single_pairs_s": round(pairs_s, 1),
        "single_groups_s": round(groups_s, 1),
        "single": summary(single),
        "spark": summary(spark),
        "identical_clusters": len(set(single.values()) & set(spark.values())),
        "docs_clustered_differently": len(differ),
    }
    truth = ROOT / "tools" / "data" / f"truth-{Path(corpus).stem}-{t}.tsv"
    if truth.exists():
        exact = {tuple(line.rstrip("\n").split("\t")) for line in open(truth, encoding="utf-8")}
        out["single_recall"] = round(len(found & exact) / len(exact), 4) if exact else 1.0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
