#!/usr/bin/env python3
"""lshdb, datasketch and rensa measured from Python in one run (issue 12's
benchmark; not a test).

    python3 tools/debian_corpus.py --long --out tools/data/debian-desc-long.jsonl
    cargo build --release --example lshdb_bench
    VENV/bin/pip install ./python datasketch==2.0.0 rensa==0.5.0
    VENV/bin/python tools/bench/python_peers.py tools/data/debian-desc-long.jsonl [--threshold 0.8]

Every system starts from the raw texts as Python `str` (so Python-side
overhead counts): lshdb shingles and hashes in Rust (`Sketcher`,
`Database.insert_many`); datasketch and rensa get lshdb's shingles made in
Python (character 5-grams of the lower-cased, blank-collapsed text), as
their users do. For each system: signatures per second (one core), bulk
load (index build from the texts), query latency p50/p99 over a sample, and
recall and precision of the near-duplicate pairs it reports (every document
queried) against the exact truth (lshdb's exact prefix-filtering join,
`Database.exact_pairs`). lshdb's pairs are verified; the peers' are LSH
candidates, as they return them. lshdb's query sample runs once before it
is timed, to warm its caches, as `lshdb_bench query` does. Also lshdb's Rust query p50 on the same
file (`lshdb_bench query`), for the "within 20 µs" bar. One JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import lshdb
from corpus_io import print_json, read_corpus


def shingles(text: str, k: int = 5) -> list[str]:
    s = " ".join(text.lower().split())
    if len(s) <= k:
        return [s]
    return list({s[i : i + k] for i in range(len(s) - k + 1)})


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(round((len(values) - 1) * p)))], 4)


def score(found: set[tuple[str, str]], truth: set[tuple[str, str]]) -> dict:
    hit = len(found & truth)
    return {
        "pairs": len(found),
        "recall": round(hit / len(truth), 4) if truth else None,
        "precision": round(hit / len(found), 4) if found else None,
    }


def pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def latencies_ms(query, queries: list) -> list[float]:
    """The wall time of `query(q)` for each of `queries`, in milliseconds."""
    lat = []
    for q in queries:
        s = time.perf_counter()
        query(q)
        lat.append((time.perf_counter() - s) * 1000)
    return lat


def measured(sig_rate: float, load_rate: float, lat: list[float], found: set, truth: set) -> dict:
    """One system's figures, as the output names them."""
    return {
        "signatures_per_s_one_core": round(sig_rate),
        "load_docs_per_s": round(load_rate),
        "query_p50_ms": pct(lat, 0.5),
        "query_p99_ms": pct(lat, 0.99),
        **score(found, truth),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus", type=Path)
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--bench", default=str(Path(__file__).resolve().parents[2] / "target/release/examples/lshdb_bench"))
    args = p.parse_args()
    t = args.threshold

    keys, texts = read_corpus(args.corpus)
    n = len(texts)
    step = max(1, n // args.queries)
    sample = list(range(0, n, step))[: args.queries]
    out: dict = {"documents": n, "threshold": t, "queries": len(sample)}

    tmp = Path(tempfile.mkdtemp(prefix="lshdb-peers-"))
    try:
        # lshdb
        sk = lshdb.Sketcher(threshold=t)
        start = time.perf_counter()
        sk.signatures(texts, parallel=False)
        sig_rate = n / (time.perf_counter() - start)
        db = lshdb.Database.create(tmp / "p.lshdb", t)
        start = time.perf_counter()
        db.insert_many(keys=keys, texts=texts)
        load = time.perf_counter() - start
        for i in sample:  # warm the caches once, as lshdb_bench query does
            db.query(texts[i])
        lat = latencies_ms(db.query, [texts[i] for i in sample])
        truth = {pair(x.a, x.b) for x in db.exact_pairs(t)}
        found = {pair(x.a, x.b) for x in db.pairs(t)}
        settings = db.settings
        bands, rows = settings["bands"], settings["rows"]
        db.close()
        out["truth_pairs"] = len(truth)
        out["lshdb"] = measured(sig_rate, n / load, lat, found, truth)
        if Path(args.bench).exists():
            corpus_sample = tmp / "bench-corpus.jsonl"
            shutil.copy(args.corpus, corpus_sample)
            rust = subprocess.run(
                [args.bench, "query", "--corpus", str(args.corpus), "--db", str(tmp / "p.lshdb"), "--sample", str(len(sample))],
                check=True,
                capture_output=True,
                text=True,
            )
            rust_out = json.loads(rust.stdout)
            out["lshdb"]["rust_query_p50_ms"] = rust_out.get("query_p50_ms")
            out["lshdb"]["rust_query_p99_ms"] = rust_out.get("query_p99_ms")

        grams = [shingles(x) for x in texts]

        # datasketch
        from datasketch import MinHash, MinHashLSH

        start = time.perf_counter()
        sigs = []
        for g in grams:
            m = MinHash(num_perm=128)
            m.update_batch([s.encode("utf-8") for s in g])
            sigs.append(m)
        ds_sig = n / (time.perf_counter() - start)
        start = time.perf_counter()
        lsh = MinHashLSH(threshold=t, num_perm=128, params=(bands, rows))
        with lsh.insertion_session() as session:
            for key, m in zip(keys, sigs):
                session.insert(key, m)
        ds_load = time.perf_counter() - start
        lat = latencies_ms(lsh.query, [sigs[i] for i in sample])
        found = set()
        for key, m in zip(keys, sigs):
            for other in lsh.query(m):
                if other != key:
                    found.add(pair(key, other))
        out["datasketch"] = measured(ds_sig, n / (ds_load + n / ds_sig), lat, found, truth)
        del sigs, lsh

        # rensa
        from rensa import RMinHash, RMinHashLSH

        start = time.perf_counter()
        rsigs = []
        for g in grams:
            m = RMinHash(num_perm=128, seed=42)
            m.update(g)
            rsigs.append(m)
        r_sig = n / (time.perf_counter() - start)
        start = time.perf_counter()
        rlsh = RMinHashLSH(threshold=t, num_perm=128, num_bands=bands)
        for i, m in enumerate(rsigs):
            rlsh.insert(i, m)
        r_load = time.perf_counter() - start
        lat = latencies_ms(rlsh.query, [rsigs[i] for i in sample])
        found = set()
        for i, m in enumerate(rsigs):
            for j in rlsh.query(m):
                if j != i:
                    found.add(pair(keys[i], keys[j]))
        out["rensa"] = measured(r_sig, n / (r_load + n / r_sig), lat, found, truth)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_json(out)


if __name__ == "__main__":
    main()
