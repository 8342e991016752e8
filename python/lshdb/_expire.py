"""Timestamps and expiry of a :class:`Database`: each document's
timestamp (kept by the time index, ``Database.create(...,
timestamps=True)`` or ``db.rebuild(timestamps=True)``), and removing the
documents older than a time (``docs/expiry.md``)."""

from __future__ import annotations

import datetime as _dt
import numbers
import time
from typing import Dict, Optional, Union

import numpy as np

from . import _checks as _c
from . import _keys
from ._errors import InvalidInput
from ._handle import Handle
from ._results import Key

#: A time: a ``datetime`` (naive ones are local time, as
#: ``datetime.timestamp()`` takes them), or seconds since the Unix epoch.
Time = Union[_dt.datetime, int, float]


def epoch_seconds(func: str, name: str, value: object, ago: bool = False) -> int:
    """``value`` as whole seconds since the Unix epoch (fractions dropped):
    a ``datetime``, a number of seconds, or, when ``ago``, a ``timedelta``
    meaning that long before now."""
    if isinstance(value, _dt.datetime):
        seconds = value.timestamp()
    elif ago and isinstance(value, _dt.timedelta):
        seconds = time.time() - value.total_seconds()
    elif isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        seconds = float(value)
    else:
        want = "a datetime, a timedelta or a number of seconds" if ago else "a datetime or a number of seconds"
        _c.fail(func, name, want, value)
    if seconds != seconds or seconds >= 2**64:
        raise InvalidInput(f"{func}(): argument `{name}` is not a time lshdb can store: {value!r}")
    # Before 1970 there is nothing older: 0.
    return max(0, int(seconds))


class Expiry(Handle):
    """Timestamps and :meth:`expire`."""

    __slots__ = ()

    def timestamp(self, key: Key) -> Optional[int]:
        """The timestamp of the document under ``key``, in seconds since
        the Unix epoch (``None`` when no document is stored under it).
        Raises :class:`IndexDisabled` on a file without the time index."""
        return self._db.timestamp(_keys.read(self, key, "timestamp()"))

    def expire(self, older_than: Union[Time, _dt.timedelta], *, batch: Optional[int] = None) -> Dict[str, int]:
        """Removes every document stamped before ``older_than`` — a
        ``datetime``, seconds since the Unix epoch, or a ``timedelta``
        meaning "older than now − td" — oldest first, walking the time
        index (no scan), ``batch`` removals per commit (default 10,000):
        each commit is consistent, so a crash loses only the rest of the
        work. Returns ``{"removed": N, "commits": C}``. A document stamped
        exactly ``older_than`` stays. Raises :class:`IndexDisabled` on a
        file without the time index."""
        _c.count("expire", "batch", batch, True)
        at = epoch_seconds("expire", "older_than", older_than, ago=True)
        return self._db.expire(at, batch=batch)
