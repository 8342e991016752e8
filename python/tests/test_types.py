"""Every public call, given a wrong type for each of its arguments in
turn, raises ``lshdb.InvalidType`` (an ``LshdbError`` and a ``TypeError``)
whose message names the call and the argument.

The table below lists each public method with a valid value and the kind
of every argument; ``test_the_table_covers_the_whole_api`` fails when a
public method or argument is missing from it, so a new one must be added.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Tuple

import numpy as np
import pytest

import lshdb

#: Wrong values for each kind of argument.
BAD: Dict[str, List[Any]] = {
    "str": [1, b"key", None, ["a"]],
    "str?": [1, b"key", 2.5],
    "real": ["0.5", None, True, b"1"],
    "real?": ["0.5", True, [0.5]],
    "int": ["3", 1.5, None, True],
    "int?": ["3", 1.5, True],
    "flag": ["yes", None, 1],
    "path": [5, None, b"x.lshdb", 1.5],
    "items": [5, "one", b"one", [1.5], [None]],
    "texts": [5, "one", b"one", [1, 2], ["a", None], None],
    "texts?": [5, "one", b"one", [1, 2], ["a", None]],
    "docs": [5, "one", [(1, "text")], [("key", None)]],
    "mapping?": [5, "threshold", [("threshold", 0.5)]],
    "hashes": ["abc", None, [1.5, 2.5], [[1, 2]]],
    "key": [b"key", None, ["a"], 1.5, True],
    "key?": [b"key", 2.5, True],
    "keys": [5, "one", b"one", [1.5], ["a", None]],
    "keys?": [5, "one", b"one", [1.5], ["a", None]],
    "itemsets?": [5, "one", [5]],
    "flag?": ["yes", 1],
}


class Call(NamedTuple):
    """A public method: how to call it, the name its messages use, and
    each argument's valid value and kind."""

    call: Callable[..., Any]
    func: str
    args: Dict[str, Tuple[Any, str]]
    #: Other arguments' values while this one is wrong (exclusive options).
    alone: Dict[str, Dict[str, Any]] = {}


