"""The columnar kernels behind lshdb.spark (`sketch_batch`,
`jaccard_pairs`) give the values of the Sketcher and of lshdb.jaccard."""

from __future__ import annotations

import numpy as np
import pytest

import lshdb
from lshdb import _lshdb

TEXTS = ["the quick brown fox jumps over the lazy dog", "", "   ", "hi", "the quick brown fox jumped over a lazy dog"]


def test_sketch_batch_equals_band_keys_and_shingles() -> None:
    sk = lshdb.Sketcher(threshold=0.7)
    keys, offsets, values = _lshdb.sketch_batch(sk._sk, TEXTS)
    assert keys.shape == (len(TEXTS), sk.bands)
    sets = sk.shingles(TEXTS)
    for i, text in enumerate(TEXTS):
        assert list(values[offsets[i] : offsets[i + 1]]) == list(sets[i])
        if len(sets[i]):
            assert list(keys[i]) == list(sk.band_keys([text])[0])
        else:  # no shingles: no keys either (the database refuses such a text)
            assert not keys[i].any()


def test_jaccard_pairs_equals_jaccard_and_sorts_unsorted_sets() -> None:
    sk = lshdb.Sketcher()
    sets = sk.shingles(TEXTS)
    a = [sets[0], sets[0], sets[1], sets[3][::-1]]
    b = [sets[4], sets[0], sets[1], np.concatenate([sets[3], sets[3]])]

    def flat(xs: list) -> tuple:  # type: ignore[type-arg]
        offsets = np.cumsum([0] + [len(x) for x in xs]).astype(np.int64)
        return offsets, np.concatenate(xs).astype(np.uint32)

    sims = _lshdb.jaccard_pairs(*flat(a), *flat(b))
    assert list(sims) == [lshdb.jaccard(x, y) for x, y in zip(a, b)]
    assert sims[1] == 1.0 and sims[3] == 1.0
    with pytest.raises(lshdb.InvalidInput):
        _lshdb.jaccard_pairs(np.array([0, 5], np.int64), np.zeros(2, np.uint32), *flat(b[:1]))
    with pytest.raises(lshdb.InvalidInput):
        _lshdb.jaccard_pairs(*flat(a), *flat(b[:2]))
