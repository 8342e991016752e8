"""Type stubs of the native module ``lshdb._lshdb`` (python/src/*.rs).

The public, documented API is the ``lshdb`` package, which wraps this
module; these stubs are the one written-down form of the native
signatures. tools/test.sh checks them against the built module
(stubtest), the wrappers' calls against them (mypy --strict), and
python/tests/test_signatures.py the wrappers' parameters (names, order,
kinds, defaults) against them.
"""

import os
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import final

_Path = Union[str, os.PathLike[str]]
_Offsets = npt.NDArray[np.int64]
_TextBatch = Union[List[str], Tuple[_Offsets, npt.NDArray[np.uint8]]]
_BatchOp = Tuple[str, str, Optional[str], Optional[List[bytes]]]

__all__ = [
    "Database",
    "Stream",
    "QueryPlace",
    "Sketcher",
    "jaccard_sets",
    "sketch_batch",
    "jaccard_pairs",
    "FORMAT_VERSION",
    "MAX_KEY_BYTES",
    "MAX_DOCUMENT_BYTES",
    "__version__",
    "_panic_for_tests",
]

FORMAT_VERSION: int
MAX_KEY_BYTES: int
MAX_DOCUMENT_BYTES: int
__version__: str

@final
class Stream:
    """An iterator fed by a background thread (pairs, keys, documents,
    cluster members, clusters or every document's cluster)."""

    def __iter__(self) -> Stream: ...
    def __next__(self) -> Any: ...
    def close(self) -> None: ...

@final
class QueryPlace:
    """A place among a handle's running queries (`Database.query` holds one)."""

    def __enter__(self) -> None: ...
    def __exit__(self, *_exc: object) -> None: ...

@final
class Database:
    @staticmethod
    def create(
        path: _Path,
        threshold: float = 0.8,
        *,
        shingle: str = "char:5",
        num_perm: int = 128,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        simhash: Optional[int] = None,
        store_text: bool = False,
        containment: bool = False,
        clusters: Optional[str] = None,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
        kept_filter_bytes: Optional[int] = None,
        durability: str = "immediate",
        timestamps: bool = False,
    ) -> Database: ...
    @staticmethod
    def memory(
        threshold: float = 0.8,
        *,
        shingle: str = "char:5",
        num_perm: int = 128,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        simhash: Optional[int] = None,
        store_text: bool = False,
        containment: bool = False,
        clusters: Optional[str] = None,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
        kept_filter_bytes: Optional[int] = None,
        durability: str = "immediate",
        timestamps: bool = False,
    ) -> Database: ...
    @staticmethod
    def open(
        path: _Path,
        *,
        read_only: bool = False,
        wait: Optional[float] = None,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
        kept_filter_bytes: Optional[int] = None,
        expect: Optional[Dict[str, Any]] = None,
        durability: str = "immediate",
        create: bool = False,
        threshold: Optional[float] = None,
        shingle: Optional[str] = None,
        num_perm: Optional[int] = None,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        simhash: Optional[int] = None,
        store_text: Optional[bool] = None,
        containment: Optional[bool] = None,
        clusters: Optional[str] = None,
        timestamps: Optional[bool] = None,
    ) -> Database: ...
    @property
    def durability(self) -> str: ...
    def flush(self) -> None: ...
    @property
    def path(self) -> os.PathLike[str]: ...
    @property
    def closed(self) -> bool: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def settings(self) -> Dict[str, Any]: ...
    def sketcher(self) -> Sketcher: ...
    def close(self) -> None: ...
    def insert(self, key: str, text: str) -> None: ...
    def insert_at(self, key: str, text: str, at: int) -> None: ...
    def timestamp(self, key: str) -> Optional[int]: ...
    def expire(self, older_than: int, *, batch: Optional[int] = None) -> Dict[str, int]: ...
    def insert_items(self, key: str, items: List[bytes]) -> None: ...
    def insert_unique(
        self,
        key: str,
        text: Optional[str] = None,
        *,
        items: Optional[List[bytes]] = None,
        threshold: float,
    ) -> Optional[Tuple[str, float]]: ...
    def insert_columns(
        self,
        keys: _TextBatch,
        texts: _TextBatch,
        batch: Optional[int] = None,
        max_rejected: Optional[int] = None,
    ) -> Dict[str, Any]: ...
    def insert_pairs(
        self, pairs: Any, batch: Optional[int] = None, max_rejected: Optional[int] = None
    ) -> Dict[str, Any]: ...
    def insert_shingle_columns(
        self,
        keys: _TextBatch,
        shingles: List[List[int]],
        batch: Optional[int] = None,
        max_rejected: Optional[int] = None,
    ) -> Dict[str, Any]: ...
    def insert_item_columns(
        self,
        keys: _TextBatch,
        items: List[List[bytes]],
        batch: Optional[int] = None,
        max_rejected: Optional[int] = None,
    ) -> Dict[str, Any]: ...
    def insert_unique_many(
        self,
        keys: _TextBatch,
        texts: Optional[_TextBatch] = None,
        *,
        items: Optional[List[List[bytes]]] = None,
        threshold: float,
        batch: Optional[int] = None,
        memory: Optional[int] = None,
        duplicate_of: str = "first",
    ) -> Tuple[List[Tuple[int, str, float]], int]: ...
    def apply_batch(self, ops: List[_BatchOp]) -> List[bool]: ...
    def remove(self, key: str) -> bool: ...
    def get(self, key: str) -> Optional[Tuple[str, Optional[str], int, Optional[int]]]: ...
    def contains(self, key: str) -> bool: ...
    def similarity(self, a: str, b: str) -> Optional[float]: ...
    def len(self) -> int: ...
    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[List[bytes]] = None,
        key: Optional[str] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        top: Optional[int] = None,
        explain: bool = False,
    ) -> Tuple[List[Tuple[str, float]], Optional[Dict[str, Any]]]: ...
    def query_containment(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[List[bytes]] = None,
        key: Optional[str] = None,
        threshold: float,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        exhaustive: bool = False,
        explain: bool = False,
    ) -> Tuple[List[Tuple[str, float, float]], Optional[Dict[str, Any]]]: ...
    def query_place(self) -> QueryPlace: ...
    def query_many(
        self,
        texts: Optional[_TextBatch] = None,
        *,
        items: Optional[List[List[bytes]]] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
    ) -> List[List[Tuple[str, float]]]: ...
    def simhash_search(
        self, text: str, max_distance: int, *, limit: Optional[int] = None
    ) -> List[Tuple[str, int, int]]: ...
    def pairs(self, threshold: Optional[float] = None) -> Stream: ...
    def keys(self) -> Stream: ...
    def documents(self) -> Stream: ...
    def groups(self, threshold: Optional[float] = None) -> List[List[Tuple[str, float]]]: ...
    def exact_pairs(self, threshold: float) -> List[Tuple[str, str, float]]: ...
    def cluster_of(self, key: str) -> Optional[Tuple[int, str, int]]: ...
    def cluster(self, id: int) -> Optional[Tuple[int, str, int]]: ...
    def members(self, id: int) -> Stream: ...
    def clusters(self) -> Stream: ...
    def document_clusters(self) -> Stream: ...
    def insert_clustered(self, key: str, text: str) -> Optional[Tuple[int, str, int]]: ...
    def insert_document(
        self,
        key: str,
        text: Optional[str] = None,
        *,
        items: Optional[List[bytes]] = None,
        at: Optional[int] = None,
        priority: Optional[int] = None,
    ) -> None: ...
    def insert_unique_document(
        self,
        key: str,
        text: Optional[str] = None,
        *,
        items: Optional[List[bytes]] = None,
        threshold: float,
        priority: Optional[int] = None,
    ) -> Optional[Tuple[str, float]]: ...
    def insert_carried_columns(
        self,
        keys: _TextBatch,
        texts: _TextBatch,
        priorities: Optional[List[int]] = None,
        timestamps: Optional[List[int]] = None,
        batch: Optional[int] = None,
        max_rejected: Optional[int] = None,
    ) -> Dict[str, Any]: ...
    def stats(self, *, deep: bool = False) -> Dict[str, Any]: ...
    def check(self, *, pages: bool = False) -> Dict[str, Any]: ...
    def compact(self) -> bool: ...
    def rebuild(
        self,
        threshold: Optional[float] = None,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        *,
        containment: Optional[bool] = None,
        clusters: Optional[str] = None,
        timestamps: Optional[bool] = None,
    ) -> None: ...
    def get_label(self, name: str) -> Optional[str]: ...
    def set_label(self, name: str, value: str) -> None: ...

