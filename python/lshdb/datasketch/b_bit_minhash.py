"""datasketch's module ``datasketch.b_bit_minhash``: ``bBitMinHash`` is not
supported (it raises), but the import works. It only re-exports."""

from ._unsupported import bBitMinHash

__all__ = ["bBitMinHash"]
