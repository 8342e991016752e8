"""datasketch's module ``datasketch.hashfunc``: ``from lshdb.datasketch.hashfunc
import ...`` works where ``from datasketch.hashfunc import ...`` did. It only
re-exports."""

from ._minhash import sha1_hash32

__all__ = ["sha1_hash32"]
