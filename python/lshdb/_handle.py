"""The base of :class:`Database`'s area mixins: the one attribute they
share, the native handle."""

from __future__ import annotations

from typing import Optional

from . import _lshdb


class Handle:
    """Holds ``_db``, the native ``_lshdb.Database``, and ``_keys``, the
    file's key type (see ``_keys``). The one base with
    slots, so the mixins (``__slots__ = ()``) combine."""

    __slots__ = ("_db", "_keys", "__weakref__")

    def __init__(self, native: _lshdb.Database) -> None:
        """Use :meth:`Database.create` or :meth:`Database.open`."""
        self._db = native
        #: The file's key type once known (``_keys.kind``).
        self._keys: Optional[str] = None
