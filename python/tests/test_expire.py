"""Timestamps and expiry from Python: ``timestamps=True`` at create,
``insert(timestamp=)``, ``timestamp(key)``, ``expire(older_than=)`` with a
datetime, a timedelta or epoch seconds, and ``rebuild(timestamps=)``."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

import lshdb
from conftest import corpus

DAY = 86_400
T0 = 1_700_000_000


def stamped(path: Path) -> lshdb.Database:
    """20 groups of 3; group g stamped T0 + g days."""
    db = lshdb.Database.create(path, 0.6, timestamps=True)
    for key, text in corpus():
        db.insert(key, text, timestamp=T0 + int(key[1:4]) * DAY)
    return db


def test_expire_removes_exactly_the_older_documents(path: Path) -> None:
    db = stamped(path)
    assert db.settings["timestamps"] is True
    assert db.timestamp("g003-1") == T0 + 3 * DAY
    assert db.timestamp("missing") is None
    # A datetime: groups 0 to 4 (15 documents) are older; 4 per commit.
    cut = dt.datetime.fromtimestamp(T0 + 5 * DAY, tz=dt.timezone.utc)
    assert db.expire(cut, batch=4) == {"removed": 15, "commits": 4}
    assert len(db) == 45 and "g004-2" not in db and "g005-0" in db
    assert db.query(corpus()[0][1]) == []
    assert {h.key for h in db.query(key="g005-0")} == {"g005-1", "g005-2"}
    assert db.check()["clean"]
    # Epoch seconds (a float's fraction is dropped); the boundary is strict.
    assert db.expire(T0 + 6 * DAY + 0.9)["removed"] == 3
    # A timedelta: older than now − 1 day is everything left.
    assert db.expire(dt.timedelta(days=1)) == {"removed": 42, "commits": 1}
    assert len(db) == 0 and db.check()["clean"]
    db.close()


def test_insert_stamps_the_time_of_the_insert_and_replace_restamps(path: Path) -> None:
    db = lshdb.Database.create(path, timestamps=True)
    before = int(time.time())
    db.insert("a", "a document written just now")
    stamp = db.timestamp("a")
    assert stamp is not None and before <= stamp <= time.time()
    db.insert("a", "a document written just now", timestamp=dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc))
    assert db.timestamp("a") == 978_307_200
    assert db.remove("a") and db.timestamp("a") is None
    db.close()


def test_a_file_without_the_index_says_how_to_add_it(path: Path) -> None:
    db = lshdb.Database.create(path)
    db.insert("a", "the first document of the file")
    with pytest.raises(lshdb.IndexDisabled, match=r"db\.rebuild\(timestamps=True\)"):
        db.expire(dt.timedelta(days=30))
    with pytest.raises(lshdb.IndexDisabled):
        db.insert("b", "another document", timestamp=T0)
    db.rebuild(timestamps=True)
    assert db.settings["timestamps"] is True
    stamp = db.timestamp("a")
    assert stamp is not None and abs(stamp - time.time()) < 60
    assert db.expire(T0)["removed"] == 0
    db.rebuild(timestamps=False)
    assert db.settings["timestamps"] is False
    db.close()


def test_a_database_in_memory_keeps_timestamps_too() -> None:
    db = lshdb.Database.memory(timestamps=True)
    db.insert("a", "an old document of the memory", timestamp=T0)
    db.insert("b", "a new document of the memory")
    assert db.expire(T0 + 1) == {"removed": 1, "commits": 1}
    assert list(db.keys()) == ["b"]
    db.close()


def test_bad_times_are_refused(path: Path) -> None:
    db = lshdb.Database.create(path, timestamps=True)
    with pytest.raises(lshdb.InvalidType, match="older_than"):
        db.expire("30d")  # type: ignore[arg-type]
    with pytest.raises(lshdb.InvalidType, match="timestamp"):
        db.insert("a", "text", timestamp=dt.timedelta(days=1))  # type: ignore[arg-type]
    with pytest.raises(lshdb.InvalidInput):
        db.expire(float("nan"))
    with pytest.raises(lshdb.InvalidType):
        db.expire(True)  # type: ignore[arg-type]
    # Before 1970: nothing is older.
    assert db.expire(-5)["removed"] == 0
    db.close()


def test_insert_many_stamps_each_document_with_its_column(path: Path) -> None:
    db = lshdb.Database.create(path, threshold=0.8, timestamps=True)
    keys = ["a", "b", "c"]
    texts = ["storm closes the coast road", "the market opens late today", "a new bridge over the river"]
    when = [100, dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc), 300.9]
    report = db.insert_many(keys=keys, texts=texts, timestamps=when)
    assert report["inserted"] == 3
    assert [db.timestamp(k) for k in keys] == [100, 978307200, 300]
    assert db.expire(200)["removed"] == 1
    assert sorted(db.keys()) == ["b", "c"]
    with pytest.raises(lshdb.InvalidInput, match="3 keys and 2 timestamps"):
        db.insert_many(keys=keys, texts=texts, timestamps=[1, 2])
    with pytest.raises(lshdb.InvalidInput, match="go with keys= and texts="):
        db.insert_many({"d": "text"}, timestamps=[1])
    with pytest.raises(lshdb.InvalidType):
        db.insert_many(keys=["d"], texts=["a text"], timestamps=["yesterday"])


def test_insert_many_timestamps_need_the_index(tmp_path: Path) -> None:
    db = lshdb.Database.create(tmp_path / "plain.lshdb", threshold=0.8)
    with pytest.raises(lshdb.IndexDisabled, match="rebuild"):
        db.insert_many(keys=["a"], texts=["storm closes the coast road"], timestamps=[1])
    assert len(db) == 0
