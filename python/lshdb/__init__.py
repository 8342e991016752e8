"""lshdb: a persistent, embedded near-duplicate database.

Documents become sets of hashed shingles; MinHash signatures and LSH
banding find candidates; every hit is verified with exact Jaccard
similarity on the stored sets. The database is one crash-safe file (redb);
this package is the Rust library with a Python face, plus the same sketch
kernels as vectorised batch functions (:class:`Sketcher`).

>>> import lshdb, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "pages.lshdb")
>>> with lshdb.Database.create(path, threshold=0.7) as db:
...     db.insert("a", "The quick brown fox jumps over the lazy dog")
...     db.query("the quick brown fox jumps over the lazy dog!")[0].key
'a'

Every call releases the GIL while Rust works; a ``Database`` may be shared
by many threads. See ``docs/python.md``.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    NamedTuple,
    Optional,
    Tuple,
    Type,
    Union,
    overload,
)

import numpy as np
import numpy.typing as npt

from . import _checks as _c
from . import _lshdb
from ._errors import (
    AlreadyOpen,
    ConfigMismatch,
    Corrupted,
    DatabaseClosed,
    FileExists,
    FormatVersionError,
    IndexDisabled,
    InternalError,
    InvalidInput,
    InvalidType,
    LshdbError,
    NeedsRepair,
    NotADatabase,
    NotFound,
    Poisoned,
    ReadOnlyError,
    SparkWorkerError,
    StorageError,
)
from ._inputs import item_bytes, texts as _texts

__version__: str = _lshdb.__version__
#: The file format version this build writes and reads.
FORMAT_VERSION: int = _lshdb.FORMAT_VERSION
#: The longest accepted key, in bytes of UTF-8.
MAX_KEY_BYTES: int = _lshdb.MAX_KEY_BYTES
#: The largest accepted document, in bytes.
MAX_DOCUMENT_BYTES: int = _lshdb.MAX_DOCUMENT_BYTES

__all__ = [
    "Database",
    "Batch",
    "Labels",
    "Sketcher",
    "Hit",
    "Pair",
    "StoredDocument",
    "SimHashHit",
    "jaccard",
    "FORMAT_VERSION",
    "MAX_KEY_BYTES",
    "MAX_DOCUMENT_BYTES",
    "LshdbError",
    "InvalidInput",
    "NotFound",
    "FileExists",
    "NotADatabase",
    "FormatVersionError",
    "ConfigMismatch",
    "AlreadyOpen",
    "ReadOnlyError",
    "NeedsRepair",
    "Corrupted",
    "IndexDisabled",
    "Poisoned",
    "StorageError",
    "DatabaseClosed",
    "InternalError",
    "InvalidType",
    "SparkWorkerError",
]

Item = Union[str, bytes, int]
PathLike = Union[str, "os.PathLike[str]"]


class Hit(NamedTuple):
    """A verified near-duplicate: the stored key and its exact Jaccard
    similarity to the query."""

    key: str
    similarity: float


class Pair(NamedTuple):
    """Two stored documents (``a < b``) and their exact Jaccard similarity."""

    a: str
    b: str
    similarity: float


class SimHashHit(NamedTuple):
    """A SimHash search hit: key, Hamming distance and its fingerprint."""

    key: str
    distance: int
    fingerprint: int


class StoredDocument(NamedTuple):
    """A stored document as :meth:`Database.get` returns it."""

    key: str
    #: The raw text, when the database was created with ``store_text=True``.
    text: Optional[str]
    #: The number of distinct shingles.
    shingles: int
    #: The SimHash fingerprint, when the SimHash index is on.
    simhash: Optional[int]


def _hits(raw: List[Tuple[str, float]]) -> List[Hit]:
    return [Hit(k, s) for k, s in raw]


class _PairIterator(Iterator[Pair]):
    """Pairs streamed from a background thread (see :meth:`Database.pairs`)."""

    __slots__ = ("_stream",)

    def __init__(self, stream: _lshdb.Stream) -> None:
        self._stream = stream

    def __iter__(self) -> _PairIterator:
        return self

    def __next__(self) -> Pair:
        a, b, s = self._stream.__next__()
        return Pair(a, b, s)

    def close(self) -> None:
        """Stops the background thread early."""
        self._stream.close()


class Database:
    """A persistent near-duplicate index in one file.

    Create one with :meth:`create`, open one with :meth:`open`; use it as a
    context manager or call :meth:`close`. After ``close`` every call raises
    :class:`DatabaseClosed`. One process may write a file while others open
    it with ``read_only=True``. Each single write is durable on return.
    """

    __slots__ = ("_db", "__weakref__")

    def __init__(self, native: _lshdb.Database) -> None:
        """Use :meth:`create` or :meth:`open`."""
        self._db = native

    # -- opening ---------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: PathLike,
        threshold: float = 0.8,
        *,
        shingle: str = "char:5",
        num_perm: int = 128,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        simhash: Optional[int] = None,
        store_text: bool = False,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
    ) -> Database:
        """Creates a new database file.

        ``threshold`` is the Jaccard similarity the index is built to find
        (strictly between 0 and 1); ``shingle`` is ``"char:K"``,
        ``"word:K"`` or ``"stopword:K"``; ``num_perm`` the signature
        length; ``bands`` and ``rows`` (both or neither) override the tuner;
        ``simhash=D`` adds a SimHash index for searches up to D bits (≤ 7);
        ``store_text`` keeps each document's text for :meth:`get`.

        Raises :class:`FileExists` when ``path`` exists,
        :class:`InvalidInput` for an invalid configuration and
        :class:`InvalidType` for an argument of the wrong type (as every
        call does).
        """
        _config_types("create", threshold, shingle, num_perm, bands, rows, simhash, store_text)
        _c.path("create", "path", path)
        _c.count("create", "cache_bytes", cache_bytes, True)
        _c.count("create", "record_cache_bytes", record_cache_bytes, True)
        return cls(
            _lshdb.Database.create(
                path,
                threshold,
                shingle=shingle,
                num_perm=num_perm,
                bands=bands,
                rows=rows,
                simhash=simhash,
                store_text=store_text,
                cache_bytes=cache_bytes,
                record_cache_bytes=record_cache_bytes,
            )
        )

    @classmethod
    def open(
        cls,
        path: PathLike,
        *,
        read_only: bool = False,
        wait: Optional[float] = None,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
        expect: Optional[Mapping[str, Any]] = None,
    ) -> Database:
        """Opens an existing database; its configuration comes from the file.

        ``read_only=True`` opens without write access, also while another
        process writes the file (its commits become visible as they land);
        a file a crashed writer left is repaired first, when the file and
        its folder are not read-only. A handle belongs to this process: in a
        ``fork()`` child every call raises :class:`DatabaseClosed`, so open
        the database again there.
        ``wait`` (seconds) retries while another process holds the file for
        writing instead of raising :class:`AlreadyOpen` at once.
        ``cache_bytes`` (page cache) and ``record_cache_bytes`` (decoded
        records for queries) default to 64 MiB each. ``expect`` is a dict of
        :meth:`create`'s configuration arguments (missing ones take their
        defaults) that the stored configuration must equal, or
        :class:`ConfigMismatch` names the first field that differs.

        Raises :class:`NotADatabase`, :class:`FormatVersionError`,
        :class:`AlreadyOpen`, :class:`NeedsRepair` (read-only open of a file
        a crashed writer left, which it may not repair), :class:`Corrupted`
        (also a truncated file), :class:`StorageError`.
        """
        _c.path("open", "path", path)
        _c.flag("open", "read_only", read_only)
        _c.real("open", "wait", wait, True)
        _c.count("open", "cache_bytes", cache_bytes, True)
        _c.count("open", "record_cache_bytes", record_cache_bytes, True)
        _c.optional_mapping("open", "expect", expect)
        if expect is not None:
            _expect_types(expect)
        return cls(
            _lshdb.Database.open(
                path,
                read_only=read_only,
                wait=wait,
                cache_bytes=cache_bytes,
                record_cache_bytes=record_cache_bytes,
                expect=None if expect is None else dict(expect),
            )
        )

    def close(self) -> None:
        """Closes the file (waiting for running calls). Idempotent."""
        self._db.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._db.closed else ("read-only" if self._db.read_only else "open")
        return f"<lshdb.Database {str(self._db.path)!r} ({state})>"

    @property
    def path(self) -> str:
        """The file's path."""
        return str(self._db.path)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._db.closed

    @property
    def read_only(self) -> bool:
        """Whether this handle was opened read-only."""
        return self._db.read_only

    @property
    def settings(self) -> Dict[str, Any]:
        """The stored settings: shingle, num_perm, threshold, bands, rows,
        simhash_max_distance, store_text, seeds and scheme."""
        return self._db.settings

    def sketcher(self) -> Sketcher:
        """A :class:`Sketcher` with exactly this database's settings."""
        return Sketcher._wrap(self._db.sketcher())

    # -- writes ------------------------------------------------------------

    def insert(self, key: str, text: str) -> None:
        """Inserts (or atomically replaces) the document under ``key``,
        durably. Raises :class:`InvalidInput` for an empty document, a key
        of 0 or more than ``MAX_KEY_BYTES`` bytes, or a text above
        ``MAX_DOCUMENT_BYTES``; :class:`ReadOnlyError`; :class:`Poisoned`."""
        _c.string("insert", "key", key)
        _c.string("insert", "text", text)
        self._db.insert(key, text)

    def insert_items(self, key: str, items: Iterable[Item]) -> None:
        """Inserts a set of items (the products a customer bought, ...).

        Each item is hashed whole: a ``str`` as its UTF-8, ``bytes`` as
        they are, an ``int`` as the UTF-8 of its decimal text — so ``42``
        and ``"42"`` are the same item."""
        _c.string("insert_items", "key", key)
        self._db.insert_items(key, item_bytes(items, _c.what("insert_items", "items")))

    def insert_unique(
        self,
        key: str,
        text: Optional[str] = None,
        threshold: Optional[float] = None,
        *,
        items: Optional[Iterable[Item]] = None,
    ) -> Optional[Hit]:
        """Dedup on write: in one transaction, returns the best stored
        near-duplicate with verified similarity ≥ ``threshold`` (default:
        the index threshold) and stores nothing, or inserts the document
        and returns ``None``."""
        _c.string("insert_unique", "key", key)
        _c.string("insert_unique", "text", text, True)
        _c.real("insert_unique", "threshold", threshold, True)
        t = self.settings["threshold"] if threshold is None else threshold
        raw = self._db.insert_unique(
            key,
            text,
            items=None if items is None else item_bytes(items, _c.what("insert_unique", "items")),
            threshold=t,
        )
        return None if raw is None else Hit(*raw)

    def insert_many(
        self,
        docs: Union[Mapping[str, str], Iterable[Tuple[str, str]], None] = None,
        *,
        keys: Any = None,
        texts: Any = None,
        batch: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Bulk load: many documents, one commit per ``batch`` documents
        (default 32,768), shingled and hashed on every core with the GIL
        released.

        Give a dict ``{key: text}``, an iterable of ``(key, text)`` pairs
        (read lazily, a slice at a time), or ``keys=`` and ``texts=`` as two
        equally long columns: lists, NumPy arrays, pyarrow string arrays or
        pandas Series (Arrow-backed columns cross without a Python object
        per text).

        Returns ``{"inserted", "replaced", "rejected", "commits"}``;
        ``rejected`` lists ``(key, reason)`` for documents that could not be
        indexed (empty, too large, bad key), which are skipped. A storage
        error raises; documents of earlier commits stay stored.
        """
        _c.count("insert_many", "batch", batch, True)
        if docs is not None:
            if keys is not None or texts is not None:
                raise InvalidInput("insert_many: give docs, or keys= and texts=, not both")
            if isinstance(docs, Mapping):
                return self._db.insert_columns(
                    _texts(list(docs.keys()), "insert_many(): the keys of `docs`"),
                    _texts(list(docs.values()), "insert_many(): the values of `docs`"),
                    batch,
                )
            if isinstance(docs, (str, bytes)) or not isinstance(docs, Iterable):
                _c.fail("insert_many", "docs", "a mapping or an iterable of (key, text) pairs", docs)
            return self._db.insert_pairs(iter(docs), batch)
        if keys is None or texts is None:
            raise InvalidInput("insert_many: give docs, or both keys= and texts=")
        return self._db.insert_columns(
            _texts(keys, _c.what("insert_many", "keys")), _texts(texts, _c.what("insert_many", "texts")), batch
        )

    def remove(self, key: str) -> bool:
        """Removes the document under ``key``; False when there was none."""
        _c.string("remove", "key", key)
        return self._db.remove(key)

    def batch(self) -> Batch:
        """A write batch: ``with db.batch() as b: b.insert(...); b.remove(...)``
        commits every operation at once (one fsync) when the block ends, and
        writes nothing if the block raises. See :class:`Batch`."""
        return Batch(self)

    # -- reads -------------------------------------------------------------

    def get(self, key: str) -> Optional[StoredDocument]:
        """The document stored under ``key``, or None."""
        _c.string("get", "key", key)
        raw = self._db.get(key)
        return None if raw is None else StoredDocument(*raw)

    def __getitem__(self, key: str) -> StoredDocument:
        doc = self.get(key)
        if doc is None:
            raise NotFound(f"no document with key `{key}`")
        return doc

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._db.contains(key)

    def __len__(self) -> int:
        return self._db.len()

    def keys(self) -> Iterator[str]:
        """Every stored key in id order (the order the documents were stored
        in; key order within one bulk commit), from one snapshot, streamed."""
        return self._db.keys()

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    @overload
    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[str] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        explain: Literal[False] = False,
    ) -> List[Hit]: ...

    @overload
    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[str] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        explain: Literal[True],
    ) -> Tuple[List[Hit], Dict[str, Any]]: ...

    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[str] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        explain: bool = False,
    ) -> Union[List[Hit], Tuple[List[Hit], Dict[str, Any]]]:
        """Near-duplicates of a text, an item set (``items=``) or a stored
        document (``key=``, itself left out), best first, each verified with
        exact Jaccard ≥ ``threshold`` (default: the index threshold).

        With ``explain=True`` returns ``(hits, explain)``, where the dict
        says what each step did and cost (buckets probed, candidates,
        pruned, verified, timings, warnings such as a threshold below the
        index's). Raises :class:`InvalidInput` for an empty text and
        :class:`NotFound` for an unknown ``key``.
        """
        _c.string("query", "text", text, True)
        _c.string("query", "key", key, True)
        _query_types("query", threshold, limit, max_bucket)
        _c.flag("query", "explain", explain)
        raw, info = self._db.query(
            text,
            items=None if items is None else item_bytes(items, _c.what("query", "items")),
            key=key,
            threshold=threshold,
            limit=limit,
            max_bucket=max_bucket,
            explain=explain,
        )
        hits = _hits(raw)
        if explain:
            assert info is not None
            return hits, info
        return hits

    def query_many(
        self,
        texts: Any,
        *,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
    ) -> List[List[Hit]]:
        """Queries many texts at once, in parallel on every core with the
        GIL released; one list of hits per text (empty for a text with no
        shingles)."""
        _query_types("query_many", threshold, limit, max_bucket)
        batch = _texts(texts, _c.what("query_many", "texts"))
        raw = self._db.query_many(batch, threshold=threshold, limit=limit, max_bucket=max_bucket)
        return [_hits(r) for r in raw]

    def simhash_search(self, text: str, max_distance: int, *, limit: Optional[int] = None) -> List[SimHashHit]:
        """Documents whose SimHash fingerprint is within ``max_distance``
        bits of the text's, closest first. Needs a database created with
        ``simhash=D`` (D ≥ max_distance); raises :class:`IndexDisabled`
        otherwise."""
        _c.string("simhash_search", "text", text)
        _c.count("simhash_search", "max_distance", max_distance, bits=32)
        _c.count("simhash_search", "limit", limit, True)
        return [SimHashHit(*h) for h in self._db.simhash_search(text, max_distance, limit=limit)]

    def pairs(self, threshold: Optional[float] = None) -> _PairIterator:
        """Every pair of stored documents with verified similarity ≥
        ``threshold`` (default: the index threshold), found through the
        index from one snapshot and streamed from a background thread as
        they are found (memory stays bounded). Pairs below the index
        threshold are found with the probability the banding gives them."""
        _c.real("pairs", "threshold", threshold, True)
        return _PairIterator(self._db.pairs(threshold))

    def groups(self, threshold: Optional[float] = None) -> Iterator[List[Hit]]:
        """Near-duplicate clusters (connected components of the pairs at
        ``threshold``), largest first; each member as ``Hit(key, best
        similarity to another member)``. The components need every pair,
        so they are computed in one pass (when this is called) and then
        yielded one by one."""
        _c.real("groups", "threshold", threshold, True)
        return iter([_hits(group) for group in self._db.groups(threshold)])

    def exact_pairs(self, threshold: float) -> List[Pair]:
        """*Every* pair with Jaccard ≥ ``threshold`` (0 < t ≤ 1), found
        exactly without LSH (all stored sets in memory): the ground truth
        for small corpora. Sorted by (a, b)."""
        _c.real("exact_pairs", "threshold", threshold)
        return [Pair(*p) for p in self._db.exact_pairs(threshold)]

    # -- maintenance -------------------------------------------------------

    def stats(self, *, deep: bool = False) -> Dict[str, Any]:
        """Document count, file length (``file_bytes``) and size on disk
        (``allocated_bytes``), and where the postings are stored (``runs``,
        ``run_postings``, ``fresh_postings``, ``simhash_postings``,
        ``containment_postings``): counts the file keeps, so this answers at
        once at any size. ``deep=True`` adds ``mean_shingles``, ``buckets``,
        ``postings``, ``histogram`` (buckets per power of two of their size)
        and ``largest`` (``(band, key, documents)``), which read every
        signature and posting: seconds at millions of documents."""
        _c.flag("stats", "deep", deep)
        return self._db.stats(deep=deep)

    def check(self, *, pages: bool = False) -> Dict[str, Any]:
        """Walks the whole file without changing it (works read-only and
        beside a writer): ``{"clean", "documents", "postings", "problems",
        ...}``. ``pages=True`` also checks every page checksum (needs a
        writable handle; waits for running calls)."""
        _c.flag("check", "pages", pages)
        return self._db.check(pages=pages)

    def compact(self) -> bool:
        """Reclaims the space of deleted data; True when anything moved.
        Waits for running calls."""
        return self._db.compact()

    def rebuild(self, threshold: float, bands: Optional[int] = None, rows: Optional[int] = None) -> None:
        """Re-bands the index for a new threshold from the stored
        shingle sets (no input is re-read). Waits for running calls."""
        _c.real("rebuild", "threshold", threshold)
        _c.count("rebuild", "bands", bands, True)
        _c.count("rebuild", "rows", rows, True)
        self._db.rebuild(threshold, bands, rows)

    @property
    def labels(self) -> Labels:
        """Small named strings stored next to the documents:
        ``db.labels["source"] = "crawl-7"``."""
        return Labels(self)


class Labels:
    """Application labels of a :class:`Database` (a small string mapping)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def __getitem__(self, name: str) -> str:
        _c.string("labels.__getitem__", "name", name)
        value = self._db._db.get_label(name)
        if value is None:
            raise NotFound(f"no label `{name}`")
        return value

    def __setitem__(self, name: str, value: str) -> None:
        _c.string("labels.__setitem__", "name", name)
        _c.string("labels.__setitem__", "value", value)
        self._db._db.set_label(name, value)

    def get(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """The label ``name``, or ``default``."""
        _c.string("labels.get", "name", name)
        value = self._db._db.get_label(name)
        return default if value is None else value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._db._db.get_label(name) is not None


class Batch:
    """Writes committed together: ``with db.batch() as b: ...``.

    The Rust ``Batch`` borrows its ``Database``, which a Python object
    cannot safely hold, so a ``Batch`` records its operations and applies
    them in one Rust transaction when the ``with`` block ends normally: all
    of them or none, one fsync. If the block raises, nothing is written. An
    operation the database refuses (an empty document, a bad key) makes
    ``__exit__`` raise and nothing of the batch is written. Operations are
    not visible to queries before the block ends; writes made meanwhile
    through the database itself commit on their own.
    """

    __slots__ = ("_db", "_ops", "removed")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._ops: List[Tuple[str, str, Optional[str], Optional[List[bytes]]]] = []
        #: After commit: for each ``remove``, whether the key was there.
        self.removed: List[bool] = []

    def insert(self, key: str, text: str) -> None:
        """Records an insert (or replace) of a text."""
        _c.string("batch.insert", "key", key)
        _c.string("batch.insert", "text", text)
        self._ops.append(("insert", key, text, None))

    def insert_items(self, key: str, items: Iterable[Item]) -> None:
        """Records an insert of an item set."""
        _c.string("batch.insert_items", "key", key)
        self._ops.append(("insert", key, None, item_bytes(items, _c.what("batch.insert_items", "items"))))

    def remove(self, key: str) -> None:
        """Records a removal."""
        _c.string("batch.remove", "key", key)
        self._ops.append(("remove", key, None, None))

    def __len__(self) -> int:
        return len(self._ops)

    def commit(self) -> None:
        """Applies the recorded operations in one transaction."""
        ops, self._ops = self._ops, []
        self.removed = self._db._db.apply_batch(ops)

    def discard(self) -> None:
        """Forgets the recorded operations."""
        self._ops = []

    def __enter__(self) -> Batch:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


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
        _config_types("Sketcher", threshold, shingle, num_perm, bands, rows, None, False)
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


def _config_types(
    func: str,
    threshold: object,
    shingle: object,
    num_perm: object,
    bands: object,
    rows: object,
    simhash: object,
    store_text: object,
    arg: str = "{}",
) -> None:
    """The types of :meth:`Database.create`'s (and :class:`Sketcher`'s)
    configuration arguments; ``arg`` formats their names."""
    _c.real(func, arg.format("threshold"), threshold)
    _c.string(func, arg.format("shingle"), shingle)
    _c.count(func, arg.format("num_perm"), num_perm)
    _c.count(func, arg.format("bands"), bands, True)
    _c.count(func, arg.format("rows"), rows, True)
    _c.count(func, arg.format("simhash"), simhash, True, bits=32)
    _c.flag(func, arg.format("store_text"), store_text)


def _expect_types(expect: Mapping[str, Any]) -> None:
    """The types of the values of :meth:`Database.open`'s ``expect``."""
    d = dict(expect)
    _config_types(
        "open",
        d.get("threshold", 0.8),
        d.get("shingle", "char:5"),
        d.get("num_perm", 128),
        d.get("bands"),
        d.get("rows"),
        d.get("simhash"),
        d.get("store_text", False),
        arg="expect['{}']",
    )


def _query_types(func: str, threshold: object, limit: object, max_bucket: object) -> None:
    _c.real(func, "threshold", threshold, True)
    _c.count(func, "limit", limit, True)
    _c.count(func, "max_bucket", max_bucket, True)
