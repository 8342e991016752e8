"""datasketch's module ``datasketch.lean_minhash``: ``from lshdb.datasketch.lean_minhash
import ...`` works where ``from datasketch.lean_minhash import ...`` did. It only
re-exports."""

from ._minhash import LeanMinHash

__all__ = ["LeanMinHash"]
