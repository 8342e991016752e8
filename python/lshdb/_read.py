"""Reads of a :class:`Database`: stored documents and keys, queries,
SimHash search, pairs and groups."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Literal, Optional, Tuple, Union, overload

from . import _checks as _c
from ._errors import NotFound
from ._handle import Handle
from ._inputs import Item, item_bytes, texts as _texts
from ._results import Hit, Pair, PairIterator, SimHashHit, StoredDocument, hits as _hits


class Reads(Handle):
    """Look-ups, queries, pairs and groups."""

    __slots__ = ()

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
