"""datasketch's module ``datasketch.lsh``: ``from lshdb.datasketch.lsh
import ...`` works where ``from datasketch.lsh import ...`` did. It only
re-exports."""

from ._lsh import MinHashLSH, MinHashLSHDeletionSession, MinHashLSHInsertionSession

__all__ = ["MinHashLSH", "MinHashLSHInsertionSession", "MinHashLSHDeletionSession"]
