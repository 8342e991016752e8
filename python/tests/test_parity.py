"""What the Rust ``Database`` does, Python does (issue 22): top-k with its
recall estimate, containment search and its index, dedup-on-write of many
documents on the bulk path, item sets in bulk, and int keys that round-trip
— each with the misuse that must raise a clear error."""

from __future__ import annotations

import random
from pathlib import Path
from typing import List, Tuple, Union

import numpy as np
import pytest

import lshdb

from conftest import corpus

FOX = "The quick brown fox jumps over the lazy dog"
MANUAL = (
    "To install the package, run the installer and follow the instructions on screen. "
    "Then restart the computer and log in again."
)


def test_top_k_ranks_by_similarity_whatever_it_is_and_reports_recall(db: lshdb.Database) -> None:
    db.insert_many(corpus(groups=10))
    query = dict(corpus(groups=1))["g000-0"]
    top = db.query(query, top=3)
    assert [h.key for h in top][:1] == ["g000-0"] and len(top) == 3
    assert [h.similarity for h in top] == sorted((h.similarity for h in top), reverse=True)
    # Far below the index threshold the plain query finds nothing more; top-k still ranks.
    hits, explain = db.query(query, top=5, explain=True)
    assert 0.0 < explain["recall_estimate"] <= 1.0
    assert db.query(query, explain=True)[1]["recall_estimate"] is None
    assert db.query(key="g000-0", top=1)[0].key in ("g000-1", "g000-2")


def test_top_k_misuse_is_refused(db: lshdb.Database) -> None:
    db.insert("a", FOX)
    with pytest.raises(lshdb.InvalidInput, match="top="):
        db.query(FOX, top=3, threshold=0.5)
    with pytest.raises(lshdb.InvalidInput, match="top="):
        db.query(FOX, top=3, limit=2)
    with pytest.raises(lshdb.InvalidType, match="`top`"):
        db.query(FOX, top="3")  # type: ignore[call-overload]


def test_containment_finds_the_document_holding_a_passage(path: Path) -> None:
    with lshdb.Database.create(path, 0.8, containment=True) as db:
        db.insert("manual", MANUAL)
        db.insert("fox", FOX)
        assert db.settings["containment"] is not None
        hits, explain = db.query("run the installer and follow the instructions on screen", containment=0.9, explain=True)
        assert [h.key for h in hits] == ["manual"]
        assert hits[0].containment == 1.0 and hits[0].jaccard < 0.5
        assert isinstance(hits[0], lshdb.ContainmentHit)
        assert not explain["scanned"] and 0 < explain["recall_estimate"] <= 1
        assert db.query(items=None, key="manual", containment=0.5) == []
        assert db.query("run the installer", containment=0.9, limit=0) == []


def test_containment_without_its_index_raises_until_rebuilt(db: lshdb.Database) -> None:
    db.insert("manual", MANUAL)
    passage = "run the installer and follow the instructions on screen"
    with pytest.raises(lshdb.IndexDisabled, match=r"rebuild\(containment=True\)"):
        db.query(passage, containment=0.9)
    hits, explain = db.query(passage, containment=0.9, exhaustive=True, explain=True)
    assert [h.key for h in hits] == ["manual"] and explain["scanned"]
    db.rebuild(containment=True)
    assert db.settings["containment"] is not None
    assert [h.key for h in db.query(passage, containment=0.9)] == ["manual"]
    db.rebuild(containment=False)
    assert db.settings["containment"] is None
    db.rebuild(0.6, containment=True)
    assert db.settings["threshold"] == 0.6 and db.settings["containment"] is not None


