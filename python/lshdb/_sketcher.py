"""The database's sketches as vectorised batch kernels (:class:`Sketcher`)
and exact Jaccard of two shingle-hash sets (:func:`jaccard`)."""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
import numpy.typing as npt

from . import _checks as _c
from . import _lshdb
from ._errors import InvalidType
from ._inputs import texts as _texts

__all__ = ["Sketcher", "jaccard"]

U32Array = npt.NDArray[np.uint32]
U64Array = npt.NDArray[np.uint64]


class Sketcher:
    """The database's sketches as vectorised batch kernels.

    ``Sketcher(shingle="char:5", num_perm=128, threshold=0.8, bands=None,
    rows=None)`` resolves the settings exactly as :meth:`Database.create`
    does (the same seeds and tuner), and :meth:`Database.sketcher` gives the
    kernels of an existing file: the values are the ones the database
    stores. Each method takes a batch of texts (list of str, NumPy str or
    object array, pyarrow string array, pandas Series), releases the GIL,
    and runs on every core (``parallel=False``: on the calling thread only).
    """

    __slots__ = ("_sk",)

    def __init__(
        self,
        shingle: str = "char:5",
        num_perm: int = 128,
        threshold: float = 0.8,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        *,
        shingle_seed: Optional[int] = None,
        minhash_seed: Optional[int] = None,
    ) -> None:
        _c.config("Sketcher", threshold, shingle, num_perm, bands, rows, None, False)
        _c.count("Sketcher", "shingle_seed", shingle_seed, True, bits=32)
        _c.count("Sketcher", "minhash_seed", minhash_seed, True)
        self._sk = _lshdb.Sketcher(
            shingle, num_perm, threshold, bands, rows, shingle_seed=shingle_seed, minhash_seed=minhash_seed
        )

    @classmethod
    def _wrap(cls, native: _lshdb.Sketcher) -> Sketcher:
        self = cls.__new__(cls)
        self._sk = native
        return self

    @property
    def settings(self) -> Dict[str, Any]:
        """The resolved settings (as :attr:`Database.settings`)."""
        return self._sk.settings

    @property
    def num_perm(self) -> int:
        return self._sk.num_perm

    @property
    def bands(self) -> int:
        return self._sk.bands

    @property
    def rows(self) -> int:
        return self._sk.rows

    def shingles(self, texts: Any, *, arrow: bool = False, parallel: bool = True) -> Any:
        """Each text's sorted, distinct shingle hashes: a list of uint32
        arrays (views of one buffer), or with ``arrow=True`` a
        ``pyarrow.LargeListArray``."""
        _c.flag("shingles", "arrow", arrow)
        _c.flag("shingles", "parallel", parallel)
        offsets, values = self._sk.shingles(_texts(texts, _c.what("shingles", "texts")), parallel)
        if arrow:
            import pyarrow as pa

            return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(values))
        return np.split(values, offsets[1:-1]) if len(offsets) > 1 else []

    def signatures(self, texts: Any, *, parallel: bool = True) -> U32Array:
        """MinHash signatures: an ``(n, num_perm)`` uint32 array (a text with
        no shingles has every value 2**32 - 1)."""
        _c.flag("signatures", "parallel", parallel)
        return self._sk.signatures(_texts(texts, _c.what("signatures", "texts")), parallel)

    def band_keys(self, texts: Any, *, parallel: bool = True) -> U64Array:
        """LSH band keys: an ``(n, bands)`` uint64 array."""
        _c.flag("band_keys", "parallel", parallel)
        return self._sk.band_keys(_texts(texts, _c.what("band_keys", "texts")), parallel)

    def simhash(self, texts: Any, *, parallel: bool = True) -> U64Array:
        """64-bit SimHash fingerprints (shingles weighted by frequency), as
        the SimHash index stores them: a uint64 array."""
        _c.flag("simhash", "parallel", parallel)
        return self._sk.simhash(_texts(texts, _c.what("simhash", "texts")), parallel)

    def jaccard(self, a: Any, b: Any, *, parallel: bool = True) -> Any:
        """Exact Jaccard similarity of shingle sets: of two texts (a float),
        or pairwise of two equally long batches of texts (a float64 array)."""
        _c.flag("jaccard", "parallel", parallel)
        if isinstance(a, str) and isinstance(b, str):
            return float(self._sk.jaccard_texts([a], [b], parallel)[0])
        if isinstance(a, str) or isinstance(b, str):
            raise InvalidType(
                "jaccard(): arguments `a` and `b` must both be str or both be batches of texts, "
                f"not {_c.type_name(a)} and {_c.type_name(b)}"
            )
        return self._sk.jaccard_texts(_texts(a, _c.what("jaccard", "a")), _texts(b, _c.what("jaccard", "b")), parallel)


def jaccard(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Exact Jaccard similarity of two sets of shingle hashes (uint32
    arrays, as :meth:`Sketcher.shingles` returns; order and repeats do not
    matter)."""
    return _lshdb.jaccard_sets(_hash_array("a", a), _hash_array("b", b))


def _hash_array(name: str, value: Any) -> npt.NDArray[np.uint32]:
    """``value`` as a 1-d uint32 array, or InvalidType naming it."""
    array = np.asarray(value)
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) or array.size == 0):
        _c.fail("jaccard", name, "a 1-d array of shingle hashes (uint32)", value)
    return np.ascontiguousarray(array, dtype=np.uint32)

