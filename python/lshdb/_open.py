"""Opening, creating and closing a :class:`Database`, and the handle's
properties: the ``Opening`` part of the class (``_database`` assembles
it from one mixin per area, as ``python/src/database/`` has one
``#[pymethods]`` block per area)."""

from __future__ import annotations

from typing import Any, Dict, Literal, Mapping, Optional, Type, TypeVar, Union

from . import _checks as _c
from . import _lshdb
from ._handle import Handle
from ._inputs import PathLike
from ._sketcher import Sketcher

_D = TypeVar("_D", bound="Opening")
_W = TypeVar("_W", bound="Closes")
#: ``durability=``: every commit on disk when it returns, or at the next
#: durable one (see :meth:`Opening.flush`).
Durability = Literal["immediate", "none"]


class Closes:
    """``with`` for an object with a ``close()``: the block's value is the
    object, closed when the block ends (also on an exception). Also the
    base of ``lshdb.datasketch``'s classes."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _W) -> _W:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Opening(Handle, Closes):
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
        containment: bool = False,
        clusters: Union[bool, str, None] = None,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
        kept_filter_bytes: Optional[int] = None,
        durability: Durability = "immediate",
        timestamps: bool = False,
    ) -> _D:
        """Creates a new database file.

        ``threshold`` is the Jaccard similarity the index is built to find
        (strictly between 0 and 1); ``shingle`` is ``"char:K"``,
        ``"word:K"`` or ``"stopword:K"``; ``num_perm`` the signature
        length; ``bands`` and ``rows`` (both or neither) override the tuner;
        ``simhash=D`` adds a SimHash index for searches up to D bits (≤ 7);
        ``store_text`` keeps each document's text for :meth:`get`;
        ``containment=True`` keeps the containment index that makes
        ``query(containment=t)`` fast; ``clusters=True`` (or a
        representative policy, ``"first"``, ``"longest"``,
        ``"smallest-key"`` or ``"priority"``, the member given the highest
        ``priority=`` by :meth:`insert`) maintains near-duplicate clusters with stable
        ids on every write (:meth:`cluster_of`, ``docs/clusters.md``);
        ``timestamps=True`` keeps the time index (each document's
        timestamp, for :meth:`expire`).
        ``durability="none"`` trades durability for speed: see
        :meth:`flush`.

        Raises :class:`FileExists` when ``path`` exists,
        :class:`InvalidInput` for an invalid configuration and
        :class:`InvalidType` for an argument of the wrong type (as every
        call does).
        """
        _c.config("create", threshold, shingle, num_perm, bands, rows, simhash, store_text)
        _c.flag("create", "containment", containment)
        policy = _c.clusters("create", clusters)
        _c.flag("create", "timestamps", timestamps)
        _c.path("create", "path", path)
        _c.count("create", "cache_bytes", cache_bytes, True)
        _c.count("create", "record_cache_bytes", record_cache_bytes, True)
        _c.count("create", "kept_filter_bytes", kept_filter_bytes, True)
        _c.string("create", "durability", durability)
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
                containment=containment,
                clusters=policy,
                cache_bytes=cache_bytes,
                record_cache_bytes=record_cache_bytes,
                kept_filter_bytes=kept_filter_bytes,
                durability=durability,
                timestamps=timestamps,
            )
        )

    @classmethod
    def memory(
        cls: Type[_D],
        threshold: float = 0.8,
        *,
        shingle: str = "char:5",
        num_perm: int = 128,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        simhash: Optional[int] = None,
        store_text: bool = False,
        containment: bool = False,
        clusters: Union[bool, str, None] = None,
        cache_bytes: Optional[int] = None,
        record_cache_bytes: Optional[int] = None,
        kept_filter_bytes: Optional[int] = None,
        durability: Durability = "immediate",
        timestamps: bool = False,
    ) -> _D:
        """A new database held in memory, with :meth:`create`'s options:
        no file is written, and everything is gone when it is closed. For
        tests and short jobs. Its :attr:`path` is ``":memory:"``."""
        _c.config("memory", threshold, shingle, num_perm, bands, rows, simhash, store_text)
        _c.flag("memory", "containment", containment)
        policy = _c.clusters("memory", clusters)
        _c.flag("memory", "timestamps", timestamps)
        _c.count("memory", "cache_bytes", cache_bytes, True)
        _c.count("memory", "record_cache_bytes", record_cache_bytes, True)
        _c.count("memory", "kept_filter_bytes", kept_filter_bytes, True)
        _c.string("memory", "durability", durability)
        return cls(
            _lshdb.Database.memory(
                threshold,
                shingle=shingle,
                num_perm=num_perm,
                bands=bands,
                rows=rows,
                simhash=simhash,
                store_text=store_text,
                containment=containment,
                clusters=policy,
                cache_bytes=cache_bytes,
                record_cache_bytes=record_cache_bytes,
                kept_filter_bytes=kept_filter_bytes,
                durability=durability,
                timestamps=timestamps,
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
        kept_filter_bytes: Optional[int] = None,
        expect: Optional[Mapping[str, Any]] = None,
        durability: Durability = "immediate",
        create: bool = False,
        threshold: Optional[float] = None,
        shingle: Optional[str] = None,
        num_perm: Optional[int] = None,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        simhash: Optional[int] = None,
        store_text: Optional[bool] = None,
        containment: Optional[bool] = None,
        clusters: Union[bool, str, None] = None,
        timestamps: Optional[bool] = None,
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
        records for queries) default to 64 MiB each; ``kept_filter_bytes``
        (the whole run filters a file with clusters keeps for their upkeep)
        to 384 MiB. ``expect`` is a dict of
        :meth:`create`'s configuration arguments (missing ones take their
        defaults) that the stored configuration must equal, or
        :class:`ConfigMismatch` names the first field that differs.
        ``durability="none"``: see :meth:`flush`.

        ``create=True`` creates the file first when it does not exist, with
        the configuration arguments ``threshold=`` ... ``containment=``,
        ``clusters=`` and ``timestamps=`` (those not given take
        :meth:`create`'s defaults); when it exists,
        its settings must equal that configuration or
        :class:`ConfigMismatch` is raised. The configuration arguments need
        ``create=True``.

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
        _c.count("open", "kept_filter_bytes", kept_filter_bytes, True)
        _c.optional_mapping("open", "expect", expect)
        if expect is not None:
            _c.expect(expect)
        _c.string("open", "durability", durability)
        _c.flag("open", "create", create)
        _c.open_config(threshold, shingle, num_perm, bands, rows, simhash, store_text, containment)
        policy = _c.clusters("open", clusters)
        if timestamps is not None:
            _c.flag("open", "timestamps", timestamps)
        return cls(
            _lshdb.Database.open(
                path,
                read_only=read_only,
                wait=wait,
                cache_bytes=cache_bytes,
                record_cache_bytes=record_cache_bytes,
                kept_filter_bytes=kept_filter_bytes,
                expect=None if expect is None else dict(expect),
                durability=durability,
                create=create,
                threshold=threshold,
                shingle=shingle,
                num_perm=num_perm,
                bands=bands,
                rows=rows,
                simhash=simhash,
                store_text=store_text,
                containment=containment,
                clusters=policy,
                timestamps=timestamps,
            )
        )

    def close(self) -> None:
        """Closes the file (waiting for running calls). Idempotent."""
        self._db.close()

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

    @property
    def durability(self) -> str:
        """``"immediate"`` or ``"none"``, as opened (see :meth:`flush`)."""
        return self._db.durability

    def flush(self) -> None:
        """Makes every commit so far durable (one durable commit).

        With ``durability="none"`` (an option of :meth:`create`,
        :meth:`open` and :meth:`memory`) each write commits as usual —
        atomic, and visible at once to this process — but reaches the disk
        only with the next durable commit: ``flush()``, :meth:`close` (also
        at the end of a ``with`` block), :meth:`compact` or
        :meth:`rebuild`. A crash of the process or the machine loses every
        write since the last of those, and leaves the file as it was then:
        consistent, never half-written. Such a file is opened by this
        process alone (not even read-only by another) until it is closed.
        With the default ``"immediate"`` every write is durable on return
        and ``flush()`` changes nothing."""
        self._db.flush()

    def sketcher(self) -> Sketcher:
        """A :class:`Sketcher` with exactly this database's settings."""
        return Sketcher._wrap(self._db.sketcher())
