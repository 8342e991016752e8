"""The values lshdb's calls return: hits, pairs and stored documents as
named tuples (they unpack, compare and pickle as tuples), and the
iterator :meth:`Database.pairs` streams pairs through."""

from __future__ import annotations

from typing import Iterator, List, NamedTuple, Optional, Tuple

from . import _lshdb

__all__ = ["Hit", "Pair", "SimHashHit", "StoredDocument", "PairIterator"]


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


def hits(raw: List[Tuple[str, float]]) -> List[Hit]:
    """The native module's ``(key, similarity)`` tuples as :class:`Hit`."""
    return [Hit(k, s) for k, s in raw]


class PairIterator(Iterator[Pair]):
    """Pairs streamed from a background thread (see :meth:`Database.pairs`)."""

    __slots__ = ("_stream",)

    def __init__(self, stream: _lshdb.Stream) -> None:
        self._stream = stream

    def __iter__(self) -> PairIterator:
        return self

    def __next__(self) -> Pair:
        a, b, s = self._stream.__next__()
        return Pair(a, b, s)

    def close(self) -> None:
        """Stops the background thread early."""
        self._stream.close()
