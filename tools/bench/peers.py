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
import pickle  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

SYSTEMS = ("datasketch", "datasketch-redis", "rensa", "gaoya")
RENSA_SEED = 42
PROGRESS_EVERY = 10_000
SIGN_BATCH = 512


def log(msg):
    print(f"[peers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


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
# Systems. Each adapter exposes:
#   prep(arr)          -> feed: the u32 hashes in the form the library takes
#   sign(feed)         -> the library's own MinHash object for one doc
#   load(keys, sigs, arrays) -> build the index (timed by the caller)
#   query_input(i)     -> what a single query is given (prepared untimed)
#   query_raw(q)       -> the library's answer; to_indices(raw) -> doc indices
#   save(path)         -> bytes on disk, or None when it cannot be saved
#   reopen_query(path, q) -> restore the saved index and answer q
#   notes() / extra()  -> what it was fed and system-specific figures
# --------------------------------------------------------------------------


def u32_identity(v):
    """datasketch hashfunc: the shingles are already 32-bit hashes.

    datasketch 2.0.0's default scheme (affine32) pre-mixes every value with
    the MurmurHash3 32-bit finalizer before its affine permutations, so an
    identity hash function is safe and skips the default SHA-1."""
    return v


class Datasketch:
    package = "datasketch"

    def __init__(self, args, redis_mode=False):
        from datasketch import MinHash, MinHashLSH
        from datasketch.lsh import _optimal_param

        self.MinHashLSH = MinHashLSH
        self.args = args
        self.redis_mode = redis_mode
        # MinHash.generator/bulk's documented trick: build the permutations
        # once and copy() the empty template per doc (a fresh MinHash(...)
        # per doc re-draws 2 x 128 parameters with numpy's RandomState: ~2.4x
        # slower on this corpus).
        self.template = MinHash(num_perm=args.num_perm, hashfunc=u32_identity)
        self.bands, self.rows = _optimal_param(args.threshold, args.num_perm, 0.5, 0.5)
        self.key_index = None
        self.redis = None
        if redis_mode:
            import redis

            # redis-py 8 defaults to a 5 s socket timeout (with retries, so a
            # slow SAVE gets re-sent); the admin client waits as long as needed.
            self.redis = redis.Redis(host="127.0.0.1", port=args.redis_port, socket_timeout=600)
            self.redis.ping()
            self.redis.flushdb()
            self.basename = f"lshdb_bench_{args.threshold}".encode()
            self.storage_config = {
                "type": "redis",
                "basename": self.basename,
                # socket_timeout: a 50000-command MULTI/EXEC flush can take
                # more than redis-py's 5 s default on a busy 2-core machine.
                "redis": {"host": "127.0.0.1", "port": args.redis_port, "socket_timeout": 120},
            }
        else:
            self.storage_config = None

    def notes(self):
        n = [
            "fed: each doc's u32 shingle hashes as a Python list of ints to MinHash.update_batch, with "
            "hashfunc=identity (no SHA-1; datasketch 2.0.0's default affine32 scheme pre-mixes each value "
            "with the MurmurHash3 fmix32 finalizer, then applies a*h+b mod 2^32); feed prep = ndarray.tolist()",
            "MinHash objects made like MinHash.generator/bulk: one template MinHash(num_perm, hashfunc) and "
            "template.copy() per doc (shares the permutation arrays)",
            f"MinHashLSH(threshold, num_perm) picks b={self.bands} x r={self.rows} "
            f"({self.bands * self.rows} of {self.args.num_perm} values used) by its own FP/FN-weighted optimum",
            "load: insertion_session() with default check_duplication=True; string keys",
            "query returns raw LSH candidates (unverified)",
        ]
        if self.redis_mode:
            n += [
                "storage_config type redis on 127.0.0.1 (private server, --save '' i.e. no automatic snapshots, "
                "no AOF: nothing durable until SAVE; socket_timeout 120 s instead of redis-py 8's 5 s); keys "
                "prepickled (datasketch default for redis)",
                "insertion_session buffers commands in a MULTI/EXEC pipeline of 50000; each "
                "check_duplication is one HEXISTS round-trip; each query is one SMEMBERS round-trip per band",
                "index_bytes = RDB file size after an explicit SAVE; reopen = a fresh MinHashLSH(threshold, "
                "num_perm, storage_config) on the same basename (includes its parameter optimisation) + one query",
            ]
        else:
            n += ["index_bytes = len(pickle.dumps(lsh)) (dict storage); reopen = pickle.load from a file + one query"]
        return n

    def prep(self, arr):
        return arr.tolist()

    def sign(self, feed):
        m = self.template.copy()
        m.update_batch(feed)
        return m

    def new_index(self):
        if self.redis_mode:
            return self.MinHashLSH(
                threshold=self.args.threshold, num_perm=self.args.num_perm, storage_config=self.storage_config
            )
        return self.MinHashLSH(threshold=self.args.threshold, num_perm=self.args.num_perm)

    def attach(self, keys):
        # Untimed: maps the returned keys back to doc indices.
        self.key_index = {k: i for i, k in enumerate(keys)}

    def load(self, keys, sigs, arrays):
        self.lsh = self.new_index()
        assert (self.lsh.b, self.lsh.r) == (self.bands, self.rows)
        with self.lsh.insertion_session() as session:
            for i, (key, m) in enumerate(zip(keys, sigs)):
                session.insert(key, m)
                if (i + 1) % PROGRESS_EVERY == 0:
                    log(f"  load {i + 1}/{len(keys)}")
        self.sigs = sigs

    def query_input(self, i):
        return self.sigs[i]

    def query_raw(self, q):
        return self.lsh.query(q)

    def to_indices(self, raw):
        ki = self.key_index
        return [ki[k] for k in raw]

    def save(self, path):
        if self.redis_mode:
            self.redis.save()
            cfg_dir = self.redis.config_get("dir")["dir"]
            cfg_file = self.redis.config_get("dbfilename")["dbfilename"]
            rdb = os.path.join(cfg_dir, cfg_file)
            if not os.path.exists(rdb):
                return None
            size = os.path.getsize(rdb)
            # Measured; remove it so the next server start does not load it.
            os.remove(rdb)
            return size
        data = pickle.dumps(self.lsh, protocol=pickle.HIGHEST_PROTOCOL)
        with open(path, "wb") as f:
            f.write(data)
        return len(data)

    def reopen_query(self, path, q):
        if self.redis_mode:
            lsh = self.new_index()
        else:
            with open(path, "rb") as f:
                lsh = pickle.load(f)
        return lsh.query(q)

    def server_cpu_s(self):
        """The redis server's own CPU seconds so far (None in memory)."""
        if not self.redis_mode:
            return None
        info = self.redis.info("cpu")
        return info["used_cpu_user"] + info["used_cpu_sys"]

    def extra(self):
        out = {"bands": self.bands, "rows": self.rows}
        if self.redis_mode:
            info = self.redis.info("memory")
            out["redis_used_memory_mb"] = info["used_memory"] / 2**20
            out["redis_used_memory_dataset_mb"] = info.get("used_memory_dataset", 0) / 2**20
            out["redis_keys"] = self.redis.dbsize()
        return out


class Rensa:
    package = "rensa"

    def __init__(self, args):
        import rensa
        from datasketch.lsh import _false_negative_probability, _false_positive_probability

        self.rensa = rensa
        self.args = args
        # RMinHashLSH needs num_perm % num_bands == 0 and its docs give no
        # rule for num_bands (its own benchmark uses 8 bands at 0.8), so
        # take the divisor of num_perm that minimises datasketch's
        # equally weighted false-positive + false-negative integral.
        divisors = [b for b in range(1, args.num_perm + 1) if args.num_perm % b == 0]

        def err(b):
            r = args.num_perm // b
            return _false_positive_probability(args.threshold, b, r) + _false_negative_probability(args.threshold, b, r)

        self.bands = min(divisors, key=err)
        self.rows = args.num_perm // self.bands

    def notes(self):
        return [
            "fed: each shingle hash as a 4-byte little-endian bytes token (h.to_bytes(4,'little')), a list per "
            "doc, to RMinHash(num_perm, seed=42).update(); RMinHash.update takes only str/bytes tokens (ints "
            "raise TypeError) and re-hashes each token (rustc FxHasher-style, to u64) before R-MinHash "
            "sketching; bytes tokens measured faster than str(h) both to build and to sketch",
            "rensa's pre-hashed u64 input is only offered by the batch digest-matrix API, which makes no "
            "per-doc RMinHash: reported as extra.signature_bulk_prehashed_docs_per_s",
            f"RMinHashLSH(threshold, num_perm, num_bands={self.bands}) -> {self.bands} bands x {self.rows} rows "
            "(num_bands must divide num_perm; chosen as the divisor minimising datasketch's FP+FN weighting)",
            "load: insert_pairs over (doc index, RMinHash); keys are usize doc indices",
            "query returns raw LSH candidates (unverified; the threshold is used only by is_similar)",
            "index_bytes = len(pickle.dumps(lsh)); reopen = pickle.load from a file + one query",
        ]

    def prep(self, arr):
        return [h.to_bytes(4, "little") for h in arr.tolist()]

    def sign(self, feed):
        m = self.rensa.RMinHash(self.args.num_perm, RENSA_SEED)
        m.update(feed)
        return m

    def load(self, keys, sigs, arrays):
        self.lsh = self.rensa.RMinHashLSH(self.args.threshold, self.args.num_perm, self.bands)
        self.lsh.insert_pairs(zip(range(len(sigs)), sigs))
        self.sigs = sigs
        self.arrays = arrays

    def query_input(self, i):
        return self.sigs[i]

    def query_raw(self, q):
        return self.lsh.query(q)

    def to_indices(self, raw):
        return raw

    def save(self, path):
        data = pickle.dumps(self.lsh, protocol=pickle.HIGHEST_PROTOCOL)
        with open(path, "wb") as f:
            f.write(data)
        return len(data)

    def reopen_query(self, path, q):
        with open(path, "rb") as f:
            lsh = pickle.load(f)
        return lsh.query(q)

    def extra(self):
        out = {"bands": self.bands, "rows": self.rows}
        # The batch pre-hashed path: one flat u64 buffer + row offsets ->
        # a digest matrix (no per-doc objects), single thread.
        lens = np.fromiter((len(a) for a in self.arrays), dtype=np.uint64, count=len(self.arrays))
        offsets = np.zeros(len(self.arrays) + 1, dtype=np.uint64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.concatenate(self.arrays).astype(np.uint64)
        t0 = time.perf_counter()
        matrix = self.rensa.RMinHash.digest_matrix_from_flat_token_hashes(flat, offsets, self.args.num_perm, RENSA_SEED)
        dt = time.perf_counter() - t0
        out["signature_bulk_prehashed_docs_per_s"] = len(self.arrays) / dt
        lsh2 = self.rensa.RMinHashLSH(self.args.threshold, self.args.num_perm, self.bands)
        t0 = time.perf_counter()
        lsh2.insert_matrix(matrix)
        out["load_bulk_matrix_docs_per_s"] = len(self.arrays) / (time.perf_counter() - t0)
        del lsh2, matrix, flat
        # The bulk query path over the per-doc objects (same candidates as
        # one query() per doc).
        t0 = time.perf_counter()
        self.lsh.query_all(self.sigs)
        out["pairs_query_all_seconds"] = time.perf_counter() - t0
        return out


class Gaoya:
    package = "gaoya"

    def __init__(self, args):
        import gaoya

        self.gaoya = gaoya
        self.args = args
        self.lsh = self.new_index()
        m = self.lsh.minhash_index
        # Parsed from the index's repr, e.g. "MinHashIndex<u32> { threshold = 0.8,
        # num_hashes = 126, bands = 21, rows_per_band = 6, size = 0 } ...".
        text = repr(m)
        fields = dict(part.strip().split(" = ") for part in text[text.index("{") + 1 : text.index("}")].split(","))
        self.bands = int(fields["bands"])
        self.rows = int(fields["rows_per_band"])
        self.num_hashes = int(fields["num_hashes"])

    def new_index(self):
        # num_hashes -> gaoya's calculate_minhash_params picks (bands, rows)
        # so that P(candidate | J = threshold) > 0.99; hash_size 32 and the
        # 'set' id container are the wrapper's defaults.
        return self.gaoya.minhash.MinHashStringIndex(
            hash_size=32,
            jaccard_threshold=self.args.threshold,
            num_bands=None,
            band_size=None,
            num_hashes=self.args.num_perm,
            analyzer="word",
            lowercase=False,
            ngram_range=(1, 1),
            id_container="set",
        )

    def notes(self):
        return [
            "fed: one string per doc, the decimal shingle hashes joined by spaces, to MinHashStringIndex("
            "analyzer='word', ngram_range=(1,1), lowercase=False): its tokenizer splits on ASCII whitespace/"
            "punctuation so each shingle hash is one token, which gaoya re-hashes (FNV, to u32) before its "
            "a*h+b mod 2^31-1 MinHash; the Python API takes only str documents or str tokens",
            "signature = minhash_index.tokenize_and_minhash(doc) (returns the signature as a list; gaoya has no "
            "standalone MinHash object)",
            f"MinHashStringIndex(hash_size=32, num_hashes={self.args.num_perm}) -> gaoya chose {self.bands} bands "
            f"x {self.rows} rows = {self.num_hashes} hashes (its rule: P(candidate | J=threshold) > 0.99)",
            "load: par_bulk_insert_docs(ids, docs) in batches of 4096 with RAYON_NUM_THREADS=1; gaoya cannot "
            "insert a precomputed signature, so load re-tokenises and re-signs every doc (load includes signing)",
            "query(doc) takes the document, not a signature: query latency includes tokenising and signing the "
            "query doc; gaoya FILTERS the LSH candidates by signature-estimated Jaccard >= threshold, so its "
            "pairs are estimate-verified, not raw candidates",
            "the index is not picklable and gaoya has no persistence: index_bytes and reopen are null "
            "(reopening means rebuilding: load_seconds)",
        ]

    def prep(self, arr):
        return " ".join(map(str, arr.tolist()))

    def sign(self, feed):
        return self.lsh.minhash_index.tokenize_and_minhash(feed)

    def load(self, keys, sigs, arrays):
        # Timed by the caller; the batches' string building is subtracted
        # via self.load_prep_ns / load_prep_cpu_ns.
        self.arrays = arrays
        self.load_prep_ns = self.load_prep_cpu_ns = 0
        batch = 4096
        for start in range(0, len(arrays), batch):
            t0, c0 = time.perf_counter_ns(), time.process_time_ns()
            docs = [self.prep(a) for a in arrays[start : start + batch]]
            ids = list(range(start, start + len(docs)))
            self.load_prep_ns += time.perf_counter_ns() - t0
            self.load_prep_cpu_ns += time.process_time_ns() - c0
            self.lsh.par_bulk_insert_docs(ids, docs)
            if (start // batch) % 4 == 3:
                log(f"  load {start + len(docs)}/{len(arrays)}")

    def query_input(self, i):
        return self.prep(self.arrays[i])

    def query_raw(self, q):
        return self.lsh.query(q)

    def to_indices(self, raw):
        return raw

    def save(self, path):
        return None

    def reopen_query(self, path, q):
        return None

    def extra(self):
        return {"bands": self.bands, "rows": self.rows, "num_hashes_effective": self.num_hashes}


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
