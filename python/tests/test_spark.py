"""lshdb.spark on Spark local mode (`local[2]`, one session for the whole
run): planted clusters found exactly and equal to the database's groups,
chained clusters whose removed rows all have a kept verified duplicate,
a huge bucket cut to anchors with measured recall, identical texts
collapsed before the buckets (more copies than max_bucket, all their
pairs found; equal hashes never merge different sets), empty and tiny
documents, ids of several types, the same keys and sets as a database
file, and the bridge into one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, List, Set, Tuple

import pytest

import lshdb

# tools/test.sh installs pyspark and sets LSHDB_REQUIRE_SPARK=1, so that a
# broken install fails these tests instead of skipping them.
if os.environ.get("LSHDB_REQUIRE_SPARK") != "1":
    pytest.importorskip("pyspark")
from pyspark.sql import SparkSession  # noqa: E402

from lshdb import spark as ls  # noqa: E402
from lshdb.spark.candidates import candidates  # noqa: E402
from lshdb.spark.identical import collapse  # noqa: E402
from lshdb.spark.keys import sketch  # noqa: E402

from conftest import corpus  # noqa: E402


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lshdb-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.adaptive.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    session.sparkContext.setCheckpointDir(str(tmp_path_factory.mktemp("checkpoints")))
    yield session
    session.stop()


def planted() -> List[Tuple[str, str]]:
    """20 clusters of 3 (one word of 40 changed per copy), 10 unrelated
    texts, and the edge cases: two empty texts, white space, two equal tiny
    texts (one shingle each: duplicates) and another tiny one."""
    docs = corpus(groups=20, per_group=3)
    docs += [(f"single-{i}", " ".join(f"s{i}y{j}" for j in range(30))) for i in range(10)]
    docs += [("empty-1", ""), ("empty-2", ""), ("blank", "   \n"), ("tiny-1", "hi"), ("tiny-2", "hi"), ("tiny-3", "ok")]
    return docs


def expected_clusters() -> Set[FrozenSet[str]]:
    groups = {frozenset(f"g{g:03}-{v}" for v in range(3)) for g in range(20)}
    return groups | {frozenset({"tiny-1", "tiny-2"})}


def clusters(rows: List[Any], id_col: str = "id") -> Set[FrozenSet[Any]]:
    by: Dict[Any, Set[Any]] = {}
    for r in rows:
        by.setdefault(r["cluster"], set()).add(r[id_col])
    return {frozenset(m) for m in by.values() if len(m) > 1}


def check_cover(rows: List[Any], texts: Dict[Any, str], threshold: float, id_col: str = "id") -> None:
    """Every removed row has a kept, verified near-duplicate."""
    sk = lshdb.Sketcher()
    keep = {r[id_col]: r["keep"] for r in rows}
    for r in rows:
        if r["representative"]:
            assert r["keep"] and r["cluster"] == r[id_col] and r["similarity"] == 1.0
        if r["keep"]:
            assert r["duplicate_of"] is None
            continue
        dup = r["duplicate_of"]
        assert keep[dup], f"{r[id_col]} duplicates {dup}, which is removed"
        exact = sk.jaccard(texts[r[id_col]], texts[dup])
        assert exact == pytest.approx(r["duplicate_similarity"]) and exact >= threshold


def test_import_lshdb_does_not_import_pyspark() -> None:
    code = "import lshdb, sys; assert 'pyspark' not in sys.modules and 'lshdb.spark' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dedup_finds_the_planted_clusters_as_the_database_groups_them(spark: Any, tmp_path: Path) -> None:
    docs = planted()
    df = spark.createDataFrame(docs, "id string, text string")
    rows = ls.dedup(df, threshold=0.8).collect()
    assert len(rows) == len(docs) and {r["id"] for r in rows} == {d[0] for d in docs}
    assert clusters(rows) == expected_clusters()
    # the representative policy "min_id": the smallest id of each cluster
    for r in rows:
        assert r["cluster"] == min(m for c in expected_clusters() | {frozenset({r["id"]})} if r["id"] in c for m in c)
    check_cover(rows, dict(docs), 0.8)
    assert sum(not r["keep"] for r in rows) == 20 * 2 + 1
    # The same clusters as the single-machine database's groups.
    with lshdb.Database.create(tmp_path / "g.lshdb", threshold=0.8) as db:
        db.insert_many([(k, t) for k, t in docs if t.strip()])
        groups = {frozenset(h.key for h in g) for g in db.groups()}
    assert groups == clusters(rows)


def test_keep_policies_longest_and_priority(spark: Any) -> None:
    docs = [(1, "a b c d e f g h i j k l m n o p q r s t", 5), (2, "a b c d e f g h i j k l m n o p q r s t u", 9),
            (3, "a b c d e f g h i j k l m n o p q r s t!", 1)]
    df = spark.createDataFrame(docs, "id int, text string, score int")
    longest = {r["id"]: r for r in ls.dedup(df, threshold=0.7, keep="longest").collect()}
    assert [i for i, r in longest.items() if r["representative"]] == [2]
    best = {r["id"]: r for r in ls.dedup(df, threshold=0.7, priority="score").collect()}
    assert [i for i, r in best.items() if r["representative"]] == [2]
    smallest = {r["id"]: r for r in ls.dedup(df, threshold=0.7, keep="max_id").collect()}
    assert [i for i, r in smallest.items() if r["representative"]] == [3]
    with pytest.raises(lshdb.InvalidInput):
        ls.dedup(df, keep="random")


def test_chained_cluster_keeps_a_verified_duplicate_for_every_removed_row(spark: Any) -> None:
    # A chain: each text replaces the next 3 words of the one before, so
    # neighbours are similar and the ends are not.
    words = [f"word{i}" for i in range(60)]
    chain = []
    for step in range(8):
        w = list(words)
        for j in range(step * 3):
            w[j] = f"new{j}"
        chain.append((step * 10, " ".join(w)))
    sk = lshdb.Sketcher()
    texts = dict(chain)
    sims = [sk.jaccard(chain[i][1], chain[i + 1][1]) for i in range(7)]
    assert min(sims) >= 0.8 and sk.jaccard(chain[0][1], chain[-1][1]) < 0.5
    df = spark.createDataFrame(chain, "id long, text string")
    stats: Dict[str, Any] = {}
    rows = ls.dedup(df, threshold=0.8, max_rounds=10, stats=stats).collect()
    assert clusters(rows) == {frozenset(texts)}  # one connected component
    assert all(r["cluster"] == 0 for r in rows)
    check_cover(rows, texts, 0.8)
    kept = [r["id"] for r in rows if r["keep"]]
    assert 1 < len(kept) < len(chain) and stats["cover_rounds"] > 1
    # similarity is to the cluster's representative, also below the threshold
    far = next(r for r in rows if r["id"] == 70)
    assert far["similarity"] == pytest.approx(sk.jaccard(chain[0][1], chain[-1][1]))


@pytest.mark.parametrize("id_type", ["int", "bigint", "string"])
def test_ids_of_several_types_and_pairs_equal_the_exact_pairs(spark: Any, id_type: str, tmp_path: Path) -> None:
    docs = [(i, t) for i, (_, t) in enumerate(corpus(groups=6, per_group=3))]
    values = [(str(i) if id_type == "string" else i, t) for i, t in docs]
    df = spark.createDataFrame(values, f"key {id_type}, body string")
    out = ls.dedup(df, "key", "body", threshold=0.8)
    assert out.schema["cluster"].dataType == df.schema["key"].dataType
    assert out.schema["duplicate_of"].dataType == df.schema["key"].dataType
    assert len(clusters(out.collect(), "key")) == 6
    found = {(r["id_a"], r["id_b"]): r["similarity"] for r in ls.pairs(df, "key", "body", 0.8).collect()}
    with lshdb.Database.create(tmp_path / "e.lshdb", threshold=0.8) as db:
        db.insert_many([(str(k), t) for k, t in values])
        exact = {tuple(sorted((p.a, p.b))): p.similarity for p in db.exact_pairs(0.8)}
    cast = {tuple(sorted((str(a), str(b)))): s for (a, b), s in found.items()}
    assert cast.keys() == exact.keys() and len(exact) == 6 * 3
    assert all(cast[k] == pytest.approx(exact[k]) for k in exact)


def test_keys_and_sets_equal_those_a_database_file_stores(spark: Any, tmp_path: Path) -> None:
    docs = corpus(groups=3, per_group=2) + [("tiny", "hi"), ("unicode", "Ünïcödé — text ✓ with marks")]
    config = ls.Config(threshold=0.6, shingle="word:2", num_perm=64)
    with config.create_database(tmp_path / "k.lshdb") as db:
        db.insert_many(docs)
        assert ls.Config.from_database(db).same_values(config)
        stored = db.sketcher()
        rows = sketch(spark.createDataFrame(docs, "id string, text string"), "id", "text", ls.Config.from_database(db)).collect()
        texts = dict(docs)
        for r in rows:
            keys = [k & (2**64 - 1) for k in r["_keys"]]
            assert keys == [int(k) for k in stored.band_keys([texts[r["id"]]])[0]]
            assert [s & (2**32 - 1) for s in r["_set"]] == [int(s) for s in stored.shingles([texts[r["id"]]])[0]]
            doc = db.get(r["id"])
            assert doc is not None and len(r["_set"]) == doc.shingles
    with pytest.raises(lshdb.InvalidInput):
        ls.Config(minhash_seed=7).create_database(tmp_path / "seeded.lshdb")


def test_huge_bucket_is_cut_to_anchors_with_measured_recall(spark: Any, tmp_path: Path) -> None:
    # 300 copies of one text, each with one different word: every pair is
    # a near-duplicate, and most bands put all 300 in one bucket.
    base = [f"token{i}" for i in range(60)]
    docs = []
    for c in range(300):
        w = list(base)
        w[c % 60] = f"edit{c}"
        docs.append((f"d{c:03}", " ".join(w)))
    df = spark.createDataFrame(docs, "id string, text string")
    config = ls.Config(threshold=0.8)
    cand = candidates(sketch(df, "id", "text", config).localCheckpoint(), max_bucket=50, anchors=2).count()
    all_pairs = 300 * 299 // 2
    assert cand < all_pairs / 4  # bounded: about bands × anchors × n
    found = ls.pairs(df, threshold=0.8, max_bucket=50, anchors=2).count()
    with lshdb.Database.create(tmp_path / "h.lshdb", threshold=0.8) as db:
        db.insert_many(docs)
        truth = len(db.exact_pairs(0.8))
    recall = found / truth
    print(f"huge bucket: {cand} candidates of {all_pairs} pairs; pair recall {recall:.3f} ({found}/{truth})")
    assert 0.02 < recall < 1.0
    rows = ls.dedup(df, threshold=0.8, max_bucket=50, anchors=2).collect()
    assert clusters(rows) == {frozenset(d[0] for d in docs)}  # cluster recall stays 1
    check_cover(rows, dict(docs), 0.8)


def test_identical_copies_beyond_max_bucket_give_all_their_pairs(spark: Any, tmp_path: Path) -> None:
    # 30 copies of one text, 25 copies of a near-duplicate of it and 3 more
    # near-duplicates: the 58 share most buckets, far above max_bucket=20,
    # which would cut them to 2 anchors; collapsed, the buckets hold 5.
    docs = corpus(groups=2, per_group=5)
    base, variant = docs[0][1], docs[1][1]
    docs = [(f"a{i:02}", base) for i in range(30)] + [(f"b{i:02}", variant) for i in range(25)] + docs[2:]
    df = spark.createDataFrame(docs, "id string, text string")
    found = {(r["id_a"], r["id_b"]): r["similarity"] for r in ls.pairs(df, threshold=0.8, max_bucket=20, anchors=2).collect()}
    with lshdb.Database.create(tmp_path / "i.lshdb", threshold=0.8) as db:
        db.insert_many(docs)
        exact = {(min(p.a, p.b), max(p.a, p.b)): p.similarity for p in db.exact_pairs(0.8)}
        groups = {frozenset(h.key for h in g) for g in db.groups()}
    assert len(exact) == 58 * 57 // 2 + 10  # the 58 pairwise, and the other group's 10
    assert len(found) == len(exact) and found.keys() == exact.keys()
    assert all(found[k] == pytest.approx(exact[k]) for k in exact)
    assert found[("a00", "a29")] == 1.0 and found[("a03", "b17")] == pytest.approx(exact[("a03", "b17")])
    assert exact[("a03", "b17")] < 1.0
    stats: Dict[str, Any] = {}
    rows = ls.dedup(df, threshold=0.8, max_bucket=20, anchors=2, stats=stats).collect()
    assert stats["identical_copies"] == 29 + 24
    assert clusters(rows) == groups and len(groups) == 2
    check_cover(rows, dict(docs), 0.8)
    assert sum(not r["keep"] for r in rows) == 30 + 25 + 3 - 1 + 4


def test_equal_hashes_never_merge_different_sets(spark: Any) -> None:
    # With every set hashed to 0, only the size and the sets' comparison
    # separate groups: copies merge, different sets of equal size do not.
    docs = [("x1", "alpha beta gamma"), ("x2", "alpha beta gamma"), ("y1", "delta epsil zetaa"),
            ("y2", "delta epsil zetaa"), ("z", "other words heree"), ("empty", "")]
    df = spark.createDataFrame(docs, "id string, text string")
    prepared = sketch(df, "id", "text", ls.Config(threshold=0.8, shingle="word:1")).localCheckpoint()
    sizes = {r["id"]: len(r["_set"]) for r in prepared.collect()}
    assert sizes["x1"] == sizes["y1"] == sizes["z"] == 3
    from pyspark.sql import functions as F

    ids = {r["_doc"]: r["id"] for r in prepared.select("_doc", "id").collect()}
    merged = {(ids[r["_doc"]], ids[r["rep"]]) for r in collapse(prepared, key=F.lit(0)).collect()}
    # one group (size 3, hash 0) whose representative is x1 (the first
    # _doc): y2 is not merged with y1, it stays its own representative
    assert merged == {("x2", "x1")}
    real = {(ids[r["_doc"]], ids[r["rep"]]) for r in collapse(prepared).collect()}
    assert {frozenset(p) for p in real} == {frozenset({"x1", "x2"}), frozenset({"y1", "y2"})}


def test_write_database_loads_the_kept_rows_for_incremental_dedup(spark: Any, tmp_path: Path) -> None:
    docs = corpus(groups=5, per_group=3)
    df = spark.createDataFrame(docs, "id string, text string")
    result = ls.dedup(df, threshold=0.8)
    path = tmp_path / "kept.lshdb"
    report = ls.write_database(path, df, result=result, config=ls.Config(threshold=0.8))
    assert report["inserted"] == 5 and not report["rejected"]
    with lshdb.Database.open(path) as db:
        assert sorted(db.keys()) == [f"g{g:03}-0" for g in range(5)]
        # tomorrow's data: a new copy of group 2 is a duplicate of the kept row
        new = docs[7][1].replace("w2x20", "other")
        hit = db.insert_unique("new", new, 0.8)
        assert hit is not None and hit.key == "g002-0"
    with pytest.raises(lshdb.InvalidInput):
        ls.write_database(path, df, config=ls.Config(threshold=0.5))


def test_write_database_counts_every_refused_row_and_lists_the_first_thousand(spark: Any, tmp_path: Path) -> None:
    rows = [(f"e{i:04}", None if i % 2 else "") for i in range(1500)] + corpus(groups=3, per_group=1)
    df = spark.createDataFrame(rows, "id string, text string")
    report = ls.write_database(tmp_path / "r.lshdb", df, config=ls.Config(threshold=0.8), batch=400)
    assert report["inserted"] == 3 and report["rejected_count"] == 1500
    assert len(report["rejected"]) == 1000
    assert all(k.startswith("e") and "empty" in why for k, why in report["rejected"])


def test_the_worker_check_passes_and_runs_once_per_context(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from lshdb.spark import workers

    workers.check(spark)  # the fixture's workers run this interpreter
    assert getattr(spark.sparkContext, workers.MARK) == lshdb.__version__

    def no_job(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the check ran a second job")

    monkeypatch.setattr(spark.sparkContext, "parallelize", no_job)
    workers.check(spark)