def test_containment_misuse_is_refused(db: lshdb.Database) -> None:
    db.insert("a", FOX)
    for bad in ({"threshold": 0.5}, {"top": 2}):
        with pytest.raises(lshdb.InvalidInput, match="containment"):
            db.query(FOX, containment=0.8, exhaustive=True, **bad)  # type: ignore[call-overload]
    with pytest.raises(lshdb.InvalidInput, match="containment"):
        db.query(FOX, containment=1.5, exhaustive=True)
    with pytest.raises(lshdb.InvalidInput, match="exhaustive"):
        db.query(FOX, exhaustive=True)
    with pytest.raises(lshdb.InvalidInput, match="rebuild"):
        db.rebuild()
    with pytest.raises(lshdb.InvalidInput, match="bands and rows"):
        db.rebuild(bands=4)


def test_insert_unique_many_decides_as_insert_unique_one_by_one(path: Path, tmp_path: Path) -> None:
    docs = corpus(groups=30) + [("empty", "   ")]
    keys = [k for k, _ in docs]
    texts = [t for _, t in docs]
    with lshdb.Database.create(path, 0.5) as bulk, lshdb.Database.create(tmp_path / "one.lshdb", 0.5) as one:
        bulk.insert("seed", texts[0])
        one.insert("seed", texts[0])
        result = bulk.insert_unique_many(keys, texts, threshold=0.6, batch=7, duplicate_of="best")
        assert isinstance(result, lshdb.UniqueResult)
        expected_inserted: List[str] = []
        for key, text in docs:
            try:
                hit = one.insert_unique(key, text, 0.6)
            except lshdb.InvalidInput:
                assert "empty" in result.rejected[key]
                continue
            if hit is None:
                expected_inserted.append(key)
            else:
                assert result.duplicates[key] == hit
        assert result.inserted == expected_inserted
        assert result.duplicates["g000-0"].key == "seed"
        assert 1 < result.commits < len(docs)  # batched, not one per document
        assert sorted(bulk.keys()) == sorted(one.keys())


def test_insert_unique_many_decides_the_same_within_a_tiny_memory(path: Path, tmp_path: Path) -> None:
    # Three chunks of 4,096 documents: later chunks are looked up in what
    # earlier ones committed.
    rng = random.Random(7)
    words = [f"w{i}" for i in range(2000)]
    texts = []
    for g in range(3000):
        base = " ".join(rng.choice(words) for _ in range(12))
        texts += [base, base + " extra", f"{base} {words[g % 2000]} more"]
    keys = [f"k{i}" for i in range(len(texts))]
    with lshdb.Database.create(path, 0.5) as roomy, lshdb.Database.create(tmp_path / "tiny.lshdb", 0.5) as tiny:
        wide = roomy.insert_unique_many(keys, texts, threshold=0.6, duplicate_of="best")
        # 4 KiB: a kilobyte for held documents (a commit after every
        # chunk) and one for the look-up caches (every probe reads the file).
        narrow = tiny.insert_unique_many(keys, texts, threshold=0.6, memory=4096, duplicate_of="best")
        assert len(wide.inserted) > 2000 and len(wide.duplicates) > 2000
        assert narrow.commits >= 3 > wide.commits
        assert narrow.inserted == wide.inserted
        assert narrow.duplicates == wide.duplicates
        for bad in (-1, 1.5, True, "1G"):
            with pytest.raises(lshdb.InvalidInput, match="memory"):
                tiny.insert_unique_many(["z"], ["some text here"], memory=bad)  # type: ignore[arg-type]


