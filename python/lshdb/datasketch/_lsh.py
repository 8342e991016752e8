"""``MinHashLSH``: datasketch's threshold index, answered by lshdb.

The index stores each key's set (the token hashes its :class:`MinHash`
keeps) in an lshdb database banded with datasketch's ``b`` and ``r``;
:meth:`MinHashLSH.query` returns the keys whose set has verified Jaccard
similarity ≥ ``threshold``, best first, where datasketch returns the
unverified candidates.
"""

from __future__ import annotations

from typing import Any, Dict, Hashable, List, Mapping, Optional, Tuple

from . import _keys
from ._minhash import MinHash, item_set
from ._params import optimal_param
from ._store import Closing, Items, Store, parse_storage
from ._tables import BandTables, band_bytes, counts, require

__all__ = ["MinHashLSH", "MinHashLSHInsertionSession", "MinHashLSHDeletionSession"]

#: How much a false positive weighs against datasketch's ``weights`` when
#: ``b`` and ``r`` are chosen: lshdb verifies every candidate, so a false
#: positive costs only its verification and never reaches the answer, while
#: a false negative is a lost answer. At a tenth, the default banding finds
#: a pair at exactly the threshold with probability 0.84 to 0.96 (datasketch's:
#: 0.31 to 0.55; thresholds 0.5 to 0.9, 16 to 256 values), and pairs above it
#: more often.
FALSE_POSITIVE_DISCOUNT = 0.1


def _check_args(threshold: Any, num_perm: Any, weights: Any) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"threshold must be a float, not {type(threshold).__name__}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must be in [0.0, 1.0]")
    if isinstance(num_perm, bool) or not isinstance(num_perm, int):
        raise TypeError(f"num_perm must be an int, not {type(num_perm).__name__}")
    if num_perm < 2:
        raise ValueError("Too few permutation functions")
    if len(weights) != 2 or any(not 0.0 <= w <= 1.0 for w in weights):
        raise ValueError("Weight must be in [0.0, 1.0]")
    if sum(weights) != 1.0:
        raise ValueError("Weights must sum to 1.0")


