"""datasketch's module ``datasketch.minhash``: ``from lshdb.datasketch.minhash
import ...`` works where ``from datasketch.minhash import ...`` did. It only
re-exports."""

from ._minhash import MinHash

__all__ = ["MinHash"]
