"""Maintained clusters from Python (``docs/clusters.md``): ``clusters=`` on
create, memory and open(create=True); ``cluster_of``, ``cluster``,
``members``, ``clusters`` and ``document_clusters`` (streamed);
``insert_clustered``; ids that
survive a removal of the representative; ``rebuild(clusters=)``; and the
errors of a file without clusters or a bad policy. The library's property
test is tests/clusters.rs."""

import time

import lshdb
import pytest
from conftest import corpus

A = "The quick brown fox jumps over the lazy dog near the river bank today"
A2 = "The quick brown fox jumps over the lazy dog near the river bank today!"
C = "An entirely different sentence about databases and their many indexes"


def test_clusters_on_a_file(tmp_path):
    path = tmp_path / "c.lshdb"
    with lshdb.Database.create(path, threshold=0.7, clusters=True) as db:
        db.insert("a", A)
        joined = db.insert_clustered("b", A2)
        db.insert("c", C)
        cluster = db.cluster_of("a")
        assert isinstance(cluster, lshdb.Cluster)
        assert joined == cluster
        assert (cluster.representative, cluster.size) == ("a", 2)
        assert list(db.members(cluster.id)) == ["a", "b"]
        assert sorted(c.size for c in db.clusters()) == [1, 2]
        assert db.cluster_of("nothing") is None
        assert db.check()["problem_count"] == 0
        db.remove("a")  # the representative: the rest keeps the id
        assert db.cluster_of("b") == lshdb.Cluster(cluster.id, "b", 1)
        assert db.cluster(cluster.id) == db.cluster_of("b")
    with lshdb.Database.open(path, create=True, threshold=0.7, clusters=True) as db:
        assert db.cluster_of("b").id == cluster.id
        db.rebuild(clusters=False)
        with pytest.raises(lshdb.InvalidInput, match="no clusters"):
            db.cluster_of("b")
        assert db.insert_clustered("d", A) is None
        db.rebuild(clusters="smallest-key")
        assert db.cluster_of("b").representative == "b"
        assert db.cluster_of("d").size == 2


def test_clusters_in_memory_with_int_keys_and_a_policy():
    with lshdb.Database.memory(threshold=0.7, clusters="longest") as db:
        db.insert(1, A)
        db.insert(2, A2)
        cluster = db.cluster_of(2)
        assert cluster.representative == 2  # one more shingle ('!')
        assert list(db.members(cluster.id)) == [1, 2]
        assert [c.representative for c in db.clusters()] == [2]


def check_document_clusters(db, keys):
    """``document_clusters()`` of ``db`` yields ``keys`` in this order, each
    with ``cluster_of``'s cluster and its similarity to the representative."""
    docs = list(db.document_clusters())
    assert [d.key for d in docs] == keys == list(db.keys())
    for d in docs:
        assert isinstance(d, lshdb.DocumentCluster) and isinstance(d.cluster, lshdb.Cluster)
        assert d.cluster == db.cluster_of(d.key)
        if d.key == d.cluster.representative:
            assert d.similarity == 1.0
        else:
            assert d.similarity == db.similarity(d.key, d.cluster.representative) < 1.0
    return docs


def test_document_clusters_yields_every_document_in_insertion_order(tmp_path):
    with lshdb.Database.create(tmp_path / "d.lshdb", threshold=0.5, clusters=True) as db:
        docs = corpus(groups=4)
        for key, text in docs[:6]:
            db.insert(key, text)
        db.insert("lone", C)
        db.insert_many(docs[6:])
        keys = [k for k, _ in docs[:6]] + ["lone"] + [k for k, _ in docs[6:]]
        got = check_document_clusters(db, keys)
        assert got[0] == lshdb.DocumentCluster("g000-0", lshdb.Cluster(got[0].cluster.id, "g000-0", 3), 1.0)
        assert got[1].cluster == got[0].cluster and 0.5 <= got[1].similarity < 1.0
        assert got[6].cluster.size == 1 and got[6].similarity == 1.0
        assert sorted({d.cluster for d in got}) == sorted(db.clusters())
        db.remove("g000-0")  # the representative: g000-1 represents now
        keys.remove("g000-0")
        got = check_document_clusters(db, keys)
        assert got[0].cluster.representative == "g000-1" and got[1].similarity < 1.0
    with lshdb.Database.memory(threshold=0.7, clusters="longest") as db:
        db.insert("a", A)
        db.insert("b", A2)  # one more shingle: b represents, a comes first
        assert [(d.key, d.cluster.representative) for d in check_document_clusters(db, ["a", "b"])] == [
            ("a", "b"),
            ("b", "b"),
        ]
    with lshdb.Database.memory(clusters=True) as db:
        assert list(db.document_clusters()) == []


def test_document_clusters_with_int_keys():
    with lshdb.Database.memory(threshold=0.7, clusters=True) as db:
        db.insert(10, A)
        db.insert(2, C)
        db.insert(7, A2)
        docs = check_document_clusters(db, [10, 2, 7])
        assert [c.representative for c in db.clusters()] == [10, 2]
        assert docs[2] == lshdb.DocumentCluster(7, db.cluster_of(10), db.similarity(7, 10))


def test_document_clusters_of_a_file_without_clusters():
    with lshdb.Database.memory() as db:
        db.insert("a", A)
        with pytest.raises(lshdb.InvalidInput, match="no clusters") as want:
            list(db.clusters())
        with pytest.raises(lshdb.InvalidInput, match="no clusters") as got:
            list(db.document_clusters())
        assert str(got.value) == str(want.value)


