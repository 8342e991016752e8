"""The installed distribution's metadata: ``pip install 'lshdb[spark]'``
brings everything ``lshdb.spark`` imports, and what pyspark's Arrow
functions import (pandas, pyarrow), at pyspark's own minimum versions.

The test venv has pandas from the test requirements, so a job that runs
there proves nothing about the extra; its declared requirements do.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import lshdb

SPARK_PACKAGE = Path(lshdb.__file__).parent / "spark"
#: What pyspark's mapInArrow / applyInPandas import on the driver and the
#: workers (pyspark.sql.pandas.utils.require_minimum_*_version), whether or
#: not lshdb.spark imports them itself.
ARROW_PATH = {"pyspark", "pyarrow", "pandas", "numpy"}
#: Python 3.9 has no sys.stdlib_module_names; what lshdb.spark imports of it.
STDLIB = set(getattr(sys, "stdlib_module_names", ())) | {"__future__", "dataclasses", "os", "time", "typing"}


def _requirements(extra: Optional[str]) -> Dict[str, Requirement]:
    """The distribution's requirements active with ``extra`` (None: the
    base ones), by normalised name."""
    out: Dict[str, Requirement] = {}
    for text in metadata.requires("lshdb") or []:
        req = Requirement(text)
        env = {"extra": extra or ""}
        if req.marker is None or req.marker.evaluate(env):
            out[req.name.lower()] = req
    return out


def _imported_modules(folder: Path) -> Set[str]:
    """Top-level names of the absolute imports of every module in ``folder``."""
    names: Set[str] = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def _minimum(req: Requirement) -> Optional[Version]:
    lows = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
    return max(lows) if lows else None


def test_spark_extra_declares_everything_lshdb_spark_needs() -> None:
    spark = _requirements("spark")
    third_party = {
        name
        for name in _imported_modules(SPARK_PACKAGE)
        if name not in STDLIB and name != "lshdb"
    }
    assert "pyspark" in third_party  # the scan sees the imports at all
    missing: List[str] = sorted((third_party | ARROW_PATH) - set(spark))
    assert not missing, f"the spark extra lacks {missing} (has {sorted(spark)})"
    # And they are the extra's, not something every install pulls in.
    base = _requirements(None)
    assert "pyspark" not in base and "pandas" not in base


def test_spark_extra_minimums_are_at_least_pysparks_own() -> None:
    """pyspark's `sql` extra names the pandas and pyarrow its Arrow code
    needs; ours must not allow older ones."""
    try:
        pyspark_reqs = metadata.requires("pyspark") or []
    except metadata.PackageNotFoundError:
        pytest.skip("pyspark is not installed")
    spark = _requirements("spark")
    for text in pyspark_reqs:
        req = Requirement(text)
        if req.marker is None or not req.marker.evaluate({"extra": "sql"}):
            continue
        if req.name.lower() not in ("pandas", "pyarrow", "numpy"):
            continue
        ours = spark[req.name.lower()]
        theirs, mine = _minimum(req), _minimum(ours)
        assert theirs is None or (mine is not None and mine >= theirs), (
            f"the spark extra allows {ours}, pyspark {metadata.version('pyspark')} needs {req}"
        )
