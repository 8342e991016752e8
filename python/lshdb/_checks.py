"""Type checks of the public API's arguments.

A wrong type raises :class:`InvalidType` (an ``LshdbError`` and a
``TypeError``) naming the call and the argument — ``insert(): argument
`key` must be str, not int`` — before the native module sees it, whose own
conversion errors name neither. A count out of range (a negative
``limit``) raises :class:`InvalidInput` the same way. Each check is one
``type()`` test on the common path.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping
from typing import NoReturn, Optional, Tuple

import numpy as np

from ._errors import InvalidInput, InvalidType


def type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def fail(func: str, name: str, want: str, value: object) -> NoReturn:
    """Raises InvalidType for argument ``name`` of ``func``."""
    raise InvalidType(f"{func}(): argument `{name}` must be {want}, not {type_name(value)}")


def string(func: str, name: str, value: object, optional: bool = False) -> None:
    """``value`` is a str (or None when ``optional``)."""
    if type(value) is str or isinstance(value, str) or (optional and value is None):
        return
    fail(func, name, "str or None" if optional else "str", value)


def real(func: str, name: str, value: object, optional: bool = False) -> None:
    """``value`` is a real number, not a bool (or None when ``optional``)."""
    if type(value) is float or (optional and value is None):
        return
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        fail(func, name, "a number or None" if optional else "a number", value)


def count(func: str, name: str, value: object, optional: bool = False, bits: int = 64) -> None:
    """``value`` is an int from 0 to 2**bits - 1, not a bool (or None when
    ``optional``)."""
    if optional and value is None:
        return
    if type(value) is not int and (not isinstance(value, numbers.Integral) or isinstance(value, bool)):
        fail(func, name, "an int or None" if optional else "an int", value)
    number = int(value)
    if not 0 <= number < 1 << bits:
        raise InvalidInput(f"{func}(): argument `{name}` must be an int from 0 to {(1 << bits) - 1}, got {number}")


def priority(func: str, name: str, value: object) -> None:
    """``value`` is an int from -2**63 to 2**63 - 1, not a bool: a
    document's priority (``clusters="priority"``)."""
    if type(value) is not int and (not isinstance(value, numbers.Integral) or isinstance(value, bool)):
        fail(func, name, "an int", value)
    number = int(value)
    if not -(1 << 63) <= number < 1 << 63:
        raise InvalidInput(f"{func}(): argument `{name}` must be an int from {-(1 << 63)} to {(1 << 63) - 1}, got {number}")


def flag(func: str, name: str, value: object) -> None:
    """``value`` is a bool (Python's or NumPy's)."""
    if type(value) is not bool and not isinstance(value, np.bool_):
        fail(func, name, "a bool", value)


def path(func: str, name: str, value: object) -> None:
    """``value`` is a file path: a str or an ``os.PathLike`` of str."""
    if isinstance(value, str):
        return
    if isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        return
    fail(func, name, "str or os.PathLike", value)


def optional_mapping(func: str, name: str, value: object) -> None:
    """``value`` is a mapping or None."""
    if value is not None and not isinstance(value, Mapping):
        fail(func, name, "a dict or None", value)


def what(func: str, name: str) -> str:
    """How errors about a batch argument start: ``f(): argument `x```."""
    return f"{func}(): argument `{name}`"


def config(
    func: str,
    threshold: object,
    shingle: object,
    num_perm: object,
    bands: object,
    rows: object,
    simhash: object,
    store_text: object,
    arg: str = "{}",
) -> None:
    """The types of :meth:`Database.create`'s (and :class:`Sketcher`'s)
    configuration arguments; ``arg`` formats their names."""
    real(func, arg.format("threshold"), threshold)
    string(func, arg.format("shingle"), shingle)
    count(func, arg.format("num_perm"), num_perm)
    count(func, arg.format("bands"), bands, True)
    count(func, arg.format("rows"), rows, True)
    count(func, arg.format("simhash"), simhash, True, bits=32)
    flag(func, arg.format("store_text"), store_text)


def expect(values: Mapping[str, object]) -> None:
    """The types of the values of :meth:`Database.open`'s ``expect``."""
    d = dict(values)
    config(
        "open",
        d.get("threshold", 0.8),
        d.get("shingle", "char:5"),
        d.get("num_perm", 128),
        d.get("bands"),
        d.get("rows"),
        d.get("simhash"),
        d.get("store_text", False),
        arg="expect['{}']",
    )
    flag("open", "expect['containment']", d.get("containment", False))
    flag("open", "expect['timestamps']", d.get("timestamps", False))


def query(func: str, threshold: object, limit: object, max_bucket: object) -> None:
    """The types of a query's ``threshold``, ``limit`` and ``max_bucket``."""
    real(func, "threshold", threshold, True)
    count(func, "limit", limit, True)
    count(func, "max_bucket", max_bucket, True)


def open_config(*values: object) -> None:
    """The types of :meth:`Database.open`'s configuration arguments
    (threshold, shingle, num_perm, bands, rows, simhash, store_text,
    containment), each optional."""
    threshold, shingle, num_perm, bands, rows, simhash, store_text, containment = values
    real("open", "threshold", threshold, True)
    string("open", "shingle", shingle, True)
    count("open", "num_perm", num_perm, True)
    count("open", "bands", bands, True)
    count("open", "rows", rows, True)
    count("open", "simhash", simhash, True, bits=32)
    for name, value in (("store_text", store_text), ("containment", containment)):
        if value is not None:
            flag("open", name, value)


#: What ``insert_unique_many(duplicate_of=)`` takes: the first
#: near-duplicate found, or the most similar (``lshdb dedup --duplicate-of``).
DUPLICATE_OF = ("first", "best")


def choice(func: str, name: str, value: object, choices: Tuple[str, ...]) -> None:
    """A string among ``choices``: InvalidType for another type,
    InvalidInput for another string."""
    want = " or ".join(repr(c) for c in choices)
    string(func, name, value)
    if value not in choices:
        raise InvalidInput(f"{func}(): argument `{name}` must be {want}, got {value!r}")


#: The representative policies clusters take (``docs/clusters.md``).
CLUSTER_POLICIES = ("first", "longest", "smallest-key", "priority")


def clusters(func: str, value: object) -> Optional[str]:
    """``clusters=``: False or None (none), True (policy ``"first"``) or a
    policy's name; returns the name, or None."""
    if value is None or value is False:
        return None
    if value is True:
        return "first"
    if isinstance(value, str):
        if value not in CLUSTER_POLICIES:
            raise InvalidInput(
                f"{func}(): clusters={value!r} is not a policy: use True, "
                + ", ".join(repr(p) for p in CLUSTER_POLICIES)
            )
        return value
    fail(func, "clusters", "a bool or a policy name (str)", value)
