"""The :class:`Database` handle, assembled from one mixin per area:
opening and creating files (``_open``), writes (``_write``), reads,
queries, pairs and groups (``_read``), maintenance (``_admin``), the
maintained clusters (``_clusters``), timestamps and expiry
(``_expire``). Each
method checks its arguments' types (``_checks``), converts its inputs
(``_inputs``), calls the native module with the GIL released, and wraps
what comes back in the result types (``_results``)."""

from __future__ import annotations

from ._admin import Maintenance
from ._clusters import Clusters
from ._expire import Expiry
from ._open import Opening
from ._read import Reads
from ._write import Writes

__all__ = ["Database"]


class Database(Opening, Writes, Reads, Maintenance, Clusters, Expiry):
    """A persistent near-duplicate index in one file.

    Create one with :meth:`create`, open one with :meth:`open`; use it as a
    context manager or call :meth:`close`. After ``close`` every call raises
    :class:`DatabaseClosed`. One process may write a file while others open
    it with ``read_only=True``. Each single write is durable on return.
    """

    __slots__ = ()
