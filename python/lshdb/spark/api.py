"""The jobs: :func:`dedup` (clusters and what to keep), :func:`pairs`
(verified near-duplicate pairs) and :func:`write_database` (Spark output
into an lshdb file). Each job checks its arguments, then runs the stages
(keys, identical, candidates, verify, components, representatives) and
joins their outputs into the result."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from .. import Database, InvalidInput
from .. import _checks as _c
from .candidates import ANCHORS, MAX_BUCKET, candidates
from .components import connected_components
from .config import Config
from .identical import collapse, expand, group_pairs, star_edges
from .keys import DOC, LEN, sketch
from .representatives import assign, order as keep_order
from .verify import verify


def checkpointer(spark: Any, checkpoint_dir: Optional[str]) -> Callable[[Any], Any]:
    """Eager checkpoints into ``checkpoint_dir`` (reliable: survives lost
    executors), else the context's checkpoint directory, else local
    checkpoints (executor storage, faster, lost with an executor)."""
    sc = spark.sparkContext
    if checkpoint_dir is not None:
        sc.setCheckpointDir(checkpoint_dir)
    reliable = sc.getCheckpointDir() is not None

    def cut(df: Any) -> Any:
        return df.checkpoint(eager=True) if reliable else df.localCheckpoint(eager=True)

    return cut


def _config(config: Optional[Config], threshold: Optional[float]) -> Config:
    if config is None:
        return Config(threshold=0.8 if threshold is None else threshold)
    if threshold is not None and threshold != config.threshold:
        import dataclasses

        # The same sets and keys; only the verification threshold differs.
        return dataclasses.replace(config.resolved(), threshold=threshold)
    return config


def _frame(func: str, name: str, value: Any) -> None:
    """``value`` is a Spark DataFrame (anything with a ``sparkSession``)."""
    if not hasattr(value, "sparkSession"):
        _c.fail(func, name, "a Spark DataFrame", value)


def _config_arg(func: str, config: Any) -> None:
    if config is not None and not isinstance(config, Config):
        _c.fail(func, "config", "lshdb.spark.Config or None", config)


def _job_types(
    func: str,
    df: Any,
    id_col: Any,
    text_col: Any,
    threshold: Any,
    config: Any,
    max_bucket: Any,
    anchors: Any,
    partitions: Any,
    checkpoint_dir: Any,
    parallel: Any,
) -> None:
    """The argument types :func:`pairs` and :func:`dedup` share: a wrong
    one raises :class:`lshdb.InvalidType` naming it, before any Spark work."""
    _frame(func, "df", df)
    _c.string(func, "id_col", id_col)
    _c.string(func, "text_col", text_col)
    _c.real(func, "threshold", threshold, True)
    _config_arg(func, config)
    _c.count(func, "max_bucket", max_bucket)
    _c.count(func, "anchors", anchors)
    _c.count(func, "partitions", partitions, True)
    _c.string(func, "checkpoint_dir", checkpoint_dir, True)
    _c.flag(func, "parallel", parallel)


class Stats(Dict[str, Any]):
    """Timings and counts of one run (``dedup(..., stats=Stats())``)."""


def _prepare(
    df: Any,
    id_col: str,
    text_col: str,
    config: Config,
    extra: List[str],
    partitions: Optional[int],
    cut: Callable[[Any], Any],
    parallel: bool,
) -> Any:
    if id_col not in df.columns or text_col not in df.columns:
        raise InvalidInput(f"lshdb.spark: the DataFrame has no column {id_col!r} or {text_col!r} (it has {df.columns})")
    return cut(sketch(df, id_col, text_col, config, extra=extra, partitions=partitions, parallel=parallel))


def _verified(docs: Any, copies: Any, config: Config, max_bucket: int, anchors: int, parallel: bool) -> Any:
    """The verified pairs between representatives of identical sets (and
    documents without copies); ``copies`` from :func:`identical.collapse`."""
    found = candidates(docs, max_bucket=max_bucket, anchors=anchors, exclude=copies)
    return verify(found, docs, config.threshold, parallel=parallel)


def pairs(
    df: Any,
    id_col: str = "id",
    text_col: str = "text",
    threshold: Optional[float] = None,
    *,
    config: Optional[Config] = None,
    max_bucket: int = MAX_BUCKET,
    anchors: int = ANCHORS,
    partitions: Optional[int] = None,
    checkpoint_dir: Optional[str] = None,
    parallel: bool = False,
) -> Any:
    """The verified near-duplicate pairs of ``df``: a DataFrame with
    columns ``id_a``, ``id_b`` (``id_a < id_b``, in the id column's type)
    and ``similarity`` (exact Jaccard ≥ the threshold). Found through LSH,
    so a pair is found with the probability its similarity and the banding
    give it (≥ 0.99 at the threshold with the tuner's banding), and huge
    buckets are cut to anchors (see ``candidates``). Documents with
    identical shingle sets are bucketed once (``identical``): all pairs
    among them are in the output with similarity 1.0, however many."""
    from pyspark.sql import functions as F
    _job_types("pairs", df, id_col, text_col, threshold, config, max_bucket, anchors, partitions, checkpoint_dir, parallel)

    config = _config(config, threshold)
    cut = checkpointer(df.sparkSession, checkpoint_dir)
    docs = _prepare(df, id_col, text_col, config, [], partitions, cut, parallel)
    copies = cut(collapse(docs))
    found = _verified(docs, copies, config, max_bucket, anchors, parallel)
    found = expand(found, copies).unionByName(group_pairs(copies))
    ids = docs.select(DOC, id_col)
    named = found.join(ids.select(F.col(DOC).alias("a"), F.col(id_col).alias("x")), "a").join(
        ids.select(F.col(DOC).alias("b"), F.col(id_col).alias("y")), "b"
    )
    return named.select(
        F.least("x", "y").alias("id_a"), F.greatest("x", "y").alias("id_b"), F.col("similarity")
    )


def dedup(
    df: Any,
    id_col: str = "id",
    text_col: str = "text",
    threshold: Optional[float] = None,
    *,
    config: Optional[Config] = None,
    keep: str = "min_id",
    priority: Optional[str] = None,
    max_bucket: int = MAX_BUCKET,
    anchors: int = ANCHORS,
    partitions: Optional[int] = None,
    checkpoint_dir: Optional[str] = None,
    max_rounds: int = 3,
    parallel: bool = False,
    stats: Optional[Dict[str, Any]] = None,
) -> Any:
    """Near-duplicate clusters of ``df`` and the documents to keep.

    Returns one row per input row with the id column and:

    * ``cluster`` — the id of the cluster's representative (clusters are
      the connected components of the verified pairs, as ``lshdb groups``
      makes them; a document with no near-duplicate is its own cluster);
    * ``representative`` — whether this row is its cluster's
      representative, the first member in the ``keep`` policy order:
      ``priority`` column descending (if given), then ``"longest"`` or
      ``"shortest"`` text (characters) if asked, then the id (ascending,
      or descending for ``"max_id"``);
    * ``similarity`` — exact Jaccard to the representative (1.0 for it);
    * ``keep`` — whether to keep the row: every representative, and every
      member whose similarity to the representative is below the
      threshold (the components chain: A~B and B~C without A~C) *unless*
      a later round covers it: the members not covered are clustered again
      among themselves with the same policy, up to ``max_rounds`` rounds,
      and what is still uncovered is kept;
    * ``duplicate_of``, ``duplicate_similarity`` — for a removed row, the
      kept row it is a verified near-duplicate of and their exact Jaccard
      (≥ the threshold); null for a kept row.

    So every removed row has a verified near-duplicate that is kept.
    ``stats`` (a dict) receives timings and counts of the stages.
    """
    _job_types("dedup", df, id_col, text_col, threshold, config, max_bucket, anchors, partitions, checkpoint_dir, parallel)
    _c.string("dedup", "keep", keep)
    _c.string("dedup", "priority", priority, True)
    _c.count("dedup", "max_rounds", max_rounds)
    if stats is not None and not isinstance(stats, dict):
        _c.fail("dedup", "stats", "a dict or None", stats)

    config = _config(config, threshold)
    t = config.threshold
    spark = df.sparkSession
    cut = checkpointer(spark, checkpoint_dir)
    info: Dict[str, Any] = stats if stats is not None else {}
    extra = [priority] if priority is not None else []
    order = keep_order(keep, id_col, priority)

    start = time.perf_counter()
    docs = _prepare(df, id_col, text_col, config, extra, partitions, cut, parallel)
    info["sketch_s"] = time.perf_counter() - start

    start = time.perf_counter()
    copies = cut(collapse(docs))
    info["collapse_s"] = time.perf_counter() - start
    info["identical_copies"] = copies.count()

    start = time.perf_counter()
    # Verified pairs of representatives, and each identical group as a star
    # (the same components as its clique, at linear cost).
    verified = cut(_verified(docs, copies, config, max_bucket, anchors, parallel))
    info["verify_s"] = time.perf_counter() - start
    info["verified_pairs"] = verified.count()
    edges = cut(verified.unionByName(star_edges(copies)))

    start = time.perf_counter()
    labels, rounds = connected_components(edges, cut)
    labels = cut(labels)
    info["components_s"] = time.perf_counter() - start
    info["component_rounds"] = rounds

    start = time.perf_counter()
    attrs = docs.select(DOC, id_col, LEN, *extra)
    first, covered, cover_rounds = assign(docs, labels, edges, attrs, order, t, cut, max_rounds, parallel)
    info["cover_rounds"] = cover_rounds
    info["assign_s"] = time.perf_counter() - start

    return _rows(docs, id_col, first, covered)


def _rows(docs: Any, id_col: str, first: Any, covered: Any) -> Any:
    """:func:`dedup`'s output: one row per document, from the stage
    :func:`representatives.assign` (``first``, ``covered``)."""
    from pyspark.sql import functions as F

    ids = docs.select(F.col(DOC).alias("_dup"), F.col(id_col).alias("duplicate_of"))
    cluster_ids = docs.select(F.col(DOC).alias("_cluster"), F.col(id_col).alias("cluster"))
    return (
        docs.select(DOC, id_col)
        .join(first, DOC, "left")
        .join(covered, DOC, "left")
        .join(cluster_ids, "_cluster", "left")
        .join(ids, "_dup", "left")
        .select(
            F.col(id_col),
            F.coalesce(F.col("cluster"), F.col(id_col)).alias("cluster"),
            (F.col("_cluster").isNull() | (F.col("_cluster") == F.col(DOC))).alias("representative"),
            F.coalesce(F.col("similarity"), F.lit(1.0)).alias("similarity"),
            F.col("_dup").isNull().alias("keep"),
            F.col("duplicate_of"),
            F.col("duplicate_similarity"),
        )
    )


def write_database(
    path: Union[str, "os.PathLike[str]"],
    df: Any,
    id_col: str = "id",
    text_col: str = "text",
    *,
    result: Optional[Any] = None,
    keep_only: bool = True,
    config: Optional[Config] = None,
    store_text: bool = False,
    batch: int = 32_768,
) -> Dict[str, Any]:
    """Loads documents of ``df`` into the lshdb file at ``path`` (created
    with ``config``'s settings if it does not exist; an existing file must
    have settings that make the same values, else :class:`lshdb.InvalidInput`).

    With ``result`` (the output of :func:`dedup`) and ``keep_only``, only
    the kept rows are loaded. Keys are the ids cast to strings. Rows stream
    to the driver a partition at a time (``toLocalIterator``) into the
    database's bulk loader: the driver holds one partition and one batch,
    never the corpus. Returns the summed ``insert_many`` reports: rows
    without shingles (a null or empty text) are counted in
    ``rejected_count``, and the first 1,000 of them listed in ``rejected``
    as ``(key, reason)``, so that the driver's memory stays bounded however
    many there are."""
    from pyspark.sql import functions as F
    _c.path("write_database", "path", path)
    _frame("write_database", "df", df)
    _c.string("write_database", "id_col", id_col)
    _c.string("write_database", "text_col", text_col)
    if result is not None:
        _frame("write_database", "result", result)
    _c.flag("write_database", "keep_only", keep_only)
    _config_arg("write_database", config)
    _c.flag("write_database", "store_text", store_text)
    _c.count("write_database", "batch", batch)

    rows = df
    if result is not None and keep_only:
        rows = df.join(result.where(F.col("keep")).select(id_col), id_col, "left_semi")
    rows = rows.select(F.col(id_col).cast("string").alias("k"), F.coalesce(F.col(text_col), F.lit("")).alias("t"))
    if os.path.exists(path):
        db = Database.open(path)
        if config is not None and not Config.from_database(db).same_values(config):
            db.close()
            raise InvalidInput(f"lshdb.spark: {os.fspath(path)!r} has other settings than the job's config")
    else:
        db = (config or Config()).create_database(path, store_text=store_text)
    total: Dict[str, Any] = {"inserted": 0, "replaced": 0, "rejected": [], "rejected_count": 0, "commits": 0}
    with db:
        for keys, texts in _chunks(rows.toLocalIterator(prefetchPartitions=True), batch):
            report = db.insert_many(keys=keys, texts=texts, batch=batch)
            for k in ("inserted", "replaced", "commits", "rejected_count"):
                total[k] += int(report[k])
            room = _KEPT_REJECTIONS - len(total["rejected"])
            total["rejected"].extend(report["rejected"][: max(room, 0)])
    return total


#: Refused rows :func:`write_database` lists (it counts them all).
_KEPT_REJECTIONS = 1000


def _chunks(rows: Iterator[Any], size: int) -> Iterator[Tuple[List[str], List[str]]]:
    keys: List[str] = []
    texts: List[str] = []
    for row in rows:
        keys.append(row[0])
        texts.append(row[1])
        if len(keys) >= size:
            yield keys, texts
            keys, texts = [], []
    if keys:
        yield keys, texts
