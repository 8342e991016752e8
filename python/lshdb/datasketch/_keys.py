"""datasketch keys (any hashable) to lshdb keys (str) and back.

A ``str`` key is stored as itself, so the file reads naturally with the
``lshdb`` CLI; every other key is stored behind a NUL character, which no
ordinary text key starts with: ``"\\0i:42"`` for an ``int``, ``"\\0b:6869"``
(hex) for ``bytes``, ``"\\0p:<base64>"`` (a pickle) for anything else, such
as a tuple; a str that is empty or starts with NUL is ``"\\0s:<itself>"``.
The mapping is one-to-one, so every key comes back as the value that went
in. Pickled keys must pickle the same way every time (tuples of str, int,
bytes do; a frozenset of str does not), and unpickling runs code, so open
only files you trust.
"""

from __future__ import annotations

import base64
import pickle
from typing import Hashable

from .. import MAX_KEY_BYTES

__all__ = ["encode", "decode"]

_TAG = "\0"


def encode(key: object) -> str:
    """The lshdb key for ``key``; ``TypeError`` when it is not hashable,
    ``ValueError`` when it is longer than lshdb takes."""
    stored = _encode(key)
    if len(stored.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise ValueError(f"the key {key!r:.60} is stored in more than {MAX_KEY_BYTES} bytes, the longest lshdb key")
    return stored


def _encode(key: object) -> str:
    try:
        hash(key)
    except TypeError:
        raise TypeError(f"keys must be hashable, not {type(key).__name__}") from None
    if type(key) is str:
        return key if key and not key.startswith(_TAG) else f"{_TAG}s:{key}"
    if type(key) is int:
        return f"{_TAG}i:{key}"
    if type(key) is bytes:
        return f"{_TAG}b:{key.hex()}"
    return f"{_TAG}p:" + base64.b64encode(pickle.dumps(key, protocol=4)).decode("ascii")


def decode(stored: str) -> Hashable:
    """The key :func:`encode` made ``stored`` from."""
    if not stored.startswith(_TAG):
        return stored
    tag, body = stored[1:3], stored[3:]
    if tag == "s:":
        return body
    if tag == "i:":
        return int(body)
    if tag == "b:":
        return bytes.fromhex(body)
    if tag == "p:":
        value: Hashable = pickle.loads(base64.b64decode(body))
        return value
    raise ValueError(f"not a key this module stored: {stored!r}")
