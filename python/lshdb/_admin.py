"""Maintenance of a :class:`Database`: stats, check, compact, rebuild,
and its labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Union, cast

from . import _checks as _c
from ._handle import Handle
from ._labels import Labels

if TYPE_CHECKING:
    from ._database import Database


class Maintenance(Handle):
    """Stats, checks, compaction, re-banding and labels."""

    __slots__ = ()

    def stats(self, *, deep: bool = False) -> Dict[str, Any]:
        """Document count, file length (``file_bytes``) and size on disk
        (``allocated_bytes``), and where the postings are stored (``runs``,
        ``run_postings``, ``fresh_postings``, ``simhash_postings``,
        ``containment_postings``): counts the file keeps, so this answers at
        once at any size. ``deep=True`` adds ``mean_shingles``, ``buckets``,
        ``postings``, ``histogram`` (buckets per power of two of their size)
        and ``largest`` (``(band, key, documents)``), which read every
        signature and posting: seconds at millions of documents."""
        _c.flag("stats", "deep", deep)
        return self._db.stats(deep=deep)

    def check(self, *, pages: bool = False) -> Dict[str, Any]:
        """Walks the whole file without changing it (works read-only and
        beside a writer): ``{"clean", "documents", "postings", "problems",
        ...}``. ``pages=True`` also checks every page checksum (needs a
        writable handle; waits for running calls)."""
        _c.flag("check", "pages", pages)
        return self._db.check(pages=pages)

    def compact(self) -> bool:
        """Reclaims the space of deleted data; True when anything moved.
        Waits for running calls."""
        return self._db.compact()

    def rebuild(
        self,
        threshold: Optional[float] = None,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
        *,
        containment: Optional[bool] = None,
        clusters: Union[bool, str, None] = None,
        timestamps: Optional[bool] = None,
    ) -> None:
        """Re-bands the index for a new ``threshold`` (``bands`` and
        ``rows``, both or neither, override the tuner), and/or builds
        (``containment=True``) or drops (``containment=False``) the
        containment index that ``query(containment=t)`` needs, from the
        stored signatures and shingle sets (no input is re-read), and/or
        builds (``timestamps=True``: every stored document is stamped with
        the time of the rebuild; a file that has the index keeps its
        stamps) or drops (``timestamps=False``) the time index that
        :meth:`expire` walks. ``clusters=True`` (or a representative
        policy, see :meth:`create`) builds the maintained clusters, with
        new ids; ``clusters=False`` drops them. Give at least one of them.
        Waits for running calls; its commits are durable whatever the
        handle's durability."""
        _c.real("rebuild", "threshold", threshold, True)
        _c.count("rebuild", "bands", bands, True)
        _c.count("rebuild", "rows", rows, True)
        if containment is not None:
            _c.flag("rebuild", "containment", containment)
        if timestamps is not None:
            _c.flag("rebuild", "timestamps", timestamps)
        policy = None if clusters is None else (_c.clusters("rebuild", clusters) or "off")
        self._db.rebuild(
            threshold,
            bands,
            rows,
            containment=containment,
            clusters=policy,
            timestamps=timestamps,
        )

    @property
    def labels(self) -> Labels:
        """Small named strings stored next to the documents:
        ``db.labels["source"] = "crawl-7"``."""
        return Labels(cast("Database", self))
