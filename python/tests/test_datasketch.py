"""lshdb.datasketch beyond datasketch's own tests (those are in compat/):
exact sketches, verified answers, keys of every type, file storage, and
misuse — wrong types, num_perm mismatches, duplicate keys, empty indexes,
paths that exist."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Dict, Hashable, List

import numpy as np
import pytest

import lshdb
import lshdb.datasketch
from lshdb.datasketch import LeanMinHash, MinHash, MinHashLSH, MinHashLSHEnsemble, MinHashLSHForest


def mh(tokens: List[str], num_perm: int = 128) -> MinHash:
    m = MinHash(num_perm=num_perm)
    m.update_batch(t.encode() for t in tokens)
    return m


def words(n: int, prefix: str = "w") -> List[str]:
    return [f"{prefix}{i}" for i in range(n)]


# -- MinHash ---------------------------------------------------------------


def test_minhash_jaccard_and_count_are_exact_from_the_kept_set() -> None:
    a, b = mh(["a", "b", "c"]), mh(["a", "b", "d"])
    assert a.jaccard(b) == 0.5
    assert a.count() == 3.0
    a.merge(b)
    assert a.count() == 4.0 and a.jaccard(b) == 0.75


def test_minhash_hashvalues_are_datasketchs() -> None:
    # What datasketch (8d4bda1) gives for MinHash(num_perm=4) updated with
    # b"a" and b"lshdb"; checked against datasketch's minhash.py directly.
    m = MinHash(num_perm=4)
    m.update(b"a")
    m.update(b"lshdb")
    assert m.hashvalues.dtype == np.uint64
    assert m.hashvalues.tolist() == [297616339, 401852043, 2013617805, 849742759]
    import datasketch  # python/requirements-test.txt pins it

    # datasketch 2.0 defaults to its "affine32" scheme; ours is "legacy"
    d = datasketch.MinHash(num_perm=64, seed=7, scheme="legacy")
    ours = MinHash(num_perm=64, seed=7)
    for t in (b"x", b"y", b"zz"):
        d.update(t)
        ours.update(t)
    assert np.array_equal(d.hashvalues, ours.hashvalues)


def test_minhash_from_hashvalues_estimates_and_cannot_be_indexed() -> None:
    a = mh(words(50))
    copy = MinHash(hashvalues=a.hashvalues)
    assert copy.tokens is None and copy.jaccard(a) == 1.0
    lsh = MinHashLSH(threshold=0.5)
    with pytest.raises(ValueError, match="hash values alone"):
        lsh.insert("x", copy)


def test_minhash_misuse() -> None:
    with pytest.raises(TypeError):
        MinHash(num_perm="128")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        MinHash(num_perm=0)
    with pytest.raises(ValueError, match="different numbers"):
        mh(["a"], 64).jaccard(mh(["a"], 128))
    with pytest.raises(ValueError, match="different seeds"):
        MinHash(seed=1).merge(MinHash(seed=2))
    with pytest.raises(TypeError):
        mh(["a"]).jaccard("a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2\\*\\*64"):
        MinHash(hashfunc=lambda b: -1).update(b"a")
    with pytest.raises(TypeError):
        MinHash().update("a str, where the default hashfunc takes bytes")


def test_lean_minhash_is_frozen_hashable_and_keeps_the_set() -> None:
    m = mh(["a", "b"])
    lean = LeanMinHash(m)
    assert lean == LeanMinHash(m) and hash(lean) == hash(LeanMinHash(m))
    assert lean.jaccard(mh(["a", "b", "c", "d"])) == 0.5
    with pytest.raises(TypeError):
        lean.update(b"c")
    assert pickle.loads(pickle.dumps(lean)) == lean
    lsh = MinHashLSH(threshold=0.5)
    lsh.insert("lean", lean)
    assert lsh.query(m) == ["lean"]


def test_bulk_makes_one_sketch_per_token_list() -> None:
    ms = MinHash.bulk([[b"a", b"b"], [b"c"]], num_perm=32)
    assert [m.count() for m in ms] == [2.0, 1.0] and len(ms[0]) == 32


# -- MinHashLSH ------------------------------------------------------------


def test_lsh_answers_are_verified_not_candidates() -> None:
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    base = words(100)
    lsh.insert("same", mh(base))
    lsh.insert("close", mh(base[:95] + words(5, "x")))  # Jaccard 95/105 = 0.905
    lsh.insert("half", mh(base[:60] + words(40, "y")))  # Jaccard 60/140 = 0.43
    q = mh(base)
    assert lsh.query(q) == ["same", "close"]  # best first; "half" is never returned


def test_lsh_keys_of_every_hashable_type_round_trip(tmp_path: Path) -> None:
    keys: List[Any] = [0, 7, -3, "", "7", "\0tricky", b"7", ("a", 1), 2.5, (1, (2, b"x"))]
    config = {"type": "lshdb", "path": str(tmp_path / "k.lshdb")}
    with MinHashLSH(threshold=0.5, num_perm=64, storage_config=config) as lsh:
        for i, key in enumerate(keys):
            lsh.insert(key, mh(words(20, f"k{i}-"), 64))
        for i, key in enumerate(keys):
            assert key in lsh
            assert lsh.query(mh(words(20, f"k{i}-"), 64)) == [key]
    with pytest.raises(TypeError, match="hashable"):
        MinHashLSH(threshold=0.5).insert(["a"], mh(["a"]))  # type: ignore[arg-type]


def test_lsh_misuse() -> None:
    lsh = MinHashLSH(threshold=0.5, num_perm=16)
    with pytest.raises(TypeError, match="MinHash"):
        lsh.insert("a", {"a"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="length 16"):
        lsh.insert("a", mh(["a"], 32))
    with pytest.raises(ValueError, match="length 16"):
        lsh.query(mh(["a"], 32))
    assert lsh.query(mh(["a"], 16)) == []  # an empty index
    assert lsh.query(MinHash(16)) == []  # an empty query
    with pytest.raises(ValueError, match="empty"):
        lsh.insert("a", MinHash(16))
    lsh.insert("a", mh(["a"], 16))
    with pytest.raises(ValueError, match="already exists"):
        lsh.insert("a", mh(["b"], 16))
    lsh.insert("a", mh(["b"], 16), check_duplication=False)  # replaces
    assert lsh.query(mh(["b"], 16)) == ["a"] and lsh.query(mh(["a"], 16)) == []
    with pytest.raises(ValueError, match="does not exist"):
        lsh.remove("missing")
    for bad in (dict(threshold=1.5), dict(num_perm=1), dict(weights=(0.5, 0.6)), dict(params=(10, 20))):
        with pytest.raises(ValueError):
            MinHashLSH(**bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MinHashLSH(threshold="0.5")  # type: ignore[arg-type]


def test_lsh_weights_and_params_choose_the_banding() -> None:
    assert (MinHashLSH(threshold=0.5, num_perm=32, params=(8, 4)).b, MinHashLSH(num_perm=32, params=(8, 4)).r) == (8, 4)
    recall_first = MinHashLSH(threshold=0.8, weights=(0.1, 0.9))
    precision_first = MinHashLSH(threshold=0.8, weights=(0.9, 0.1))
    assert recall_first.b > precision_first.b


def test_lsh_insertion_session_writes_nothing_when_the_block_raises() -> None:
    lsh = MinHashLSH(threshold=0.5, num_perm=32)
    with pytest.raises(RuntimeError):
        with lsh.insertion_session() as s:
            s.insert("a", mh(["a"], 32))
            raise RuntimeError("stop")
    assert lsh.is_empty() and "a" not in lsh
    with lsh.insertion_session(buffer_size=2) as s:
        for i in range(5):
            s.insert(i, mh([str(i)], 32))
        with pytest.raises(ValueError, match="already exists"):
            s.insert(4, mh(["4"], 32))
    assert all(i in lsh for i in range(5)) and len(lsh) == 5


def test_lsh_storage_config(tmp_path: Path) -> None:
    path = tmp_path / "lsh.lshdb"
    config = {"type": "lshdb", "path": str(path)}
    with MinHashLSH(threshold=0.6, num_perm=64, storage_config=config) as lsh:
        lsh.insert("a", mh(words(30), 64))
    assert path.exists()
    with MinHashLSH(threshold=0.6, num_perm=64, storage_config=config) as again:  # reopened, not recreated
        assert "a" in again and again.query(mh(words(30), 64)) == ["a"]
        with pytest.raises(ValueError, match="file-backed"):
            again.get_counts()
        assert pickle.loads(pickle.dumps(MinHashLSH(threshold=0.6, num_perm=64))).is_empty()
    with pytest.raises(ValueError, match="other parameters"):
        MinHashLSH(threshold=0.9, num_perm=64, storage_config=config)
    other = tmp_path / "notes.txt"
    other.write_text("not a database")
    with pytest.raises(lshdb.NotADatabase):
        MinHashLSH(storage_config={"type": "lshdb", "path": str(other)})
    with pytest.raises(ValueError, match="redis"):
        MinHashLSH(storage_config={"type": "redis", "redis": {"host": "localhost"}})
    with pytest.raises(TypeError, match="path"):
        MinHashLSH(storage_config={"type": "lshdb"})


def test_lsh_merge_needs_the_same_banding() -> None:
    a, b = MinHashLSH(threshold=0.5, num_perm=32), MinHashLSH(threshold=0.5, num_perm=32)
    a.insert("x", mh(["x"], 32))
    b.insert("y", mh(["y"], 32))
    a.merge(b)
    assert "y" in a and a.query(mh(["y"], 32)) == ["y"]
    with pytest.raises(ValueError, match="different initialization"):
        a.merge(MinHashLSH(threshold=0.9, num_perm=32))


# -- MinHashLSHForest ------------------------------------------------------


def test_forest_returns_the_top_k_by_verified_jaccard(tmp_path: Path) -> None:
    forest = MinHashLSHForest(num_perm=128, storage_config={"type": "lshdb", "path": str(tmp_path / "f.lshdb")})
    base = words(40)
    for n in range(0, 20, 2):  # n words of 40 replaced
        forest.add(f"d{n}", mh(base[n:] + words(n, "z"), 128))
    assert forest.is_empty()  # not searchable before index(), as in datasketch
    forest.index()
    assert forest.query(mh(base), 3) == ["d0", "d2", "d4"]
    with pytest.raises(ValueError, match="positive"):
        forest.query(mh(base), 0)
    with pytest.raises(ValueError, match="already been added"):
        forest.add("d0", mh(base))
    with pytest.raises(ValueError, match="out of range"):
        forest.add("short", mh(base, 64))
    forest.close()


# -- MinHashLSHEnsemble ----------------------------------------------------


def test_ensemble_finds_the_sets_that_contain_the_query() -> None:
    ens = MinHashLSHEnsemble(threshold=0.8, num_perm=128)
    big = words(200)
    ens.index([("big", mh(big), 200), ("other", mh(words(50, "o")), 50), ("small", mh(big[:20]), 20)])
    query = mh(big[:50])  # all of it in "big", 20 of 50 in "small"
    assert list(ens.query(query, 50)) == ["big"]
    with pytest.raises(ValueError, match="non-empty"):
        ens.index([("again", mh(["a"]), 1)])


def test_ensemble_misuse() -> None:
    ens = MinHashLSHEnsemble(threshold=0.5)
    with pytest.raises(ValueError, match="empty"):
        ens.index([])
    with pytest.raises(ValueError, match="positive"):
        ens.index([("a", mh(["a"]), 0)])
    with pytest.raises(ValueError, match="twice"):
        ens.index([("a", mh(["a"]), 1), ("a", mh(["b"]), 1)])
    assert ens.is_empty()
    with pytest.raises(ValueError, match="m must be"):
        MinHashLSHEnsemble(m=1)
    with pytest.raises(TypeError):
        ens.query(mh(["a"]), "1")  # type: ignore[arg-type]


def test_lsh_and_forest_answers_agree_with_exact_jaccard() -> None:
    """Against a brute-force oracle over random near-duplicate sets: every
    MinHashLSH answer has exact Jaccard ≥ threshold and they come best
    first; the forest's top-k come best first."""
    rng = np.random.default_rng(7)
    sets: Dict[Hashable, MinHash] = {}
    for g in range(10):
        base = [f"g{g}-{i}" for i in range(40)]
        for v in range(4):
            keep = rng.choice(40, size=40 - 4 * v, replace=False)
            sets[(g, v)] = mh([base[i] for i in keep] + [f"n{g}-{v}-{i}" for i in range(v)])
    lsh = MinHashLSH(threshold=0.7, num_perm=128)
    forest = MinHashLSHForest(num_perm=128)
    with lsh.insertion_session() as s:
        for key, m in sets.items():
            s.insert(key, m)
            forest.add(key, m)
    forest.index()
    found = 0
    for key, q in sets.items():
        exact: Dict[Hashable, float] = {k: q.jaccard(m) for k, m in sets.items()}
        answer = lsh.query(q)
        assert all(exact[k] >= 0.7 for k in answer)
        assert [exact[k] for k in answer] == sorted((exact[k] for k in answer), reverse=True)
        found += len(answer)
        top = forest.query(q, 3)
        assert top[0] == key and [exact[k] for k in top] == sorted((exact[k] for k in top), reverse=True)
    truth = sum(1 for q in sets.values() for m in sets.values() if q.jaccard(m) >= 0.7)
    assert found >= 0.9 * truth, (found, truth)


