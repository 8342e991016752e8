#!/usr/bin/env python3
"""Dataset dedup, end to end: `lshdb dedup` against text-dedup and datatrove.

On one JSON Lines corpus ({"id", "text"} per line), runs as separate
processes, each timed from start to exit (wall, CPU of the whole process
tree, peak RSS of the whole process tree):

  lshdb-dedup  `lshdb dedup CORPUS --id-field id --out KEPT --dropped DROPPED`
               (keep policy `first`, a temporary database)
  lshdb-add    `lshdb add DB --jsonl CORPUS` into a database just made by
               `lshdb create` (the reference speed: loading the same file)
  text-dedup   `python -m text_dedup.minhash` (text-dedup 0.4.x) with a
               config.toml, on the peers' input (below), its output saved
               with `save_to_disk` as it does; check_false_positive = false
               (its default)
  text-dedup-verify  the same with check_false_positive = true: the members
               of each candidate cluster are compared pairwise by exact
               Jaccard of their shingle sets; with it text-dedup also keeps
               the lowest-index member of each cluster (without it, 0.4.1
               compares the cluster label from polars_grouper.super_merger,
               1, 2, 3, ..., with each document's own index and so keeps no
               member of most clusters)
  datatrove    datatrove's MinHash dedup: MinhashDedupSignature, -Buckets,
               -Cluster, -Filter on LocalPipelineExecutor, reading JsonlReader,
               writing the kept documents with JsonlWriter

Same sets for everyone. lshdb shingles each text into character 5-shingles
hashed to u32 (its default). The peers cannot do that (text-dedup and
datatrove shingle words; datatrove's English word tokenizer also needs NLTK
data that cannot be downloaded here), so the peers get a second JSONL in
which each document's text is its lshdb shingle set, one 7-letter token per
shingle hash (base 26, a-z), and are run with n-grams of 1 word: every
token is one of their shingles, so their sets are lshdb's sets (re-hashed
by their own hash: xxh3 / xxhash64). Building that file (`lshdb export`
plus the encoding) is preparation and is not timed; the peers thus skip
the tokenisation of raw text that lshdb's timings include.

The truth is the exact join over the same sets (`lshdb pairs --exact`,
prefix filtering), at the same threshold. Scores, the same for every tool
(D = the documents a tool dropped, K = those it kept):

  should drop (first)  the documents an exact keep-first pass drops: read in
                       input order, a document is dropped iff it has
                       Jaccard >= T with a document kept before it
  should drop (comp.)  the documents other than one per connected component
                       of the exact pair graph (N - number of components)
  recall (first)       |D & should-drop(first)| / |should-drop(first)|
  recall (comp.)       sum over components of min(|D & C|, |C| - 1), over
                       N - number of components
  precision            share of D with an exact near-duplicate (J >= T) in K:
                       the dropped document is represented in the output
  dropped, no near-dup share of D with no exact near-duplicate at all
  lost components      components of >= 2 documents with no member kept
  pairs left           exact pairs (J >= T) with both documents kept: the
                       near-duplicates still in the output

Usage (after `cargo build --release` and `bash tools/bench/setup_dedup_peers.sh`):

  tools/.venv-dedup/bin/python tools/bench/dedup_peers.py \\
      tools/data/debian-desc-long.jsonl --runs 3

Writes tools/data/dedup-peers/results.json and prints the table.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from dedup_measure import TimedOut, measure, score, table, truth_of  # next to this script

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SYSTEMS = ["lshdb-dedup", "lshdb-add", "text-dedup", "text-dedup-verify", "datatrove"]


# ---------------------------------------------------------------------------
# Preparation: lshdb's shingle sets, the peers' input, the exact truth
# ---------------------------------------------------------------------------


def token(h):
    """A u32 as 7 lowercase letters (26^7 > 2^32)."""
    chars = []
    for _ in range(7):
        h, r = divmod(h, 26)
        chars.append(chr(97 + r))
    return "".join(chars)


def prepare(args, work):
    lshdb = args.lshdb
    db = os.path.join(work, "prep.lshdb")
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([lshdb, "create", db, "--threshold", str(args.threshold)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([lshdb, "add", db, "--jsonl", args.corpus], check=True, stdout=subprocess.DEVNULL)
    stats = json.loads(subprocess.run([lshdb, "stats", db, "--json"], check=True,
                                      capture_output=True, text=True).stdout)
    export = os.path.join(work, "prep.shingles.jsonl")
    subprocess.run([lshdb, "export", db, "--out", export], check=True, stdout=subprocess.DEVNULL)
    sets = {}
    with open(export) as f:
        header = json.loads(f.readline())
        for line in f:
            rec = json.loads(line)
            sets[rec["id"]] = rec["shingles"]
    ids = []
    with open(args.corpus) as f:
        for line in f:
            if line.strip():
                ids.append(str(json.loads(line)["id"]))
    missing = [i for i in ids if i not in sets]
    if missing:
        raise SystemExit(f"{len(missing)} corpus ids not in the export, e.g. {missing[:3]}")
    # The peers' input, in input order, in two shards (datatrove runs one
    # task per file; text-dedup reads both).
    half = (len(ids) + 1) // 2
    peer_dir = os.path.join(work, "peers-input")
    shutil.rmtree(peer_dir, ignore_errors=True)
    os.makedirs(peer_dir)
    shards = []
    for s, part in enumerate([ids[:half], ids[half:]]):
        path = os.path.join(peer_dir, f"part-{s:05d}.jsonl")
        with open(path, "w") as o:
            for i in part:
                o.write(json.dumps({"id": i, "text": " ".join(token(h) for h in sets[i])}) + "\n")
        shards.append(path)
    # The exact truth over the same sets.
    t0 = time.perf_counter()
    res = subprocess.run([lshdb, "pairs", db, "--exact", "--threshold", str(args.threshold), "--json"],
                         check=True, capture_output=True, text=True)
    exact_s = time.perf_counter() - t0
    pairs = []
    for line in res.stdout.splitlines():
        p = json.loads(line)
        pairs.append((p["a"], p["b"], p["similarity"]))
    os.remove(db)
    return {
        "ids": ids,
        "shards": shards,
        "pairs": pairs,
        "exact_seconds": exact_s,
        "shingle_settings": header.get("settings"),
        "lshdb_stats": stats,
    }


# ---------------------------------------------------------------------------
# The systems
# ---------------------------------------------------------------------------


def run_lshdb_dedup(args, work, prep, run_dir):
    kept = os.path.join(run_dir, "kept.jsonl")
    dropped = os.path.join(run_dir, "dropped.jsonl")
    cmd = [args.lshdb, "dedup", args.corpus, "--id-field", "id", "--threshold", str(args.threshold),
           "--out", kept, "--dropped", dropped, "--json"]
    if args.lshdb_banding:
        bands, rows = args.lshdb_banding.split("x")
        cmd += ["--bands", bands, "--rows", rows]
    m = measure(cmd, log=os.path.join(run_dir, "log.txt"), timeout=args.timeout)
    with open(dropped) as f:
        m["dropped_ids"] = [json.loads(line)["id"] for line in f if line.strip()]
    m["command"] = " ".join(cmd)
    return m


def run_lshdb_add(args, work, prep, run_dir):
    db = os.path.join(run_dir, "add.lshdb")
    subprocess.run([args.lshdb, "create", db, "--threshold", str(args.threshold)], check=True,
                   stdout=subprocess.DEVNULL)
    cmd = [args.lshdb, "add", db, "--jsonl", args.corpus]
    m = measure(cmd, log=os.path.join(run_dir, "log.txt"), timeout=args.timeout)
    os.remove(db)
    m["dropped_ids"] = None
    m["command"] = f"lshdb create DB --threshold {args.threshold} (not timed); " + " ".join(cmd)
    return m


def peer_env(run_dir):
    env = dict(os.environ)
    env.update({
        "HF_HOME": os.path.join(run_dir, "hf-home"),
        "HF_DATASETS_CACHE": os.path.join(run_dir, "hf-cache"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    })
    return env


def run_text_dedup(args, work, prep, run_dir, verify=False):
    out = os.path.join(run_dir, "out")
    toml = f"""[input]
