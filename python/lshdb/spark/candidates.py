"""Stage 2: candidate pairs from the LSH buckets, grouped by Spark.

Every (band, key) bucket with at least two documents yields pairs:

* a bucket of at most ``max_bucket`` documents: every pair in it;
* a larger ("huge") bucket: each member paired with ``anchors`` anchor
  documents of the bucket — the members with the smallest
  ``xxhash64(_doc, band)``, so each band picks other anchors — instead of
  all n²/2 pairs. The work per huge bucket is then ``anchors · n`` pairs.
  Near-duplicates that are both non-anchors still meet through an anchor
  they resemble (so clusters keep them), but their own pair is lost unless
  another band finds it: ``pairs()`` loses recall on huge buckets,
  ``dedup()`` much less (tests/test_spark.py and docs/spark.md measure it).

Pairs are ``(a, b)`` with ``a < b`` (internal ids), de-duplicated across
bands. Documents without shingles are in no bucket, and neither are the
copies of an identical shingle set other than its representative
(``identical.py``): verbatim boilerplate no longer fills buckets."""

from __future__ import annotations

from typing import Any, Optional

from .keys import DOC, KEYS, SET

#: Buckets up to this size give all their pairs. 2,000 members cost at most
#: 2·10⁶ candidate pairs in one task; on Debian (t = 0.8) the largest bucket
#: has 266 members and 2.6 % of the true pairs share no bucket of ≤ 200
#: members, so the former default of 200 cost pair recall (0.974 → 0.997).
MAX_BUCKET = 2000
#: Anchors per bucket above ``MAX_BUCKET``.
ANCHORS = 4


def candidates(docs: Any, *, max_bucket: int = MAX_BUCKET, anchors: int = ANCHORS, exclude: Optional[Any] = None) -> Any:
    """Distinct candidate pairs ``(a, b)`` of ``docs`` (the output of
    :func:`lshdb.spark.keys.sketch`). Documents whose ``_doc`` is in
    ``exclude`` (a DataFrame with that column: the copies
    :func:`lshdb.spark.identical.collapse` found) are left out of the
    buckets."""
    from pyspark.sql import functions as F

    if max_bucket < 2 or anchors < 1:
        raise ValueError("lshdb.spark: max_bucket must be ≥ 2 and anchors ≥ 1")
    kept = docs.where(F.size(SET) > 0)
    if exclude is not None:
        kept = kept.select(DOC, KEYS).join(exclude.select(DOC), DOC, "left_anti")
    postings = kept.select(DOC, F.posexplode(KEYS).alias("band", "key"))
    buckets = (
        postings.groupBy("band", "key")
        .agg(F.collect_list(DOC).alias("docs"))
        .where(F.size("docs") >= 2)
        .select("band", "docs", F.size("docs").alias("n"))
    )
    small = (
        buckets.where(F.col("n") <= max_bucket)
        .select(F.array_sort("docs").alias("docs"))
        .select("docs", F.posexplode("docs").alias("i", "a"))
        .select("a", F.explode(F.expr("slice(docs, i + 2, size(docs) - i - 1)")).alias("b"))
    )
    huge = (
        buckets.where(F.col("n") > max_bucket)
        .select(
            "docs",
            F.expr(
                f"slice(transform(array_sort(transform(docs, d -> named_struct('h', xxhash64(d, band), 'd', d))),"
                f" s -> s.d), 1, {int(anchors)})"
            ).alias("anchors"),
        )
        .select("docs", F.explode("anchors").alias("x"))
        .select("x", F.explode("docs").alias("y"))
        .where(F.col("x") != F.col("y"))
        .select(F.least("x", "y").alias("a"), F.greatest("x", "y").alias("b"))
    )
    return small.unionByName(huge).distinct()


def bucket_stats(docs: Any, max_bucket: int = MAX_BUCKET) -> Any:
    """One row of bucket statistics (for reports): buckets with ≥ 2
    documents, the largest, the huge ones and the pairs all-pairs would
    form."""
    from pyspark.sql import functions as F

    postings = docs.where(F.size(SET) > 0).select(F.posexplode(KEYS).alias("band", "key"))
    sizes = postings.groupBy("band", "key").count().where(F.col("count") >= 2)
    return sizes.agg(
        F.count("*").alias("buckets"),
        F.max("count").alias("largest"),
        F.sum(F.when(F.col("count") > max_bucket, 1).otherwise(0)).alias("huge"),
        F.sum(F.col("count") * (F.col("count") - 1) / 2).alias("all_pairs"),
    )
