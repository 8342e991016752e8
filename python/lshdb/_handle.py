"""The base of :class:`Database`'s area mixins: the one attribute they
share, the native handle."""

from __future__ import annotations

from . import _lshdb


class Handle:
    """Holds ``_db``, the native ``_lshdb.Database``. The one base with
    slots, so the mixins (``__slots__ = ()``) combine."""

    __slots__ = ("_db", "__weakref__")

    def __init__(self, native: _lshdb.Database) -> None:
        """Use :meth:`Database.create` or :meth:`Database.open`."""
        self._db = native
