"""Application labels of a database: small named strings stored next to
the documents (``db.labels["source"] = "crawl-7"``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from . import _checks as _c
from ._errors import NotFound

if TYPE_CHECKING:
    from ._database import Database

__all__ = ["Labels"]


class Labels:
    """Application labels of a :class:`Database` (a small string mapping)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def __getitem__(self, name: str) -> str:
        _c.string("labels.__getitem__", "name", name)
        value = self._db._db.get_label(name)
        if value is None:
            raise NotFound(f"no label `{name}`")
        return value

    def __setitem__(self, name: str, value: str) -> None:
        _c.string("labels.__setitem__", "name", name)
        _c.string("labels.__setitem__", "value", value)
        self._db._db.set_label(name, value)

    def get(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """The label ``name``, or ``default``."""
        _c.string("labels.get", "name", name)
        value = self._db._db.get_label(name)
        return default if value is None else value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._db._db.get_label(name) is not None

