"""insert_many from every kind of input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import lshdb
from conftest import corpus


def test_bulk_load_from_pandas(db: lshdb.Database) -> None:
    docs = corpus(groups=30)
    df = pd.DataFrame({"id": [k for k, _ in docs], "text": [t for _, t in docs]})
    report = db.insert_many(keys=df["id"], texts=df["text"], batch=16)
    assert report["inserted"] == 90 and report["commits"] == 6 and report["rejected"] == []
    arrow_backed = df.astype({"text": "string[pyarrow]"})
    report = db.insert_many(keys=arrow_backed["id"], texts=arrow_backed["text"])
    assert report["replaced"] == 90 and len(db) == 90
    assert db.query(key="g007-0")[0].key.startswith("g007-")


def test_bulk_load_from_pyarrow(db: lshdb.Database) -> None:
    docs = corpus(groups=30)
    table = pa.table({"id": [k for k, _ in docs], "text": [t for _, t in docs]})
    report = db.insert_many(keys=table["id"], texts=table["text"])
    assert report["inserted"] == 90 and len(db) == 90
    assert db.get("g003-1").text == dict(docs)["g003-1"]  # type: ignore[union-attr]


def test_bulk_load_from_dict_pairs_generator_and_numpy(db: lshdb.Database) -> None:
    docs = corpus(groups=10)
    assert db.insert_many(dict(docs[:10]))["inserted"] == 10
    assert db.insert_many((k, t) for k, t in docs[10:20])["inserted"] == 10
    keys = np.array([k for k, _ in docs[20:]])
    texts = np.array([t for _, t in docs[20:]], dtype=object)
    assert db.insert_many(keys=keys, texts=texts)["inserted"] == 10
    assert sorted(db.keys()) == sorted(k for k, _ in docs)


def test_bulk_load_reports_rejected_documents(db: lshdb.Database) -> None:
    report = db.insert_many([("ok", "a fine document text"), ("empty", "  "), ("", "no key")])
    assert report["inserted"] == 1
    assert [k for k, _ in report["rejected"]] == ["empty", ""]
    assert "empty" in report["rejected"][0][1]
    assert report["rejected_count"] == 2


def test_bulk_load_keeps_the_last_max_rejected_and_counts_all(db: lshdb.Database) -> None:
    def stream():
        for i in range(300):
            yield (f"k{i}", "a fine document text number %d" % i if i % 30 == 0 else " ")

    report = db.insert_many(stream(), batch=40, max_rejected=7)
    assert report["inserted"] == 10 and report["rejected_count"] == 290
    assert [k for k, _ in report["rejected"]] == [f"k{i}" for i in range(292, 300) if i % 30 != 0][-7:]
    with pytest.raises(lshdb.InvalidInput):
        db.insert_many([("a", "b c d e f")], max_rejected=-1)


def test_bulk_load_refuses_bad_input(db: lshdb.Database) -> None:
    with pytest.raises(lshdb.InvalidInput, match="pairs"):
        db.insert_many([("a", "text"), ("b",)])  # type: ignore[list-item]
    with pytest.raises(lshdb.InvalidInput, match="2 keys but 1 texts"):
        db.insert_many(keys=["a", "b"], texts=["x"])
    with pytest.raises(ZeroDivisionError):
        db.insert_many((k, t) for k, t in [("a", "some text"), ("b", str(1 / 0))])
