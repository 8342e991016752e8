"""datasketch's weighted MinHash names, so that imports of them work; using
them raises :class:`NotImplementedError`: lshdb verifies plain Jaccard and
containment, not weighted Jaccard (see docs/datasketch.md)."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["WeightedMinHash", "WeightedMinHashGenerator"]


def _unsupported(name: str) -> NoReturn:
    raise NotImplementedError(
        f"{name}: lshdb.datasketch has no weighted MinHash (weighted Jaccard); "
        "use MinHash, whose answers lshdb verifies (docs/datasketch.md)"
    )


class WeightedMinHash:
    """Not supported: raises :class:`NotImplementedError`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _unsupported("WeightedMinHash")


class WeightedMinHashGenerator:
    """Not supported: raises :class:`NotImplementedError`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _unsupported("WeightedMinHashGenerator")