def test_a_key_longer_than_lshdb_takes_is_refused_before_anything_is_written() -> None:
    lsh = MinHashLSH(threshold=0.5, num_perm=32)
    with pytest.raises(ValueError, match="longest lshdb key"):
        lsh.insert("k" * (lshdb.MAX_KEY_BYTES + 1), mh(["a"], 32))
    with pytest.raises(ValueError, match="longest lshdb key"):
        with lsh.insertion_session() as s:
            s.insert("fine", mh(["b"], 32))
            s.insert(("t",) * lshdb.MAX_KEY_BYTES, mh(["c"], 32))
    assert lsh.is_empty()


def test_a_file_index_without_fsyncs_is_durable_once_closed(tmp_path: Path) -> None:
    config = {"type": "lshdb", "path": str(tmp_path / "fast.lshdb"), "durability": "none"}
    with MinHashLSH(threshold=0.5, num_perm=32, storage_config=config) as lsh:
        for i in range(50):
            lsh.insert(i, mh([f"{i}-{j}" for j in range(5)], 32))
    with MinHashLSH(threshold=0.5, num_perm=32, storage_config=dict(config, durability="immediate")) as again:
        assert all(i in again for i in range(50))
    with pytest.raises(ValueError, match="durability"):
        MinHashLSH(storage_config=dict(config, durability="eventual"))


