"""The database from Python: writes, reads, queries, maintenance."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest

import lshdb
from conftest import corpus


def test_insert_query_get_remove_round_trip(db: lshdb.Database) -> None:
    db.insert("a", "The quick brown fox jumps over the lazy dog")
    db.insert("b", "The quick brown fox jumped over the lazy dog")
    db.insert("c", "An entirely different sentence about databases")
    hits = db.query("the quick brown fox jumps over the lazy dog!")
    assert hits[0] == lshdb.Hit("a", hits[0].similarity)
    assert hits[0].key == "a" and 0.9 < hits[0].similarity <= 1.0
    assert all(h.key != "c" for h in hits)
    assert len(db) == 3 and "a" in db and "zzz" not in db and 42 not in db
    doc = db.get("a")
    assert doc is not None and doc.text == "The quick brown fox jumps over the lazy dog"
    assert doc.shingles > 0 and db["a"] == doc
    assert db.get("missing") is None
    assert db.remove("a") is True and db.remove("a") is False
    assert len(db) == 2 and list(db.keys()) == ["b", "c"] and list(db) == ["b", "c"]


def test_query_options_key_items_and_explain(db: lshdb.Database) -> None:
    for key, text in corpus():
        db.insert(key, text)
    hits = db.query(key="g001-0")
    assert {h.key for h in hits} == {"g001-1", "g001-2"}
    assert db.query(key="g001-0", limit=1) == hits[:1]
    hits, explain = db.query(corpus()[3][1], threshold=0.3, explain=True)
    assert explain["candidates"] >= 1 and explain["warnings"], explain
    assert isinstance(explain["sketch_seconds"], float)
    with pytest.raises(lshdb.InvalidInput):
        db.query("x", key="y")


def test_reports_word_their_hints_for_python_and_settings_are_complete(
    db: lshdb.Database,
) -> None:
    for i in range(8):
        db.insert(f"same{i}", "one and the same sentence, stored eight times")
    _, explain = db.query(key="same0", max_bucket=2, explain=True)
    cut = len(explain["truncated_buckets"])
    assert explain["warnings"] == [
        f"{cut} bucket(s) held more than 2 documents and were cut there; for an "
        "exhaustive answer run the query again with max_bucket=20"
    ], explain
    settings = db.settings
    assert settings["containment"] is None and settings["whitespace"] == "collapse"
    assert {"shingle", "num_perm", "threshold", "bands", "rows", "store_text"} <= set(settings)
    check = db.check()
    assert check["clean"] is True and check["containment_postings"] == 0, check
    assert check["documents"] == 8 and check["problems"] == [], check


def test_items_hash_ints_as_their_decimal_text(db: lshdb.Database) -> None:
    db.insert_items("alice", ["milk", "bread", 42, b"eggs"])
    hits = db.query(items=["42", "milk", "bread", "eggs"])
    assert hits == [lshdb.Hit("alice", 1.0)]


def test_insert_unique_returns_the_duplicate(db: lshdb.Database) -> None:
    text = corpus()[0][1]
    assert db.insert_unique("first", text, 0.9) is None
    dup = db.insert_unique("second", text + " extra", 0.5)
    assert dup is not None and dup.key == "first"
    assert "second" not in db


def test_query_many_matches_single_queries(db: lshdb.Database) -> None:
    docs = corpus()
    db.insert_many(docs)
    texts = [t for _, t in docs] + [""]
    many = db.query_many(texts, limit=5)
    assert many[-1] == []
    assert many[:-1] == [db.query(t, limit=5) for t in texts[:-1]]


def test_similarity_of_two_stored_documents_is_the_pairs_similarity(db: lshdb.Database) -> None:
    db.insert_many(corpus(groups=5))
    pairs = list(db.pairs())
    assert pairs
    for p in pairs:
        assert db.similarity(p.a, p.b) == pytest.approx(p.similarity)
        assert db.similarity(p.b, p.a) == db.similarity(p.a, p.b)
    a = pairs[0].a
    assert db.similarity(a, a) == 1.0
    assert db.similarity(a, "missing") is None and db.similarity("missing", a) is None
    with pytest.raises(lshdb.InvalidInput):
        db.similarity(a, 42)


def test_pairs_stream_groups_and_exact_pairs(db: lshdb.Database) -> None:
    db.insert_many(corpus(groups=50))
    pairs = list(db.pairs())
    assert len(pairs) == 150 and all(isinstance(p, lshdb.Pair) for p in pairs)
    exact = db.exact_pairs(0.5)
    assert sorted((p.a, p.b) for p in pairs) == [(p.a, p.b) for p in exact]
    groups = list(db.groups())
    assert len(groups) == 50 and all(len(g) == 3 for g in groups)
    # An iterator dropped early stops its background thread.
    it = db.pairs()
    next(it)
    it.close()
    assert len(db) == 150


def test_stats_check_compact_rebuild_labels(db: lshdb.Database) -> None:
    db.insert_many(corpus())
    stats = db.stats()
    assert stats["documents"] == 60 and stats["run_postings"] + stats["fresh_postings"] > 0
    # The bucket figures walk every posting: only with deep=True.
    assert "postings" not in stats and "histogram" not in stats, stats
    deep = db.stats(deep=True)
    assert deep["documents"] == 60 and deep["postings"] == 60 * db.settings["bands"]
    assert sum(deep["histogram"]) == deep["buckets"] and deep["largest"], deep
    assert {k: deep[k] for k in stats} == stats
    report = db.check()
    assert report["clean"] and report["documents"] == 60 and report["problems"] == []
    assert db.check(pages=True)["storage_ok"] is True
    for key, _ in corpus()[:30]:
        db.remove(key)
    assert isinstance(db.compact(), bool)
    db.rebuild(0.8)
    assert db.settings["threshold"] == 0.8 and (db.settings["bands"], db.settings["rows"]) == (16, 8)
    db.rebuild(0.5, bands=20, rows=5)
    assert (db.settings["bands"], db.settings["rows"]) == (20, 5)
    assert db.query(key="g015-0")
    db.labels["source"] = "crawl-7"
    assert db.labels["source"] == "crawl-7" and "source" in db.labels
    assert db.labels.get("other") is None
    with pytest.raises(lshdb.NotFound):
        db.labels["other"]


def test_simhash_search(path: Path) -> None:
    with lshdb.Database.create(path, 0.8, simhash=3) as db:
        db.insert("a", "The quick brown fox jumps over the lazy dog")
        db.insert("b", "Completely unrelated words about storage engines and pages")
        hits = db.simhash_search("The quick brown fox jumps over the lazy dog", 3)
        assert hits[0].key == "a" and hits[0].distance == 0
        assert db.get("a").simhash == hits[0].fingerprint  # type: ignore[union-attr]


def test_closed_handle_refuses_every_call(path: Path) -> None:
    db = lshdb.Database.create(path)
    db.insert("a", "some text to keep")
    db.close()
    db.close()  # idempotent
    assert db.closed
    for call in (
        lambda: db.insert("b", "more text"),
        lambda: db.query("some text"),
        lambda: len(db),
        lambda: db.stats(),
        lambda: list(db.pairs()),
        lambda: db.compact(),
    ):
        with pytest.raises(lshdb.DatabaseClosed, match="closed"):
            call()
    # The file is free again: a new writer opens it.
    with lshdb.Database.open(path) as again:
        assert len(again) == 1


def test_settings_and_create_options(path: Path) -> None:
    with lshdb.Database.create(path, 0.7, shingle="word:2", num_perm=64, bands=8, rows=8) as db:
        s = db.settings
        assert (s["shingle"], s["num_perm"], s["bands"], s["rows"]) == ("word:2", 64, 8, 8)
        assert "closed" not in repr(db)
    assert "closed" in repr(db)


def test_pairs_stream_many_chunks_and_close_while_iterating(db: lshdb.Database) -> None:
    db.insert_many(corpus(groups=150, per_group=10))  # 6,750 pairs: several chunks
    streamed = list(db.pairs())
    assert len(streamed) == len(db.exact_pairs(0.5)) > 5000
    it = db.pairs()
    next(it)
    time.sleep(0.2)  # the producer fills the channel and waits
    db.close()  # does not wait for the iterator to be drained
    with pytest.raises(lshdb.DatabaseClosed):
        for _ in it:
            pass


def test_the_package_namespace_is_its_api() -> None:
    """``lshdb`` only re-exports: its public names are ``__all__``, and the
    public classes are named ``lshdb.X`` (reprs, pickles) wherever they are
    defined; the exceptions stay ``lshdb._errors.X``. The subpackages
    ``lshdb.spark`` and ``lshdb.datasketch`` are attributes once something
    imported them (their tests do), as every imported submodule is."""
    optional = {"spark", "datasketch"}
    assert {n for n in dir(lshdb) if not n.startswith("_")} - optional == set(lshdb.__all__)
    assert len(lshdb.__all__) == len(set(lshdb.__all__))
    for name in ("Database", "Batch", "Labels", "Sketcher", "Hit", "Pair", "StoredDocument", "SimHashHit", "jaccard"):
        assert getattr(lshdb, name).__module__ == "lshdb", name
    assert repr(lshdb.Database) == "<class 'lshdb.Database'>"
    assert lshdb.NotFound.__module__ == "lshdb._errors"
    values = [lshdb.Hit("a", 0.5), lshdb.Pair("a", "b", 0.5), lshdb.SimHashHit("a", 1, 7), lshdb.StoredDocument("a", None, 3, None)]
    for value in values:
        data = pickle.dumps(value)
        assert b"lshdb" in data and b"_results" not in data
        assert pickle.loads(data) == value and type(pickle.loads(data)) is type(value)
    assert repr(values[0]) == "Hit(key='a', similarity=0.5)"
