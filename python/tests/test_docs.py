"""Every ```python block of README.md, docs/python.md, docs/spark.md,
docs/datasketch.md and docs/expiry.md runs as written: each in a fresh namespace and a fresh
temporary working directory, so a block that uses a name it does not
define fails.

The working directory holds the user's data the examples read — the same
small corpus as ``corpus.jsonl``, ``corpus.parquet`` and ``corpus/`` (a
Parquet folder), with columns ``id``, ``url`` and ``text`` — and nothing
else. Blocks of docs/spark.md run in a subprocess each (its own JVM and
SparkSession, ``PYSPARK_PYTHON`` set to this interpreter, as the docs
say); the others run in this process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    "README.md",
    "docs/python.md",
    "docs/spark.md",
    "docs/datasketch.md",
    "docs/clusters.md",
    "docs/expiry.md",
]
SPARK_DOCS = {"docs/spark.md"}
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> List[Tuple[str, int, str]]:
    """(file, line of the opening fence, code) of every python block."""
    out = []
    for name in DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            out.append((name, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def write_corpus(folder: Path) -> None:
    """A small corpus with near-duplicates, in the three forms the docs read."""
    import pandas as pd

    rows: List[Dict[str, str]] = []
    for g in range(8):
        words = [f"w{g}x{i}" for i in range(30)]
        for v in range(3):
            variant = list(words)
            variant[v * 5] = f"changed{v}"
            n = len(rows)
            rows.append({"id": f"doc-{n}", "url": f"https://site.example/{n}", "text": " ".join(variant)})
    df = pd.DataFrame(rows)
    df.to_json(folder / "corpus.jsonl", orient="records", lines=True)
    df.to_parquet(folder / "corpus.parquet", index=False)
    (folder / "corpus").mkdir()
    df.to_parquet(folder / "corpus" / "part-00000.parquet", index=False)


def test_the_docs_have_the_blocks_this_test_expects() -> None:
    found = {name: sum(1 for b in blocks() if b[0] == name) for name in DOCS}
    assert found["README.md"] >= 1 and found["docs/python.md"] >= 6 and found["docs/spark.md"] >= 3, found
    assert found["docs/datasketch.md"] >= 3, found


@pytest.mark.parametrize(
    "name,line,code",
    [b for b in blocks() if b[0] not in SPARK_DOCS],
    ids=[f"{b[0]}:{b[1]}" for b in blocks() if b[0] not in SPARK_DOCS],
)
def test_python_block_runs(name: str, line: int, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    # The block runs as a script's __main__ module would: registered as
    # __main__, so pickle finds the functions it defines (multiprocessing
    # sends them to its workers by name).
    main = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", main)
    namespace: Dict[str, object] = main.__dict__
    exec(compile(code, f"{name}:{line}", "exec"), namespace)
    # Close what the block left open before the folder goes away.
    for value in list(namespace.values()):
        close = getattr(value, "close", None)
        if callable(close) and type(value).__module__ == "lshdb":
            close()


@pytest.mark.parametrize(
    "name,line,code",
    [b for b in blocks() if b[0] in SPARK_DOCS],
    ids=[f"{b[0]}:{b[1]}" for b in blocks() if b[0] in SPARK_DOCS],
)
def test_spark_block_runs(name: str, line: int, code: str, tmp_path: Path) -> None:
    if os.environ.get("LSHDB_REQUIRE_SPARK") != "1":
        pytest.importorskip("pyspark")
    write_corpus(tmp_path)
    # The block, then stop the session it made so the JVM exits.
    script = code + "\nfrom pyspark.sql import SparkSession as _S\n_s = _S.getActiveSession()\n_s and _s.stop()\n"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    # Few shuffle partitions for a tiny corpus (a site default, as
    # spark-defaults.conf would set; the code stays as written).
    env["PYSPARK_SUBMIT_ARGS"] = "--conf spark.sql.shuffle.partitions=4 --conf spark.ui.enabled=false pyspark-shell"
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, f"{name}:{line} failed:\n{run.stderr[-4000:]}"
