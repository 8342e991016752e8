"""Representatives and covering rounds: the stage of :func:`~.api.dedup`
after the connected components, which decides what to keep.

A component's representative is its first member in the ``keep`` policy
order (:func:`order`). Every member is verified against it (exact
Jaccard); a member at least ``threshold`` similar is *covered*: removed,
as a duplicate of the representative. Components chain (A~B and B~C
without A~C), so some members may not be covered. Those are clustered
again among themselves (the verified edges between them, their
components, a representative each) and verified against their new
representative, up to ``max_rounds`` rounds in all; what is still
uncovered is kept. So every removed row has a verified near-duplicate
that is kept.
"""

from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional

from .. import InvalidInput
from .components import connected_components
from .keys import DOC, LEN
from .verify import verify

#: Representative policies of :func:`~.api.dedup` (``keep=``).
KEEP_POLICIES = ("min_id", "max_id", "longest", "shortest")


def order(keep: str, id_col: str, priority: Optional[str]) -> List[Any]:
    """Sort keys (ascending) whose first row is the representative; an
    unknown ``keep`` raises :class:`lshdb.InvalidInput`."""
    from pyspark.sql import functions as F

    if keep not in KEEP_POLICIES:
        raise InvalidInput(f"lshdb.spark: keep must be one of {KEEP_POLICIES}, got {keep!r}")
    by_id = F.col(id_col).desc() if keep == "max_id" else F.col(id_col).asc()
    first: List[Any] = []
    if priority is not None:
        first.append(F.col(priority).desc_nulls_last())
    if keep == "longest":
        first.append(F.col(LEN).desc())
    elif keep == "shortest":
        first.append(F.col(LEN).asc())
    return [*first, by_id, F.col(DOC).asc()]


def _representatives(members: Any, order: List[Any]) -> Any:
    """``members`` (``node``, ``label`` and the order columns) → ``(label,
    rep)``: the first member of each component in ``order``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("label").orderBy(*order)
    return members.withColumn("_rank", F.row_number().over(w)).where(F.col("_rank") == 1).select("label", F.col(DOC).alias("rep"))


def _to_representatives(labels: Any, attrs: Any, order: List[Any]) -> Any:
    """Components (``node``, ``label``) → ``(a, b)``: every member ``a``
    with its component's representative ``b`` (``a == b`` for it)."""
    from pyspark.sql import functions as F

    members = labels.join(attrs.withColumnRenamed(DOC, "node"), "node")
    reps = _representatives(members.withColumnRenamed("node", DOC), order)
    return members.join(reps, "label").select(F.col("node").alias("a"), F.col("rep").alias("b"))


class Assignment(NamedTuple):
    """What :func:`assign` decided."""

    #: ``(DOC, _cluster, similarity)``: every component member, its
    #: first-round representative and their exact Jaccard (1.0 for it).
    first: Any
    #: ``(DOC, _dup, duplicate_similarity)``: the removed members, each with
    #: the kept representative it is a verified near-duplicate of.
    covered: Any
    #: Rounds run, the first included.
    rounds: int


def assign(
    docs: Any,
    labels: Any,
    edges: Any,
    attrs: Any,
    order: List[Any],
    threshold: float,
    cut: Callable[[Any], Any],
    max_rounds: int,
    parallel: bool,
) -> Assignment:
    """Representatives of the components ``labels`` (``node``, ``label``)
    of the verified ``edges``, and the covering rounds (module docstring).
    ``docs`` are the sketched documents, ``attrs`` their ``order`` columns,
    ``cut`` the job's checkpointer."""
    from pyspark.sql import functions as F

    assigned = _to_representatives(labels, attrs, order)
    sims = verify(assigned.where(F.col("a") != F.col("b")), docs, None, parallel=parallel)
    first = cut(
        assigned.join(sims, ["a", "b"], "left").select(
            F.col("a").alias(DOC),
            F.col("b").alias("_cluster"),
            F.coalesce("similarity", F.lit(1.0)).alias("similarity"),
        )
    )
    # Cover: removed rows and the kept row each duplicates.
    member = F.col(DOC) != F.col("_cluster")
    covered = first.where(member & (F.col("similarity") >= threshold)).select(
        DOC, F.col("_cluster").alias("_dup"), F.col("similarity").alias("duplicate_similarity")
    )
    uncovered = first.where(member & (F.col("similarity") < threshold)).select(DOC)
    extra_rounds = 0
    while extra_rounds + 1 < max_rounds:
        if uncovered.limit(1).count() == 0:
            break
        extra_rounds += 1
        sub_edges = cut(
            edges.join(uncovered.withColumnRenamed(DOC, "a"), "a", "left_semi").join(
                uncovered.withColumnRenamed(DOC, "b"), "b", "left_semi"
            )
        )
        sub_labels, _ = connected_components(sub_edges, cut)
        sub_assigned = _to_representatives(sub_labels, attrs, order)
        sub_sims = cut(verify(sub_assigned.where(F.col("a") != F.col("b")), docs, None, parallel=parallel))
        newly = sub_sims.where(F.col("similarity") >= threshold).select(
            F.col("a").alias(DOC), F.col("b").alias("_dup"), F.col("similarity").alias("duplicate_similarity")
        )
        covered = cut(covered.unionByName(newly))
        uncovered = cut(sub_sims.where(F.col("similarity") < threshold).select(F.col("a").alias(DOC)))
    return Assignment(first, covered, 1 + extra_rounds)