def test_document_clusters_closed_early_or_under_a_closed_database(tmp_path):
    db = lshdb.Database.create(tmp_path / "d.lshdb", threshold=0.5, clusters=True)
    db.insert_many(corpus(groups=1250, per_group=8))  # 10,000 documents: several chunks
    assert sum(1 for _ in db.document_clusters()) == len(db) == 10_000
    # An iterator dropped early stops its background thread.
    it = db.document_clusters()
    assert next(it).key == "g000-0"
    it.close()
    with pytest.raises(StopIteration):
        next(it)
    db.insert("lone", C)
    assert len(db) == 10_001 and db.cluster_of("lone").size == 1
    it = db.document_clusters()
    next(it)
    time.sleep(0.2)  # the producer fills the channel and waits
    db.close()  # does not wait for the iterator to be drained
    with pytest.raises(lshdb.DatabaseClosed):
        for _ in it:
            pass
    with pytest.raises(lshdb.DatabaseClosed):
        list(db.document_clusters())


def test_bad_cluster_arguments():
    with pytest.raises(lshdb.InvalidInput, match="not a policy"):
        lshdb.Database.memory(clusters="biggest")
    with pytest.raises(lshdb.InvalidType):
        lshdb.Database.memory(clusters=1)
    with lshdb.Database.memory() as db:
        with pytest.raises(lshdb.InvalidInput, match="no clusters"):
            db.cluster_of("a")
        with pytest.raises(lshdb.InvalidType):
            db.members("1")


def test_clusters_and_timestamps_together(tmp_path):
    """Expiry takes documents out of their clusters; open(create=True) and
    expect= carry both options."""
    path = tmp_path / "t.lshdb"
    args = dict(threshold=0.7, clusters=True, timestamps=True)
    with lshdb.Database.open(path, create=True, **args) as db:
        db.insert("a", A, timestamp=100)
        db.insert("b", A2, timestamp=300)
        db.insert("c", C, timestamp=100)
        first = db.cluster_of("b")
        assert first.size == 2
        assert db.expire(200) == {"removed": 2, "commits": 1}
        assert db.cluster_of("b") == lshdb.Cluster(first.id, "b", 1)
        assert db.cluster_of("a") is None
        assert db.check()["problem_count"] == 0
    with lshdb.Database.open(path, create=True, **args) as db:
        assert db.settings["timestamps"] is True
    expect = {"threshold": 0.7, "clusters": "first", "timestamps": True}
    with lshdb.Database.open(path, expect=expect) as db:
        assert db.timestamp("b") == 300
    with pytest.raises(lshdb.ConfigMismatch, match="timestamps"):
        lshdb.Database.open(path, expect={"threshold": 0.7, "clusters": "first"})


def test_priorities_choose_the_representative(tmp_path):
    """``clusters="priority"``: ``insert(priority=)``, ``insert_unique(priority=)``
    and ``insert_many(priorities=)``; the highest priority represents, ties
    to the first stored; priorities survive a reopen; a file of another
    policy refuses them."""
    path = tmp_path / "p.lshdb"
    with lshdb.Database.create(path, threshold=0.7, clusters="priority") as db:
        db.insert("a", A)  # priority 0
        db.insert("b", A2, priority=0)
        assert db.cluster_of("a").representative == "a"  # a tie: the first stored
        db.insert("b", A2, priority=-(2**63))
        db.insert("c", A + "?", priority=2**63 - 1)
        assert db.cluster_of("a").representative == "c"
        assert db.insert_unique("d", A + "!!", threshold=0.99, priority=5) is None
        report = db.insert_many(keys=["e", "f"], texts=[C, C + "!"], priorities=[1, 3])
        assert report["inserted"] == 2
        assert db.cluster_of("e").representative == "f"
        assert db.check()["problem_count"] == 0
    with lshdb.Database.open(path) as db:
        assert db.settings["clusters"] == "priority"
        assert db.cluster_of("a").representative == "c"
        db.remove("c")
        assert db.cluster_of("a").representative == "d"


def test_priority_arguments_are_checked():
    with lshdb.Database.memory(threshold=0.7, clusters="priority", timestamps=True) as db:
        with pytest.raises(lshdb.InvalidType, match="priority"):
            db.insert("a", A, priority="high")
        with pytest.raises(lshdb.InvalidType, match="priority"):
            db.insert("a", A, priority=True)
        with pytest.raises(lshdb.InvalidInput, match="priority"):
            db.insert("a", A, priority=2**63)
        with pytest.raises(lshdb.InvalidInput, match="priorities"):
            db.insert_many(keys=["a"], texts=[A], priorities=[1, 2])
        with pytest.raises(lshdb.InvalidInput, match="keys= and texts="):
            db.insert_many({"a": A}, priorities=[1])
        db.insert("a", A, priority=3, timestamp=1_000)
        assert db.timestamp("a") == 1_000
        assert db.cluster_of("a").representative == "a"
    with lshdb.Database.memory(threshold=0.7, clusters=True) as db:
        with pytest.raises(lshdb.InvalidInput, match="priority"):
            db.insert("a", A, priority=1)
        with pytest.raises(lshdb.InvalidInput, match="priority"):
            db.insert_many(keys=["a"], texts=[A], priorities=[1])
        assert len(db) == 0
