#!/usr/bin/env python3
"""Peer runner: measure one Python MinHash-LSH library at one threshold.

One process = one system x one threshold, fed exactly the shingles lshdb uses:
the JSON Lines written by `lshdb export` from a database created without
--store-text, one {"id": KEY, "shingles": [u32, ...]} per line (sorted
distinct MurmurHash3 x86_32 seed-0 hashes of the char 5-shingles).

    tools/.venv/bin/python tools/bench/peers.py --system rensa \
        --shingles tools/data/debian-desc-long.shingles.jsonl --threshold 0.8 \
        --out tools/data/peers/rensa-0.8.json --pairs-out tools/data/peers/rensa-0.8.tsv

Systems: datasketch (in memory), datasketch-redis (MinHashLSH on redis storage;
start a server first with tools/bench/redis.sh; the run FLUSHDBs that server's
database 0 before loading), rensa, gaoya. Set them up with
tools/bench/setup_peers.sh.

Everything runs on one thread: RAYON_NUM_THREADS=1 (rensa and gaoya use rayon)
and the BLAS/OpenMP thread counts are pinned before any import; each phase also
records its process CPU time, so cpu/wall > 1 would show a stray thread.

Phases (JSON parsing is not counted anywhere):
  1. signature: build the system's own MinHash object for every doc. The
     conversion of the u32 hashes into the form the library accepts (Python
     ints, bytes tokens or a space-joined string) is timed separately
     (feed_prep_seconds); signature_docs_per_s excludes it,
     signature_docs_per_s_incl_prep includes it.
  2. load: insert every doc (with its signature) into the LSH index.
  3. query latency: single queries over every k-th doc (k = docs // sample),
     perf_counter_ns around the query call only.
  4. save / reopen: pickle size (redis: RDB size after SAVE), then time to
     restore the index and answer one query.
  5. pairs: query every doc against the full index; every candidate pair
     (self-matches excluded), deduplicated, keyA < keyB, written as TSV.
     These are raw LSH candidates except for gaoya, whose query drops the
     candidates whose signature-estimated Jaccard is below the threshold.

The same phases are also reported in process CPU time (`cpu`), which on a busy
machine is the fairer comparison (wall time includes waiting for a core; for
datasketch-redis the server's CPU is reported separately). Per-query CPU times
carry ~1 us of clock overhead (the CPU clock is a system call).
"""

import os

# Single thread, before numpy / rensa / gaoya are imported.
os.environ["RAYON_NUM_THREADS"] = "1"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from peer_systems import (  # noqa: E402 (next to this script)
    PROGRESS_EVERY, Datasketch, Gaoya, Rensa, log,
)

SYSTEMS = ("datasketch", "datasketch-redis", "rensa", "gaoya")
SIGN_BATCH = 512




