"""A handle does not cross fork(): in a forked child every call raises
``DatabaseClosed`` naming the process that opened it, nothing is written,
and the parent's handle keeps working. Opening in the child, or the spawn
start method, is the pattern that works."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import List, Tuple

import pytest

import lshdb

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")


def _fill(path: Path, n: int) -> lshdb.Database:
    db = lshdb.Database.create(path, 0.5, store_text=True)
    for i in range(n):
        db.insert(f"doc{i}", f"document number {i} with words of its own {i * 7}")
    return db


def _child_status(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_forked_child_cannot_use_the_parents_handle(path: Path) -> None:
    db = _fill(path, 20)
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            db.insert("child", "a document the child tries to add")
            code = 10
        except lshdb.DatabaseClosed as err:
            if f"opened in process {os.getppid()}" not in str(err):
                code = 11
            if "open the database again in this process" not in str(err):
                code = 12
        for call in (lambda: len(db), lambda: db.get("doc1"), lambda: db.query("document")):
            try:
                call()
                code = 13
            except lshdb.DatabaseClosed:
                pass
        db.close()  # leaves the parent's file and lock alone
        os._exit(code)
    assert _child_status(pid) == 0
    db.insert("after", "the parent writes after the child")
    assert len(db) == 21
    assert "child" not in db
    db.close()
    with lshdb.Database.open(path, read_only=True) as again:
        assert len(again) == 21
        assert again.check()["clean"]


def test_multiprocessing_fork_children_are_refused(path: Path) -> None:
    db = _fill(path, 5)
    global _INHERITED
    _INHERITED = db
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.map(_refused_in_child, ["k1", "k2", "k3"])
    assert results == ["refused"] * 3
    db.insert("k4", "the parent goes on")
    assert len(db) == 6
    db.close()


_INHERITED: "lshdb.Database | None" = None


def _refused_in_child(key: str) -> str:
    """Writes through the handle the pool's worker inherited by fork."""
    assert _INHERITED is not None
    try:
        _INHERITED.insert(key, "written through a handle inherited by fork")
        return "written"
    except lshdb.DatabaseClosed:
        return "refused"


def _count_in_child(path: str) -> Tuple[int, List[str]]:
    """The pattern that works: open the database in the child."""
    with lshdb.Database.open(path, read_only=True) as db:
        return len(db), [h.key for h in db.query("document number 3 with words of its own 21")]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_pool_of_readers_opening_in_each_child(path: Path, method: str) -> None:
    db = _fill(path, 12)  # the writer stays open in the parent meanwhile
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(3) as pool:
        results = pool.map(_count_in_child, [str(path)] * 6)
    for count, keys in results:
        assert count == 12
        assert keys[:1] == ["doc3"]
    db.insert("more", "the parent's writer still works")
    assert len(db) == 13
    db.close()


def test_a_child_forked_while_every_query_place_is_taken_is_refused_not_stuck(path: Path) -> None:
    """The parent's threads held every query place when it forked; those
    threads do not exist in the child, so waiting for a place there would
    wait forever. The child's calls are refused at once instead."""
    db = _fill(path, 5)
    places = [db._db.query_place() for _ in range(os.cpu_count() or 1)]
    for place in places:
        place.__enter__()
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        for call in (lambda: db.query("document number"), lambda: db.insert("child", "a new document")):
            try:
                call()
                code = 10
            except lshdb.DatabaseClosed:
                pass
        os._exit(code)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child waited for a query place its parent's threads held")
    assert os.waitstatus_to_exitcode(status) == 0
    for place in places:
        place.__exit__()
    assert [h.key for h in db.query("document number 3 with words of its own 21")][0] == "doc3"
    db.close()
