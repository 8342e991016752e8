"""Turning the many shapes of Python input into what the native module
takes: a ``list[str]``, or an Arrow string array's buffers (int64 offsets,
uint8 data) handed over without one Python object per text."""

from __future__ import annotations

import sys
import os
from typing import Any, Iterable, List, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._errors import InvalidInput, InvalidType

Offsets = npt.NDArray[np.int64]
Data = npt.NDArray[np.uint8]
#: What the native kernels take.
TextBatch = Union[List[str], Tuple[Offsets, Data]]
#: One item of an item set (see :func:`item_bytes`).
Item = Union[str, bytes, int]
#: A file path, as ``Database.create`` and ``Database.open`` take it.
PathLike = Union[str, "os.PathLike[str]"]


def _is_string_view(pa: Any, t: Any) -> bool:
    """pyarrow >= 16 has string_view; older ones do not."""
    check = getattr(pa.types, "is_string_view", None)
    return bool(check(t)) if check is not None else False


def _is_text(pa: Any, t: Any) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t)) or _is_string_view(pa, t)


def _arrow_buffers(array: Any, what: str = "texts") -> TextBatch:
    """(offsets, data) of a pyarrow string, large_string or string_view
    array."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if _is_string_view(pa, array.type) or pa.types.is_large_string(array.type):
        array = array.cast(pa.large_string())
        width: Any = np.int64
    elif pa.types.is_string(array.type):
        width = np.int32
    else:
        raise InvalidType(f"{what}: expected a string array, got Arrow type {array.type}")
    if array.null_count:
        raise InvalidInput(f"{what}: the string array holds {array.null_count} null(s); drop or fill them first")
    _, offsets_buf, data_buf = array.buffers()
    n = len(array)
    offsets = np.frombuffer(offsets_buf, dtype=width, count=n + 1, offset=array.offset * np.dtype(width).itemsize)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return offsets.astype(np.int64, copy=False), data


def texts(obj: Any, what: str = "texts") -> TextBatch:
    """A batch of texts from a list, tuple, NumPy array (str or object),
    pyarrow array, pandas Series or any iterable of str. ``what`` names the
    argument in errors (``"query_many(): argument `texts`"``); a wrong type
    raises :class:`InvalidType`."""
    if isinstance(obj, (str, bytes)):
        raise InvalidType(f"{what}: expected a batch of texts, got one {type(obj).__name__} (wrap it in a list)")
    if isinstance(obj, list) and all(type(t) is str for t in obj):
        return obj
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(obj, (pa.Array, pa.ChunkedArray)):
        return _arrow_buffers(obj, what)
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, (pd.Series, pd.Index)):
        if pa is not None:
            try:
                arrow = pa.array(obj, from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                raise InvalidInput(f"{what}: {e}") from None
            if _is_text(pa, arrow.type):
                return _arrow_buffers(arrow, what)
        obj = obj.tolist()
    elif isinstance(obj, np.ndarray):
        if obj.ndim != 1:
            raise InvalidInput(f"{what}: expected a 1-d array, got shape {obj.shape}")
        obj = obj.tolist()
    try:
        out = list(obj) if not isinstance(obj, list) else obj
    except TypeError:
        raise InvalidType(f"{what}: expected a batch of texts, got {type(obj).__name__}") from None
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InvalidType(f"{what}: element {i} is {type(t).__name__}, not str")
    return out


def item_bytes(items: Iterable[Item], what: str = "items") -> List[bytes]:
    """Items as the bytes lshdb hashes: str as UTF-8, bytes as they are,
    int as the UTF-8 of its decimal text (so ``42`` and ``"42"`` are the
    same item, as they are in a JSON Lines file given to the CLI). ``what``
    names the argument in errors; a wrong type raises
    :class:`InvalidType`."""
    if isinstance(items, (str, bytes)):
        raise InvalidType(f"{what}: expected a collection of items, got one str/bytes (wrap it in a list)")
    try:
        iterator = iter(items)
    except TypeError:
        raise InvalidType(f"{what}: expected a collection of items, got {type(items).__name__}") from None
    out: List[bytes] = []
    for item in iterator:
        if isinstance(item, str):
            out.append(item.encode("utf-8"))
        elif isinstance(item, (bytes, bytearray, memoryview)):
            out.append(bytes(item))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            out.append(str(int(item)).encode("ascii"))
        else:
            raise InvalidType(f"{what}: {type(item).__name__} is not an item (use str, bytes or int)")
    return out


def item_sets(sets: Any, what: str) -> List[List[bytes]]:
    """A column of item sets as the native module takes them: each set
    through :func:`item_bytes`, errors naming the set (``what[i]``)."""
    if isinstance(sets, (str, bytes)) or not isinstance(sets, Iterable):
        raise InvalidType(f"{what}: expected a list of item sets, got {type(sets).__name__}")
    return [item_bytes(items, f"{what}[{i}]") for i, items in enumerate(sets)]