@final
class Sketcher:
    def __new__(
        cls,
        shingle: str = "char:5",
        num_perm: int = 128,
        threshold: float = 0.8,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        *,
        shingle_seed: Optional[int] = None,
        minhash_seed: Optional[int] = None,
    ) -> Sketcher: ...
    @property
    def settings(self) -> Dict[str, Any]: ...
    @property
    def num_perm(self) -> int: ...
    @property
    def bands(self) -> int: ...
    @property
    def rows(self) -> int: ...
    def shingles(
        self, texts: Optional[_TextBatch] = None, parallel: bool = True, *, items: Optional[List[List[bytes]]] = None
    ) -> Tuple[_Offsets, npt.NDArray[np.uint32]]: ...
    def signatures(
        self, texts: Optional[_TextBatch] = None, parallel: bool = True, *, items: Optional[List[List[bytes]]] = None
    ) -> npt.NDArray[np.uint32]: ...
    def band_keys(
        self, texts: Optional[_TextBatch] = None, parallel: bool = True, *, items: Optional[List[List[bytes]]] = None
    ) -> npt.NDArray[np.uint64]: ...
    def simhash(
        self, texts: Optional[_TextBatch] = None, parallel: bool = True, *, items: Optional[List[List[bytes]]] = None
    ) -> npt.NDArray[np.uint64]: ...
    def jaccard_texts(
        self, a: _TextBatch, b: _TextBatch, parallel: bool = True
    ) -> npt.NDArray[np.float64]: ...

def jaccard_sets(a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32]) -> float: ...
def sketch_batch(
    sketcher: Sketcher, texts: _TextBatch, parallel: bool = True
) -> Tuple[npt.NDArray[np.uint64], _Offsets, npt.NDArray[np.uint32]]: ...
def jaccard_pairs(
    a_offsets: _Offsets,
    a_values: npt.NDArray[np.uint32],
    b_offsets: _Offsets,
    b_values: npt.NDArray[np.uint32],
    parallel: bool = True,
) -> npt.NDArray[np.float64]: ...
def _panic_for_tests() -> None: ...
