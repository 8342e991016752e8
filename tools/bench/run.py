#!/usr/bin/env python3
"""One command for the whole benchmark: lshdb and its peers on one corpus.

    python3 tools/bench/run.py [--runs 3] [--thresholds 0.5,0.8]
                               [--systems lshdb,datasketch,datasketch-redis,rensa,gaoya]
                               [--out docs/benchmarks.md]

Steps (each measured activity in its own process; generated data under
tools/data/, git-ignored):
  1. corpus: tools/debian_corpus.py --long (debian-desc, 63,498 packages);
  2. build: cargo build --release (lshdb CLI and the lshdb_bench example);
  3. shingles for the peers: lshdb create + add + export (same normalisation,
     same MurmurHash3 32-bit shingle hashes as lshdb itself);
  4. exact truth per threshold: prefix-filtering all-pairs, checked against
     brute force on a sample (lshdb_bench truth);
  5. lshdb: signatures, durable bulk load, query latency, reopen + first
     query, all pairs (lshdb_bench), --runs times each;
  6. peers: tools/bench/peers.py per system x threshold x run, a private
     redis-server on 127.0.0.1 for datasketch-redis;
  7. recall and precision of every system's pairs against the truth, medians
     of the runs, lshdb's ratio to each peer -> docs/benchmarks.md.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
ROOT = os.path.dirname(TOOLS)
DATA = os.path.join(TOOLS, "data")
BENCH = os.path.join(ROOT, "target", "release", "examples", "lshdb_bench")
LSHDB = os.path.join(ROOT, "target", "release", "lshdb")
PEERS = ("datasketch", "datasketch-redis", "rensa", "gaoya")
REDIS_PORT = 6390


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, **kw)


def run_json(cmd):
    out = run(cmd, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def read_pairs(path):
    pairs = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                a, b = parts[0], parts[1]
                pairs.add((a, b) if a < b else (b, a))
    return pairs


def accuracy(found_path, truth):
    found = read_pairs(found_path)
    hit = len(found & truth)
    return {
        "recall": hit / len(truth) if truth else None,
        "precision": hit / len(found) if found else None,
        "pairs_found": len(found),
    }


def prepare(args):
    os.makedirs(DATA, exist_ok=True)
    if not os.path.exists(args.corpus):
        run([sys.executable, os.path.join(TOOLS, "debian_corpus.py"), "--long", "--out", args.corpus])
    run(["cargo", "build", "--release", "--quiet", "--bin", "lshdb", "--example", "lshdb_bench"], cwd=ROOT)
    shingles = args.corpus.replace(".jsonl", ".shingles.jsonl")
    if not os.path.exists(shingles) or os.path.getmtime(shingles) < os.path.getmtime(args.corpus):
        db = os.path.join(DATA, "export.lshdb")
        if os.path.exists(db):
            os.remove(db)
        run([LSHDB, "create", db], stdout=subprocess.DEVNULL)
        run([LSHDB, "add", db, "--jsonl", args.corpus], stdout=subprocess.DEVNULL)
        run([LSHDB, "export", db, "--out", shingles], stdout=subprocess.DEVNULL)
        os.remove(db)
    return shingles


def lshdb_runs(args, t, truth_info):
    work = os.path.join(DATA, "lshdb")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, f"bench-{t}.lshdb")
    res = {"signatures": [], "load": [], "query": [], "reopen": [], "pairs": []}
    for r in range(args.runs):
        res["signatures"].append(run_json([BENCH, "signatures", "--corpus", args.corpus]))
        res["load"].append(run_json([BENCH, "load", "--corpus", args.corpus, "--db", db, "--threshold", str(t)]))
        res["query"].append(run_json([BENCH, "query", "--corpus", args.corpus, "--db", db, "--sample", "2000"]))
        res["reopen"].append(run_json([BENCH, "reopen", "--corpus", args.corpus, "--db", db]))
        pairs_tsv = os.path.join(work, f"pairs-{t}.tsv")
        res["pairs"].append(run_json([BENCH, "pairs", "--db", db, "--threshold", str(t), "--out", pairs_tsv]))
    acc = accuracy(pairs_tsv, truth_info["pairs"])
    return {
        "system": "lshdb",
        "signature_docs_per_s": median(x["text_to_signature_docs_per_s"] for x in res["signatures"]),
        "prehashed_signature_docs_per_s": median(x["prehashed_signature_docs_per_s"] for x in res["signatures"]),
        "load_docs_per_s": median(x["load_docs_per_s"] for x in res["load"]),
        "peak_rss_mb": median(x["peak_rss_mb"] for x in res["load"]),
        "index_rss_mb": median(x["index_rss_mb"] for x in res["load"]),
        "index_bytes": median(x["index_bytes"] for x in res["load"]),
        "query_p50_ms": median(x["query_p50_ms"] for x in res["query"]),
        "query_p99_ms": median(x["query_p99_ms"] for x in res["query"]),
        "reopen_first_query_ms": median(x["reopen_first_query_ms"] for x in res["reopen"]),
        "pairs_seconds": median(x["pairs_seconds"] for x in res["pairs"]),
        "bands": res["load"][-1]["bands"],
        "rows": res["load"][-1]["rows"],
        **acc,
        "raw": res,
    }


def peer_runs(args, system, t, shingles, truth_info):
    work = os.path.join(DATA, "peers")
    os.makedirs(work, exist_ok=True)
    py = os.path.join(TOOLS, ".venv", "bin", "python")
    results = []
    pairs_tsv = os.path.join(work, f"{system}-{t}.tsv")
    for r in range(args.peer_runs or args.runs):
        out = os.path.join(work, f"{system}-{t}-run{r}.json")
        run([py, os.path.join(HERE, "peers.py"), "--system", system, "--shingles", shingles,
             "--threshold", str(t), "--num-perm", "128", "--redis-port", str(REDIS_PORT),
             "--query-sample", "2000", "--out", out, "--pairs-out", pairs_tsv])
        with open(out, encoding="utf-8") as f:
            results.append(json.load(f))
    acc = accuracy(pairs_tsv, truth_info["pairs"])
    keys = ("signature_docs_per_s", "load_docs_per_s", "query_p50_ms", "query_p99_ms",
            "peak_rss_mb", "index_rss_mb", "index_bytes", "reopen_first_query_ms", "pairs_seconds")
    summary = {"system": system, **{k: median(x.get(k) for x in results) for k in keys}, **acc}
    summary["version"] = results[-1].get("version")
    summary["notes"] = results[-1].get("notes")
    summary["raw"] = results
    return summary


def truth(args, t):
    path = os.path.join(DATA, f"truth-{t}.tsv")
    info = run_json([BENCH, "truth", "--corpus", args.corpus, "--threshold", str(t), "--out", path])
    info["pairs"] = read_pairs(path)
    return info


def fmt(v, digits=0):
    if v is None:
        return "–"
    if isinstance(v, float) and digits:
        return f"{v:,.{digits}f}"
    return f"{v:,.0f}" if isinstance(v, (int, float)) else str(v)


def ratio(ours, theirs, higher_is_better):
    if not ours or not theirs:
        return "–"
    r = ours / theirs if higher_is_better else theirs / ours
    return f"{r:.2f}×"


ROWS = [
    # key, label, digits, higher is better
    ("signature_docs_per_s", "signatures, docs/s (1 thread)", 0, True),
    ("load_docs_per_s", "bulk load, docs/s", 0, True),
    ("query_p50_ms", "query p50, ms", 3, False),
    ("query_p99_ms", "query p99, ms", 3, False),
    ("peak_rss_mb", "peak RSS of the process, MiB", 1, False),
    ("index_rss_mb", "memory added by loading the index, MiB", 1, False),
    ("index_bytes", "index size on disk, MB", 1, False),
    ("reopen_first_query_ms", "reopen + first query, ms", 1, False),
    ("pairs_seconds", "all pairs, s", 2, False),
    ("recall", "recall vs exact truth", 3, True),
    ("precision", "precision", 3, True),
]


def render(args, results, truths, started):
    lines = [
        "# Benchmarks: lshdb and its peers, side by side",
        "",
        f"Written by `python3 tools/bench/run.py --runs {args.runs}"
        + (f" --peer-runs {args.peer_runs}" if args.peer_runs else "")
        + f"` on {started:%Y-%m-%d} "
        f"({platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}). Corpus: debian-desc, the {truths[args.thresholds[0]]['docs']:,} "
        "Debian package descriptions (long form) from `tools/debian_corpus.py --long`; "
        "char 5-shingles, default normalisation, MurmurHash3 32-bit hashes fed to every system; "
        "num_perm 128. Every figure is the median of the runs (lshdb: "
        f"{args.runs}, peers: {args.peer_runs or args.runs}). Ratios are lshdb's advantage "
        "(> 1× means lshdb is better on that line).",
        "",
        "What each number means: signatures = MinHash signatures per second on one thread "
        "(lshdb: from raw text, including normalisation, shingling and hashing; peers: from the "
        "pre-hashed shingles); bulk load = documents per second into the index (lshdb: a durable "
        "file, both cores; datasketch-redis: Redis; others: memory); query = one document's "
        "near-duplicates (lshdb: verified Jaccard, from text; peers: LSH candidates from a "
        "signature); index size = the file (lshdb), the pickled index, or the Redis RDB; "
        "all pairs = every near-duplicate pair of the corpus; recall and precision against the "
        "exact all-pairs truth. Peak RSS is the whole process: lshdb's holds its corpus as "
        "Rust strings (about 30 MB), the peers' hold theirs as Python lists of ints (most of "
        "their figure); the memory added by loading the index (resident size after minus "
        "before) compares the indexes themselves.",
        "",
    ]
    for t in args.thresholds:
        res = results[t]
        truth_info = truths[t]
        lines += [
            f"## Threshold {t}",
            "",
            f"Exact truth: {truth_info['truth_pairs']:,} pairs with Jaccard ≥ {t}, computed by "
            f"prefix filtering in {truth_info['truth_seconds']:.1f} s (checked against brute force on "
            f"{truth_info['brute_force_sample_docs']} documents holding "
            f"{truth_info['brute_force_sample_pairs']} pairs).",
            "",
        ]
        systems = [s for s in ["lshdb", *PEERS] if s in res]
        lines.append("| | " + " | ".join(systems) + " |")
        lines.append("|---|" + "---|" * len(systems))
        for key, label, digits, _ in ROWS:
            cells = []
            for s in systems:
                v = res[s].get(key)
                if key == "index_bytes" and v is not None:
                    v = v / 1e6
                cells.append(fmt(v, digits))
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        if "lshdb" in res:
            lines += ["", "lshdb's ratio to each peer:", "",
                      "| | " + " | ".join(s for s in systems if s != "lshdb") + " |",
                      "|---|" + "---|" * (len(systems) - 1)]
            for key, label, _, better in ROWS:
                cells = [ratio(res["lshdb"].get(key), res[s].get(key), better) for s in systems if s != "lshdb"]
                lines.append(f"| {label} | " + " | ".join(cells) + " |")
            l = res["lshdb"]
            lines += ["", f"lshdb: {l['bands']} bands × {l['rows']} rows; from pre-hashed shingles "
                      f"its signatures run at {fmt(l['prehashed_signature_docs_per_s'])} docs/s; "
                      f"all pairs took {fmt(l['pairs_seconds'], 2)} s against "
                      f"{truth_info['truth_seconds']:.1f} s for the exact truth."]
        lines.append("")
    lines += ["## What each peer was fed", ""]
    for t in args.thresholds:
        for s in PEERS:
            if s in results[t] and results[t][s].get("notes"):
                lines.append(f"- {s} {results[t][s].get('version') or ''} (t={t}): {results[t][s]['notes']}")
    lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of each lshdb measurement")
    ap.add_argument("--peer-runs", type=int, default=None,
                    help="runs of each peer (default: --runs; datasketch-redis at 0.5 takes minutes a run)")
    ap.add_argument("--thresholds", default="0.5,0.8")
    ap.add_argument("--systems", default="lshdb," + ",".join(PEERS))
    ap.add_argument("--corpus", default=os.path.join(DATA, "debian-desc-long.jsonl"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = ap.parse_args()
    args.thresholds = [float(t) for t in args.thresholds.split(",")]
    systems = args.systems.split(",")
    started = datetime.datetime.now()

    shingles = prepare(args)
    docs = sum(1 for _ in open(args.corpus, encoding="utf-8"))
    peers = [s for s in systems if s in PEERS]
    if peers:
        run(["bash", os.path.join(HERE, "setup_peers.sh")])
    results, truths = {}, {}
    redis_up = False
    try:
        for t in args.thresholds:
            truths[t] = truth(args, t)
            truths[t]["docs"] = docs
            results[t] = {}
            if "lshdb" in systems:
                results[t]["lshdb"] = lshdb_runs(args, t, truths[t])
            for s in peers:
                if s == "datasketch-redis" and not redis_up:
                    run(["bash", os.path.join(HERE, "redis.sh"), "start", str(REDIS_PORT)])
                    redis_up = True
                results[t][s] = peer_runs(args, s, t, shingles, truths[t])
    finally:
        if redis_up:
            run(["bash", os.path.join(HERE, "redis.sh"), "stop", str(REDIS_PORT)])
    raw_path = os.path.join(DATA, "bench-results.json")
    with open(raw_path, "w", encoding="utf-8") as f:
        json.dump({str(t): {s: {k: v for k, v in r.items()} for s, r in results[t].items()} for t in results},
                  f, indent=1, default=str)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(render(args, results, truths, started))
    log(f"wrote {args.out} (raw results: {raw_path})")


if __name__ == "__main__":
    main()