def test_insert_unique_many_names_the_first_near_duplicate_found_by_default(path: Path, tmp_path: Path) -> None:
    # Triples: `a` and `b` extend a base text by four and by two words (not
    # near-duplicates of each other), then the base itself, near both and
    # nearer to `b`, in a second call: it finds them stored. (Documents
    # accepted in the same call and not committed yet are all checked: the
    # most similar of them is named, as with "best".)
    rng = random.Random(11)
    words = [f"w{i}" for i in range(3000)]
    docs = []
    for g in range(200):
        base = " ".join(rng.choice(words) for _ in range(20))
        docs.append((f"a{g}", f"{base} {' '.join(rng.choice(words) for _ in range(4))}"))
        docs.append((f"b{g}", f"{base} {' '.join(rng.choice(words) for _ in range(2))}"))
        docs.append((f"q{g}", base))
    stored = [d for d in docs if d[0][0] != "q"]
    queries = [d for d in docs if d[0][0] == "q"]
    with lshdb.Database.create(path, 0.8) as a, lshdb.Database.create(tmp_path / "best.lshdb", 0.8) as b:
        for db in (a, b):
            assert db.insert_many(stored)["inserted"] == 400
        keys, texts = [k for k, _ in queries], [t for _, t in queries]
        first = a.insert_unique_many(keys, texts)
        best = b.insert_unique_many(keys, texts, duplicate_of="best")
        assert first.inserted == best.inserted and sorted(first.duplicates) == sorted(best.duplicates)
        assert len(first.duplicates) > 150
        kept = set(first.inserted) | {k for k, _ in stored}
        text = dict(docs)
        less = 0
        for key, hit in first.duplicates.items():
            assert hit.key in kept and 0.8 <= hit.similarity <= best.duplicates[key].similarity
            named = [h for h in a.query(text[key], max_bucket=10**9) if h.key == hit.key]
            assert named == [hit]  # its exact similarity
            less += hit.similarity < best.duplicates[key].similarity
        assert less > 0  # not the best every time: the option does something
        for bad, error in (("most", lshdb.InvalidInput), ("", lshdb.InvalidInput), (None, lshdb.InvalidType), (1, lshdb.InvalidType)):
            with pytest.raises(error, match="duplicate_of"):
                a.insert_unique_many(["z"], ["some text here"], duplicate_of=bad)  # type: ignore[arg-type]


def test_insert_unique_many_takes_item_sets_and_columns(db: lshdb.Database) -> None:
    baskets = [["milk", "bread", "eggs", "butter"], ["milk", "bread", "eggs", "butter", "jam"], ["nails", "saw"]]
    result = db.insert_unique_many(np.array(["a", "b", "c"]), items=baskets, threshold=0.7)
    assert result.inserted == ["a", "c"] and result.duplicates["b"].key == "a"
    assert db.query(items=["nails", "saw"])[0].key == "c"
    with pytest.raises(lshdb.InvalidInput, match="texts= or items="):
        db.insert_unique_many(["x"], ["t"], items=[["i"]])
    with pytest.raises(lshdb.InvalidInput, match="texts= or items="):
        db.insert_unique_many(["x"])
    with pytest.raises(lshdb.InvalidInput, match="2 keys but 1"):
        db.insert_unique_many(["x", "y"], ["some text"])
    with pytest.raises(lshdb.InvalidInput, match="threshold"):
        db.insert_unique_many(["x"], ["some text"], threshold=1.5)


def test_insert_many_loads_item_sets(db: lshdb.Database) -> None:
    report = db.insert_many(keys=["alice", "bob"], items=[["milk", "bread", 42], [b"nails", "saw"]])
    assert report["inserted"] == 2 and report["commits"] == 1
    assert db.query(items=["milk", "bread", "42"])[0] == lshdb.Hit("alice", 1.0)
    with pytest.raises(lshdb.InvalidInput, match="one of texts=, items= and shingles="):
        db.insert_many(keys=["x"], texts=["t"], items=[["i"]])
    with pytest.raises(lshdb.InvalidInput, match="1 keys but 2"):
        db.insert_many(keys=["x"], items=[["i"], ["j"]])


