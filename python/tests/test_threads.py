"""One handle shared by many Python threads."""

from __future__ import annotations

import threading
from typing import List

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
