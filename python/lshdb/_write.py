"""Writes of a :class:`Database`: single documents and item sets, dedup
on write, bulk loads, removes and batches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, Mapping, Optional, Tuple, Union, cast

from . import _checks as _c
from ._batch import Batch
from ._errors import InvalidInput
from ._handle import Handle
from ._inputs import Item, item_bytes, texts as _texts
from ._results import Hit

if TYPE_CHECKING:
    from ._database import Database


class Writes(Handle):
    """Inserts, removes and batches."""

    __slots__ = ()

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
        t = self._db.settings["threshold"] if threshold is None else threshold
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
        return Batch(cast("Database", self))
