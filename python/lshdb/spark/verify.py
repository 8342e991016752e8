"""Stage 3: exact Jaccard of pairs of documents, from their shingle sets.

Each pair is joined with both documents' sets and an Arrow batch of pairs
goes through lshdb's ``jaccard_pairs`` kernel (the library's own
``jaccard``). With a threshold, only the pairs at or above it are kept."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

import numpy as np

from .. import _lshdb
from .keys import DOC, SET


def _flat(column: Any) -> Any:
    """(int64 offsets, uint32 values) of an Arrow list<int32> column."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = column.offsets.to_numpy().astype(np.int64)
    values = column.values.to_numpy(zero_copy_only=False).astype(np.int32, copy=False).view(np.uint32)
    return offsets, values


def jaccard_batches(batches: Iterable[Any], threshold: Optional[float], parallel: bool) -> Iterator[Any]:
    """The ``mapInArrow`` function: ``(a, b, set_a, set_b)`` → ``(a, b,
    similarity)``."""
    import pyarrow as pa

    for batch in batches:
        ao, av = _flat(batch.column("set_a"))
        bo, bv = _flat(batch.column("set_b"))
        sim = _lshdb.jaccard_pairs(ao, av, bo, bv, parallel)
        a, b = batch.column("a"), batch.column("b")
        if threshold is not None:
            keep = pa.array(sim >= threshold)
            a, b, sim = a.filter(keep), b.filter(keep), sim[sim >= threshold]
        yield pa.RecordBatch.from_arrays([a, b, pa.array(sim, pa.float64())], ["a", "b", "similarity"])


def verify(pairs: Any, docs: Any, threshold: Optional[float] = None, *, parallel: bool = False) -> Any:
    """``pairs`` (columns ``a``, ``b``: internal ids) with their exact
    Jaccard similarity; with ``threshold``, only those at or above it."""
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    sets = docs.select(DOC, SET)
    joined = (
        pairs.select("a", "b")
        .join(sets.withColumnRenamed(DOC, "a").withColumnRenamed(SET, "set_a"), "a")
        .join(sets.withColumnRenamed(DOC, "b").withColumnRenamed(SET, "set_b"), "b")
        .select("a", "b", "set_a", "set_b")
    )
    schema = StructType(
        [
            StructField("a", LongType(), False),
            StructField("b", LongType(), False),
            StructField("similarity", DoubleType(), False),
        ]
    )

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        return jaccard_batches(batches, threshold, parallel)

    return joined.mapInArrow(run, schema)
