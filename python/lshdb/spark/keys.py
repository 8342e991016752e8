"""Stage 1: every document's band keys and shingle set, made by lshdb's
Rust kernels on Arrow batches (``mapInArrow``), one row per document.

Output columns: ``_doc`` (a 64-bit internal id), the id column as given,
``_len`` (characters), the optional priority column, ``_keys``
(``array<bigint>``: the band keys, bit-for-bit the database's ``u64``) and
``_set`` (``array<int>``: the sorted distinct shingle hashes, the
database's ``u32`` values reinterpreted as signed). A document without
shingles (empty, white space only, or null) has an empty ``_set`` and takes
no part in the buckets."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, List, Optional

import numpy as np

from .. import _lshdb
from .config import Config

DOC = "_doc"
LEN = "_len"
KEYS = "_keys"
SET = "_set"


def list_array(offsets: Any, values: Any) -> Any:
    """A pyarrow ``list`` array (int32 offsets, as Spark's ``array``
    columns are) from int64 offsets and a values array."""
    import pyarrow as pa

    if len(offsets) and int(offsets[-1]) >= 2**31:
        raise ValueError("lshdb.spark: an Arrow batch holds more than 2**31 values; lower spark.sql.execution.arrow.maxRecordsPerBatch")
    return pa.ListArray.from_arrays(pa.array(np.asarray(offsets, dtype=np.int32)), pa.array(values))


def sketch_batches(
    batches: Iterable[Any], config: Config, id_col: str, text_col: str, extra: List[str], parallel: bool
) -> Iterator[Any]:
    """The ``mapInArrow`` function (runs on the executors)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sk = config.sketcher()._sk
    bands = sk.bands
    for batch in batches:
        text = batch.column(text_col)
        if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
            text = text.cast(pa.large_string())
        text = pc.fill_null(text, "")
        keys, offsets, values = _lshdb.sketch_batch(sk, _buffers(text), parallel)
        n = len(text)
        key_offsets = np.arange(0, n * bands + 1, bands, dtype=np.int64)
        columns = [batch.column(DOC), batch.column(id_col), pc.utf8_length(text).cast(pa.int32())]
        columns += [batch.column(c) for c in extra]
        columns += [
            list_array(key_offsets, keys.reshape(-1).view(np.int64)),
            list_array(offsets, values.view(np.int32)),
        ]
        yield pa.RecordBatch.from_arrays(columns, [DOC, id_col, LEN, *extra, KEYS, SET])


def _buffers(text: Any) -> Any:
    from .._inputs import texts

    return texts(text)


def sketch(
    df: Any,
    id_col: str,
    text_col: str,
    config: Config,
    *,
    extra: Optional[List[str]] = None,
    partitions: Optional[int] = None,
    parallel: bool = False,
) -> Any:
    """The documents of ``df`` with their ``_doc`` ids, keys and sets (not
    yet materialised: the caller checkpoints it, which fixes ``_doc``).
    Checks first, once per SparkContext, that the workers that will run
    the kernels import this lshdb (:func:`.workers.check`)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, IntegerType, LongType, StructField, StructType

    from .workers import check

    check(df.sparkSession)

    extra = [c for c in (extra or []) if c not in (id_col, text_col)]
    source = df.select(id_col, text_col, *extra)
    if partitions is not None:
        source = source.repartition(partitions)
    source = source.withColumn(DOC, F.monotonically_increasing_id())
    fields = {f.name: f for f in source.schema.fields}
    schema = StructType(
        [
            StructField(DOC, LongType(), False),
            fields[id_col],
            StructField(LEN, IntegerType(), False),
            *[fields[c] for c in extra],
            StructField(KEYS, ArrayType(LongType(), False), False),
            StructField(SET, ArrayType(IntegerType(), False), False),
        ]
    )
    resolved = config.resolved()

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        return sketch_batches(batches, resolved, id_col, text_col, extra, parallel)

    return source.mapInArrow(run, schema)
