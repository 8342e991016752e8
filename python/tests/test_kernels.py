"""Sketch kernels: the values the database stores, for every input type.

The golden values are those of the Rust library's tests/golden.rs (the
file-format contract); if they change, stored files break.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pandas as pd
import pytest

import lshdb
from conftest import corpus

TEXT = "The quick brown fox jumps over the lazy dog"


def checksum(values: np.ndarray) -> int:
    """tests/golden.rs's order-sensitive checksum."""
    return sum((i + 1) * int(v) for i, v in enumerate(values)) % 2**64


@pytest.mark.parametrize(
    "shingle,length,first,total",
    [
        ("char:5", 39, [16_851_044, 70_487_208, 125_788_067], 2_063_065_396_656),
        ("word:2", 8, [170_037_781, 1_524_795_570, 1_574_220_190], 123_982_790_451),
        ("stopword:3", 3, [316_708_193, 3_087_764_690, 4_039_892_514], 18_611_915_115),
    ],
)
def test_shingles_equal_the_golden_values(shingle: str, length: int, first: list, total: int) -> None:  # type: ignore[type-arg]
    (s,) = lshdb.Sketcher(shingle).shingles([TEXT])
    assert s.dtype == np.uint32 and len(s) == length
    assert s[:3].tolist() == first and checksum(s) == total


def test_signature_band_keys_and_simhash_equal_the_golden_values() -> None:
    sk = lshdb.Sketcher()  # char:5, 128 one-permutation values, t = 0.8 → 16 × 8
    assert (sk.bands, sk.rows) == (16, 8)
    sig = sk.signatures([TEXT])
    assert sig.shape == (1, 128) and sig.dtype == np.uint32
    assert sig[0, :4].tolist() == [3_891_990_616, 2_040_597_577, 3_087_817_833, 3_891_990_616]
    assert checksum(sig[0]) == 19_480_129_835_163
    keys = sk.band_keys([TEXT])
    assert keys.shape == (1, 16) and keys.dtype == np.uint64
    assert keys[0, :2].tolist() == [9_085_031_064_201_398_972, 4_109_177_842_018_024_215]
    assert sk.simhash([TEXT]).tolist() == [0xB677_513E_3A32_630B]


def test_kernels_match_what_the_database_stores(path: Path) -> None:
    docs = corpus(groups=10)
    with lshdb.Database.create(path, 0.5, simhash=3) as db:
        db.insert_many(docs)
        sk = db.sketcher()
        assert sk.settings == db.settings
        texts = [t for _, t in docs]
        shingles = sk.shingles(texts)
        fingerprints = sk.simhash(texts)
        for (key, _), s, fp in zip(docs, shingles, fingerprints):
            doc = db.get(key)
            assert doc is not None and doc.shingles == len(s) and doc.simhash == int(fp)
        # The stored pairs' similarities are the kernels' exact Jaccard.
        for pair in db.pairs():
            a, b = (dict(docs)[pair.a], dict(docs)[pair.b])
            assert sk.jaccard(a, b) == pair.similarity
        # Two documents share a band key exactly when they are LSH candidates.
        keys = sk.band_keys(texts)
        assert keys.shape == (len(docs), db.settings["bands"])
        assert (keys[0] == keys[1]).any()


def test_every_input_type_gives_the_same_values() -> None:
    sk = lshdb.Sketcher("char:3", num_perm=64, threshold=0.5)
    texts = [t for _, t in corpus(groups=5)] + ["ünïcødé text ✓", ""]
    expected = sk.signatures(texts)
    inputs = [
        tuple(texts),
        np.array(texts),
        np.array(texts, dtype=object),
        pa.array(texts),
        pa.array(texts, type=pa.large_string()),
        pa.array(texts, type=pa.string_view()),
        pa.chunked_array([texts[:4], texts[4:]]),
        pa.array(["skip"] + texts).slice(1),
        pd.Series(texts),
        pd.Series(texts, dtype="string[pyarrow]"),
        iter(texts),
    ]
    for value in inputs:
        np.testing.assert_array_equal(sk.signatures(value), expected, err_msg=repr(type(value)))
    assert (expected[-1] == 2**32 - 1).all()  # no shingles: every value EMPTY
    np.testing.assert_array_equal(sk.signatures(texts, parallel=False), expected)


def test_shingles_as_arrow_and_jaccard() -> None:
    sk = lshdb.Sketcher()
    texts = [TEXT, TEXT + " again", "short"]
    lists = sk.shingles(texts, arrow=True)
    assert isinstance(lists, pa.LargeListArray) and len(lists) == 3
    plain = sk.shingles(texts)
    assert [np.asarray(x).tolist() for x in lists.to_pylist()] == [p.tolist() for p in plain]
    j = lshdb.jaccard(plain[0], plain[1])
    assert j == sk.jaccard(texts[0], texts[1]) and 0 < j < 1
    assert lshdb.jaccard(plain[0][::-1], plain[0]) == 1.0
    pairwise = sk.jaccard(texts, texts[::-1])
    assert pairwise.dtype == np.float64 and pairwise[1] == 1.0


def test_bad_kernel_inputs_raise_invalid_input() -> None:
    sk = lshdb.Sketcher()
    for bad in ("one string", [1, 2], pa.array(["a", None]), pa.array([1, 2]), np.array([["a"]])):
        with pytest.raises(lshdb.InvalidInput):
            sk.signatures(bad)
    with pytest.raises(lshdb.InvalidInput, match="num_perm"):
        lshdb.Sketcher(num_perm=0)
    with pytest.raises(lshdb.InvalidInput, match="shingle"):
        lshdb.Sketcher("letters:3")
