"""``MinHashLSHEnsemble``: datasketch's containment index, answered by lshdb.

``index`` stores each key's set once, in an lshdb database with its
containment index; ``query(minhash, size)`` returns the keys whose set
holds at least ``threshold`` of the query's set, verified exactly, most
contained first, where datasketch returns unverified candidates. The sizes
``index`` and ``query`` take are checked, not needed: lshdb knows each set.
"""

from __future__ import annotations

import numbers
from typing import Any, Hashable, Iterable, Iterator, List, Mapping, Optional, Tuple

from . import _keys
from ._minhash import MinHash, item_set
from ._store import Closing, Items, Store, parse_storage

__all__ = ["MinHashLSHEnsemble"]

#: The Jaccard threshold of the database's own (Jaccard) banding, which
#: containment queries do not read (they use the containment index): high,
#: for the fewest bands (9 at 128 values) and so the fewest postings.
ENSEMBLE_JACCARD = 0.9


class MinHashLSHEnsemble(Closing):
    """``MinHashLSHEnsemble(threshold=0.9, num_perm=128, num_part=16, m=8,
    weights=(0.5, 0.5), storage_config=None, prepickle=None)``.

    ``threshold`` is the containment threshold. ``num_part``, ``m`` and
    ``weights`` (datasketch's partitioning and tuning) are checked as
    datasketch checks them and otherwise unused: lshdb's containment index
    verifies every answer exactly.
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        num_part: int = 16,
        m: int = 8,
        weights: Tuple[float, float] = (0.5, 0.5),
        storage_config: Optional[Mapping[str, Any]] = None,
        prepickle: Optional[bool] = None,
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise TypeError(f"threshold must be a float, not {type(threshold).__name__}")
        if threshold > 1.0 or threshold < 0.0:
            raise ValueError("threshold must be in [0.0, 1.0]")
        if isinstance(num_perm, bool) or not isinstance(num_perm, int):
            raise TypeError(f"num_perm must be an int, not {type(num_perm).__name__}")
        if num_perm < 2:
            raise ValueError("Too few permutation functions")
        if num_part < 1:
            raise ValueError("num_part must be at least 1")
        if m < 2 or m > num_perm:
            raise ValueError("m must be in the range of [2, num_perm]")
        if any(w < 0.0 or w > 1.0 for w in weights):
            raise ValueError("Weight must be in [0.0, 1.0]")
        if sum(weights) != 1.0:
            raise ValueError("Weights must sum to 1.0")
        self.threshold = float(threshold)
        self.h = num_perm
        self.m = m
        self.num_part = num_part
        config = {"threshold": ENSEMBLE_JACCARD, "num_perm": num_perm, "containment": True}
        self._store = Store(parse_storage(storage_config), config)

    def index(self, entries: Iterable[Tuple[Hashable, MinHash, int]]) -> None:
        """Indexes every ``(key, minhash, size)`` on lshdb's bulk path. Only
        once, on an empty index; ``ValueError`` for a non-positive size, a
        repeated key or no entries."""
        if not self.is_empty():
            raise ValueError("Cannot call index again on a non-empty index")
        batch: dict[str, Items] = {}
        for key, minhash, size in entries:
            if size <= 0:
                raise ValueError("Set size must be positive")
            stored = _keys.encode(key)
            items = item_set(minhash, self.h, "index")
            if not items:
                raise ValueError("index: a MinHash is empty (no token was added); lshdb cannot index an empty set")
            if stored in batch:
                raise ValueError(f"index: the key {key!r} is given twice")
            batch[stored] = items
        if not batch:
            raise ValueError("entries is empty")
        self._store.insert_many(batch.items())

    def query(self, minhash: MinHash, size: int) -> Iterator[Hashable]:
        """The keys whose set contains at least ``threshold`` of the query
        set (exact containment), most contained first."""
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise TypeError(f"size must be an int, not {type(size).__name__}")
        items = item_set(minhash, self.h, "query")
        return iter(self._query(items))

    def _query(self, items: Items) -> List[Hashable]:
        return self._store.containment(items, self.threshold)

    def __contains__(self, key: Hashable) -> bool:
        return _keys.encode(key) in self._store

    def is_empty(self) -> bool:
        """Whether nothing is indexed."""
        return len(self._store) == 0
