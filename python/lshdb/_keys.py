"""Keys are ``str`` or ``int``: the one place they are encoded for the
native module and decoded from its answers.

An ``int`` key is stored as its decimal text (``42`` → ``"42"``, ``-7`` →
``"-7"``), and the file records, in the reserved label ``python.keys``
(value ``"int"``), that its keys are ints; answers from such a file carry
``int`` keys again. The label is set by the first write of an ``int`` key
to a file that holds no document. A file's keys are all ``str`` or all
``int``: a key of the other type raises :class:`InvalidInput` saying which
type the file takes (``get("42")`` on an int-keyed file included), and
``key in db`` is ``False`` for it, as for a dict. A stored key of an
int-keyed file that is not a decimal integer (written by the CLI, say)
comes back as ``str``.

Every method of :class:`Database` and :class:`Batch` calls :func:`write`
(a key to store), :func:`read` (a key to look up), :func:`column` (many
keys) or :func:`decode` / :func:`hits` (keys in answers); a handle caches
its file's key type once it is known.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from ._errors import InvalidInput, InvalidType
from ._inputs import TextBatch, texts as _texts
from ._results import Hit, Key

if TYPE_CHECKING:
    from ._handle import Handle

__all__ = ["Key", "LABEL", "write", "read", "matches", "column", "as_list", "pairs", "decode", "decoder", "hits", "kind"]

#: The label that records an int-keyed file (value ``"int"``).
LABEL = "python.keys"


def kind(h: Handle) -> Optional[str]:
    """``"int"`` or ``"str"``: the file's key type; ``None`` while it holds
    no document and no int key was written (either type may come)."""
    known: Optional[str] = h._keys
    if known is not None:
        return known
    if h._db.get_label(LABEL) == "int":
        h._keys = "int"
    elif h._db.len() > 0:
        h._keys = "str"
    return h._keys


def _is_int(key: object) -> bool:
    return isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_))


def _mismatch(what: str, key: object, stored: str) -> InvalidInput:
    other = "int" if stored == "str" else "str"
    hint = f"pass {int(key)!r}" if stored == "int" and isinstance(key, str) and _decimal(key) else ""
    hint = hint or ("pass str(key)" if stored == "str" else "int and str keys cannot mix in one file")
    return InvalidInput(f"{what}: this database's keys are {stored}, and {key!r} is {other} ({hint})")


def _decimal(text: str) -> bool:
    try:
        return str(int(text)) == text
    except ValueError:
        return False


def _checked(what: str, key: object, name: str = "key") -> None:
    if not isinstance(key, str) and not _is_int(key):
        kind = "None" if key is None else type(key).__name__
        raise InvalidType(f"{what}: argument `{name}` must be str or int, not {kind}")


def as_list(keys: Any, what: str) -> List[Any]:
    """A column of keys (list, tuple, NumPy, pyarrow, pandas, any
    iterable but a str) as a list of Python keys."""
    if isinstance(keys, (str, bytes)) or not isinstance(keys, Iterable):
        kind = "None" if keys is None else type(keys).__name__
        raise InvalidType(f"{what} must be a column of keys, not {kind}")
    if isinstance(keys, list):
        return keys
    tolist = getattr(keys, "to_pylist", None) or getattr(keys, "tolist", None)
    return list(tolist()) if tolist is not None else list(keys)


def _as_stored(key: object, what: str, stored: Optional[str]) -> str:
    """A checked ``key`` as a file whose key type is ``stored`` holds it,
    or :class:`InvalidInput` when it is of the other type."""
    if isinstance(key, str):
        if stored == "int":
            raise _mismatch(what, key, "int")
        return key
    if stored == "str":
        raise _mismatch(what, key, "str")
    return str(int(key))  # type: ignore[call-overload]


def write(h: Handle, key: object, what: str) -> str:
    """``key`` as stored; the first int key to a file with no document
    makes it int-keyed."""
    _checked(what, key)
    stored = kind(h)
    text = _as_stored(key, what, stored)
    if stored is None and not isinstance(key, str):
        h._db.set_label(LABEL, "int")
        h._keys = "int"
    return text


def read(h: Handle, key: object, what: str) -> str:
    """``key`` as stored, for a look-up (changes nothing)."""
    _checked(what, key)
    return _as_stored(key, what, kind(h))


def matches(h: Handle, key: object) -> Optional[str]:
    """``key`` as stored when it has the file's key type, else None (for
    ``in``, which answers False rather than raising)."""
    if not isinstance(key, str) and not _is_int(key):
        return None
    stored = kind(h)
    if isinstance(key, str):
        return None if stored == "int" else key
    return None if stored == "str" else str(int(key))  # type: ignore[call-overload]


def _int_column(keys: Any) -> Optional[List[Any]]:
    """The keys as a list when they are a column of ints (NumPy, pyarrow,
    pandas), else None."""
    if isinstance(keys, np.ndarray) and keys.dtype.kind in "iu":
        return list(keys.tolist())
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(keys, (pa.Array, pa.ChunkedArray)) and pa.types.is_integer(keys.type):
        return list(keys.to_pylist())
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(keys, (pd.Series, pd.Index)) and keys.dtype.kind in "iu":
        return list(keys.tolist())
    return None


def column(h: Handle, keys: Any, what: str) -> TextBatch:
    """Many keys to store: a list (or any column :func:`_inputs.texts`
    takes) of str, or of int (also NumPy, pyarrow and pandas integer
    columns), not both."""
    ints = _int_column(keys)
    all_str = isinstance(keys, list) and all(type(k) is str for k in keys)
    if ints is None and not all_str and isinstance(keys, (list, tuple)):
        for i, k in enumerate(keys):
            if not isinstance(k, str) and not _is_int(k):
                raise InvalidType(f"{what}: element {i} is {type(k).__name__}, not str or int")
        if any(isinstance(k, str) for k in keys):
            raise InvalidInput(f"{what}: the keys mix str and int; one file takes one type")
        ints = list(keys)
    if ints is None:
        batch = keys if all_str else _texts(keys, what)
        n = len(batch) if isinstance(batch, list) else len(batch[0]) - 1
        if n and kind(h) == "int":
            raise InvalidInput(f"{what}: this database's keys are int, and these keys are str")
        return batch
    if not ints:
        return []
    write(h, ints[0], what)
    return [str(int(k)) for k in ints]


def pairs(h: Handle, docs: Iterable[Any], what: str) -> Iterator[Any]:
    """(key, document) pairs with their keys encoded, lazily; other
    shapes pass through for the native module to reject. The file's key
    type is checked once, at the first pair."""
    seen: Optional[type] = None
    for pair in docs:
        if isinstance(pair, tuple) and len(pair) == 2 and (isinstance(pair[0], str) or _is_int(pair[0])):
            now = str if isinstance(pair[0], str) else int
            if seen is None:
                write(h, pair[0], what)  # checks (and for an int, may set) the file's type
                seen = now
            elif now is not seen:
                raise InvalidInput(f"{what}: the keys mix str and int; one file takes one type")
            yield pair if now is str else (str(int(pair[0])), pair[1])
        else:
            yield pair


def decode(h: Handle, key: str) -> Key:
    """A stored key as the API returns it."""
    if h._keys == "str" or kind(h) != "int":
        return key
    return _int_or_text(key)


def decoder(h: Handle) -> Optional[Callable[[str], Key]]:
    """:func:`decode` bound to ``h``, or ``None`` when keys are str (no
    work to do)."""
    if kind(h) != "int":
        return None
    return _int_or_text


def _int_or_text(key: str) -> Key:
    return int(key) if _decimal(key) else key


def hits(h: Handle, raw: List[Tuple[str, float]]) -> List[Hit]:
    """The native ``(key, similarity)`` tuples as :class:`Hit`, keys
    decoded. ``query_many`` should build its hits with this."""
    if kind(h) != "int":
        return [Hit(k, s) for k, s in raw]
    return [Hit(decode(h, k), s) for k, s in raw]
