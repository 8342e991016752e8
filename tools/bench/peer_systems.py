"""The peer systems peers.py measures (datasketch, datasketch-redis, rensa,
gaoya), each behind one adapter, and the log line they share."""

import os
import pickle
import sys
import time

import numpy as np

RENSA_SEED = 42
PROGRESS_EVERY = 10_000


def log(msg):
    print(f"[peers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


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
