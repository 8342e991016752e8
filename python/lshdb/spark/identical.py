"""Stage 1b: documents with identical shingle sets, collapsed before the
buckets and expanded after verification.

Real corpora repeat boilerplate verbatim ("Add your description here",
thousands of times among PyPI's summaries). Every copy lands in the same
bucket of every band, so one such group can exceed ``max_bucket`` on its
own and cut that bucket to anchors (losing pairs), and its n²/2 pairs are
all verified one by one although each is 1.0. Here:

* :func:`collapse` groups the documents by ``(xxhash64(set), size(set))``
  and keeps in a group only the members whose set *equals* the group's
  representative's (the smallest ``_doc``; compared element by element
  after a join, so a hash collision never merges different sets — a
  colliding document simply stays its own representative). It returns the
  ``(_doc, rep)`` rows of the members that are not representatives; only
  representatives take part in the buckets.
* :func:`group_pairs` gives every pair inside a group, similarity 1.0.
* :func:`expand` turns each verified pair of two representatives into the
  pairs of all their members, with the same similarity (the members' sets
  are the representatives' sets, so the Jaccard is the same).
* :func:`star_edges` gives ``(member, rep)`` edges with similarity 1.0:
  enough for connected components (``dedup``), which need no clique.

Everything stays a DataFrame: nothing here is collected to the driver."""

from __future__ import annotations

from typing import Any, Optional

from .keys import DOC, SET


def collapse(docs: Any, *, key: Optional[Any] = None) -> Any:
    """``(_doc, rep)`` for every document whose shingle set equals that of
    a document with a smaller ``_doc`` (its group's representative ``rep``).
    Representatives and documents without copies are not listed; documents
    without shingles never are. ``key`` (a Column) replaces the set's
    ``xxhash64`` (tests force collisions with it)."""
    from pyspark.sql import functions as F

    h = F.xxhash64(SET) if key is None else key
    keyed = docs.where(F.size(SET) > 0).select(DOC, h.alias("_h"), F.size(SET).alias("_n"))
    reps = (
        keyed.groupBy("_h", "_n")
        .agg(F.min(DOC).alias("rep"), F.count("*").alias("_c"))
        .where(F.col("_c") >= 2)
        .select("_h", "_n", "rep")
    )
    candidates = keyed.join(reps, ["_h", "_n"]).where(F.col(DOC) != F.col("rep")).select(DOC, "rep")
    sets = docs.select(DOC, SET)
    # Equal hashes are not proof: compare the sets themselves.
    return (
        candidates.join(sets, DOC)
        .join(sets.select(F.col(DOC).alias("rep"), F.col(SET).alias("_rep_set")), "rep")
        .where(F.col(SET) == F.col("_rep_set"))
        .select(DOC, "rep")
    )


def _groups(members: Any) -> Any:
    """``(rep, _doc)`` for every document of a group, its representative
    included."""
    from pyspark.sql import functions as F

    return members.select("rep", DOC).unionByName(members.select("rep").distinct().select("rep", F.col("rep").alias(DOC)))


def group_pairs(members: Any) -> Any:
    """Every pair ``(a, b)`` (``a < b``) of two documents of one group, with
    ``similarity`` 1.0: k members give k(k-1)/2 pairs, all of them true."""
    from pyspark.sql import functions as F

    return (
        _groups(members)
        .groupBy("rep")
        .agg(F.array_sort(F.collect_list(DOC)).alias("docs"))
        .select("docs", F.posexplode("docs").alias("i", "a"))
        .select("a", F.explode(F.expr("slice(docs, i + 2, size(docs) - i - 1)")).alias("b"))
        .select("a", "b", F.lit(1.0).alias("similarity"))
    )


def expand(pairs: Any, members: Any) -> Any:
    """``pairs`` (``a``, ``b``, ``similarity``; representatives or
    documents without copies) → the same pairs between every member of
    ``a``'s group and every member of ``b``'s, as ``(a, b)`` with ``a < b``.
    Each document is in one group, so no pair comes out twice."""
    from pyspark.sql import functions as F

    groups = _groups(members)
    left = groups.select(F.col("rep").alias("a"), F.col(DOC).alias("x"))
    right = groups.select(F.col("rep").alias("b"), F.col(DOC).alias("y"))
    return (
        pairs.join(left, "a", "left")
        .join(right, "b", "left")
        .select(
            F.coalesce("x", "a").alias("x"),
            F.coalesce("y", "b").alias("y"),
            "similarity",
        )
        .select(F.least("x", "y").alias("a"), F.greatest("x", "y").alias("b"), "similarity")
    )


def star_edges(members: Any) -> Any:
    """``(a, b, similarity)`` = ``(rep, member, 1.0)``: each group as a star,
    the same connected components as its clique at linear cost."""
    from pyspark.sql import functions as F

    return members.select(F.col("rep").alias("a"), F.col(DOC).alias("b"), F.lit(1.0).alias("similarity"))
