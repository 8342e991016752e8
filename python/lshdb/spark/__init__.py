"""Near-duplicate detection on Apache Spark with lshdb's kernels.

Needs PySpark ≥ 3.5 (tested on 4.0) and pyarrow; ``import lshdb`` does not
import this package. The pipeline runs on Spark's own operators, one module
per stage:

* :mod:`.keys` — band keys and shingle sets by the Rust kernels on Arrow
  batches (``mapInArrow``), the values an lshdb file stores;
* :mod:`.identical` — documents with identical shingle sets bucketed
  once (one representative) and their pairs expanded after verification;
* :mod:`.candidates` — pairs from the (band, key) buckets, huge buckets
  cut to anchors;
* :mod:`.verify` — exact Jaccard of each candidate from the shingle sets;
* :mod:`.components` — connected components (large-star / small-star,
  checkpointed);
* :mod:`.representatives` — a representative per component and the
  covering rounds: which rows :func:`dedup` keeps;
* :mod:`.api` — :func:`dedup`, :func:`pairs`, :func:`write_database`.

``docs/spark.md`` is the guide.
"""

from .api import dedup, pairs, write_database
from .config import Config
from .representatives import KEEP_POLICIES

__all__ = ["Config", "dedup", "pairs", "write_database", "KEEP_POLICIES"]
