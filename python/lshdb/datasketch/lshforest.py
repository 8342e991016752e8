"""datasketch's module ``datasketch.lshforest``: ``from lshdb.datasketch.lshforest
import ...`` works where ``from datasketch.lshforest import ...`` did. It only
re-exports."""

from ._forest import MinHashLSHForest

__all__ = ["MinHashLSHForest"]
