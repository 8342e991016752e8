"""Stage 4: connected components of the verified pairs, with the
alternating large-star / small-star algorithm (Kiveris, Lattanzi,
Mirrokni, Rastogi and Vassilvitskii, "Connected Components in MapReduce
and Beyond", SoCC 2014) on DataFrames.

Edges are pairs of 64-bit node ids. With Γ(u) the neighbours of u:

* large-star: for each u, m = min(Γ(u) ∪ {u}); the edge (v, m) for every
  neighbour v > u;
* small-star: for each u, N = {v ∈ Γ(u) : v < u}, m = min(N ∪ {u}); the
  edge (v, m) for every v ∈ N ∪ {u} other than m.

Both keep the components and the pair of steps converges (O(log² n)
rounds; a handful on near-duplicate graphs) to one star per component
centred on its smallest node. Each step is one ``groupBy`` (a shuffle of
the edges); every round's edges are checkpointed, so the lineage — and the
driver's plan — stays the size of one round. Convergence is detected when
a round leaves the edge set unchanged (count and an order-free hash sum,
two numbers on the driver)."""

from __future__ import annotations

from typing import Any, Callable, Tuple

#: A function that materialises a DataFrame and cuts its lineage
#: (``DataFrame.checkpoint`` or ``localCheckpoint``, eager).
Checkpoint = Callable[[Any], Any]


def _undirected(edges: Any) -> Any:
    from pyspark.sql import functions as F

    return edges.select(F.col("u"), F.col("v")).unionByName(edges.select(F.col("v").alias("u"), F.col("u").alias("v")))


def large_star(edges: Any) -> Any:
    from pyspark.sql import functions as F

    adj = _undirected(edges).groupBy("u").agg(F.collect_set("v").alias("n"))
    return (
        adj.select(F.least(F.col("u"), F.array_min("n")).alias("m"), F.explode(F.expr("filter(n, x -> x > u)")).alias("v"))
        .select(F.col("v").alias("u"), F.col("m").alias("v"))
        .distinct()
    )


def small_star(edges: Any) -> Any:
    from pyspark.sql import functions as F

    directed = edges.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v")).where(F.col("u") != F.col("v"))
    adj = directed.groupBy("u").agg(F.collect_set("v").alias("n"))
    return (
        adj.select(F.array_min("n").alias("m"), F.explode(F.array_union("n", F.array("u"))).alias("x"))
        .where(F.col("x") != F.col("m"))
        .select(F.col("x").alias("u"), F.col("m").alias("v"))
        .distinct()
    )


def _fingerprint(edges: Any) -> Tuple[int, int]:
    from pyspark.sql import functions as F

    row = edges.agg(F.count("*").alias("n"), F.sum(F.xxhash64("u", "v") % (1 << 40)).alias("h")).first()
    return (int(row["n"] or 0), int(row["h"] or 0))


def connected_components(
    edges: Any, checkpoint: Checkpoint, *, max_rounds: int = 60, log: Callable[[str], None] = lambda _: None
) -> Tuple[Any, int]:
    """``(labels, rounds)``: labels has columns ``node`` and ``label`` (the
    smallest node of its component) for every node of an edge; nodes of no
    edge are not listed (they are their own component). ``edges`` has
    columns ``a`` and ``b``."""
    from pyspark.sql import functions as F

    e = checkpoint(
        edges.select(F.least("a", "b").alias("u"), F.greatest("a", "b").alias("v")).where(F.col("u") != F.col("v")).distinct()
    )
    previous = _fingerprint(e)
    rounds = 0
    while True:
        rounds += 1
        e = checkpoint(small_star(checkpoint(large_star(e))))
        current = _fingerprint(e)
        log(f"components: round {rounds}: {current[0]} edges")
        if current == previous:
            break
        if rounds >= max_rounds:
            raise RuntimeError(f"lshdb.spark: connected components did not converge in {max_rounds} rounds")
        previous = current
    # At the fixed point every edge is (member, root) with root < member.
    labels = e.select(F.col("u").alias("node"), F.col("v").alias("label")).unionByName(
        e.select(F.col("v").alias("node"), F.col("v").alias("label"))
    )
    return labels.groupBy("node").agg(F.min("label").alias("label")), rounds