def test_int_keys_round_trip_everywhere(path: Path) -> None:
    with lshdb.Database.create(path, 0.5) as db:
        db.insert(7, FOX)
        db.insert_many({8: FOX + " again", 9: MANUAL})
        db.insert_many(keys=np.array([10, 11], dtype=np.int64), texts=[FOX + "!", "something else entirely here"])
        db.insert_many(iter([(12, FOX + "?")]))
        with db.batch() as b:
            b.insert(13, FOX + ".")
            b.remove(11)
        assert sorted(db.keys()) == [7, 8, 9, 10, 12, 13]
        assert db.labels["python.keys"] == "int"
        assert db.get(7) is not None and db.get(7).key == 7  # type: ignore[union-attr]
        assert 7 in db and "7" not in db and 11 not in db
        assert all(isinstance(h.key, int) for h in db.query(FOX))
        assert db.query(key=7)[0].key in (8, 10, 12, 13)
        assert db.insert_unique(14, FOX) == db.query(FOX, limit=1)[0]
        assert all(isinstance(p.a, int) and isinstance(p.b, int) for p in db.pairs())
        assert all(isinstance(h.key, int) for g in db.groups() for h in g)
        assert all(isinstance(p.a, int) for p in db.exact_pairs(0.5))
        result = db.insert_unique_many([20, 21], [FOX, "a new text about nothing"])
        assert result.inserted == [21] and isinstance(result.duplicates[20].key, int)
        assert db.remove(21) and not db.remove(21)
    with lshdb.Database.open(path, read_only=True) as again:
        assert again.get(9).key == 9  # type: ignore[union-attr]
        with pytest.raises(lshdb.InvalidInput, match=r"keys are int, and '9' is str \(pass 9\)"):
            again.get("9")


def test_int_and_str_keys_do_not_mix(path: Path) -> None:
    with lshdb.Database.create(path, 0.5) as db:
        db.insert("a", FOX)
        with pytest.raises(lshdb.InvalidInput, match="keys are str"):
            db.insert(1, MANUAL)
        with pytest.raises(lshdb.InvalidInput, match="keys are str"):
            db.get(1)
        assert 1 not in db
        with pytest.raises(lshdb.InvalidInput, match="mix str and int"):
            db.insert_many(keys=["b", 2], texts=[MANUAL, MANUAL])
        with pytest.raises(lshdb.InvalidInput, match="mix str and int"):
            mixed: List[Tuple[Union[str, int], str]] = [("b", MANUAL), (2, MANUAL)]
            db.insert_many(iter(mixed))
        with pytest.raises(lshdb.InvalidType, match="must be str or int, not bool"):
            db.insert(True, MANUAL)  # type: ignore[arg-type]
        assert sorted(db.keys()) == ["a", "b"]  # the pair before the mixed one was loaded
        assert "python.keys" not in db.labels


def test_a_new_int_keyed_file_refuses_str_keys(tmp_path: Path) -> None:
    db = lshdb.Database.memory()
    db.insert_many(keys=[1, 2], texts=[FOX, MANUAL])
    with pytest.raises(lshdb.InvalidInput, match="keys are int"):
        db.insert_many(keys=["a"], texts=[FOX])
    with pytest.raises(lshdb.InvalidInput, match="keys are int"):
        db.query(key="1")
    with pytest.raises(lshdb.InvalidInput, match="keys are int"):
        db.batch().remove("1")


def test_documents_export_and_shingles_import_round_trip(db: lshdb.Database, tmp_path: Path) -> None:
    db.insert_many(corpus(groups=5))
    exported = list(db.documents())
    assert [d.key for d in exported] == list(db.keys())
    assert exported[0].text is not None and exported[0].shingles == sorted(set(exported[0].shingles))
    with lshdb.Database.create(tmp_path / "copy.lshdb", 0.5) as copy:
        report = copy.insert_many(keys=[d.key for d in exported], shingles=[np.array(d.shingles, np.uint32) for d in exported])
        assert report["inserted"] == len(exported)
        assert sorted(copy.pairs()) == sorted(db.pairs())
        with pytest.raises(lshdb.InvalidInput, match="uint32"):
            copy.insert_many(keys=["x"], shingles=[[-1, 5]])
        with pytest.raises(lshdb.InvalidType, match="uint32"):
            copy.insert_many(keys=["x"], shingles=[["a"]])