class MinHashLSH(BandTables, Closing):
    """``MinHashLSH(threshold=0.9, num_perm=128, weights=(0.5, 0.5),
    params=None, storage_config=None, prepickle=None, hashfunc=None)``.

    ``params=(b, r)`` fixes the bands and rows (``b * r <= num_perm``);
    otherwise they are chosen as datasketch chooses them for ``threshold``
    and ``weights``, with a false positive weighing a tenth
    (:data:`FALSE_POSITIVE_DISCOUNT`): answers are verified.
    ``storage_config={"type": "lshdb", "path": p}`` keeps the index in the
    lshdb file ``p`` (opened when it exists: its parameters must match), and
    none keeps it in memory. ``prepickle`` and ``hashfunc`` are accepted and
    ignored: every hashable key is stored (see ``_keys``).
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        weights: Tuple[float, float] = (0.5, 0.5),
        params: Optional[Tuple[int, int]] = None,
        storage_config: Optional[Mapping[str, Any]] = None,
        prepickle: Optional[bool] = None,
        hashfunc: Optional[Any] = None,
    ) -> None:
        _check_args(threshold, num_perm, weights)
        self.threshold = float(threshold)
        self.h = num_perm
        if params is not None:
            self.b, self.r = (int(params[0]), int(params[1]))
            if self.b * self.r > num_perm:
                raise ValueError(
                    f"The product of b and r in params is {self.b} * {self.r} = {self.b * self.r} "
                    f"-- it must be less than num_perm {num_perm}. Did you forget to specify num_perm?"
                )
        else:
            fp, fn = float(weights[0]) * FALSE_POSITIVE_DISCOUNT, float(weights[1])
            self.b, self.r = optimal_param(self.threshold, num_perm, fp, fn)
        if self.b < 2:
            raise ValueError("The number of bands are too small (b < 2)")
        config = {
            "threshold": min(max(self.threshold, 0.01), 0.99),
            "num_perm": num_perm,
            "bands": self.b,
            "rows": self.r,
        }
        self._store = Store(parse_storage(storage_config), config)
        self._queries: List[Items] = []
        # datasketch's per-key band bytes, kept in memory only (``_tables``).
        self._bands: Optional[Dict[Hashable, List[bytes]]] = {} if self._store.sets is not None else None

    @property
    def num_perm(self) -> int:
        """The signature length the index takes."""
        return self.h

    def insert(self, key: Hashable, minhash: MinHash, check_duplication: bool = True) -> None:
        """Indexes ``minhash``'s set under ``key``; ``ValueError`` when the
        key is already there (``check_duplication=False`` replaces it)."""
        stored = _keys.encode(key)
        items = self._items(minhash, "insert")
        if check_duplication and stored in self._store:
            raise ValueError("The given key already exists")
        self._store.insert(stored, items)
        self._keep_bands(key, minhash)

    def _keep_bands(self, key: Hashable, minhash: MinHash) -> None:
        if self._bands is not None:
            self._bands[key] = band_bytes(minhash.hashvalues, self.b, self.r)

    def _items(self, minhash: MinHash, what: str) -> Items:
        items = item_set(minhash, self.h, what)
        if not items and what != "query":
            raise ValueError(f"{what}: the MinHash is empty (no token was added); lshdb cannot index an empty set")
        return items

    def query(self, minhash: MinHash) -> List[Hashable]:
        """Keys whose set has verified Jaccard similarity ≥ ``threshold``
        with ``minhash``'s, best first (an empty MinHash finds nothing)."""
        return self._store.query(self._items(minhash, "query"), self.threshold)

    def add_to_query_buffer(self, minhash: MinHash) -> None:
        """Buffers a query for :meth:`collect_query_buffer`."""
        self._queries.append(self._items(minhash, "query"))

    def collect_query_buffer(self) -> List[Hashable]:
        """The keys every buffered query finds (their intersection), and
        empties the buffer."""
        queries, self._queries = self._queries, []
        results = [set(self._store.query(items, self.threshold)) for items in queries]
        return list(set.intersection(*results)) if results else []

    def remove(self, key: Hashable) -> None:
        """Removes ``key``; ``ValueError`` when it is not there."""
        if not self._store.remove(_keys.encode(key)):
            raise ValueError("The given key does not exist")
        if self._bands is not None:
            self._bands.pop(key, None)

    def __contains__(self, key: Hashable) -> bool:
        return _keys.encode(key) in self._store

    def __len__(self) -> int:
        return len(self._store)

    def is_empty(self) -> bool:
        """Whether no key is indexed."""
        return len(self._store) == 0

    def merge(self, other: "MinHashLSH", check_overlap: bool = False) -> None:
        """Adds every key of ``other`` (an in-memory index, or one whose sets
        this process inserted) to this one; same ``num_perm``, ``b`` and
        ``r`` required. ``check_overlap=True`` raises ``ValueError`` when a
        key is in both; otherwise ``other``'s set replaces this one's."""
        if type(other) is not type(self):
            raise ValueError(f"Cannot merge type MinHashLSH and type {type(other).__name__}.")
        if (self.h, self.b, self.r) != (other.h, other.b, other.r):
            raise ValueError("Cannot merge MinHashLSH with different initialization parameters.")
        keys = list(other._store.keys())
        if check_overlap and any(k in self._store for k in keys):
            raise ValueError("The keys are overlapping, duplicate key exists.")
        self._store.insert_many((k, other._store.items_of(k)) for k in keys)
        if self._bands is not None:
            self._bands.update(require(other._bands, "merge"))

    def insertion_session(self, buffer_size: int = 50000) -> "MinHashLSHInsertionSession":
        """``with lsh.insertion_session() as s: s.insert(key, m)``: the
        inserts are written on lshdb's bulk path per ``buffer_size`` keys."""
        return MinHashLSHInsertionSession(self, buffer_size)

    def deletion_session(self, buffer_size: int = 50000) -> "MinHashLSHDeletionSession":
        """``with lsh.deletion_session() as s: s.remove(key)``."""
        return MinHashLSHDeletionSession(self, buffer_size)

    def _layout(self) -> Tuple[int, int]:
        """:class:`BandTables`' bands: ``b`` bands of ``r`` rows."""
        return self.b, self.r

    def get_counts(self) -> List[Dict[bytes, int]]:
        """Per band, how many keys share each band's bytes (in-memory index only)."""
        return counts(require(self._bands, "get_counts"), self.b)

    def get_subset_counts(self, *keys: Hashable) -> List[Dict[bytes, int]]:
        """:meth:`get_counts` of the given keys only."""
        bands = require(self._bands, "get_subset_counts")
        return counts({k: bands[k] for k in set(keys)}, self.b)


class MinHashLSHInsertionSession:
    """Buffered inserts into a :class:`MinHashLSH` (see :meth:`MinHashLSH.insertion_session`)."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int) -> None:
        if isinstance(buffer_size, bool) or not isinstance(buffer_size, int) or buffer_size < 1:
            raise ValueError(f"buffer_size must be a positive int, not {buffer_size!r}")
        self.lsh = lsh
        self._size = buffer_size
        self._pending: Dict[str, Items] = {}
        self._sketches: Dict[Hashable, MinHash] = {}

    def __enter__(self) -> "MinHashLSHInsertionSession":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()

    def close(self) -> None:
        """Writes what is buffered."""
        pending, self._pending = self._pending, {}
        sketches, self._sketches = self._sketches, {}
        if pending:
            self.lsh._store.insert_many(pending.items())
        for key, minhash in sketches.items():
            self.lsh._keep_bands(key, minhash)

    def insert(self, key: Hashable, minhash: MinHash, check_duplication: bool = True) -> None:
        """As :meth:`MinHashLSH.insert`, written when the buffer is full or the session ends."""
        stored = _keys.encode(key)
        items = self.lsh._items(minhash, "insert")
        if check_duplication and (stored in self._pending or stored in self.lsh._store):
            raise ValueError("The given key already exists")
        self._pending[stored] = items
        self._sketches[key] = minhash
        if len(self._pending) >= self._size:
            self.close()


class MinHashLSHDeletionSession:
    """Buffered removals from a :class:`MinHashLSH`."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int) -> None:
        self.lsh = lsh

    def __enter__(self) -> "MinHashLSHDeletionSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing is buffered: each removal is written as it is made."""

    def remove(self, key: Hashable) -> None:
        """As :meth:`MinHashLSH.remove`."""
        self.lsh.remove(key)
