"""Write batches: all or nothing."""

from __future__ import annotations

import pytest

import lshdb


def test_batch_commits_on_normal_exit(db: lshdb.Database) -> None:
    db.insert("old", "a document the batch removes")
    with db.batch() as b:
        b.insert("a", "first document text")
        b.insert_items("basket", ["milk", 1])
        b.remove("old")
        b.remove("never-there")
        assert len(db) == 1  # nothing applied before the block ends
    assert sorted(db.keys()) == ["a", "basket"]
    assert b.removed == [True, False]


def test_batch_writes_nothing_when_the_block_raises(db: lshdb.Database) -> None:
    db.insert("keep", "a document that stays")
    with pytest.raises(RuntimeError, match="boom"):
        with db.batch() as b:
            b.insert("a", "first document text")
            b.remove("keep")
            raise RuntimeError("boom")
    assert list(db.keys()) == ["keep"]


def test_batch_with_a_refused_operation_writes_nothing(db: lshdb.Database) -> None:
    with pytest.raises(lshdb.InvalidInput, match="empty"):
        with db.batch() as b:
            b.insert("a", "first document text")
            b.insert("empty", "   ")
    assert len(db) == 0
    db.insert("after", "the handle still writes")  # not poisoned
    assert len(db) == 1


def test_a_write_beside_an_open_batch_goes_through_at_once(db: lshdb.Database) -> None:
    # The batch gathers its operations and applies them as the block ends
    # (in Rust, a write beside an open `Batch` on its thread would wait for
    # the batch's transaction, and fails instead): nothing waits here.
    with db.batch() as b:
        b.insert("a", "first document text")
        db.insert("b", "a second document text")
        assert sorted(db.keys()) == ["b"]
        b.insert("c", "a third document text")
    assert sorted(db.keys()) == ["a", "b", "c"]
