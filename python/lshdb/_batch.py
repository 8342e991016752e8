"""Write batches: :meth:`Database.batch`'s operations, recorded in Python
and applied in one native transaction when the ``with`` block ends."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, List, Optional, Tuple, Type

from . import _checks as _c
from . import _keys
from ._inputs import Item, item_bytes
from ._results import Key

if TYPE_CHECKING:
    from ._database import Database

__all__ = ["Batch"]


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

    def insert(self, key: Key, text: str) -> None:
        """Records an insert (or replace) of a text."""
        _c.string("batch.insert", "text", text)
        self._ops.append(("insert", _keys.write(self._db, key, "batch.insert()"), text, None))

    def insert_items(self, key: Key, items: Iterable[Item]) -> None:
        """Records an insert of an item set."""
        raw = item_bytes(items, _c.what("batch.insert_items", "items"))
        self._ops.append(("insert", _keys.write(self._db, key, "batch.insert_items()"), None, raw))

    def remove(self, key: Key) -> None:
        """Records a removal."""
        self._ops.append(("remove", _keys.read(self._db, key, "batch.remove()"), None, None))

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

    def __exit__(self, exc_type: Optional[Type[BaseException]], *rest: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
