"""The :class:`Database` handle: opening and creating files, writes,
queries, pairs and groups, maintenance. Each
method checks its arguments' types (``_checks``), converts its inputs
(``_inputs``), calls the native module with the GIL released, and wraps
what comes back in the result types (``_results``)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Tuple, Union, overload

from . import _checks as _c
from . import _lshdb
from ._batch import Batch
from ._errors import InvalidInput, NotFound
from ._inputs import Item, PathLike, item_bytes, texts as _texts
from ._labels import Labels
from ._results import Hit, Pair, PairIterator, SimHashHit, StoredDocument, hits as _hits
from ._sketcher import Sketcher

__all__ = ["Database"]


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
        _c.config("create", threshold, shingle, num_perm, bands, rows, simhash, store_text)
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
            _c.expect(expect)
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

    def __exit__(self, *exc: object) -> None:
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
        _c.query("query", threshold, limit, max_bucket)
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
        _c.query("query_many", threshold, limit, max_bucket)
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

    def pairs(self, threshold: Optional[float] = None) -> PairIterator:
        """Every pair of stored documents with verified similarity ≥
        ``threshold`` (default: the index threshold), found through the
        index from one snapshot and streamed from a background thread as
        they are found (memory stays bounded). Pairs below the index
        threshold are found with the probability the banding gives them."""
        _c.real("pairs", "threshold", threshold, True)
        return PairIterator(self._db.pairs(threshold))

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

