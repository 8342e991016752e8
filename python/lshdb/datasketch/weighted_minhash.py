"""datasketch's module ``datasketch.weighted_minhash``: ``from lshdb.datasketch.weighted_minhash
import ...`` works where ``from datasketch.weighted_minhash import ...`` did. It only
re-exports."""

from ._unsupported import WeightedMinHash, WeightedMinHashGenerator

__all__ = ["WeightedMinHash", "WeightedMinHashGenerator"]