def test_minhash_takes_datasketchs_arguments_and_no_others() -> None:
    m = MinHash(num_perm=16, seed=3, gpu_mode="detect", hashobj=None)
    assert len(m) == 16 and m.seed == 3
    with pytest.raises(TypeError):
        MinHash(num_perms=16)  # type: ignore[call-arg]


def test_every_datasketch_import_path_works_and_unsupported_sketches_say_so() -> None:
    import importlib

    for module, name in [
        ("minhash", "MinHash"),
        ("lean_minhash", "LeanMinHash"),
        ("hashfunc", "sha1_hash32"),
        ("lsh", "MinHashLSH"),
        ("lshforest", "MinHashLSHForest"),
        ("lshensemble", "MinHashLSHEnsemble"),
        ("weighted_minhash", "WeightedMinHashGenerator"),
        ("b_bit_minhash", "bBitMinHash"),
    ]:
        public = importlib.import_module(f"lshdb.datasketch.{module}")
        assert getattr(public, name) is getattr(lshdb.datasketch, name)
    with pytest.raises(NotImplementedError, match="weighted"):
        lshdb.datasketch.WeightedMinHashGenerator(100, sample_size=128)
    with pytest.raises(NotImplementedError, match="b-bit"):
        lshdb.datasketch.bBitMinHash(MinHash())


def test_minhash_schemes_other_than_legacy_are_refused() -> None:
    assert MinHash().scheme == "legacy" and MinHash(scheme="legacy").scheme == "legacy"
    with pytest.raises(NotImplementedError, match="affine32"):
        MinHash(scheme="affine32")
    with pytest.raises(ValueError, match="scheme must be"):
        MinHash(scheme="fast")
