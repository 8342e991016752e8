"""``MinHashLSHForest``: datasketch's top-k index, answered by lshdb.

``add`` stores each key's set; ``index`` makes the added keys searchable
(as in datasketch); ``query(minhash, k)`` returns the k keys of highest
verified Jaccard similarity among lshdb's candidates, best first, where
datasketch returns k unranked candidates.
"""

from __future__ import annotations

from typing import Any, Dict, Hashable, List, Mapping, Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import _keys
from ._minhash import MinHash, item_set
from ._store import Closing, Items, Store, parse_storage
from ._tables import BandTables, band_bytes, require, unband

__all__ = ["MinHashLSHForest"]

#: The Jaccard similarity lshdb's banding is tuned for. Top-k probes the
#: containment index's prefix forest (the forest is kept with
#: ``containment=True``), from four shared values down to one, so the
#: bands serve only plain threshold look-ups: the default 0.8 keeps them few.
FOREST_THRESHOLD = 0.8


class MinHashLSHForest(BandTables, Closing):
    """``MinHashLSHForest(num_perm=128, l=8, storage_config=None)``.

    ``l`` (prefix trees) and ``k = num_perm // l`` are kept for reference;
    lshdb answers ``query(m, k)`` from its own prefix forest (the
    containment index), verified.
    ``storage_config={"type": "lshdb", "path": p}`` keeps the forest in the
    lshdb file ``p``; none keeps it in memory.
    """

    def __init__(self, num_perm: int = 128, l: int = 8, storage_config: Optional[Mapping[str, Any]] = None) -> None:
        for name, value in (("num_perm", num_perm), ("l", l)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if l <= 0 or num_perm <= 0:
            raise ValueError("num_perm and l must be positive")
        if l > num_perm:
            raise ValueError("l cannot be greater than num_perm")
        self.l = l
        self.k = num_perm // l
        self.h = num_perm
        self._store = Store(parse_storage(storage_config), {"threshold": FOREST_THRESHOLD, "num_perm": num_perm, "containment": True})
        self._pending: Dict[str, Items] = {}
        self._indexed = len(self._store) > 0
        # datasketch's per-key band bytes, kept in memory only (``_tables``).
        self._bands: Optional[Dict[Hashable, List[bytes]]] = {} if self._store.sets is not None else None

    def add(self, key: Hashable, minhash: MinHash) -> None:
        """Adds ``minhash``'s set under ``key``, searchable after :meth:`index`;
        ``ValueError`` when the key was added before."""
        stored = _keys.encode(key)
        if len(minhash) < self.k * self.l:
            raise ValueError("The num_perm of MinHash out of range")
        items = item_set(minhash, len(minhash), "add")
        if not items:
            raise ValueError("add: the MinHash is empty (no token was added); lshdb cannot index an empty set")
        if stored in self._pending or stored in self._store:
            raise ValueError("The given key has already been added")
        self._pending[stored] = items
        if self._bands is not None:
            self._bands[key] = band_bytes(minhash.hashvalues, self.l, self.k)

    def index(self) -> None:
        """Makes every added key searchable (on lshdb's bulk path)."""
        pending, self._pending = self._pending, {}
        if pending:
            self._store.insert_many(pending.items())
        self._indexed = self._indexed or bool(pending)

    def query(self, minhash: MinHash, k: int) -> List[Hashable]:
        """The (at most) ``k`` indexed keys most similar to ``minhash``, by
        verified Jaccard, best first."""
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"k must be an int, not {type(k).__name__}")
        if k <= 0:
            raise ValueError("k must be positive")
        if len(minhash) < self.k * self.l:
            raise ValueError("The num_perm of MinHash out of range")
        return self._store.top(item_set(minhash, len(minhash), "query"), k)

    def get_minhash_hashvalues(self, key: Hashable) -> npt.NDArray[np.uint64]:
        """The first ``l * k`` hash values of the MinHash added under
        ``key`` (in-memory forest only); ``KeyError`` for an unknown key."""
        hs = require(self._bands, "get_minhash_hashvalues").get(key)
        if hs is None:
            raise KeyError(f"The provided key does not exist in the LSHForest: {key}")
        return unband(hs)

    def _layout(self) -> Tuple[int, int]:
        """:class:`BandTables`' bands: the ``l`` trees' prefixes of ``k`` values."""
        return self.l, self.k

    def is_empty(self) -> bool:
        """Whether no key is searchable yet (before :meth:`index`)."""
        return not self._indexed or len(self._store) == 0

    def __contains__(self, key: Hashable) -> bool:
        stored = _keys.encode(key)
        return stored in self._pending or stored in self._store
