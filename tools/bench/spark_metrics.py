"""Metrics for spark_bench.py: document ids as pair codes, the exact truth and
a system's output read as codes, and the pair and removal scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Set, Tuple


def letters(h: int) -> str:
    """A 32-bit hash as 7 lower-case letters: one word that datatrove's
    normalisation (digits → 0) and tokenizer leave whole."""
    out = []
    for _ in range(7):
        h, r = divmod(h, 26)
        out.append(chr(97 + r))
    return "".join(out)


def read_parquet_rows(path: Path, cols: List[str]) -> List[Tuple[Any, ...]]:
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=cols)
    return list(zip(*[table[c].to_pylist() for c in cols]))


class Ids:
    """Document ids → positions, and pairs of ids → sorted unique int64
    codes ``min · n + max`` (numpy): tens of millions of pairs in a few
    hundred MB instead of sets of string tuples."""

    def __init__(self, docs: List[Tuple[str, str]]) -> None:
        import pyarrow as pa

        self.values = pa.array([str(d[0]) for d in docs], pa.string())
        self.n = len(docs)

    def index(self, column: Any) -> Any:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        col = column if isinstance(column, (pa.Array, pa.ChunkedArray)) else pa.array(column, pa.string())
        pos = pc.index_in(col.cast(pa.string()), value_set=self.values)
        if pos.null_count:
            raise SystemExit("a pair names an id that is not in the corpus")
        return np.asarray(pos.to_numpy(zero_copy_only=False), dtype=np.int64)

    def codes(self, a: Any, b: Any) -> Any:
        import numpy as np

        x, y = self.index(a), self.index(b)
        return np.unique(np.minimum(x, y) * self.n + np.maximum(x, y))


def truth_codes(ids: Ids, cache: Path) -> Any:
    import pyarrow as pa
    from pyarrow import csv

    table = csv.read_csv(cache, read_options=csv.ReadOptions(column_names=["a", "b"]),
                         parse_options=csv.ParseOptions(delimiter="\t", quote_char=False),
                         convert_options=csv.ConvertOptions(column_types={"a": pa.string(), "b": pa.string()}))
    return ids.codes(table["a"], table["b"])


def parquet_codes(ids: Ids, path: Path) -> Any:
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["id_a", "id_b"])
    return ids.codes(table["id_a"], table["id_b"])


def pair_metrics(found: Any, exact: Any) -> Dict[str, Any]:
    import numpy as np

    hit = len(np.intersect1d(found, exact, assume_unique=True))
    return {
        "pairs_found": len(found),
        "pairs_true": len(exact),
        "recall": round(hit / len(exact), 4) if len(exact) else 1.0,
        "precision": round(hit / len(found), 4) if len(found) else 1.0,
    }


def removal_metrics(removed_ids: Set[str], ids: Ids, exact: Any) -> Dict[str, Any]:
    import numpy as np

    removed = np.zeros(ids.n, dtype=bool)
    if removed_ids:
        removed[ids.index(sorted(removed_ids))] = True
    a, b = exact // ids.n, exact % ids.n
    has_dup = np.zeros(ids.n, dtype=bool)
    has_dup[a] = True
    has_dup[b] = True
    kept_neighbour = np.zeros(ids.n, dtype=bool)
    kept_neighbour[a[removed[a] & ~removed[b]]] = True
    kept_neighbour[b[removed[b] & ~removed[a]]] = True
    n_removed = int(removed.sum())
    return {
        "docs": ids.n,
        "removed": n_removed,
        "removable_true": int(has_dup.sum()),
        "removed_with_true_duplicate": round(int((removed & has_dup).sum()) / n_removed, 4) if n_removed else 1.0,
        "removed_with_kept_true_duplicate": round(int((removed & kept_neighbour).sum()) / n_removed, 4) if n_removed else 1.0,
    }
