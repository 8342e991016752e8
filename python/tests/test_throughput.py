"""Issue 22, item 3: query_many of texts or item sets, and a handle
shared by querying threads and a writer. Speed is benchmarked
(tools/bench/python_threads.py), not timed here: these tests check what
must happen at all, with generous time limits."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

import lshdb
from conftest import corpus, counts_while

READERS = 8


def test_query_many_of_item_sets_answers_as_query_does(path: Path) -> None:
    sets = [[f"item-{g}-{i}" for i in range(20)] + [g] for g in range(10) for _ in range(2)]
    for i, items in enumerate(sets):
        items[i % 20] = f"own-{i}"
    with lshdb.Database.create(path, 0.5) as db:
        db.insert_many(keys=[f"s{i}" for i in range(len(sets))], items=sets)
        probes = [s[:-1] + [b"new"] for s in sets] + [[]]
        many = db.query_many(items=probes, limit=3)
        assert len(many) == len(probes)
        assert many[-1] == []  # no shingles, no hits
        for probe, hits in zip(probes[:-1], many):
            assert hits == db.query(items=probe, limit=3)
            assert hits and hits[0].similarity > 0.5
        # Texts still work positionally and by name.
        texts = [t for _, t in corpus(groups=3)]
        assert db.query_many(texts) == db.query_many(texts=texts)


def test_query_many_takes_texts_or_items_not_both(db: lshdb.Database) -> None:
    with pytest.raises(lshdb.InvalidInput, match="give texts or items=, not both"):
        db.query_many(["a text"], items=[["x"]])
    with pytest.raises(lshdb.InvalidInput, match="give texts or items=, not both"):
        db.query_many()
    with pytest.raises(lshdb.InvalidType, match=r"^query_many\(\): argument `items`\[0\]: expected a collection"):
        db.query_many(items=["not a set"])


def test_query_many_releases_the_gil_while_it_searches(path: Path) -> None:
    """A Python thread keeps counting while a long query_many runs."""
    docs = corpus(groups=300)
    texts = [t for _, t in docs]
    with lshdb.Database.create(path, 0.5) as db:
        db.insert_many(docs)
        count, elapsed = counts_while(lambda: db.query_many(texts * 20, threshold=0.1))
        assert elapsed > 0.05, "query_many was too short to tell"
        assert count > 10_000


def with_readers(
    db: lshdb.Database, texts: List[str], work: Callable[[], object], timeout: float = 120, many: bool = False
) -> List[int]:
    """Runs `work` on a thread of its own while READERS threads query `db`
    in a loop (`query`, or `query_many` of all `texts`), none pausing;
    fails unless it finishes within `timeout`. Returns how many calls each
    reader made."""
    stop = threading.Event()
    answered = [0] * READERS
    errors: List[BaseException] = []

    def reader(i: int) -> None:
        try:
            while not stop.is_set():
                if many:
                    db.query_many(texts)
                else:
                    db.query(texts[(i + answered[i]) % len(texts)])
                answered[i] += 1
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(READERS)]
    for t in threads:
        t.start()
    while min(answered) == 0 and not errors:
        time.sleep(0.01)  # every reader is in its loop
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    finished = not worker.is_alive()
    stop.set()
    for t in threads:
        t.join(timeout)
    assert not errors, errors
    assert finished, "the writer did not finish while the readers looped"
    return answered


def test_a_writer_thread_inserts_while_eight_threads_query(path: Path) -> None:
    docs = corpus(groups=60)
    with lshdb.Database.create(path, 0.5) as db:
        db.insert_many(docs[:90])

        def write() -> None:
            for key, text in docs[90:]:
                db.insert(key, text)

        answered = with_readers(db, [t for _, t in docs[:90]], write)
        assert all(n > 0 for n in answered)
        assert len(db) == len(docs)


def test_compact_gets_the_lock_while_eight_threads_query(path: Path) -> None:
    """The handle's lock is task-fair: readers whose holds always overlap
    (each query_many holds the handle through a whole batch) do not keep
    compact(), which needs the handle alone, waiting."""
    docs = corpus(groups=200)
    with lshdb.Database.create(path, 0.5) as db:
        db.insert_many(docs)
        for key, _ in docs[:60]:
            db.remove(key)
        results: List[bool] = []
        with_readers(db, [t for _, t in docs] * 4, lambda: results.append(db.compact()), many=True)
        assert results == [True]
        assert len(db) == len(docs) - 60


def test_a_call_that_arrives_while_compact_waits_queues_behind_it(path: Path) -> None:
    """Readers do not overtake a waiting writer: a query that arrives
    while compact() waits for a running call runs after compact(), not
    beside the running call (which would let overlapping readers keep
    compact() waiting forever)."""
    docs = corpus(groups=20)
    with lshdb.Database.create(path, 0.5) as db:
        db.insert_many(docs[:30])
        release = threading.Event()
        done: List[str] = []

        def feed() -> Iterator[Tuple[str, str]]:
            yield docs[30]
            release.wait(60)  # insert_many holds the handle meanwhile
            yield from docs[31:]

        def then(call: Callable[[], object], name: str) -> threading.Thread:
            def run() -> None:
                call()
                done.append(name)

            return threading.Thread(target=run)

        seen: List[lshdb.Hit] = []
        loader = then(lambda: db.insert_many(feed(), batch=1), "load")
        compactor = then(db.compact, "compact")
        reader = then(lambda: seen.extend(db.query(docs[-1][1])), "query")
        loader.start()
        time.sleep(0.2)
        compactor.start()  # waits for insert_many
        time.sleep(0.2)
        reader.start()
        time.sleep(0.3)
        assert done == [], "the query overtook the waiting compact()"
        release.set()
        for t in (loader, compactor, reader):
            t.join(60)
        # Which thread appends first once two calls have returned is up to
        # the scheduler, so the order is read from what the query saw: the
        # load's last document, written after the query arrived.
        assert sorted(done) == ["compact", "load", "query"]
        assert docs[-1][0] in [hit.key for hit in seen], "the query ran beside the load"


def test_a_query_waits_at_most_a_while_behind_a_writer_that_waits_for_a_stream(path: Path) -> None:
    """compact() waits for an open key stream (its thread holds the
    handle); a query on the thread that consumes the stream queues behind
    compact() only for a while, so nothing deadlocks."""
    docs = corpus(groups=2500)  # more keys than the stream's queue holds
    with lshdb.Database.create(path, 0.5) as db:
        db.insert_many(docs)
        keys = db.keys()
        next(keys)  # the stream's thread holds the handle, its queue fills
        time.sleep(0.2)
        compactor = threading.Thread(target=db.compact, daemon=True)
        compactor.start()
        time.sleep(0.2)
        assert compactor.is_alive(), "compact() should wait for the stream"
        assert db.query(docs[0][1])[0].key == docs[0][0]
        assert sum(1 for _ in keys) == len(docs) - 1
        compactor.join(60)
        assert not compactor.is_alive()


def test_queries_nested_in_a_query_s_arguments_do_not_wait_for_a_place(db: lshdb.Database) -> None:
    """A query takes its place after reading its arguments, so an items
    generator that queries the same handle (on every thread at once) does
    not wait for places its own callers hold."""
    docs = corpus(groups=5)
    db.insert_many(docs)

    def items() -> Iterator[str]:
        assert db.query(docs[0][1])[0].key == docs[0][0]
        yield from docs[0][1].split()

    results: List[int] = []
    threads = [threading.Thread(target=lambda: results.append(len(db.query(items=items())))) for _ in range(READERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == READERS
