"""Reads of a :class:`Database`: stored documents and keys, queries
(similarity, top-k and containment), SimHash search, pairs and groups."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Literal, Optional, Tuple, Union, overload

from . import _checks as _c
from . import _keys
from ._errors import IndexDisabled, InvalidInput, NotFound
from ._handle import Handle
from ._inputs import Item, item_bytes, item_sets as _item_sets, texts as _texts
from ._keys import Key
from ._results import ContainmentHit, ExportedDocument, Hit, Pair, PairIterator, SimHashHit, StoredDocument


class Reads(Handle):
    """Look-ups, queries, pairs and groups."""

    __slots__ = ()

    def get(self, key: Key) -> Optional[StoredDocument]:
        """The document stored under ``key``, or None. Raises
        :class:`InvalidInput` for a key of the other type than the file's
        (``get("42")`` on an int-keyed file)."""
        raw = self._db.get(_keys.read(self, key, "get()"))
        return None if raw is None else StoredDocument(key, *raw[1:])

    def similarity(self, a: Key, b: Key) -> Optional[float]:
        """The Jaccard similarity of the shingle sets stored under ``a`` and
        ``b``, as a verification computes it (1.0 for a document with
        itself); None when either is not stored."""
        return self._db.similarity(_keys.read(self, a, "similarity()"), _keys.read(self, b, "similarity()"))

    def __getitem__(self, key: Key) -> StoredDocument:
        doc = self.get(key)
        if doc is None:
            raise NotFound(f"no document with key `{key}`")
        return doc

    def __contains__(self, key: object) -> bool:
        stored = _keys.matches(self, key)
        return stored is not None and self._db.contains(stored)

    def __len__(self) -> int:
        return self._db.len()

    def keys(self) -> Iterator[Any]:
        """Every stored key in id order (the order the documents were stored
        in; key order within one bulk commit), from one snapshot, streamed."""
        decode = _keys.decoder(self)
        stream: Iterator[str] = self._db.keys()
        return iter(stream) if decode is None else map(decode, stream)

    def __iter__(self) -> Iterator[Any]:
        return self.keys()

    def documents(self) -> Iterator[ExportedDocument]:
        """Every stored document as :class:`ExportedDocument` (key, text
        when stored, shingle hashes), in id order, from one snapshot,
        streamed: what ``lshdb export`` writes, for a copy or another
        tool. ``insert_many(keys=, shingles=)`` loads them back."""
        decode = _keys.decoder(self) or str
        return (ExportedDocument(decode(k), t, s) for k, t, s in self._db.documents())

    @overload
    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[Key] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        top: Optional[int] = None,
        containment: None = None,
        exhaustive: bool = False,
        explain: Literal[False] = False,
    ) -> List[Hit]: ...

    @overload
    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[Key] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        top: Optional[int] = None,
        containment: None = None,
        exhaustive: bool = False,
        explain: Literal[True],
    ) -> Tuple[List[Hit], Dict[str, Any]]: ...

    @overload
    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[Key] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        top: Optional[int] = None,
        containment: float,
        exhaustive: bool = False,
        explain: Literal[False] = False,
    ) -> List[ContainmentHit]: ...

    @overload
    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[Key] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        top: Optional[int] = None,
        containment: float,
        exhaustive: bool = False,
        explain: Literal[True],
    ) -> Tuple[List[ContainmentHit], Dict[str, Any]]: ...

    def query(
        self,
        text: Optional[str] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        key: Optional[Key] = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
        top: Optional[int] = None,
        containment: Optional[float] = None,
        exhaustive: bool = False,
        explain: bool = False,
    ) -> Any:
        """Near-duplicates of a text, an item set (``items=``) or a stored
        document (``key=``, itself left out), best first, each verified with
        exact Jaccard ≥ ``threshold`` (default: the index threshold).

        ``top=k`` asks instead for the k most similar documents, whatever
        their similarity (no ``threshold`` or ``limit`` with it), verified.
        On a file with the containment index (``containment=True``) it
        probes that index's prefix forest, four values deep down to one,
        until a document as similar as the k-th hit would be found with
        probability 0.99; without it, only the bands (low recall below the
        index threshold, with a warning). ``explain["recall_estimate"]`` is
        that probability, a lower bound on the recall of the top k, and
        ``explain["forest"]`` says whether the forest was probed.

        ``containment=t`` (0 < t ≤ 1) asks instead for the documents that
        hold at least a fraction t of the query's shingles, as
        :class:`ContainmentHit` (key, containment, jaccard), highest
        containment first; ``limit`` and ``max_bucket`` apply, ``threshold``
        and ``top`` do not. It needs the containment index
        (``create(containment=True)`` or ``rebuild(containment=True)``),
        or raises :class:`IndexDisabled`; ``exhaustive=True`` compares with
        every stored set instead (exact, in time linear in the database).

        With ``explain=True`` returns ``(hits, explain)``, where the dict
        says what each step did and cost (buckets probed, candidates,
        pruned, verified, timings, ``recall_estimate``, warnings such as a
        threshold below the index's). Raises :class:`InvalidInput` for an
        empty text and :class:`NotFound` for an unknown ``key``.
        """
        _c.string("query", "text", text, True)
        _c.query("query", threshold, limit, max_bucket)
        _c.count("query", "top", top, True)
        _c.real("query", "containment", containment, True)
        _c.flag("query", "exhaustive", exhaustive)
        _c.flag("query", "explain", explain)
        stored = None if key is None else _keys.read(self, key, "query()")
        raw_items = None if items is None else item_bytes(items, _c.what("query", "items"))
        if containment is not None:
            if top is not None or threshold is not None:
                raise InvalidInput(
                    "query(): containment=t is the threshold of a containment search; give it without threshold= and top="
                )
            with self._db.query_place():  # see below
                return self._containment(text, raw_items, stored, containment, limit, max_bucket, exhaustive, explain)
        if top is not None and (threshold is not None or limit is not None):
            raise InvalidInput(
                "query(): top= ranks the k most similar documents whatever their similarity; "
                "give top= without threshold= and limit="
            )
        if exhaustive:
            raise InvalidInput("query(): exhaustive=True is an option of containment search (containment=t)")
        # The search and the making of its hits run in one of as many places
        # as there are cores (the threads beyond wait asleep, without the
        # GIL), so that a writer thread keeps a core and the GIL.
        with self._db.query_place():
            raw, info = self._db.query(
                text,
                items=raw_items,
                key=stored,
                threshold=threshold,
                limit=limit,
                max_bucket=max_bucket,
                top=top,
                explain=explain,
            )
            hits = _keys.hits(self, raw)
        if explain:
            assert info is not None
            return hits, info
        return hits

    def _containment(
        self,
        text: Optional[str],
        items: Optional[List[bytes]],
        key: Optional[str],
        t: float,
        limit: Optional[int],
        max_bucket: Optional[int],
        exhaustive: bool,
        explain: bool,
    ) -> Any:
        """``query(containment=t)``."""
        if not exhaustive and self._db.settings.get("containment") is None:
            raise IndexDisabled(
                "query(): this database has no containment index: build it with "
                "db.rebuild(containment=True), or pass exhaustive=True to compare with every stored set"
            )
        raw, info = self._db.query_containment(
            text,
            items=items,
            key=key,
            threshold=t,
            limit=limit,
            max_bucket=max_bucket,
            exhaustive=exhaustive,
            explain=explain,
        )
        hits = [ContainmentHit(_keys.decode(self, k), c, j) for k, c, j in raw]
        if explain:
            assert info is not None
            return hits, info
        return hits

    def query_many(
        self,
        texts: Any = None,
        *,
        items: Any = None,
        threshold: Optional[float] = None,
        limit: Optional[int] = None,
        max_bucket: Optional[int] = None,
    ) -> List[List[Hit]]:
        """Queries many texts, or many item sets (``items=``, a list of
        collections of str, bytes or int items, as :meth:`query` takes one),
        in parallel on every core with the GIL released for the whole
        search; one list of hits per input, in input order (empty for an
        input with no shingles). Each hit list equals what :meth:`query`
        returns for that input."""
        _c.query("query_many", threshold, limit, max_bucket)
        if (texts is None) == (items is None):
            raise InvalidInput("query_many: give texts or items=, not both")
        if items is not None:
            raw = self._db.query_many(
                items=_item_sets(items, _c.what("query_many", "items")),
                threshold=threshold,
                limit=limit,
                max_bucket=max_bucket,
            )
        else:
            batch = _texts(texts, _c.what("query_many", "texts"))
            raw = self._db.query_many(batch, threshold=threshold, limit=limit, max_bucket=max_bucket)
        return [_keys.hits(self, r) for r in raw]

    def simhash_search(self, text: str, max_distance: int, *, limit: Optional[int] = None) -> List[SimHashHit]:
        """Documents whose SimHash fingerprint is within ``max_distance``
        bits of the text's, closest first. Needs a database created with
        ``simhash=D`` (D ≥ max_distance); raises :class:`IndexDisabled`
        otherwise."""
        _c.string("simhash_search", "text", text)
        _c.count("simhash_search", "max_distance", max_distance, bits=32)
        _c.count("simhash_search", "limit", limit, True)
        found = self._db.simhash_search(text, max_distance, limit=limit)
        return [SimHashHit(_keys.decode(self, k), d, f) for k, d, f in found]

    def pairs(self, threshold: Optional[float] = None) -> PairIterator:
        """Every pair of stored documents with verified similarity ≥
        ``threshold`` (default: the index threshold), found through the
        index from one snapshot and streamed from a background thread as
        they are found (memory stays bounded). Pairs below the index
        threshold are found with the probability the banding gives them."""
        _c.real("pairs", "threshold", threshold, True)
        return PairIterator(self._db.pairs(threshold), _keys.decoder(self))

    def groups(self, threshold: Optional[float] = None) -> Iterator[List[Hit]]:
        """Near-duplicate clusters (connected components of the pairs at
        ``threshold``), largest first; each member as ``Hit(key, best
        similarity to another member)``. The components need every pair,
        so they are computed in one pass (when this is called) and then
        yielded one by one."""
        _c.real("groups", "threshold", threshold, True)
        return iter([_keys.hits(self, group) for group in self._db.groups(threshold)])

    def exact_pairs(self, threshold: float) -> List[Pair]:
        """*Every* pair with Jaccard ≥ ``threshold`` (0 < t ≤ 1), found
        exactly without LSH (all stored sets in memory): the ground truth
        for small corpora. Sorted by (a, b)."""
        _c.real("exact_pairs", "threshold", threshold)
        decode = _keys.decoder(self) or str
        return [Pair(decode(a), decode(b), s) for a, b, s in self._db.exact_pairs(threshold)]