input_type = "local_files"
file_type = "json"
[input.read_arguments]
path = "json"
data_files = {json.dumps(prep["shards"])}
split = "train"
[algorithm]
algorithm_name = "minhash"
text_column = "text"
num_perm = {args.num_perm}
threshold = {args.threshold}
bands = {args.bands}
rows = {args.rows}
ngram_size = 1
min_length = 0
num_proc = {args.workers}
check_false_positive = {"true" if verify else "false"}
[output]
output_dir = "{out}"
[debug]
enable_profiling = false
"""
    with open(os.path.join(run_dir, "config.toml"), "w") as f:
        f.write(toml)
    cmd = [args.peer_python, "-m", "text_dedup.minhash"]
    m = measure(cmd, env=peer_env(run_dir), cwd=run_dir, log=os.path.join(run_dir, "log.txt"),
                timeout=args.timeout)
    # The kept ids, read back from its output (not timed).
    res = subprocess.run([args.peer_python, "-c",
                          "import sys, json\nfrom datasets import load_from_disk\n"
                          "print(json.dumps(list(load_from_disk(sys.argv[1])['id'])))", out],
                         env=peer_env(run_dir), check=True, capture_output=True, text=True)
    kept = set(json.loads(res.stdout))
    m["dropped_ids"] = [i for i in prep["ids"] if i not in kept]
    m["command"] = f"cd RUN_DIR && {args.peer_python} -m text_dedup.minhash  # config.toml:\n{toml}"
    return m


def run_datatrove(args, work, prep, run_dir):
    cmd = [args.peer_python, os.path.abspath(__file__), "--datatrove-child",
           "--input-dir", os.path.dirname(prep["shards"][0]), "--run-dir", run_dir,
           "--bands", str(args.bands), "--rows", str(args.rows), "--workers", str(args.workers),
           "--tasks", str(len(prep["shards"]))]
    m = measure(cmd, env=peer_env(run_dir), log=os.path.join(run_dir, "log.txt"), timeout=args.timeout)
    kept = set()
    kept_dir = os.path.join(run_dir, "kept")
    for name in sorted(os.listdir(kept_dir)):
        with open(os.path.join(kept_dir, name)) as f:
            for line in f:
                if line.strip():
                    kept.add(str(json.loads(line)["id"]))
    m["dropped_ids"] = [i for i in prep["ids"] if i not in kept]
    m["command"] = " ".join(cmd)
    return m


RUNNERS = {
    "lshdb-dedup": run_lshdb_dedup,
    "lshdb-add": run_lshdb_add,
    "text-dedup": run_text_dedup,
    "text-dedup-verify": lambda *a: run_text_dedup(*a, verify=True),
    "datatrove": run_datatrove,
}


def datatrove_child(a):
    """datatrove's four MinHash stages, as its README example runs them."""
    from datatrove.executor.local import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter
    from datatrove.utils.hashing import HashConfig
    from datatrove.utils.word_tokenizers import WordTokenizer

    class SpaceTokenizer(WordTokenizer):
        """Each space-separated token is a word (the tokens are lshdb's shingles)."""

        def word_tokenize(self, text):
            return text.split()

        def sent_tokenize(self, text):
            return [text]

        def span_tokenize(self, text):
            return [(0, len(text))]

    cfg = MinhashConfig(n_grams=1, num_buckets=a.bands, hashes_per_bucket=a.rows,
                        hash_config=HashConfig(precision=64, hash_fc="xxhash"))
    d = a.run_dir
    logs = os.path.join(d, "logs")

    def reader():
        return JsonlReader(a.input_dir, glob_pattern="*.jsonl", text_key="text", id_key="id")

    stage1 = LocalPipelineExecutor(
        pipeline=[reader(), MinhashDedupSignature(output_folder=f"{d}/signatures", config=cfg,
                                                  language=SpaceTokenizer())],
        tasks=a.tasks, workers=a.workers, logging_dir=f"{logs}/signatures")
    stage2 = LocalPipelineExecutor(
        pipeline=[MinhashDedupBuckets(input_folder=f"{d}/signatures", output_folder=f"{d}/buckets",
                                      config=cfg)],
        tasks=cfg.num_buckets, workers=a.workers, logging_dir=f"{logs}/buckets", depends=stage1)
    stage3 = LocalPipelineExecutor(
        pipeline=[MinhashDedupCluster(input_folder=f"{d}/buckets", output_folder=f"{d}/remove_ids",
                                      config=cfg)],
        tasks=1, logging_dir=f"{logs}/clusters", depends=stage2)
    stage4 = LocalPipelineExecutor(
        pipeline=[reader(),
                  MinhashDedupFilter(input_folder=f"{d}/remove_ids",
                                     exclusion_writer=JsonlWriter(f"{d}/removed", compression=None)),
                  JsonlWriter(f"{d}/kept", compression=None)],
        tasks=a.tasks, workers=a.workers, logging_dir=f"{logs}/filter", depends=stage3)
    stage4.run()


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def version_of(python, dist):
    try:
        return subprocess.run([python, "-c", f"import importlib.metadata as m; print(m.version('{dist}'))"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError:
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("corpus", nargs="?")
    p.add_argument("--lshdb", default=os.path.join(ROOT, "target", "release", "lshdb"))
    p.add_argument("--peer-python", default=os.path.join(ROOT, "tools", ".venv-dedup", "bin", "python"))
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--num-perm", type=int, default=128)
    p.add_argument("--bands", type=int, default=None, help="peers' bands (default: lshdb's choice)")
    p.add_argument("--rows", type=int, default=None, help="peers' rows (default: lshdb's choice)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="processes the peers may use (default: all cores)")
    p.add_argument("--lshdb-banding", default=None,
                   help="BxR: `lshdb dedup --bands B --rows R` (default: tuned from the threshold)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=1800,
                   help="seconds one run may take; a system over it is reported as not finished "
                        "and not run again")
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--work", default=os.path.join(ROOT, "tools", "data", "dedup-peers"))
    p.add_argument("--json-out", default=None)
    p.add_argument("--keep-runs", action="store_true", help="keep each run's outputs under WORK/runs")
    # internal: the datatrove child process
    p.add_argument("--datatrove-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--input-dir", help=argparse.SUPPRESS)
    p.add_argument("--run-dir", help=argparse.SUPPRESS)
    p.add_argument("--tasks", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.datatrove_child:
        datatrove_child(args)
        return
    if not args.corpus:
        p.error("the corpus is required")
    args.lshdb = os.path.abspath(args.lshdb)
    args.corpus = os.path.abspath(args.corpus)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)

    print("preparing: lshdb's shingle sets, the peers' input, the exact truth ...", file=sys.stderr)
    prep = prepare(args, work)
    index = prep["lshdb_stats"]["settings"]
    lb, lr = index.get("bands"), index.get("rows")
    args.bands = args.bands or lb
    args.rows = args.rows or lr
    truth = truth_of(prep["ids"], prep["pairs"])
    print(f"{len(prep['ids'])} documents, {len(prep['pairs'])} exact pairs at J >= {args.threshold} "
          f"({prep['exact_seconds']:.1f} s); should drop: {len(truth['first_drop'])} (keep-first), "
          f"{sum(s - 1 for s in truth['sizes'].values())} (components); lshdb {lb} x {lr}, "
          f"peers {args.bands} x {args.rows}", file=sys.stderr)

    per_run = {s: [] for s in systems}
    unfinished = {}
    for r in range(args.runs):
        for s in systems:
            if s in unfinished:
                continue
            run_dir = os.path.join(work, "runs", f"{s}-{r}")
            shutil.rmtree(run_dir, ignore_errors=True)
            os.makedirs(run_dir)
            with open("/proc/loadavg") as f:
                load = float(f.read().split()[0])
            try:
                m = RUNNERS[s](args, work, prep, run_dir)
            except TimedOut as e:
                unfinished[s] = str(e)
                print(f"run {r + 1}/{args.runs} {s}: {e}; stopped", file=sys.stderr)
                shutil.rmtree(run_dir, ignore_errors=True)
                continue
            m["loadavg_1m_before"] = load
            if m["dropped_ids"] is not None:
                m.update(score(truth, prep["ids"], m["dropped_ids"]))
            ids = m.pop("dropped_ids")
            print(f"run {r + 1}/{args.runs} {s}: {m['wall_s']:.2f} s wall, {m['cpu_s']:.2f} s CPU, "
                  f"{m['peak_rss_tree_mib']:.0f} MiB, dropped {m.get('dropped', '–')}, "
                  f"load {load:.1f}", file=sys.stderr)
            per_run[s].append(m)
            if ids is not None and r == 0:
                with open(os.path.join(work, f"{s}.dropped.txt"), "w") as f:
                    f.write("\n".join(ids) + "\n")
            if not args.keep_runs:
                shutil.rmtree(run_dir, ignore_errors=True)

    results = {}
    for s, runs in per_run.items():
        if not runs:
            results[s] = {"unfinished": unfinished.get(s), "unfinished_after_s": args.timeout, "runs": []}
            continue
        med = {}
        for key in runs[0]:
            vals = [r[key] for r in runs]
            if all(isinstance(v, (int, float)) for v in vals):
                med[key] = statistics.median(vals)
                if isinstance(vals[0], int):
                    med[key] = int(med[key])
            else:
                med[key] = vals[0]
        med["runs"] = runs
        results[s] = med
    report = {
        "corpus": args.corpus,
        "documents": len(prep["ids"]),
        "threshold": args.threshold,
        "num_perm": args.num_perm,
        "lshdb_bands_rows": [lb, lr],
        "peer_bands_rows": [args.bands, args.rows],
        "peer_workers": args.workers,
        "shingle_settings": prep["shingle_settings"],
        "exact_pairs": len(prep["pairs"]),
        "exact_seconds": prep["exact_seconds"],
        "should_drop_first": len(truth["first_drop"]),
        "should_drop_components": sum(s - 1 for s in truth["sizes"].values()),
        "versions": {
            "lshdb": subprocess.run([args.lshdb, "--version"], capture_output=True, text=True).stdout.strip(),
            "text-dedup": version_of(args.peer_python, "text-dedup"),
            "datatrove": version_of(args.peer_python, "datatrove"),
            "datasets": version_of(args.peer_python, "datasets"),
            "python": subprocess.run([args.peer_python, "--version"], capture_output=True,
                                     text=True).stdout.strip(),
        },
        "cpu_count": os.cpu_count(),
        "runs": args.runs,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "timeout_s": args.timeout,
        "results": results,
    }
    out = args.json_out or os.path.join(work, "results.json")
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    print(table(results, systems))
    print(f"\nmedians of {args.runs} run(s); raw runs in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
