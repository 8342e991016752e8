"""The database's sketches as vectorised batch kernels (:class:`Sketcher`)
and exact Jaccard of two shingle-hash sets (:func:`jaccard`)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import _checks as _c
from . import _lshdb
from ._errors import InvalidInput, InvalidType
from ._inputs import item_sets, texts as _texts

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
    object array, pyarrow string array, pandas Series) or, as ``items=``, a
    list of item sets (collections of str, bytes or int items, hashed as
    :meth:`Database.insert_items` hashes them); it releases the GIL, and
    runs on every core (``parallel=False``: on the calling thread only).
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

    def shingles(self, texts: Any = None, *, arrow: bool = False, parallel: bool = True, items: Any = None) -> Any:
        """Each text's (or item set's) sorted, distinct shingle hashes: a
        list of uint32 arrays (views of one buffer), or with ``arrow=True``
        a ``pyarrow.LargeListArray``."""
        _c.flag("shingles", "arrow", arrow)
        _c.flag("shingles", "parallel", parallel)
        batch, sets = _docs("shingles", texts, items)
        offsets, values = self._sk.shingles(batch, parallel, items=sets)
        if arrow:
            import pyarrow as pa

            return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(values))
        return np.split(values, offsets[1:-1]) if len(offsets) > 1 else []

    def signatures(self, texts: Any = None, *, parallel: bool = True, items: Any = None) -> U32Array:
        """MinHash signatures: an ``(n, num_perm)`` uint32 array (a text or
        item set with no shingles has every value 2**32 - 1)."""
        _c.flag("signatures", "parallel", parallel)
        batch, sets = _docs("signatures", texts, items)
        return self._sk.signatures(batch, parallel, items=sets)

    def band_keys(self, texts: Any = None, *, parallel: bool = True, items: Any = None) -> U64Array:
        """LSH band keys: an ``(n, bands)`` uint64 array."""
        _c.flag("band_keys", "parallel", parallel)
        batch, sets = _docs("band_keys", texts, items)
        return self._sk.band_keys(batch, parallel, items=sets)

    def simhash(self, texts: Any = None, *, parallel: bool = True, items: Any = None) -> U64Array:
        """64-bit SimHash fingerprints, as the SimHash index stores them: of
        shingles weighted by frequency for texts, of items with unit
        weights for item sets. A uint64 array."""
        _c.flag("simhash", "parallel", parallel)
        batch, sets = _docs("simhash", texts, items)
        return self._sk.simhash(batch, parallel, items=sets)

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


def _docs(func: str, texts: Any, items: Any) -> Tuple[Any, Any]:
    """A kernel's (texts, items) as the native call takes them: exactly
    one of a batch of texts and ``items=`` is given."""
    if (texts is None) == (items is None):
        raise InvalidInput(f"{func}(): give texts or items=, not both")
    if items is not None:
        return None, item_sets(items, _c.what(func, "items"))
    return _texts(texts, _c.what(func, "texts")), None


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

