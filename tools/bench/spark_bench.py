#!/usr/bin/env python3
"""lshdb.spark against Spark MLlib's MinHashLSH and datatrove's MinHash
dedup, on one corpus, against the exact truth (issue 14's benchmark; not a
test). One JSON object per system and threshold on stdout.

    python3 tools/debian_corpus.py --long --out tools/data/debian-desc-long.jsonl
    python3 tools/pypi_corpus.py --tsv /work/.library/env/packages/pypi.tsv   # tools/data/pypi.jsonl
    bash tools/test.sh                           # target/py-venv: lshdb + pyspark
    python3 -m venv target/bench-venv && target/bench-venv/bin/pip install 'datatrove[processing]==0.10.1' spacy
    target/py-venv/bin/python tools/bench/spark_bench.py tools/data/debian-desc-long.jsonl \
        --threshold 0.8 --systems lshdb-spark,mllib,datatrove [--limit N] [--mllib-limit 10000] [--timeout 1800]
    # every system on each sample size, lshdb-spark with its own banding:
    target/py-venv/bin/python tools/bench/spark_bench.py tools/data/debian-desc-long.jsonl \
        --threshold 0.8 --systems lshdb-spark,mllib --limits 5000,10000,20000 --mllib-tables 4 --bands 20 --rows 6

Truth: every pair with Jaccard ≥ t of the same shingle sets (char 5,
lshdb's normalisation), from lshdb's exact prefix-filtering join
(the release CLI's `lshdb pairs --exact`, else `Database.exact_pairs`), cached
under tools/data/. Each system runs in a
child process (`--run SYSTEM`) whose process tree (driver, JVM, Python
workers) is sampled for peak memory every 0.2 s: summed RSS (`peak_rss_mb`,
which counts pages that forked Python workers share once per worker; a
process the JVM is spawning, which shares the JVM's memory until it
execs, is not counted), its
split by kind of process at that peak (`at_peak_mb`), and summed PSS
(`peak_pss_mb`: shared pages divided among their sharers).

* lshdb-spark: `lshdb.spark.pairs` and `lshdb.spark.dedup` on local[2].
* mllib: `MinHashLSH(numHashTables=H).approxSimilarityJoin(df, df, 1 - t)`
  on sparse vectors of the same shingle sets (hash mod 2^31 - 1), local[2];
  on `--mllib-limit` documents (a subsample), killed at `--timeout`.
* datatrove: its MinHash pipeline (signature → buckets → cluster → filter)
  on its local executor (2 workers), fed the same shingle sets as
  one-word tokens (each hash as 7 letters, n_grams=1), so it hashes exactly lshdb's
  sets; bands × rows are lshdb's tuner's for t. It reports removed
  documents, not pairs.

Metrics: pairs recall/precision against the truth; for the cluster
outputs the removed documents and the share of them that truly have a
near-duplicate (a truth pair) and that have one which is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from spark_metrics import (  # next to this script
    Ids, letters, pair_metrics, parquet_codes, read_parquet_rows, removal_metrics, truth_codes,
)

ROOT = Path(__file__).resolve().parents[2]
VENV_PY = ROOT / "target" / "py-venv" / "bin" / "python"
BENCH_PY = ROOT / "target" / "bench-venv" / "bin" / "python"
CLI = ROOT / "target" / "release" / "lshdb"
CHILD_START = time.perf_counter()


def load(path: str, limit: int | None, seed: int = 1) -> List[Tuple[str, str]]:
    docs = [(d["id"], d["text"]) for d in map(json.loads, open(path, encoding="utf-8"))]
    if limit and limit < len(docs):
        docs = random.Random(seed).sample(docs, limit)
    return docs


def truth(docs: List[Tuple[str, str]], threshold: float, cache: Path) -> Path:
    """The cache file of the exact pairs (``a TAB b`` per line), made if
    missing: the documents go into a database, and the release CLI's
    ``lshdb pairs --exact`` (prefix filtering) streams the pairs to the
    file; without the CLI, ``Database.exact_pairs`` (every pair as a
    Python object: too much memory for tens of millions of pairs)."""
    if cache.exists():
        return cache
    import lshdb

    with tempfile.TemporaryDirectory(dir=ROOT / "target") as tmp:
        db_path = Path(tmp) / "t.lshdb"
        with lshdb.Database.create(db_path, threshold=threshold) as db:
            db.insert_many([(k, t) for k, t in docs if t.strip()])
        start = time.perf_counter()
        part = cache.with_suffix(".part")
        if CLI.exists():
            with open(part, "w", encoding="utf-8") as f:
                proc = subprocess.Popen([str(CLI), "pairs", str(db_path), "--exact", "--threshold", str(threshold)],
                                        stdout=subprocess.PIPE, text=True)
                assert proc.stdout is not None
                for line in proc.stdout:
                    _, a, b = line.rstrip("\n").split("\t")
                    f.write(f"{a}\t{b}\n")
                if proc.wait() != 0:
                    raise SystemExit(f"lshdb pairs --exact failed: {proc.returncode}")
        else:
            with lshdb.Database.open(db_path) as db, open(part, "w", encoding="utf-8") as f:
                for p in db.exact_pairs(threshold):
                    f.write(f"{p.a}\t{p.b}\n")
        part.rename(cache)
        print(f"truth: {cache} in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    return cache


def tree_rss(pid: int) -> Tuple[int, Dict[str, int]]:
    """Summed RSS (bytes) of a process and its descendants, and the same
    by kind of process (``java``, ``python worker``: forked PySpark
    workers, ``python driver``)."""
    children: Dict[int, List[int]] = {}
    rss: Dict[int, int] = {}
    comm: Dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
            fields = stat[stat.rindex(")") + 2 :].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            comm[int(entry)] = stat[stat.index("(") + 1 : stat.rindex(")")]
        except (OSError, ValueError):
            continue
    total, todo = 0, [pid]
    kinds: Dict[str, int] = {}
    pss = 0
    parent = {c: p for p, cs in children.items() for c in cs}
    while todo:
        p = todo.pop()
        name = comm.get(p, "?")
        if comm.get(parent.get(p, -1)) == "java" and "python" not in name:
            # A process the JVM is spawning (vfork, named after the JVM
            # thread, e.g. "Executor task l"): until it execs it shares the
            # JVM's memory and reports the JVM's RSS; counting it would
            # count the JVM twice.
            kinds["(JVM spawn, not counted)"] = kinds.get("(JVM spawn, not counted)", 0) + rss.get(p, 0)
            todo.extend(children.get(p, []))
            continue
        total += rss.get(p, 0)
        kind = "java" if name == "java" else ("python driver" if p == pid else ("python worker" if "python" in name else name))
        kinds[kind] = kinds.get(kind, 0) + rss.get(p, 0)
        try:  # proportional set size: shared pages (forked workers) counted once
            for line in open(f"/proc/{p}/smaps_rollup"):
                if line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
                    break
        except OSError:
            pass
        todo.extend(children.get(p, []))
    kinds["(pss total)"] = pss
    return total, kinds


def run_child(cmd: List[str], timeout: float) -> Dict[str, Any]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, start_new_session=True)
    peak = [0]
    peak_pss = [0]
    at_peak: Dict[str, int] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            total, kinds = tree_rss(proc.pid)
            peak_pss[0] = max(peak_pss[0], kinds["(pss total)"])
            if total > peak[0]:
                peak[0] = total
                at_peak.clear()
                at_peak.update(kinds)
            time.sleep(0.2)

    threading.Thread(target=sample, daemon=True).start()
    try:
        out, _ = proc.communicate(timeout=timeout)
        result: Dict[str, Any] = json.loads(out.strip().splitlines()[-1]) if proc.returncode == 0 else {"error": proc.returncode}
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        result = {"error": f"timeout after {timeout:.0f}s"}
    stop.set()
    result["wall_s"] = round(time.perf_counter() - start, 1)
    result["peak_rss_mb"] = round(peak[0] / 2**20)
    result["peak_pss_mb"] = round(peak_pss[0] / 2**20)
    result["at_peak_mb"] = {k: round(v / 2**20) for k, v in sorted(at_peak.items())}
    return result


# -- the systems (child processes) ------------------------------------------


def spark_session(memory: str = "6g", shuffle_partitions: int = 8) -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    s = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", memory)
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    return s


def docs_df(spark: Any, docs: List[Tuple[str, str]]) -> Any:
    import pyarrow as pa

    table = pa.table({"id": [d[0] for d in docs], "text": [d[1] for d in docs]})
    return spark.createDataFrame(table.to_pandas()).repartition(8)


def run_lshdb_spark(docs: List[Tuple[str, str]], t: float, out: Path, bands: int | None, rows: int | None,
                    opts: Dict[str, Any]) -> Dict[str, Any]:
    from lshdb import spark as ls

    config = ls.Config(threshold=t, bands=bands, rows=rows).resolved()
    spark = spark_session(**opts)
    spark.sparkContext.setCheckpointDir(str(out / "ckpt"))
    df = docs_df(spark, docs).cache()
    df.count()
    start = time.perf_counter()
    pairs_deadline(None)
    ls.pairs(df, config=config).write.parquet(str(out / "pairs"))
    pairs_s = time.perf_counter() - start
    stats: Dict[str, Any] = {}
    start = time.perf_counter()
    ls.dedup(df, config=config, stats=stats).write.parquet(str(out / "dedup"))
    dedup_s = time.perf_counter() - start
    return {"pairs_s": round(pairs_s, 1), "dedup_s": round(dedup_s, 1), "bands": config.bands, "rows": config.rows,
            "stages": {k: round(v, 2) if isinstance(v, float) else v for k, v in stats.items()}}


def pairs_deadline(seconds: float | None) -> None:
    """Say on stderr when the timed phase starts (seconds since the child
    started) and, with ``seconds``, kill this child's process group (the
    driver and its JVM) once that phase has run that long: a cap on the
    phase itself, not on the set-up before it."""
    print(f"spark_bench: pairs phase starts at {time.perf_counter() - CHILD_START:.1f}s", file=sys.stderr, flush=True)
    if seconds:
        def kill() -> None:
            print(f"spark_bench: pairs phase still running after {seconds:.0f}s; killed", file=sys.stderr, flush=True)
            os.killpg(os.getpgrp(), 9)

        timer = threading.Timer(seconds, kill)
        timer.daemon = True
        timer.start()


def run_mllib(docs: List[Tuple[str, str]], t: float, out: Path, tables: int, opts: Dict[str, Any],
              opts_timeout: float | None = None) -> Dict[str, Any]:
    import lshdb
    from pyspark.ml.feature import MinHashLSH
    from pyspark.ml.linalg import Vectors, VectorUDT
    from pyspark.sql import functions as F

    size = 2**30  # MLlib refuses dimensions above 2,038,074,743
    sk = lshdb.Sketcher()
    rows = []
    for (k, text), s in zip(docs, sk.shingles([d[1] for d in docs])):
        idx = sorted({int(h) % size for h in s})
        if idx:
            rows.append((k, Vectors.sparse(size, idx, [1.0] * len(idx))))
    spark = spark_session(**opts)
    from pyspark.sql.types import StringType, StructField, StructType

    df = spark.createDataFrame(rows, StructType([StructField("id", StringType()), StructField("v", VectorUDT())])).repartition(8).cache()
    df.count()
    start = time.perf_counter()
    pairs_deadline(opts_timeout)
    model = MinHashLSH(inputCol="v", outputCol="h", numHashTables=tables, seed=1).fit(df)
    joined = model.approxSimilarityJoin(df, df, 1.0 - t + 1e-9, distCol="d")
    joined.where(F.col("datasetA.id") < F.col("datasetB.id")).select(
        F.col("datasetA.id").alias("id_a"), F.col("datasetB.id").alias("id_b"), (1 - F.col("d")).alias("similarity")
    ).write.parquet(str(out / "pairs"))
    return {"pairs_s": round(time.perf_counter() - start, 1), "num_hash_tables": tables}


def run_datatrove(docs: List[Tuple[str, str]], t: float, out: Path) -> Dict[str, Any]:
    # runs in target/bench-venv (datatrove); the shingles come as a file
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    cfg = json.load(open(out / "config.json"))
    config = MinhashConfig(n_grams=1, num_buckets=cfg["bands"], hashes_per_bucket=cfg["rows"], hash_config=HashConfig(precision=64))
    inp = str(out / "input")
    tasks = 2
    start = time.perf_counter()
    LocalPipelineExecutor(
        pipeline=[JsonlReader(inp), MinhashDedupSignature(output_folder=str(out / "sigs"), config=config)],
        tasks=tasks, workers=2, logging_dir=str(out / "logs/sig"),
    ).run()
    LocalPipelineExecutor(
        pipeline=[MinhashDedupBuckets(input_folder=str(out / "sigs"), output_folder=str(out / "buckets"), config=config)],
        tasks=config.num_buckets, workers=2, logging_dir=str(out / "logs/buckets"),
    ).run()
    LocalPipelineExecutor(
        pipeline=[MinhashDedupCluster(input_folder=str(out / "buckets"), output_folder=str(out / "remove_ids"), config=config)],
        tasks=1, logging_dir=str(out / "logs/cluster"),
    ).run()
    LocalPipelineExecutor(
        pipeline=[
            JsonlReader(inp),
            MinhashDedupFilter(input_folder=str(out / "remove_ids"), exclusion_writer=JsonlWriter(str(out / "removed"))),
            JsonlWriter(str(out / "kept")),
        ],
        tasks=tasks, workers=2, logging_dir=str(out / "logs/filter"),
    ).run()
    return {"dedup_s": round(time.perf_counter() - start, 1), "bands": cfg["bands"], "rows": cfg["rows"]}



def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("corpus")
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--systems", default="lshdb-spark,mllib,datatrove")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--mllib-limit", type=int, default=10_000)
    p.add_argument("--limits", default=None,
                   help="comma-separated sample sizes: every system runs on each (same sample), in this one invocation")
    p.add_argument("--mllib-tables", type=int, default=128)
    p.add_argument("--bands", type=int, default=None, help="lshdb-spark: bands (with --rows) instead of the tuner's")
    p.add_argument("--rows", type=int, default=None)
    p.add_argument("--shuffle-partitions", type=int, default=8, help="spark.sql.shuffle.partitions")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--mllib-pairs-timeout", type=float, default=None,
                   help="kill MLlib once its timed phase (the join) has run this long, set-up excluded")
    p.add_argument("--keep-dedup", default=None, help="copy lshdb-spark's dedup output (parquet) to this directory")
    p.add_argument("--run", default=None, help=argparse.SUPPRESS)
    p.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    t = args.threshold
    spark_opts = {"shuffle_partitions": args.shuffle_partitions, "memory": args.driver_memory}

    if args.run:  # a child: one system
        out = Path(args.workdir)
        if args.run == "datatrove":
            result = run_datatrove([], t, out)
        else:
            docs = load(args.corpus, args.limit)
            if args.run == "lshdb-spark":
                result = run_lshdb_spark(docs, t, out, args.bands, args.rows, spark_opts)
            else:
                result = run_mllib(docs, t, out, args.mllib_tables, spark_opts, args.mllib_pairs_timeout)
        print(json.dumps(result))
        return

    import lshdb

    runs: List[Tuple[int | None, str]] = []
    if args.limits:
        runs = [(int(n), system) for n in args.limits.split(",") for system in args.systems.split(",")]
    else:
        runs = [(args.mllib_limit if system == "mllib" else args.limit, system) for system in args.systems.split(",")]
    for limit, system in runs:
        docs = load(args.corpus, limit)
        name = Path(args.corpus).stem + (f"-{limit}" if limit else "")
        cache = truth(docs, t, ROOT / "tools" / "data" / f"truth-{name}-{t}.tsv")
        ids = Ids(docs)
        exact = truth_codes(ids, cache)
        work = Path(tempfile.mkdtemp(prefix=f"spark-bench-{system}-", dir=ROOT / "target"))
        python = str(VENV_PY)
        if system == "datatrove":
            python = str(BENCH_PY)
            sk = lshdb.Sketcher(threshold=t)
            (work / "input").mkdir()
            with open(work / "input" / "docs.jsonl", "w", encoding="utf-8") as f:
                for (k, _), s in zip(docs, sk.shingles([d[1] for d in docs])):
                    f.write(json.dumps({"id": k, "text": " ".join(letters(int(h)) for h in s)}) + "\n")
            json.dump({"bands": sk.bands, "rows": sk.rows}, open(work / "config.json", "w"))
        cmd = [python, __file__, args.corpus, "--threshold", str(t), "--run", system, "--workdir", str(work),
               "--mllib-tables", str(args.mllib_tables), "--shuffle-partitions", str(args.shuffle_partitions),
               "--driver-memory", args.driver_memory]
        if limit:
            cmd += ["--limit", str(limit)]
        if args.mllib_pairs_timeout:
            cmd += ["--mllib-pairs-timeout", str(args.mllib_pairs_timeout)]
        if args.bands is not None:
            cmd += ["--bands", str(args.bands), "--rows", str(args.rows)]
        result = run_child(cmd, args.timeout)
        result.update(system=system, threshold=t, corpus=name, docs=len(docs))
        if "error" not in result:
            if system in ("lshdb-spark", "mllib"):
                result.update(pair_metrics(parquet_codes(ids, work / "pairs"), exact))
            if system == "lshdb-spark":
                rows = read_parquet_rows(work / "dedup", ["id", "keep", "duplicate_of", "duplicate_similarity"])
                removed = {r[0] for r in rows if not r[1]}
                keep = {r[0]: r[1] for r in rows}
                result["removed_dup_kept"] = all(keep[r[2]] and r[3] >= t for r in rows if not r[1])
                del rows, keep
                result.update(removal_metrics(removed, ids, exact))
                if args.keep_dedup:
                    shutil.copytree(work / "dedup", args.keep_dedup, dirs_exist_ok=True)
            if system == "datatrove":
                removed = set()
                for f in (work / "removed").glob("*.jsonl*"):
                    import gzip

                    opener = gzip.open if f.suffix == ".gz" else open
                    with opener(f, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
                        removed.update(json.loads(line)["id"] for line in fh)
                result.update(removal_metrics(removed, ids, exact))
        print(json.dumps(result), flush=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