def table(db: lshdb.Database, tmp: Path) -> Dict[str, Call]:
    sk = lshdb.Sketcher()
    batch = db.batch()
    config = {
        "threshold": (0.8, "real"),
        "shingle": ("char:5", "str"),
        "num_perm": (128, "int"),
        "bands": (None, "int?"),
        "rows": (None, "int?"),
    }
    #: create's and memory's arguments.
    new = {
        **config,
        "simhash": (None, "int?"),
        "store_text": (False, "flag"),
        "containment": (False, "flag"),
        "cache_bytes": (None, "int?"),
        "record_cache_bytes": (None, "int?"),
        "kept_filter_bytes": (None, "int?"),
        "durability": ("immediate", "str"),
    }
    query = {"threshold": (None, "real?"), "limit": (None, "int?"), "max_bucket": (None, "int?")}
    return {
        "Database.create": Call(
            lshdb.Database.create,
            "create",
            {
                "path": (tmp / "new.lshdb", "path"),
                **new,
            },
        ),
        "Database.memory": Call(
            lshdb.Database.memory,
            "memory",
            {
                **new,
            },
        ),
        "Database.open": Call(
            lshdb.Database.open,
            "open",
            {
                "path": (db.path, "path"),
                "read_only": (True, "flag"),
                "wait": (None, "real?"),
                "cache_bytes": (None, "int?"),
                "record_cache_bytes": (None, "int?"),
                "kept_filter_bytes": (None, "int?"),
                "expect": (None, "mapping?"),
                "durability": ("immediate", "str"),
                "create": (False, "flag"),
                "threshold": (None, "real?"),
                "shingle": (None, "str?"),
                "num_perm": (None, "int?"),
                "bands": (None, "int?"),
                "rows": (None, "int?"),
                "simhash": (None, "int?"),
                "store_text": (None, "flag?"),
                "containment": (None, "flag?"),
            },
        ),
        "Database.insert": Call(db.insert, "insert", {"key": ("k", "key"), "text": ("some text", "str")}),
        "Database.insert_items": Call(
            db.insert_items, "insert_items", {"key": ("k", "key"), "items": (["a", "b"], "items")}
        ),
        "Database.insert_unique": Call(
            db.insert_unique,
            "insert_unique",
            {
                "key": ("k", "key"),
                "text": ("some text", "str?"),
                "threshold": (None, "real?"),
                "items": (None, "items"),
            },
            {"items": {"text": None}},
        ),
        "Database.insert_unique_many": Call(
            db.insert_unique_many,
            "insert_unique_many",
            {
                "keys": (["k"], "keys"),
                "texts": (["some text"], "texts?"),
                "items": (None, "itemsets?"),
                "threshold": (None, "real?"),
                "batch": (None, "int?"),
            },
            {"items": {"texts": None}},
        ),
        "Database.insert_many": Call(
            db.insert_many,
            "insert_many",
            {
                "docs": (None, "docs"),
                "keys": (["k"], "keys?"),
                "texts": (["some text"], "texts?"),
                "items": (None, "itemsets?"),
                "shingles": (None, "itemsets?"),
                "batch": (None, "int?"),
            },
            {"docs": {"keys": None, "texts": None}, "items": {"texts": None}, "shingles": {"texts": None}},
        ),
        "Database.remove": Call(db.remove, "remove", {"key": ("k", "key")}),
        "Database.get": Call(db.get, "get", {"key": ("k", "key")}),
        "Database.__getitem__": Call(lambda key: db[key], "get", {"key": ("k", "key")}),
        "Database.query": Call(
            db.query,
            "query",
            {
                "text": ("some text", "str?"),
                "items": (None, "items"),
                "key": (None, "key?"),
                **query,
                "top": (None, "int?"),
                "containment": (None, "real?"),
                "exhaustive": (False, "flag"),
                "explain": (False, "flag"),
            },
            {"items": {"text": None}},
        ),
        "Database.query_many": Call(
            db.query_many,
            "query_many",
            {"texts": (["some text"], "texts?"), "items": (None, "itemsets?"), **query},
            {"items": {"texts": None}},
        ),
        "Database.simhash_search": Call(
            db.simhash_search,
            "simhash_search",
            {"text": ("some text", "str"), "max_distance": (3, "int"), "limit": (None, "int?")},
        ),
        "Database.pairs": Call(db.pairs, "pairs", {"threshold": (None, "real?")}),
        "Database.groups": Call(db.groups, "groups", {"threshold": (None, "real?")}),
        "Database.exact_pairs": Call(db.exact_pairs, "exact_pairs", {"threshold": (0.5, "real")}),
        "Database.stats": Call(db.stats, "stats", {"deep": (False, "flag")}),
        "Database.check": Call(db.check, "check", {"pages": (False, "flag")}),
        "Database.rebuild": Call(
            db.rebuild,
            "rebuild",
            {"threshold": (0.5, "real?"), "bands": (None, "int?"), "rows": (None, "int?"), "containment": (None, "flag?")},
        ),
        "Labels.__getitem__": Call(lambda name: db.labels[name], "labels.__getitem__", {"name": ("n", "str")}),
        "Labels.__setitem__": Call(
            db.labels.__setitem__, "labels.__setitem__", {"name": ("n", "str"), "value": ("v", "str")}
        ),
        "Labels.get": Call(db.labels.get, "labels.get", {"name": ("n", "str"), "default": (None, "any")}),
        "Batch.insert": Call(batch.insert, "batch.insert", {"key": ("k", "key"), "text": ("some text", "str")}),
        "Batch.insert_items": Call(
            batch.insert_items, "batch.insert_items", {"key": ("k", "key"), "items": (["a"], "items")}
        ),
        "Batch.remove": Call(batch.remove, "batch.remove", {"key": ("k", "key")}),
        "Sketcher": Call(
            lshdb.Sketcher,
            "Sketcher",
            {**config, "shingle_seed": (None, "int?"), "minhash_seed": (None, "int?")},
        ),
        **{
            f"Sketcher.{name}": Call(
                getattr(sk, name),
                name,
                {
                    "texts": (["some text"], "texts?"),
                    "items": (None, "itemsets?"),
                    "parallel": (True, "flag"),
                    **({"arrow": (False, "flag")} if name == "shingles" else {}),
                },
                {"items": {"texts": None}},
            )
            for name in ("shingles", "signatures", "band_keys", "simhash")
        },
        "Sketcher.jaccard": Call(
            sk.jaccard,
            "jaccard",
            {"a": (["some text"], "texts"), "b": (["other text"], "texts"), "parallel": (True, "flag")},
        ),
        "jaccard": Call(
            lshdb.jaccard,
            "jaccard",
            {"a": (np.array([1, 2], np.uint32), "hashes"), "b": (np.array([2, 3], np.uint32), "hashes")},
        ),
    }


