"""datasketch's choice of LSH bands ``b`` and rows ``r``: the pair that
minimises the weighted sum of the false-positive and false-negative
probability mass around the threshold (``MinHashLSH(weights=...)``).

datasketch integrates with SciPy; this integrates the same curves with
Simpson's rule in NumPy, so that ``MinHashLSH(...).b`` and ``.r`` are
datasketch's without a SciPy dependency.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Tuple

import numpy as np

__all__ = ["optimal_param"]

_POINTS = 513  # odd, for Simpson's rule


def _integral(lo: float, hi: float, b: int, r: int, negative: bool) -> float:
    """∫ of the collision probability (or its complement) from lo to hi."""
    if hi <= lo:
        return 0.0
    s = np.linspace(lo, hi, _POINTS)
    p = 1.0 - (1.0 - s ** float(r)) ** float(b)
    y = 1.0 - p if negative else p
    h = (hi - lo) / (_POINTS - 1)
    return float(h / 3.0 * (y[0] + y[-1] + 4.0 * y[1:-1:2].sum() + 2.0 * y[2:-1:2].sum()))


@lru_cache(maxsize=256)
def optimal_param(threshold: float, num_perm: int, fp_weight: float, fn_weight: float) -> Tuple[int, int]:
    """``(b, r)`` with ``b * r <= num_perm`` minimising
    ``fp_weight * P(false positive) + fn_weight * P(false negative)``."""
    best, opt = float("inf"), (0, 0)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = _integral(0.0, threshold, b, r, False)
            fn = _integral(threshold, 1.0, b, r, True)
            error = fp * fp_weight + fn * fn_weight
            if error < best:
                best, opt = error, (b, r)
    return opt