def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb():
    """The resident set size now (VmRSS), not the high-water mark."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


class Phase:
    """Wall and process-CPU time of one phase (plus the redis server's CPU).

    On a busy machine the wall figures include waiting for a core; the CPU
    figures do not (for datasketch-redis the client's CPU excludes the
    server's, reported separately)."""

    def __init__(self, sysm):
        self.sysm = sysm

    def __enter__(self):
        self.server0 = server_cpu(self.sysm)
        self.c0 = time.process_time_ns()
        self.t0 = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        self.wall_ns = time.perf_counter_ns() - self.t0
        self.cpu_ns = time.process_time_ns() - self.c0
        s1 = server_cpu(self.sysm)
        self.server_s = None if s1 is None else s1 - self.server0
        return False


def server_cpu(sysm):
    f = getattr(sysm, "server_cpu_s", None)
    return f() if f else None


def load_shingles(path):
    """Keys and one uint32 array per doc (compact, so the input does not
    dominate peak RSS)."""
    keys, arrays = [], []
    with open(path, "rb") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if "shingles" not in rec:
                sys.exit(f"{path}:{line_no}: no 'shingles' field (export from a db created without --store-text)")
            keys.append(str(rec["id"]))
            arrays.append(np.asarray(rec["shingles"], dtype=np.uint32))
    if len(set(keys)) != len(keys):
        sys.exit(f"{path}: duplicate ids")
    return keys, arrays


def percentile(sorted_vals, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return None
    rank = max(1, int(np.ceil(p / 100.0 * len(sorted_vals))))
    return sorted_vals[rank - 1]


# --------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", required=True, choices=SYSTEMS)
    ap.add_argument("--shingles", required=True, help="JSON Lines {id, shingles} from `lshdb export`")
    ap.add_argument("--threshold", required=True, type=float)
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--redis-port", type=int, default=6390, help="datasketch-redis: port on 127.0.0.1")
    ap.add_argument("--query-sample", type=int, default=2000)
    ap.add_argument("--out", required=True, help="result JSON")
    ap.add_argument("--pairs-out", required=True, help="candidate pairs TSV (keyA<TAB>keyB, keyA < keyB)")
    ap.add_argument("--work-dir", default=None, help="where the saved index goes (default: beside --out)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N docs (for smoke tests)")
    args = ap.parse_args()
    if not 0.0 < args.threshold < 1.0:
        ap.error("--threshold must be in (0, 1)")

    wall0 = time.perf_counter()
    loadavg_start = os.getloadavg()
    log(f"{args.system} threshold={args.threshold} num_perm={args.num_perm}: reading {args.shingles}")
    keys, arrays = load_shingles(args.shingles)
    if args.limit:
        keys, arrays = keys[: args.limit], arrays[: args.limit]
    n = len(keys)
    total_shingles = int(sum(len(a) for a in arrays))
    gc.collect()
    rss_input = rss_mb()
    log(f"read {n} docs, {total_shingles} shingles in {time.perf_counter() - wall0:.1f}s (not counted)")

    if args.system == "datasketch":
        sysm = Datasketch(args)
    elif args.system == "datasketch-redis":
        sysm = Datasketch(args, redis_mode=True)
    elif args.system == "rensa":
        sysm = Rensa(args)
    else:
        sysm = Gaoya(args)

    # 1. Signatures, in batches: the feeds of a batch are prepared first
    # (timed as feed prep), then signed in one timed loop, so the clock reads
    # (the CPU clock is a system call) are per batch, not per doc.
    log("signatures")
    prep_ns = sign_ns = prep_cpu_ns = sign_cpu_ns = 0
    sigs = []
    keep_sigs = args.system != "gaoya"
    perf, proc = time.perf_counter_ns, time.process_time_ns
    sign = sysm.sign
    for start in range(0, n, SIGN_BATCH):
        c0, t0 = proc(), perf()
        feeds = [sysm.prep(a) for a in arrays[start : start + SIGN_BATCH]]
        c1, t1 = proc(), perf()
        batch = [sign(f) for f in feeds]
        t2, c2 = perf(), proc()
        prep_ns += t1 - t0
        prep_cpu_ns += c1 - c0
        sign_ns += t2 - t1
        sign_cpu_ns += c2 - c1
        # gaoya re-signs on insert, so its signature lists are not kept.
        sigs.extend(batch if keep_sigs else [None] * len(batch))
        done = start + len(feeds)
        if done // PROGRESS_EVERY != start // PROGRESS_EVERY:
            log(f"  signatures {done}/{n}")
    del feeds, batch
    sign_s, prep_s = sign_ns / 1e9, prep_ns / 1e9
    sign_cpu_s, prep_cpu_s = sign_cpu_ns / 1e9, prep_cpu_ns / 1e9
    log(f"signatures: {n / sign_s:.0f} docs/s wall, {n / sign_cpu_s:.0f} docs/cpu-s (+ feed prep {prep_s:.2f}s)")

    # 2. Load.
    log("load")
    if hasattr(sysm, "attach"):
        sysm.attach(keys)
    gc.collect()
    rss_before_load = current_rss_mb()
    with Phase(sysm) as ph_load:
        sysm.load(keys, sigs, arrays)
    gc.collect()
    index_rss = current_rss_mb() - rss_before_load
    load_s = (ph_load.wall_ns - getattr(sysm, "load_prep_ns", 0)) / 1e9
    load_cpu_s = (ph_load.cpu_ns - getattr(sysm, "load_prep_cpu_ns", 0)) / 1e9
    rss_load = rss_mb()
    log(f"load: {load_s:.2f}s, {n / load_s:.0f} docs/s; peak RSS so far {rss_load:.0f} MB")

    # 3. Single-query latency over every k-th doc: wall (perf_counter_ns)
    # around the call only; process CPU time read just outside it.
    sample_n = min(args.query_sample, n)
    step = max(1, n // sample_n)
    sample = [i * step for i in range(sample_n)]
    log(f"query latency over {len(sample)} docs (every {step}th)")
    lat, lat_cpu = [], []
    for i in sample:
        q = sysm.query_input(i)
        c0 = proc()
        t0 = perf()
        sysm.query_raw(q)
        t1 = perf()
        c1 = proc()
        lat.append(t1 - t0)
        lat_cpu.append(c1 - c0)
    lat_ms = sorted(x / 1e6 for x in lat)
    lat_cpu_ms = sorted(x / 1e6 for x in lat_cpu)

    # 4. Save + reopen.
    work_dir = args.work_dir or os.path.dirname(os.path.abspath(args.out))
    os.makedirs(work_dir, exist_ok=True)
    index_path = os.path.join(work_dir, f".{args.system}-{args.threshold}-{os.getpid()}.index.pickle")
    log("save")
    t0 = time.perf_counter()
    index_bytes = sysm.save(index_path)
    save_s = time.perf_counter() - t0
    reopen_ms = None
    reopen_hits = None
    if index_bytes is not None:
        q = sysm.query_input(0)
        gc.collect()
        t0 = perf()
        res = sysm.reopen_query(index_path, q)
        reopen_ms = (perf() - t0) / 1e6
        reopen_hits = len(res)
        ref = sysm.to_indices(sysm.query_raw(q))
        if sorted(sysm.to_indices(res)) != sorted(ref):
            log("WARNING: reopened index answered differently")
    if os.path.exists(index_path):
        os.remove(index_path)

    # 5. All pairs: query every doc.
    log("pairs: querying every doc")
    pairs = set()
    query_ns = 0
    with Phase(sysm) as ph_pairs:
        for i in range(n):
            q = sysm.query_input(i)
            t0 = perf()
            raw = sysm.query_raw(q)
            query_ns += perf() - t0
            for j in sysm.to_indices(raw):
                if j != i:
                    pairs.add(i * n + j if i < j else j * n + i)
            if (i + 1) % PROGRESS_EVERY == 0:
                log(f"  pairs {i + 1}/{n}: {len(pairs)} so far")
    pairs_s = ph_pairs.wall_ns / 1e9
    log(f"pairs: {len(pairs)} in {pairs_s:.1f}s")
    # Peak RSS before the extras below (rensa's flat u64 buffer is harness
    # input, not the system's footprint).
    rss_peak = rss_mb()

    extra = sysm.extra()
    redis_used = extra.pop("redis_used_memory_mb", None)

    out_pairs = []
    for p in pairs:
        a, b = keys[p // n], keys[p % n]
        out_pairs.append((a, b) if a < b else (b, a))
    out_pairs.sort()
    os.makedirs(os.path.dirname(os.path.abspath(args.pairs_out)), exist_ok=True)
    with open(args.pairs_out, "w", encoding="utf-8") as f:
        for a, b in out_pairs:
            f.write(f"{a}\t{b}\n")

    result = {
        "system": args.system,
        "version": importlib.metadata.version(sysm.package),
        "threshold": args.threshold,
        "num_perm": args.num_perm,
        "docs": n,
        "shingles": total_shingles,
        "signature_docs_per_s": n / sign_s,
        "signature_docs_per_s_incl_prep": n / (sign_s + prep_s),
        "signature_seconds": sign_s,
        "feed_prep_seconds": prep_s,
        "load_docs_per_s": n / load_s,
        "load_seconds": load_s,
        "query_p50_ms": percentile(lat_ms, 50),
        "query_p99_ms": percentile(lat_ms, 99),
        "query_mean_ms": float(np.mean(lat_ms)) if lat_ms else None,
        "query_sample": len(sample),
        "query_sample_step": step,
        "peak_rss_mb": rss_peak,
        "rss_after_input_mb": rss_input,
        "index_rss_mb": index_rss,
        "rss_after_load_mb": rss_load,
        "redis_used_memory_mb": redis_used,
        "index_bytes": index_bytes,
        "save_seconds": save_s if index_bytes is not None else None,
        "reopen_first_query_ms": reopen_ms,
        "reopen_first_query_hits": reopen_hits,
        "pairs_found": len(out_pairs),
        "pairs_seconds": pairs_s,
        "pairs_query_seconds": query_ns / 1e9,
        # Process CPU time of the same phases (this process only): robust to
        # other load on the machine, unlike the wall figures above.
        "cpu": {
            "signature_seconds": sign_cpu_s,
            "signature_docs_per_cpu_s": n / sign_cpu_s,
            "feed_prep_seconds": prep_cpu_s,
            "load_seconds": load_cpu_s,
            "load_docs_per_cpu_s": n / load_cpu_s if load_cpu_s > 0 else None,
            "query_p50_ms": percentile(lat_cpu_ms, 50),
            "query_p99_ms": percentile(lat_cpu_ms, 99),
            "pairs_seconds": ph_pairs.cpu_ns / 1e9,
            "redis_server_load_seconds": ph_load.server_s,
            "redis_server_pairs_seconds": ph_pairs.server_s,
        },
        "wall_seconds_total": time.perf_counter() - wall0,
        # The machine's 1/5/15-min load averages: above the core count means
        # other processes competed for the CPU (compare wall with cpu).
        "loadavg_start": list(loadavg_start),
        "loadavg_end": list(os.getloadavg()),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "extra": extra,
        "notes": " | ".join(sysm.notes()),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    log(
        f"done: sig {result['signature_docs_per_s']:.0f}/s load {result['load_docs_per_s']:.0f}/s "
        f"p50 {result['query_p50_ms']:.3f}ms p99 {result['query_p99_ms']:.3f}ms pairs {len(out_pairs)} "
        f"rss {result['peak_rss_mb']:.0f}MB -> {args.out}"
    )


if __name__ == "__main__":
    main()