def public_api() -> Dict[str, Callable[..., Any]]:
    """Every public function and method of the package that takes an
    argument, by the names the table uses."""
    out: Dict[str, Callable[..., Any]] = {}
    for cls in (lshdb.Database, lshdb.Batch, lshdb.Labels, lshdb.Sketcher):
        for name, member in vars(cls).items():
            if isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            if not callable(member) or (name.startswith("_") and name not in ("__getitem__", "__setitem__")):
                continue
            out[f"{cls.__name__}.{name}"] = member
    out["Sketcher"] = lshdb.Sketcher.__init__
    out["jaccard"] = lshdb.jaccard
    return {name: f for name, f in out.items() if _params(f)}


def _params(f: Callable[..., Any]) -> List[str]:
    return [p for p in inspect.signature(f).parameters if p not in ("self", "cls")]


def test_the_table_covers_the_whole_api(db: lshdb.Database, tmp_path: Path) -> None:
    calls = table(db, tmp_path)
    api = public_api()
    assert sorted(set(api) - set(calls)) == [], "public calls missing from the table"
    for name, f in api.items():
        assert sorted(_params(f)) == sorted(calls[name].args), name


@pytest.mark.parametrize("name", sorted(public_api()))
def test_a_wrong_type_raises_invalid_type_naming_the_argument(db: lshdb.Database, tmp_path: Path, name: str) -> None:
    call = table(db, tmp_path)[name]
    valid = {arg: value for arg, (value, _) in call.args.items()}
    checked = 0
    for arg, (_, kind) in call.args.items():
        for bad in BAD.get(kind, []):
            kwargs = {**valid, **call.alone.get(arg, {}), arg: bad}
            with pytest.raises(lshdb.InvalidType) as info:
                call.call(**kwargs)
            err = info.value
            assert isinstance(err, lshdb.LshdbError) and isinstance(err, TypeError)
            message = str(err)
            assert f"`{arg}`" in message and message.startswith(f"{call.func}()"), (arg, bad, message)
            checked += 1
    assert checked > 0
    assert not (tmp_path / "new.lshdb").exists()  # nothing was created on the way
    assert len(db) == 0  # and nothing written


def test_expect_values_are_checked_by_name(db: lshdb.Database) -> None:
    db.close()
    for key, bad in [("threshold", "0.8"), ("shingle", 5), ("num_perm", 1.5), ("bands", "4"), ("store_text", 1)]:
        with pytest.raises(lshdb.InvalidType, match=rf"open\(\): argument `expect\['{key}'\]`"):
            lshdb.Database.open(db.path, expect={key: bad})


