#!/usr/bin/env python3
"""Throughput across Python threads (issue 22, item 3), not a test: one
writer thread's durable inserts alone and while reader threads query the
same handle, and query_many against a loop of query.

    python3 tools/debian_corpus.py --long --out tools/data/debian-desc-long.jsonl
    pip install ./python            # a release build
    python tools/bench/python_threads.py tools/data/debian-desc-long.jsonl

Loads the corpus (all of it, or --docs N) with insert_many, then:
  * writer: one thread inserts corpus texts under new keys one at a time
    (`insert`, each a durable commit), alone and while --readers threads
    loop over `query`, in --windows alternating windows (--seconds per
    mode in all); prints both rates, their ratio (the bar: >= 0.5) and
    the readers' queries/s;
  * query_many: --queries corpus texts through a loop of `query` and
    through `query_many`, --reps times alternately; prints each pair of
    times and the median ratio (the bar: >= 1.6 on 2 cores).
Prints one JSON line. The machine may be shared: the two figures of a
ratio come from the same run, taken alternately, so compare ratios rather
than rates across runs (`loadavg` says how busy it was).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List

from corpus_io import read_corpus

import lshdb




def writer_under_readers(db: lshdb.Database, texts: List[str], args: argparse.Namespace) -> Dict[str, float]:
    """Durable single inserts per second of one thread, in alternating
    windows: alone, then while the readers loop over `query` (they are
    paused, asleep, in the windows alone)."""
    run, quit = threading.Event(), threading.Event()
    answered = [0] * args.readers

    def reader(i: int) -> None:
        j = i
        while not quit.is_set():
            if not run.wait(0.05):
                continue
            db.query(texts[j % len(texts)])
            answered[i] += 1
            j += args.readers

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(args.readers)]
    for t in threads:
        t.start()
    inserts, seconds, queries, n = [0, 0], [0.0, 0.0], 0, 0
    window = args.seconds / args.windows
    for _ in range(args.windows):
        for loaded in (0, 1):
            (run.set if loaded else run.clear)()
            time.sleep(0.05)  # the readers start or stop
            before, start = sum(answered), time.perf_counter()
            while time.perf_counter() - start < window:
                db.insert(f"w{n}", texts[n % len(texts)])
                n += 1
                inserts[loaded] += 1
            seconds[loaded] += time.perf_counter() - start
            if loaded:
                queries += sum(answered) - before
    quit.set()
    run.set()
    for t in threads:
        t.join()
    solo, loaded_rate = inserts[0] / seconds[0], inserts[1] / seconds[1]
    return {
        "insert_per_s_solo": round(solo, 1),
        "insert_per_s_with_readers": round(loaded_rate, 1),
        "writer_ratio": round(loaded_rate / solo, 2),
        "reader_queries_per_s": round(queries / seconds[1]),
    }


def query_many_against_loop(db: lshdb.Database, texts: List[str], args: argparse.Namespace) -> Dict[str, object]:
    sample = texts[:: max(1, len(texts) // args.queries)][: args.queries]
    for text in sample:  # warm the caches for both
        db.query(text)
    pairs, cores = [], []
    for _ in range(args.reps):
        start = time.perf_counter()
        for text in sample:
            db.query(text)
        loop = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        db.query_many(sample)
        many = time.perf_counter() - start
        cores.append((time.process_time() - cpu) / many)
        pairs.append((round(loop * 1000), round(many * 1000)))
    return {
        "queries": len(sample),
        "loop_ms_many_ms": pairs,
        "query_many_speedup_median": round(statistics.median(l / max(m, 1e-9) for l, m in pairs), 2),
        # CPU seconds per second of query_many: about the number of cores
        # it got. Near 1 on a 2-core machine, the other processes' load
        # left it one core (Linux shares the CPU between sessions, not
        # threads, when autogroup scheduling is on), and no speed-up over
        # the loop is possible in that run.
        "query_many_cores_used_median": round(statistics.median(cores), 2),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus", type=Path)
    p.add_argument("--docs", type=int, default=0, help="load only the first N documents (0: all)")
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--readers", type=int, default=8)
    p.add_argument("--seconds", type=float, default=5.0, help="writer seconds per mode")
    p.add_argument("--windows", type=int, default=10, help="alternations of the two modes")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--skip", choices=["writer", "query_many"], default=None)
    args = p.parse_args()

    keys, texts = read_corpus(args.corpus, args.docs)
    out: Dict[str, object] = {"documents": len(keys), "threshold": args.threshold, "cpus": os.cpu_count()}
    out["loadavg_before"] = round(os.getloadavg()[0], 2)
    tmp = Path(tempfile.mkdtemp(prefix="lshdb-threads-"))
    try:
        with lshdb.Database.create(tmp / "t.lshdb", args.threshold) as db:
            db.insert_many(keys=keys, texts=texts)
            if args.skip != "query_many":
                out.update(query_many_against_loop(db, texts, args))
            if args.skip != "writer":
                out["readers"] = args.readers
                out.update(writer_under_readers(db, texts, args))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out["loadavg_after"] = round(os.getloadavg()[0], 2)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
