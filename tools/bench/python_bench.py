#!/usr/bin/env python3
"""lshdb measured from Python (not a test): sketch throughput, bulk load
against the CLI, and query latency, on a JSON Lines corpus of
{"id", "text"} lines.

    python3 tools/debian_corpus.py --long --out tools/data/debian-desc-long.jsonl
    cargo build --release --bin lshdb
    pip install ./python
    python tools/bench/python_bench.py tools/data/debian-desc-long.jsonl [--threshold 0.5]

Measures, with the Python overhead included (the texts start as a list of
Python str):
  * signatures/s: Sketcher.signatures over the whole corpus (all cores,
    and parallel=False for one core);
  * bulk load docs/s: Database.insert_many(keys=, texts=) into a new file,
    against `lshdb add --jsonl` of the CLI on the same file and settings;
  * query latency p50/p99: Database.query of 2,000 corpus texts, one at a
    time, and query_many throughput.
Prints one JSON object. On a shared machine the figures vary from run to
run; compare runs made at the same time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import lshdb
from corpus_io import print_json, read_corpus


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus", type=Path)
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--cli", default=str(Path(__file__).resolve().parents[2] / "target/release/lshdb"))
    args = p.parse_args()

    keys, texts = read_corpus(args.corpus)
    n = len(texts)
    out: dict = {"documents": n, "threshold": args.threshold, "cpus": os.cpu_count()}

    sk = lshdb.Sketcher(threshold=args.threshold)
    sk.signatures(texts[:1000])  # warm up
    for label, parallel in (("signatures_per_s", True), ("signatures_per_s_one_core", False)):
        best = float("inf")
        for _ in range(3):  # best of 3: the machine may be shared
            start = time.perf_counter()
            sk.signatures(texts, parallel=parallel)
            best = min(best, time.perf_counter() - start)
        out[label] = round(n / best)

    tmp = Path(tempfile.mkdtemp(prefix="lshdb-pybench-"))
    try:
        path = tmp / "py.lshdb"
        db = lshdb.Database.create(path, args.threshold)
        start = time.perf_counter()
        report = db.insert_many(keys=keys, texts=texts)
        seconds = time.perf_counter() - start
        out["python_load_docs_per_s"] = round(report["inserted"] / seconds)
        out["python_load_seconds"] = round(seconds, 2)

        if shutil.which(args.cli) or Path(args.cli).exists():
            cli_path = tmp / "cli.lshdb"
            subprocess.run([args.cli, "create", str(cli_path), "--threshold", str(args.threshold)], check=True)
            start = time.perf_counter()
            subprocess.run(
                [args.cli, "add", str(cli_path), "--jsonl", str(args.corpus)],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            seconds = time.perf_counter() - start
            out["cli_load_docs_per_s"] = round(n / seconds)
            out["cli_load_seconds"] = round(seconds, 2)
        else:
            out["cli_load_docs_per_s"] = None  # build it: cargo build --release --bin lshdb

        step = max(1, n // args.queries)
        sample = texts[::step][: args.queries]
        latencies = []
        for text in sample:
            start = time.perf_counter()
            db.query(text)
            latencies.append((time.perf_counter() - start) * 1000)
        latencies.sort()
        out["query_mean_ms"] = round(statistics.mean(latencies), 3)
        out["query_p50_ms"] = round(statistics.median(latencies), 3)
        out["query_p99_ms"] = round(latencies[int(len(latencies) * 0.99) - 1], 3)
        start = time.perf_counter()
        db.query_many(sample)
        out["query_many_per_s"] = round(len(sample) / (time.perf_counter() - start))
        db.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_json(out)


if __name__ == "__main__":
    main()
