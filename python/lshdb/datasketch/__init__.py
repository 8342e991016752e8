"""``lshdb.datasketch``: datasketch's MinHash LSH API, answered by lshdb.

Change ``from datasketch import MinHash, MinHashLSH`` to ``from
lshdb.datasketch import MinHash, MinHashLSH``. Each index keeps the exact
set of every key and returns verified answers (Jaccard ≥ threshold, top-k
by Jaccard, containment ≥ threshold) where datasketch returns candidates;
``storage_config={"type": "lshdb", "path": ...}`` keeps it in an lshdb
file. See ``docs/datasketch.md``.

This module only re-exports: sketches (``_minhash``), the indexes
(``_lsh``, ``_forest``, ``_ensemble``), their lshdb database (``_store``),
key mapping (``_keys``), datasketch's parameter choice (``_params``) and
hash tables (``_tables``), and the names that are not supported
(``_unsupported``). The public modules named as datasketch's (``minhash``,
``lean_minhash``, ``hashfunc``, ``lsh``, ``lshforest``, ``lshensemble``,
``weighted_minhash``, ``b_bit_minhash``) re-export too, so that every datasketch import
works with ``datasketch`` changed to ``lshdb.datasketch``.
"""

from ._ensemble import MinHashLSHEnsemble
from ._forest import MinHashLSHForest
from ._lsh import MinHashLSH, MinHashLSHDeletionSession, MinHashLSHInsertionSession
from ._minhash import LeanMinHash, MinHash, sha1_hash32
from ._unsupported import WeightedMinHash, WeightedMinHashGenerator, bBitMinHash

__all__ = [
    "MinHash",
    "LeanMinHash",
    "MinHashLSH",
    "MinHashLSHInsertionSession",
    "MinHashLSHDeletionSession",
    "MinHashLSHForest",
    "MinHashLSHEnsemble",
    "sha1_hash32",
    "WeightedMinHash",
    "WeightedMinHashGenerator",
    "bBitMinHash",
]

for _public in (MinHash, LeanMinHash, MinHashLSH, MinHashLSHForest, MinHashLSHEnsemble):
    _public.__module__ = __name__
del _public
