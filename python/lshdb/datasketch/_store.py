"""The lshdb database behind each datasketch class: in memory, or in a
file named by ``storage_config={"type": "lshdb", "path": ...}``.

:class:`Store` holds the database, turns datasketch keys into lshdb keys
(``_keys``) and back, and runs the three kinds of query the classes need:
verified Jaccard at a threshold, top-k and containment. In memory it also
keeps each key's set, for pickling and ``merge``; a file keeps only what
lshdb stores (hashes of each set), and a pickled file-backed object
reopens its file.

Memory is ``Database.memory``; a file is ``Database.open(path,
create=True, ...)``, which checks an existing file's settings.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Hashable, Iterable, Iterator, List, Literal, Mapping, NamedTuple, Optional, Tuple

from .. import Database, _errors
from .._open import Closes
from . import _keys

__all__ = ["Closing", "Store", "Storage", "parse_storage"]

Items = Tuple[int, ...]


class Storage(NamedTuple):
    """Where an index lives: a file (``path``) or memory (``path=None``)."""

    path: Optional[str] = None
    durability: Literal["immediate", "none"] = "immediate"


def parse_storage(storage_config: Optional[Mapping[str, Any]]) -> Storage:
    """The :class:`Storage` that ``storage_config`` names."""
    if storage_config is None:
        return Storage()
    if not isinstance(storage_config, Mapping):
        raise TypeError(f"storage_config must be a dict, not {type(storage_config).__name__}")
    kind = storage_config.get("type", "dict")
    if kind == "dict":
        return Storage()
    if kind != "lshdb":
        raise ValueError(
            f"storage_config type {kind!r} is not supported: lshdb.datasketch keeps its index in memory "
            '(no storage_config, or {"type": "dict"}) or in an lshdb file ({"type": "lshdb", "path": ...})'
        )
    path = storage_config.get("path")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f'storage_config["path"] must be a str or path, not {type(path).__name__}')
    durability = storage_config.get("durability", "immediate")
    if durability == "immediate" or durability == "none":
        return Storage(os.fspath(path), durability)
    raise ValueError(f'storage_config["durability"] must be "immediate" or "none", not {durability!r}')


class Closing(Closes):
    """``close()`` and ``with`` for a datasketch object that owns one
    :class:`Store` (its ``_store``)."""

    _store: "Store"

    def close(self) -> None:
        """Closes the lshdb database (a file-backed one: releases the file)."""
        self._store.close()


class Store:
    """One lshdb database for one datasketch object."""

    def __init__(self, storage: Storage, config: Dict[str, Any]) -> None:
        self.storage = storage
        self.config = dict(config)
        self.sets: Optional[Dict[str, Items]] = None if storage.path is not None else {}
        self.db = _memory(self.config) if storage.path is None else _open(storage, self.config)

    # -- pickling: a memory store travels with its sets, a file store by path

    def __getstate__(self) -> Dict[str, Any]:
        return {"storage": tuple(self.storage), "config": self.config, "sets": self.sets}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(Storage(*state["storage"]), state["config"])  # type: ignore[misc]
        if state["sets"]:
            self.insert_many(state["sets"].items())

    # -- writes

    def insert(self, key: str, items: Items) -> None:
        self.db.insert_items(key, items)
        if self.sets is not None:
            self.sets[key] = items

    def insert_many(self, pairs: Iterable[Tuple[str, Items]]) -> None:
        """Many documents on lshdb's bulk path (a commit per 32,768)."""
        pairs = list(pairs)
        if not pairs:
            return
        report = self.db.insert_many(keys=[k for k, _ in pairs], items=[list(i) for _, i in pairs])
        rejected = dict(report["rejected"])
        if self.sets is not None:
            self.sets.update((k, i) for k, i in pairs if k not in rejected)
        if rejected:
            key, reason = next(iter(rejected.items()))
            raise ValueError(f"{len(rejected)} set(s) could not be stored, the first ({key!r}): {reason}")

    def remove(self, key: str) -> bool:
        if self.sets is not None:
            self.sets.pop(key, None)
        return self.db.remove(key)

    # -- reads

    def __contains__(self, key: str) -> bool:
        return key in self.db

    def __len__(self) -> int:
        return len(self.db)

    def keys(self) -> Iterator[str]:
        return self.db.keys()

    def items_of(self, key: str) -> Items:
        """The set stored under ``key`` (memory only: a file keeps hashes of it)."""
        if self.sets is None:
            raise ValueError(
                "a file-backed index keeps hashes of each set, not the set: this needs the in-memory index"
            )
        return self.sets[key]

    def query(self, items: Items, threshold: float) -> List[Hashable]:
        """Keys whose set has verified Jaccard ≥ threshold, best first."""
        if not items:
            return []
        return [_keys.decode(str(h.key)) for h in self.db.query(items=items, threshold=max(threshold, 1e-9))]

    def top(self, items: Items, k: int) -> List[Hashable]:
        """The k keys of highest verified Jaccard (> 0) among the candidates."""
        if not items:
            return []
        return [_keys.decode(str(h.key)) for h in self.db.query(items=items, top=k)]

    def containment(self, items: Items, threshold: float) -> List[Hashable]:
        """Keys whose set holds at least ``threshold`` of the query's
        items (exact containment), most contained first."""
        if not items:
            return []
        hits = self.db.query(items=items, containment=max(threshold, 1e-9))
        return [_keys.decode(str(h.key)) for h in hits]

    def close(self) -> None:
        self.db.close()


# -- opening ---------------------------------------------------------------


def _create_args(config: Mapping[str, Any]) -> Dict[str, Any]:
    """``Database.create`` arguments for an item-set index."""
    keys = ("threshold", "num_perm", "bands", "rows", "containment")
    return {k: config[k] for k in keys if config.get(k) is not None}


def _open(storage: Storage, config: Dict[str, Any]) -> Database:
    """Opens the file, whose settings must be ``config``'s, or creates it."""
    path, durability = storage.path, storage.durability
    assert path is not None
    try:
        return Database.open(path, create=True, durability=durability, **_create_args(config))
    except _errors.ConfigMismatch as e:
        raise ValueError(f"{storage.path}: the file was made with other parameters ({e})") from e


def _memory(config: Dict[str, Any]) -> Database:
    """An in-memory database: no file, gone when closed."""
    return Database.memory(**_create_args(config))
