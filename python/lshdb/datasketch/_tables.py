"""datasketch's hash tables, as a view for code that inspects them.

datasketch stores, for each key, the bytes of each band of its MinHash
values (``keys[key] = [H_0, ..., H_{b-1}]``) and, per band, the keys under
each such bytes (``hashtables[i][H]``). An in-memory index here keeps the
first (:class:`BandKeys`, the same memory datasketch uses) and builds the
second on request; lshdb's own buckets, which answer the queries, are
keyed by its own signature of the set and live in the database.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

__all__ = ["BandTables", "band_bytes", "hashtables", "counts", "unband"]


def band_bytes(hashvalues: npt.NDArray[np.uint64], bands: int, rows: int) -> List[bytes]:
    """datasketch's ``_H`` of each band: the band's values byte-swapped."""
    return [bytes(hashvalues[i * rows : (i + 1) * rows].byteswap().data) for i in range(bands)]


def unband(hs: Sequence[bytes]) -> npt.NDArray[np.uint64]:
    """The hash values :func:`band_bytes` cut into bands."""
    return np.concatenate([np.frombuffer(h, dtype=np.uint64).byteswap() for h in hs]).astype(np.uint64)


def hashtables(keys: Dict[Hashable, List[bytes]], bands: int) -> List[Dict[bytes, List[Hashable]]]:
    """Per band, each band's bytes → the keys under it."""
    tables: List[Dict[bytes, List[Hashable]]] = [defaultdict(list) for _ in range(bands)]
    for key, hs in keys.items():
        for table, h in zip(tables, hs):
            table[h].append(key)
    return [dict(t) for t in tables]


def counts(keys: Dict[Hashable, List[bytes]], bands: int) -> List[Dict[bytes, int]]:
    """Per band, each band's bytes → how many keys are under it."""
    return [{h: len(v) for h, v in t.items()} for t in hashtables(keys, bands)]


def require(keys: Optional[Dict[Hashable, List[bytes]]], what: str) -> Dict[Hashable, List[bytes]]:
    """The kept band bytes, or ``ValueError`` for a file-backed index."""
    if keys is None:
        raise ValueError(
            f"{what}: a file-backed index does not keep datasketch's hash tables (lshdb's buckets are in the file)"
        )
    return keys


class BandTables:
    """datasketch's ``keys``, ``hashtables`` and ``hashranges`` of an index
    whose MinHash values are cut into ``_layout()``'s (bands, rows): an
    LSH index's ``(b, r)``, a forest's trees and prefix length ``(l, k)``.
    The tables are kept by an in-memory index only (``_bands``)."""

    _bands: Optional[Dict[Hashable, List[bytes]]]

    def _layout(self) -> Tuple[int, int]:
        raise NotImplementedError

    @property
    def keys(self) -> Dict[Hashable, List[bytes]]:
        """datasketch's ``keys`` table: each key → its bytes of each band (in-memory index only)."""
        return dict(require(self._bands, "keys"))

    @property
    def hashtables(self) -> List[Dict[bytes, List[Hashable]]]:
        """datasketch's hash tables, built from :attr:`keys` (in-memory index only)."""
        return hashtables(require(self._bands, "hashtables"), self._layout()[0])

    @property
    def hashranges(self) -> List[Tuple[int, int]]:
        """The ``(start, end)`` of each band in the MinHash values."""
        bands, rows = self._layout()
        return [(i * rows, (i + 1) * rows) for i in range(bands)]
