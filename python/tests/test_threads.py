"""One handle shared by many Python threads."""

from __future__ import annotations

import threading
import time
from typing import Iterator, List, Tuple

import lshdb
from conftest import corpus


def test_many_threads_query_while_one_inserts(db: lshdb.Database) -> None:
    docs = corpus(groups=60)
    db.insert_many(docs[:30])
    errors: List[BaseException] = []
    stop = threading.Event()
    answered = [0] * 4

    def reader(i: int) -> None:
        try:
            while not stop.is_set():
                hits = db.query(docs[0][1])
                assert hits[0].key == docs[0][0]
                db.query_many([t for _, t in docs[:10]])
                answered[i] += 1
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for key, text in docs[30:]:
        db.insert(key, text)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert all(n > 0 for n in answered)
    assert len(db) == len(docs)
    assert {h.key for h in db.query(key=docs[-1][0])} == {k for k, _ in docs[-3:-1]}


def test_a_generator_feeding_insert_many_may_query_while_a_writer_waits(db: lshdb.Database) -> None:
    """insert_many holds the handle while it pulls from the generator; the
    generator's own query on the same handle must not deadlock against a
    compact() waiting in another thread."""
    docs = corpus(groups=20)
    db.insert_many(docs[:10])
    started = threading.Event()
    seen: List[int] = []

    def feed() -> Iterator[Tuple[str, str]]:
        for i, (key, text) in enumerate(docs[10:]):
            if i == 5:
                started.set()
                time.sleep(0.3)  # compact() is now waiting for the handle
                seen.append(len(db.query(docs[0][1])))
            yield key, text

    loader = threading.Thread(target=lambda: db.insert_many(feed()), daemon=True)
    loader.start()
    started.wait(10)
    compactor = threading.Thread(target=db.compact, daemon=True)
    compactor.start()
    loader.join(30)
    compactor.join(30)
    assert not loader.is_alive() and not compactor.is_alive(), "deadlock"
    assert seen and seen[0] >= 1 and len(db) == len(docs)
