"""The values lshdb's calls return: hits, pairs and stored documents as
named tuples (they unpack, compare and pickle as tuples), and the
iterator :meth:`Database.pairs` streams pairs through."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

from . import _lshdb

__all__ = ["Hit", "Pair", "SimHashHit", "StoredDocument", "ContainmentHit", "UniqueResult", "ExportedDocument", "PairIterator"]

#: A key: ``str``, or ``int`` in an int-keyed file (see ``_keys``).
Key = Union[str, int]
#: A key in an answer: typed ``Any`` so that code of str-keyed files
#: needs no narrowing; ``str``, or ``int`` in an int-keyed file.
AnswerKey = Any


class Hit(NamedTuple):
    """A verified near-duplicate: the stored key and its exact Jaccard
    similarity to the query."""

    key: AnswerKey
    similarity: float


class ContainmentHit(NamedTuple):
    """A containment search hit: the stored key, the exact fraction of the
    query's shingles it holds (|Q ∩ X| / |Q|) and their exact Jaccard
    similarity."""

    key: AnswerKey
    containment: float
    jaccard: float


class UniqueResult(NamedTuple):
    """What :meth:`Database.insert_unique_many` did, document by document.

    ``inserted`` lists the keys stored, in input order; ``duplicates``
    maps each key not stored to the :class:`Hit` it duplicates (a document
    stored before the call, or one accepted earlier in it, with their
    exact similarity); ``rejected`` maps each key that could not be indexed
    (an empty text, a bad key) to the reason. A key given twice reports its
    last outcome in the dicts. ``commits`` counts the transactions.
    """

    inserted: List[AnswerKey]
    duplicates: Dict[AnswerKey, Hit]
    rejected: Dict[AnswerKey, str]
    commits: int


class Pair(NamedTuple):
    """Two stored documents (``a < b``) and their exact Jaccard similarity."""

    a: AnswerKey
    b: AnswerKey
    similarity: float


class SimHashHit(NamedTuple):
    """A SimHash search hit: key, Hamming distance and its fingerprint."""

    key: AnswerKey
    distance: int
    fingerprint: int


class StoredDocument(NamedTuple):
    """A stored document as :meth:`Database.get` returns it."""

    key: AnswerKey
    #: The raw text, when the database was created with ``store_text=True``.
    text: Optional[str]
    #: The number of distinct shingles.
    shingles: int
    #: The SimHash fingerprint, when the SimHash index is on.
    simhash: Optional[int]


class ExportedDocument(NamedTuple):
    """A stored document as :meth:`Database.documents` yields it (what
    ``lshdb export`` writes): its key, its text when the database stores
    texts, and its sorted shingle hashes, which ``insert_many(keys=,
    shingles=)`` loads into a database with the same shingling."""

    key: AnswerKey
    text: Optional[str]
    shingles: List[int]


def hits(raw: List[Tuple[str, float]]) -> List[Hit]:
    """The native module's ``(key, similarity)`` tuples as :class:`Hit`."""
    return [Hit(k, s) for k, s in raw]


class PairIterator(Iterator[Pair]):
    """Pairs streamed from a background thread (see :meth:`Database.pairs`)."""

    __slots__ = ("_stream", "_decode")

    def __init__(self, stream: _lshdb.Stream, decode: Optional[Callable[[str], Key]] = None) -> None:
        self._stream = stream
        self._decode = decode

    def __iter__(self) -> PairIterator:
        return self

    def __next__(self) -> Pair:
        a, b, s = self._stream.__next__()
        if self._decode is not None:
            return Pair(self._decode(a), self._decode(b), s)
        return Pair(a, b, s)

    def close(self) -> None:
        """Stops the background thread early."""
        self._stream.close()


class Cluster(NamedTuple):
    """A maintained near-duplicate cluster (``docs/clusters.md``): its
    stable id, its representative's key (chosen by the file's policy) and
    its number of members."""

    id: int
    representative: AnswerKey
    size: int


class DocumentCluster(NamedTuple):
    """A stored document with its cluster, as
    :meth:`Database.document_clusters` yields it: its key, its
    :class:`Cluster` and its exact Jaccard similarity to the cluster's
    representative (1.0 for the representative itself)."""

    key: AnswerKey
    cluster: Cluster
    similarity: float
