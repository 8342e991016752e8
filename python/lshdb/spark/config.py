"""The settings a Spark job shares with an lshdb file: shingling, MinHash
and banding. A :class:`Config` is plain data (it travels to executors by
pickling) and resolves to the same :class:`lshdb.Sketcher` a database with
those settings uses, so band keys and shingle sets made on a cluster equal
those the file stores."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, Optional, Union

from .. import Database, InvalidInput, Sketcher
from .. import _checks as _c

#: The stored settings that must agree for a Spark job and a file to make
#: the same values (the tuner's choice of bands and rows included).
_COMPARED = ("shingle", "whitespace", "shingle_seed", "scheme", "num_perm", "minhash_seed", "bands", "rows")


@dataclasses.dataclass(frozen=True)
class Config:
    """Sketch settings, as :meth:`lshdb.Database.create` and
    :class:`lshdb.Sketcher` take them. ``bands``/``rows`` of ``None`` let
    the tuner choose them for ``threshold`` (as the database does)."""

    threshold: float = 0.8
    shingle: str = "char:5"
    num_perm: int = 128
    bands: Optional[int] = None
    rows: Optional[int] = None
    shingle_seed: Optional[int] = None
    minhash_seed: Optional[int] = None

    def __post_init__(self) -> None:
        _c.real("Config", "threshold", self.threshold)
        _c.string("Config", "shingle", self.shingle)
        _c.count("Config", "num_perm", self.num_perm)
        _c.count("Config", "bands", self.bands, True)
        _c.count("Config", "rows", self.rows, True)
        _c.count("Config", "shingle_seed", self.shingle_seed, True, bits=32)
        _c.count("Config", "minhash_seed", self.minhash_seed, True)

    def sketcher(self) -> Sketcher:
        """The kernels of these settings."""
        return Sketcher(
            self.shingle,
            self.num_perm,
            self.threshold,
            self.bands,
            self.rows,
            shingle_seed=self.shingle_seed,
            minhash_seed=self.minhash_seed,
        )

    def resolved(self) -> Config:
        """The same settings with the tuner's bands and rows and the seeds
        filled in (what a database file would store)."""
        s = self.sketcher().settings
        return dataclasses.replace(
            self,
            bands=int(s["bands"]),
            rows=int(s["rows"]),
            shingle_seed=int(s["shingle_seed"]),
            minhash_seed=int(s["minhash_seed"]),
        )

    def same_values(self, other: Config) -> bool:
        """Whether both make the same sets and band keys (the threshold
        may differ: it only chose bands and rows)."""
        a, b = self.resolved(), other.resolved()
        return (a.shingle, a.num_perm, a.bands, a.rows, a.shingle_seed, a.minhash_seed) == (
            b.shingle,
            b.num_perm,
            b.bands,
            b.rows,
            b.shingle_seed,
            b.minhash_seed,
        )

    @classmethod
    def from_settings(cls, settings: Dict[str, Any]) -> Config:
        """The settings of ``Database.settings`` or ``Sketcher.settings``;
        raises :class:`lshdb.InvalidInput` when they are ones a
        :class:`Sketcher` cannot reproduce (a file made by the CLI with
        another white-space rule or MinHash scheme)."""
        config = cls(
            threshold=float(settings["threshold"]),
            shingle=str(settings["shingle"]),
            num_perm=int(settings["num_perm"]),
            bands=int(settings["bands"]),
            rows=int(settings["rows"]),
            shingle_seed=int(settings["shingle_seed"]),
            minhash_seed=int(settings["minhash_seed"]),
        )
        made = config.sketcher().settings
        differ = [k for k in _COMPARED if made.get(k) != settings.get(k)]
        if differ:
            raise InvalidInput(
                f"lshdb.spark: settings {differ} cannot be reproduced by a Sketcher "
                f"(stored {[settings.get(k) for k in differ]}, would make {[made.get(k) for k in differ]})"
            )
        return config

    @classmethod
    def from_database(cls, db: Union[Database, str, "os.PathLike[str]"]) -> Config:
        """The settings stored in a database file (a path or an open
        :class:`lshdb.Database`)."""
        if isinstance(db, Database):
            return cls.from_settings(db.settings)
        with Database.open(db, read_only=True) as opened:
            return cls.from_settings(opened.settings)

    def create_database(self, path: Union[str, "os.PathLike[str]"], *, store_text: bool = False) -> Database:
        """A new database file with exactly these settings (raises
        :class:`lshdb.InvalidInput` for non-default seeds, which
        ``Database.create`` does not take)."""
        r = self.resolved()
        default = Config(threshold=self.threshold, shingle=self.shingle, num_perm=self.num_perm).resolved()
        if (r.shingle_seed, r.minhash_seed) != (default.shingle_seed, default.minhash_seed):
            raise InvalidInput("lshdb.spark: a database can only be created with the default seeds")
        return Database.create(
            path,
            self.threshold,
            shingle=self.shingle,
            num_perm=self.num_perm,
            bands=r.bands,
            rows=r.rows,
            store_text=store_text,
        )
