"""One document pipeline: the database, a `Sketcher` built from the same
configuration and the Spark kernel (`sketch_batch`) give identical shingle
sets, signatures, band keys and SimHash fingerprints (all come from the
library's `lshdb::Sketcher`; tests/sketcher.rs pins the Rust side)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lshdb
from lshdb import _lshdb
from conftest import corpus


def test_database_sketcher_and_spark_kernel_agree(path: Path) -> None:
    docs = corpus(groups=8)
    texts = [t for _, t in docs]
    with lshdb.Database.create(path, 0.5, simhash=3) as db:
        db.insert_many(docs)
        from_db = db.sketcher()
        own = lshdb.Sketcher(threshold=0.5, bands=db.settings["bands"], rows=db.settings["rows"])
        for sk in (from_db, own):
            sets = sk.shingles(texts)
            keys = sk.band_keys(texts)
            np.testing.assert_array_equal(sk.signatures(texts), from_db.signatures(texts))
            np.testing.assert_array_equal(keys, from_db.band_keys(texts))
            np.testing.assert_array_equal(sk.simhash(texts), from_db.simhash(texts))
            # The Spark job's kernel: the same keys and sets in one pass.
            spark_keys, spark_offsets, spark_values = _lshdb.sketch_batch(sk._sk, texts)
            np.testing.assert_array_equal(spark_keys, keys)
            np.testing.assert_array_equal(spark_offsets, np.cumsum([0] + [len(x) for x in sets]))
            np.testing.assert_array_equal(spark_values, np.concatenate(sets))
            # What the database stored: the set (its size) and fingerprint.
            fingerprints = sk.simhash(texts)
            for i, (key, _) in enumerate(docs):
                doc = db.get(key)
                assert doc is not None
                assert doc.shingles == len(sets[i])
                assert doc.simhash == int(fingerprints[i])
            # What the database probes: its candidates for a new text are
            # the stored documents sharing one of the kernel's band keys.
            for probe in (texts[0] + " and more", texts[5].replace("w1x9", "other")):
                probe_keys = sk.band_keys([probe])[0]
                expected = int((keys == probe_keys).any(axis=1).sum())
                assert 0 < expected < len(docs)
                _, explain = db.query(probe, threshold=0.01, explain=True)
                assert explain["candidates"] == expected


def item_corpus() -> list:
    """Six families of three overlapping item sets (str, bytes and int
    items), disjoint from each other."""
    sets = []
    for g in range(6):
        base: list = [f"product-{g}-{i}" for i in range(20)] + [g * 1000 + i for i in range(5)]
        for v in range(3):
            variant = list(base)
            variant[v] = f"swapped-{g}-{v}".encode()
            sets.append(variant)
    return sets


def test_item_sets_give_the_values_the_database_stores(path: Path) -> None:
    """`Sketcher(items=)` hashes item sets as the database does: the stored
    shingle sets and fingerprints, and the band keys its queries probe."""
    sets = item_corpus()
    keys = [f"s{i:02}" for i in range(len(sets))]
    with lshdb.Database.create(path, 0.5, simhash=3) as db:
        for key, items in zip(keys, sets):
            db.insert_items(key, items)
        stored = {d.key: d.shingles for d in db.documents()}
        from_db = db.sketcher()
        own = lshdb.Sketcher(threshold=0.5, bands=db.settings["bands"], rows=db.settings["rows"])
        for sk in (from_db, own):
            shingles = sk.shingles(items=sets)
            for key, hashes in zip(keys, shingles):
                assert list(hashes) == list(stored[key])
            np.testing.assert_array_equal(sk.shingles(items=sets, arrow=True)[3].as_py(), shingles[3])
            fingerprints = sk.simhash(items=sets)
            assert [int(f) for f in fingerprints] == [db.get(k).simhash for k in keys]  # type: ignore[union-attr]
            signatures = sk.signatures(items=sets)
            assert signatures.shape == (len(sets), sk.num_perm)
            np.testing.assert_array_equal(signatures, sk.signatures(items=sets, parallel=False))
            band_keys = sk.band_keys(items=sets)
            np.testing.assert_array_equal(band_keys, from_db.band_keys(items=sets))
            # Candidates of a new item set: the stored sets sharing a band key.
            probe = sets[4][:-1] + ["one more"]
            probe_keys = sk.band_keys(items=[probe])[0]
            expected = int((band_keys == probe_keys).any(axis=1).sum())
            assert 0 < expected < len(sets)
            _, explain = db.query(items=probe, threshold=0.01, explain=True)
            assert explain["candidates"] == expected
        # 42 and "42" are one item; an empty set has no shingles.
        assert list(own.shingles(items=[[42]])[0]) == list(own.shingles(items=[["42"]])[0])
        assert len(own.shingles(items=[[]])[0]) == 0
        assert (own.signatures(items=[[]]) == 2**32 - 1).all()


def test_sketcher_takes_texts_or_items_not_both() -> None:
    sk = lshdb.Sketcher()
    for call in (sk.shingles, sk.signatures, sk.band_keys, sk.simhash):
        with pytest.raises(lshdb.InvalidInput, match="give texts or items=, not both"):
            call(["a text"], items=[["x"]])
        with pytest.raises(lshdb.InvalidInput, match="give texts or items=, not both"):
            call()
    with pytest.raises(lshdb.InvalidType, match=r"^signatures\(\): argument `items`\[1\]: float is not an item"):
        sk.signatures(items=[["a"], [1.5]])
