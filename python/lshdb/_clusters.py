"""The :class:`Database` methods of the maintained near-duplicate clusters
(``docs/clusters.md``): the cluster of a key, a cluster by id, its
members, every cluster and every document with its cluster (all three
streamed), and an insert that reports the cluster the document joined."""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

from . import _checks as _c
from . import _keys
from ._handle import Handle
from ._keys import Key
from ._results import Cluster, DocumentCluster

__all__ = ["Clusters"]


class Clusters(Handle):
    """Reading the maintained clusters (files created with
    ``clusters=True``, or rebuilt with it)."""

    __slots__ = ()

    def _cluster(self, raw: Optional[Tuple[int, str, int]]) -> Optional[Cluster]:
        if raw is None:
            return None
        return Cluster(raw[0], _keys.decode(self, raw[1]), raw[2])

    def cluster_of(self, key: Key) -> Optional[Cluster]:
        """The cluster of the document under ``key`` (every stored document
        is in one, of one member when it has no near-duplicate), or None
        when no document is stored under it. Raises :class:`InvalidInput`
        when the file keeps no clusters."""
        return self._cluster(self._db.cluster_of(_keys.read(self, key, "cluster_of()")))

    def cluster(self, id: int) -> Optional[Cluster]:
        """Cluster ``id``, or the cluster it merged into; None when it is
        gone (all its documents removed)."""
        _c.count("cluster", "id", id)
        return self._cluster(self._db.cluster(id))

    def members(self, id: int) -> Iterator[Key]:
        """The keys of cluster ``id`` (or of the cluster it merged into),
        in the order they were stored, streamed from one snapshot."""
        _c.count("members", "id", id)
        decode = _keys.decoder(self)
        stream: Iterator[str] = self._db.members(id)
        return iter(stream) if decode is None else map(decode, stream)

    def clusters(self) -> Iterator[Cluster]:
        """Every cluster as :class:`Cluster` (id, representative, size), in
        id order, streamed from one snapshot (memory stays bounded);
        clusters of one member included."""
        return (Cluster(i, _keys.decode(self, r), n) for i, r, n in self._db.clusters())

    def document_clusters(self) -> Iterator[DocumentCluster]:
        """Every stored document as :class:`DocumentCluster` (key, its
        :class:`Cluster`, its similarity to the cluster's representative),
        in id order (the order the documents were stored in), streamed
        from one snapshot (memory stays bounded): the cluster of every
        document without a :meth:`cluster_of` per key."""
        decode = _keys.decoder(self) or str
        return (
            DocumentCluster(decode(k), Cluster(i, decode(r), n), s)
            for k, i, r, n, s in self._db.document_clusters()
        )

    def insert_clustered(self, key: Key, text: str) -> Optional[Cluster]:
        """:meth:`insert`, returning the cluster the document joined (or
        founded); None when the file keeps no clusters."""
        _c.string("insert_clustered", "text", text)
        raw = self._db.insert_clustered(_keys.write(self, key, "insert_clustered()"), text)
        return self._cluster(raw)