def test_the_messages_read_well(db: lshdb.Database) -> None:
    with pytest.raises(TypeError) as info:
        db.insert(b"k", "some text")  # type: ignore[arg-type]
    assert str(info.value) == "insert(): argument `key` must be str or int, not bytes"
    with pytest.raises(lshdb.InvalidType, match=r"^query\(\): argument `text` must be str or None, not bytes$"):
        db.query(b"some text")  # type: ignore[call-overload]
    with pytest.raises(lshdb.InvalidType, match=r"^query_many\(\): argument `texts`: element 1 is NoneType, not str$"):
        db.query_many(["a", None])
    # A count out of range is a value error naming the argument, not a bare OverflowError.
    with pytest.raises(lshdb.InvalidInput, match=r"^query\(\): argument `limit` must be an int from 0 to"):
        db.query("some text", limit=-1)
    # Still the classes such mistakes raised before, for code that catches them.
    with pytest.raises(lshdb.InvalidInput):
        db.batch().insert(b"k", "x")  # type: ignore[arg-type]
    # NumPy scalars are numbers and bools.
    db.insert("k", "some text")
    assert db.query("some text", threshold=np.float32(0.5), limit=np.int64(3), explain=np.bool_(False))  # type: ignore[call-overload]


class FakeFrame:
    """Stands for a DataFrame: the type checks run before any Spark work,
    so lshdb.spark's are tested without Spark."""

    sparkSession = None


def spark_table(tmp: Path) -> Dict[str, Call]:
    from lshdb import spark as ls

    df = (FakeFrame(), "frame")
    job = {
        "df": df,
        "id_col": ("id", "str"),
        "text_col": ("text", "str"),
        "threshold": (None, "real?"),
        "config": (None, "config?"),
        "max_bucket": (100, "int"),
        "anchors": (4, "int"),
        "partitions": (None, "int?"),
        "checkpoint_dir": (None, "str?"),
        "parallel": (False, "flag"),
    }
    return {
        "pairs": Call(ls.pairs, "pairs", job),
        "dedup": Call(
            ls.dedup,
            "dedup",
            {
                **job,
                "keep": ("min_id", "str"),
                "priority": (None, "str?"),
                "max_rounds": (3, "int"),
                "stats": (None, "dict?"),
            },
        ),
        "write_database": Call(
            ls.write_database,
            "write_database",
            {
                "path": (tmp / "spark.lshdb", "path"),
                "df": df,
                "id_col": ("id", "str"),
                "text_col": ("text", "str"),
                "result": (None, "frame?"),
                "keep_only": (True, "flag"),
                "config": (None, "config?"),
                "store_text": (False, "flag"),
                "batch": (10, "int"),
            },
        ),
        "Config": Call(
            ls.Config,
            "Config",
            {
                "threshold": (0.8, "real"),
                "shingle": ("char:5", "str"),
                "num_perm": (128, "int"),
                "bands": (None, "int?"),
                "rows": (None, "int?"),
                "shingle_seed": (None, "int?"),
                "minhash_seed": (None, "int?"),
            },
        ),
    }


BAD.update(
    {
        "frame": [None, [("a", "text")], "table"],
        "frame?": [[("a", "text")], "table"],
        "config?": [{"threshold": 0.8}, 0.8],
        "dict?": [[], "stats"],
    }
)


def test_the_spark_table_covers_lshdb_spark(tmp_path: Path) -> None:
    from lshdb import spark as ls

    calls = spark_table(tmp_path)
    public = {name for name in ls.__all__ if callable(getattr(ls, name))}
    assert public == set(calls)
    for name, call in calls.items():
        f = getattr(ls, name)
        params = [p for p in inspect.signature(f).parameters if p != "self"]
        assert sorted(params) == sorted(call.args), name


@pytest.mark.parametrize("name", ["pairs", "dedup", "write_database", "Config"])
def test_lshdb_spark_raises_invalid_type_naming_the_argument(tmp_path: Path, name: str) -> None:
    call = spark_table(tmp_path)[name]
    valid = {arg: value for arg, (value, _) in call.args.items()}
    for arg, (_, kind) in call.args.items():
        for bad in BAD.get(kind, []):
            with pytest.raises(lshdb.InvalidType) as info:
                call.call(**{**valid, arg: bad})
            message = str(info.value)
            assert f"`{arg}`" in message and message.startswith(f"{call.func}()"), (arg, bad, message)
    assert not (tmp_path / "spark.lshdb").exists()
