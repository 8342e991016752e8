"""One document pipeline: the database, a `Sketcher` built from the same
configuration and the Spark kernel (`sketch_batch`) give identical shingle
sets, signatures, band keys and SimHash fingerprints (all come from the
library's `lshdb::Sketcher`; tests/sketcher.rs pins the Rust side)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
