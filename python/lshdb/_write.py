"""Writes of a :class:`Database`: single documents and item sets, dedup
on write (one, or many on the bulk pipeline), bulk loads, removes and
batches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union, cast

import numpy as np

from . import _checks as _c
from . import _keys
from ._batch import Batch
from ._errors import InvalidInput, InvalidType
from ._expire import Time, epoch_seconds
from ._handle import Handle
from ._inputs import Item, item_bytes, item_sets as _item_sets, texts as _texts
from ._results import Hit, Key, UniqueResult

if TYPE_CHECKING:
    from ._database import Database


class Writes(Handle):
    """Inserts, removes and batches."""

    __slots__ = ()

    def insert(
        self, key: Key, text: str, *, timestamp: Optional[Time] = None, priority: Optional[int] = None
    ) -> None:
        """Inserts (or atomically replaces) the document under ``key`` (a
        str, or an int: see ``docs/python.md``, "Keys"), durably. Raises
        :class:`InvalidInput` for an empty document, a key of 0 or more
        than ``MAX_KEY_BYTES`` bytes, or a text above
        ``MAX_DOCUMENT_BYTES``; :class:`ReadOnlyError`; :class:`Poisoned`.

        ``timestamp`` (a ``datetime`` or seconds since the Unix epoch)
        stamps it in the time index instead of the time of the insert
        (:class:`IndexDisabled` on a file without the time index).
        ``priority`` (an int, -2**63 to 2**63 - 1; default 0) ranks it for
        its cluster's representative in a file created with
        ``clusters="priority"``: the member of highest priority represents
        the cluster (:class:`InvalidInput` in a file of another policy)."""
        _c.string("insert", "text", text)
        stored = _keys.write(self, key, "insert()")
        if priority is not None:
            _c.priority("insert", "priority", priority)
            at = None if timestamp is None else epoch_seconds("insert", "timestamp", timestamp)
            self._db.insert_document(stored, text, at=at, priority=int(priority))
        elif timestamp is None:
            self._db.insert(stored, text)
        else:
            self._db.insert_at(stored, text, epoch_seconds("insert", "timestamp", timestamp))

    def insert_items(self, key: Key, items: Iterable[Item]) -> None:
        """Inserts a set of items (the products a customer bought, ...).

        Each item is hashed whole: a ``str`` as its UTF-8, ``bytes`` as
        they are, an ``int`` as the UTF-8 of its decimal text — so ``42``
        and ``"42"`` are the same item."""
        raw = item_bytes(items, _c.what("insert_items", "items"))
        self._db.insert_items(_keys.write(self, key, "insert_items()"), raw)

    def insert_unique(
        self,
        key: Key,
        text: Optional[str] = None,
        threshold: Optional[float] = None,
        *,
        items: Optional[Iterable[Item]] = None,
        priority: Optional[int] = None,
    ) -> Optional[Hit]:
        """Dedup on write: in one transaction, returns the best stored
        near-duplicate with verified similarity ≥ ``threshold`` (default:
        the index threshold) and stores nothing, or inserts the document
        and returns ``None``; ``priority`` as for :meth:`insert`."""
        _c.string("insert_unique", "text", text, True)
        _c.real("insert_unique", "threshold", threshold, True)
        t = self._db.settings["threshold"] if threshold is None else threshold
        stored = _keys.write(self, key, "insert_unique()")
        raw_items = None if items is None else item_bytes(items, _c.what("insert_unique", "items"))
        if priority is not None:
            _c.priority("insert_unique", "priority", priority)
            raw = self._db.insert_unique_document(stored, text, items=raw_items, threshold=t, priority=int(priority))
        else:
            raw = self._db.insert_unique(stored, text, items=raw_items, threshold=t)
        return None if raw is None else Hit(_keys.decode(self, raw[0]), raw[1])

    def insert_unique_many(
        self,
        keys: Any,
        texts: Any = None,
        *,
        items: Any = None,
        threshold: Optional[float] = None,
        batch: Optional[int] = None,
        memory: Optional[int] = None,
        duplicate_of: str = "first",
    ) -> UniqueResult:
        """Dedup on write of many documents at once, in order: each is
        stored unless a document stored before, or one accepted earlier in
        this call, has verified similarity ≥ ``threshold`` (default: the
        index threshold) with it — the same decisions as
        :meth:`insert_unique` one after another, at bulk-load speed: the
        next chunk is shingled and looked up on every core while this one
        is written, and a transaction commits every ``batch`` accepted
        documents (default 32,768), not one per document. ``memory`` (bytes)
        bounds what the call holds: a quarter for accepted documents not
        yet written, an eighth for the look-ups' caches and, in a database
        empty when the call began, up to a quarter for its filter of what
        it wrote (dropped, with no change to the decisions, when outgrown),
        as ``lshdb dedup --memory`` (default: 256 MiB, 96 MiB and 256 MiB).
        ``duplicate_of`` says which stored or accepted document a duplicate
        names: ``"first"`` (the first near-duplicate found, which ends its
        look-up: the fastest) or ``"best"`` (the most similar, as
        :meth:`insert_unique` names it; every candidate is verified). The
        same documents are inserted either way.

        ``keys`` is a column of keys (str, or int); ``texts=`` an equally
        long column of texts (as :meth:`insert_many` takes them), or
        ``items=`` a list of item sets. Returns a :class:`UniqueResult`
        (``inserted``, ``duplicates``, ``rejected``, ``commits``).
        Documents of earlier commits stay stored if a storage error
        raises.
        """
        _c.real("insert_unique_many", "threshold", threshold, True)
        _c.count("insert_unique_many", "batch", batch, True)
        _c.count("insert_unique_many", "memory", memory, True)
        _c.choice("insert_unique_many", "duplicate_of", duplicate_of, _c.DUPLICATE_OF)
        if (texts is None) == (items is None):
            raise InvalidInput("insert_unique_many: give texts= or items=, not both")
        key_list = _keys.as_list(keys, _c.what("insert_unique_many", "keys"))
        stored = _keys.column(self, key_list, _c.what("insert_unique_many", "keys"))
        t = self._db.settings["threshold"] if threshold is None else threshold
        raw, commits = self._db.insert_unique_many(
            stored,
            None if texts is None else _texts(texts, _c.what("insert_unique_many", "texts")),
            items=None if items is None else _item_sets(items, _c.what("insert_unique_many", "items")),
            threshold=t,
            batch=batch,
            memory=memory,
            duplicate_of=duplicate_of,
        )
        if len(raw) != len(key_list):
            raise InvalidInput(f"insert_unique_many: {len(key_list)} keys but {len(raw)} documents")
        result = UniqueResult([], {}, {}, commits)
        for key, (outcome, text, similarity) in zip(key_list, raw):
            if outcome == 0:
                result.inserted.append(key)
            elif outcome == 1:
                result.duplicates[key] = Hit(_keys.decode(self, text), similarity)
            else:
                result.rejected[key] = text
        return result

    def insert_many(
        self,
        docs: Union[Mapping[str, str], Mapping[int, str], Iterable[Tuple[Key, str]], None] = None,
        *,
        keys: Any = None,
        texts: Any = None,
        items: Any = None,
        shingles: Any = None,
        priorities: Any = None,
        timestamps: Any = None,
        batch: Optional[int] = None,
        max_rejected: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Bulk load: many documents, one commit per ``batch`` documents
        (default 32,768), shingled and hashed on every core with the GIL
        released.

        Give a dict ``{key: text}``, an iterable of ``(key, text)`` pairs
        (read lazily, a slice at a time), or ``keys=`` and ``texts=`` as two
        equally long columns: lists, NumPy arrays, pyarrow string arrays or
        pandas Series (Arrow-backed columns cross without a Python object
        per text). ``keys=`` with ``items=``, a list of item sets, loads
        item sets (as :meth:`insert_items` stores each); with ``shingles=``,
        a list of shingle-hash arrays (as :meth:`documents` yields them),
        stores those sets as they are — they only mean something in a
        database with the shingling they were made with. Keys are str or
        int (also an integer column).

        ``priorities=``, with ``keys=`` and ``texts=``, is an equally long
        column of ints (a list or an integer array), each document's
        priority as :meth:`insert` takes it (files created with
        ``clusters="priority"`` only). ``timestamps=``, with ``keys=`` and
        ``texts=``, is an equally long column of times (``datetime`` or
        seconds since the Unix epoch), each document's stamp in the time
        index as :meth:`insert` takes it (:class:`IndexDisabled` on a file
        without the time index).

        Returns ``{"inserted", "replaced", "rejected", "rejected_count",
        "commits"}``; ``rejected`` lists ``(key, reason)`` for documents that
        could not be indexed (empty, too large, bad key), which are skipped,
        and ``rejected_count`` counts them. ``max_rejected=N`` keeps only the
        last N in ``rejected`` (default: all), so that an endless iterable
        of refused documents does not grow the report. A storage error
        raises; documents of earlier commits stay stored.
        """
        _c.count("insert_many", "batch", batch, True)
        _c.count("insert_many", "max_rejected", max_rejected, True)
        if priorities is not None or timestamps is not None:
            if docs is not None or keys is None or texts is None or items is not None or shingles is not None:
                raise InvalidInput("insert_many: priorities= and timestamps= go with keys= and texts=")
            report = self._db.insert_carried_columns(
                _keys.column(self, keys, _c.what("insert_many", "keys")),
                _texts(texts, _c.what("insert_many", "texts")),
                None if priorities is None else _priorities(priorities, _c.what("insert_many", "priorities")),
                None if timestamps is None else _timestamps(timestamps),
                batch,
                max_rejected,
            )
        elif docs is not None:
            if keys is not None or texts is not None or items is not None or shingles is not None:
                raise InvalidInput("insert_many: give docs, or keys= with texts=, items= or shingles=, not both")
            if isinstance(docs, Mapping):
                report = self._db.insert_columns(
                    _keys.column(self, list(docs.keys()), "insert_many(): the keys of `docs`"),
                    _texts(list(docs.values()), "insert_many(): the values of `docs`"),
                    batch,
                    max_rejected,
                )
            elif isinstance(docs, (str, bytes)) or not isinstance(docs, Iterable):
                _c.fail("insert_many", "docs", "a mapping or an iterable of (key, text) pairs", docs)
            else:
                report = self._db.insert_pairs(_keys.pairs(self, docs, "insert_many()"), batch, max_rejected)
        elif keys is None or sum(x is None for x in (texts, items, shingles)) != 2:
            raise InvalidInput("insert_many: give docs, or keys= with one of texts=, items= and shingles=")
        elif shingles is not None:
            report = self._db.insert_shingle_columns(
                _keys.column(self, keys, _c.what("insert_many", "keys")),
                _shingle_sets(shingles, _c.what("insert_many", "shingles")),
                batch,
                max_rejected,
            )
        elif items is not None:
            report = self._db.insert_item_columns(
                _keys.column(self, keys, _c.what("insert_many", "keys")),
                _item_sets(items, _c.what("insert_many", "items")),
                batch,
                max_rejected,
            )
        else:
            report = self._db.insert_columns(
                _keys.column(self, keys, _c.what("insert_many", "keys")),
                _texts(texts, _c.what("insert_many", "texts")),
                batch,
                max_rejected,
            )
        report["rejected"] = [(_keys.decode(self, k), why) for k, why in report["rejected"]]
        return report

    def remove(self, key: Key) -> bool:
        """Removes the document under ``key``; False when there was none."""
        return self._db.remove(_keys.read(self, key, "remove()"))

    def batch(self) -> Batch:
        """A write batch: ``with db.batch() as b: b.insert(...); b.remove(...)``
        commits every operation at once (one fsync) when the block ends, and
        writes nothing if the block raises. See :class:`Batch`."""
        return Batch(cast("Database", self))


