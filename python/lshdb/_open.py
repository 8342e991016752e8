"""Opening, creating and closing a :class:`Database`, and the handle's
properties: the ``Opening`` part of the class (``_database`` assembles
it from one mixin per area, as ``python/src/database/`` has one
``#[pymethods]`` block per area)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type, TypeVar

from . import _checks as _c
from . import _lshdb
from ._handle import Handle
from ._inputs import PathLike
from ._sketcher import Sketcher

_D = TypeVar("_D", bound="Opening")


class Opening(Handle):
    """:meth:`create`, :meth:`open`, :meth:`close` and the properties."""

    __slots__ = ()

    @classmethod
    def create(
        cls: Type[_D],
        path: PathLike,
        threshold: float = 0.8,
        *,
        shingle: str = "char:5",
        num_perm: int = 128,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        simhash: Optional[int] = None,
        store_text: bool = False,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
    ) -> _D:
        """Creates a new database file.

        ``threshold`` is the Jaccard similarity the index is built to find
        (strictly between 0 and 1); ``shingle`` is ``"char:K"``,
        ``"word:K"`` or ``"stopword:K"``; ``num_perm`` the signature
        length; ``bands`` and ``rows`` (both or neither) override the tuner;
        ``simhash=D`` adds a SimHash index for searches up to D bits (≤ 7);
        ``store_text`` keeps each document's text for :meth:`get`.

        Raises :class:`FileExists` when ``path`` exists,
        :class:`InvalidInput` for an invalid configuration and
        :class:`InvalidType` for an argument of the wrong type (as every
        call does).
        """
        _c.config("create", threshold, shingle, num_perm, bands, rows, simhash, store_text)
        _c.path("create", "path", path)
        _c.count("create", "cache_bytes", cache_bytes, True)
        _c.count("create", "record_cache_bytes", record_cache_bytes, True)
        return cls(
            _lshdb.Database.create(
                path,
                threshold,
                shingle=shingle,
                num_perm=num_perm,
                bands=bands,
                rows=rows,
                simhash=simhash,
                store_text=store_text,
                cache_bytes=cache_bytes,
                record_cache_bytes=record_cache_bytes,
            )
        )

    @classmethod
    def open(
        cls: Type[_D],
        path: PathLike,
        *,
        read_only: bool = False,
        wait: Optional[float] = None,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
        expect: Optional[Mapping[str, Any]] = None,
    ) -> _D:
        """Opens an existing database; its configuration comes from the file.

        ``read_only=True`` opens without write access, also while another
        process writes the file (its commits become visible as they land);
        a file a crashed writer left is repaired first, when the file and
        its folder are not read-only. A handle belongs to this process: in a
        ``fork()`` child every call raises :class:`DatabaseClosed`, so open
        the database again there.
        ``wait`` (seconds) retries while another process holds the file for
        writing instead of raising :class:`AlreadyOpen` at once.
        ``cache_bytes`` (page cache) and ``record_cache_bytes`` (decoded
        records for queries) default to 64 MiB each. ``expect`` is a dict of
        :meth:`create`'s configuration arguments (missing ones take their
        defaults) that the stored configuration must equal, or
        :class:`ConfigMismatch` names the first field that differs.

        Raises :class:`NotADatabase`, :class:`FormatVersionError`,
        :class:`AlreadyOpen`, :class:`NeedsRepair` (read-only open of a file
        a crashed writer left, which it may not repair), :class:`Corrupted`
        (also a truncated file), :class:`StorageError`.
        """
        _c.path("open", "path", path)
        _c.flag("open", "read_only", read_only)
        _c.real("open", "wait", wait, True)
        _c.count("open", "cache_bytes", cache_bytes, True)
        _c.count("open", "record_cache_bytes", record_cache_bytes, True)
        _c.optional_mapping("open", "expect", expect)
        if expect is not None:
            _c.expect(expect)
        return cls(
            _lshdb.Database.open(
                path,
                read_only=read_only,
                wait=wait,
                cache_bytes=cache_bytes,
                record_cache_bytes=record_cache_bytes,
                expect=None if expect is None else dict(expect),
            )
        )

    def close(self) -> None:
        """Closes the file (waiting for running calls). Idempotent."""
        self._db.close()

    def __enter__(self: _D) -> _D:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._db.closed else ("read-only" if self._db.read_only else "open")
        return f"<lshdb.Database {str(self._db.path)!r} ({state})>"

    @property
    def path(self) -> str:
        """The file's path."""
        return str(self._db.path)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._db.closed

    @property
    def read_only(self) -> bool:
        """Whether this handle was opened read-only."""
        return self._db.read_only

    @property
    def settings(self) -> Dict[str, Any]:
        """The stored settings: shingle, num_perm, threshold, bands, rows,
        simhash_max_distance, store_text, seeds and scheme."""
        return self._db.settings

    def sketcher(self) -> Sketcher:
        """A :class:`Sketcher` with exactly this database's settings."""
        return Sketcher._wrap(self._db.sketcher())
