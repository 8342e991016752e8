"""datasketch's module ``datasketch.lshensemble``: ``from lshdb.datasketch.lshensemble
import ...`` works where ``from datasketch.lshensemble import ...`` did. It only
re-exports."""

from ._ensemble import MinHashLSHEnsemble

__all__ = ["MinHashLSHEnsemble"]