def _timestamps(values: Any) -> List[int]:
    """A column of times (``datetime`` or seconds since the Unix epoch) as
    whole seconds."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidType(f"insert_many(): argument `timestamps`: expected a list of times, got {type(values).__name__}")
    return [epoch_seconds("insert_many", f"timestamps[{i}]", value) for i, value in enumerate(values)]


def _priorities(values: Any, what: str) -> List[int]:
    """A column of priorities (a list or an integer array of int64)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidType(f"{what}: expected a list of ints, got {type(values).__name__}")
    out: List[int] = []
    for i, value in enumerate(values):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise InvalidType(f"{what}[{i}]: expected an int, got {type(value).__name__}")
        number = int(value)
        if not -(1 << 63) <= number < 1 << 63:
            raise InvalidInput(f"{what}[{i}]: a priority is an int from {-(1 << 63)} to {(1 << 63) - 1}")
        out.append(number)
    return out


def _shingle_sets(sets: Any, what: str) -> List[List[int]]:
    """A column of shingle-hash sets (lists or arrays of uint32)."""
    if isinstance(sets, (str, bytes)) or not isinstance(sets, Iterable):
        raise InvalidType(f"{what}: expected a list of shingle-hash arrays, got {type(sets).__name__}")
    out: List[List[int]] = []
    for i, hashes in enumerate(sets):
        array = np.asarray(hashes)
        if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
            raise InvalidType(f"{what}[{i}]: expected a 1-d array of uint32 hashes")
        if array.size and (array.min() < 0 or array.max() > 0xFFFFFFFF):
            raise InvalidInput(f"{what}[{i}]: a shingle hash is a uint32")
        out.append(array.astype(np.uint32).tolist())
    return out
