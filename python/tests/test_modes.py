"""Modes (issue 22): a database in memory, non-durable commits with an
explicit flush (and what a crash loses), and create-or-open whose settings
must match the file's."""

from __future__ import annotations

from pathlib import Path

import pytest

import lshdb

from conftest import run_python

FOX = "The quick brown fox jumps over the lazy dog"


def test_a_database_in_memory_writes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with lshdb.Database.memory(0.5, store_text=True, containment=True) as db:
        assert db.path == ":memory:" and not db.read_only
        db.insert("a", FOX)
        assert db.query(FOX + "!")[0].key == "a"
        assert db.get("a").text == FOX  # type: ignore[union-attr]
        assert db.query("quick brown fox jumps", containment=0.9)[0].key == "a"
        assert db.settings["threshold"] == 0.5
        assert db.stats()["file_bytes"] == 0
        assert repr(db) == "<lshdb.Database ':memory:' (open)>"
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(lshdb.DatabaseClosed):
        db.query(FOX)
    with pytest.raises(lshdb.InvalidInput, match="threshold"):
        lshdb.Database.memory(1.5)


def test_durability_none_commits_at_once_and_reaches_disk_on_flush(path: Path) -> None:
    with lshdb.Database.create(path, durability="none") as db:
        assert db.durability == "none"
        db.insert("a", FOX)
        assert db.query(FOX)[0].key == "a"  # visible at once
        # Commits live in this process only: no other handle may open the file.
        with pytest.raises(lshdb.AlreadyOpen):
            lshdb.Database.open(path, read_only=True)
        db.flush()
    with lshdb.Database.open(path) as db:  # the close made everything durable
        assert db.durability == "immediate" and len(db) == 1
        db.flush()  # harmless


def test_a_crash_loses_the_non_durable_commits_since_the_last_flush(path: Path) -> None:
    lshdb.Database.create(path, threshold=0.5).close()
    code = """
        import os, sys, lshdb
        db = lshdb.Database.open(sys.argv[1], durability="none")
        db.insert("flushed", "The quick brown fox jumps over the lazy dog")
        db.flush()
        db.insert_many({"lost-1": "some text that is never flushed", "lost-2": "nor is this one"})
        os._exit(0)  # a crash: no close
    """
    done = run_python(code, str(path))
    assert done.returncode == 0, done.stderr
    with lshdb.Database.open(path) as db:
        assert sorted(db.keys()) == ["flushed"]
        assert db.check()["clean"]


def test_durability_misuse_is_refused(path: Path) -> None:
    with pytest.raises(lshdb.InvalidInput, match="durability"):
        lshdb.Database.create(path, durability="eventual")  # type: ignore[arg-type]
    assert not path.exists()
    lshdb.Database.create(path).close()
    with lshdb.Database.open(path, read_only=True) as reader:
        with pytest.raises(lshdb.ReadOnlyError):
            reader.flush()


def test_open_create_creates_then_opens_with_matching_settings(path: Path) -> None:
    with lshdb.Database.open(path, create=True, threshold=0.7, shingle="word:2", containment=True) as db:
        db.insert("a", FOX)
        assert db.settings["shingle"] == "word:2"
    with lshdb.Database.open(path, create=True, threshold=0.7, shingle="word:2", containment=True) as db:
        assert len(db) == 1
    with pytest.raises(lshdb.ConfigMismatch, match="threshold"):
        lshdb.Database.open(path, create=True, threshold=0.6, shingle="word:2", containment=True)
    with pytest.raises(lshdb.ConfigMismatch):
        lshdb.Database.open(path, create=True)  # create's defaults: char:5 at 0.8
    with lshdb.Database.open(path) as db:  # without create, any settings
        assert len(db) == 1


def test_open_create_misuse_is_refused(path: Path) -> None:
    with pytest.raises(lshdb.InvalidInput, match="need create=True"):
        lshdb.Database.open(path, threshold=0.7)
    with pytest.raises(lshdb.InvalidInput, match="expect="):
        lshdb.Database.open(path, create=True, expect={"threshold": 0.7})
    with pytest.raises(lshdb.InvalidInput, match="read_only"):
        lshdb.Database.open(path, create=True, read_only=True)
    with pytest.raises(lshdb.InvalidInput, match="threshold"):
        lshdb.Database.open(path, create=True, threshold=2.0)
    assert not path.exists()
    with pytest.raises(lshdb.InvalidType, match="`num_perm`"):
        lshdb.Database.open(path, create=True, num_perm="128")  # type: ignore[arg-type]
