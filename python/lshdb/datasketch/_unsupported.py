"""datasketch's names that lshdb.datasketch does not support — weighted
MinHash and b-bit MinHash — so that imports of them work; using them raises
:class:`NotImplementedError` (see docs/datasketch.md)."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["WeightedMinHash", "WeightedMinHashGenerator", "bBitMinHash"]


def _unsupported(name: str) -> NoReturn:
    raise NotImplementedError(
        f"{name}: lshdb.datasketch has no weighted or b-bit MinHash; "
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


class bBitMinHash:  # noqa: N801 -- datasketch's name
    """Not supported: raises :class:`NotImplementedError`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _unsupported("bBitMinHash")
