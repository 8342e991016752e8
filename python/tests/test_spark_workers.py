"""lshdb.spark checks that Spark's Python workers import the driver's
lshdb: a worker interpreter without lshdb, with another version, or
missing, gives
a short ``lshdb.SparkWorkerError`` naming ``PYSPARK_PYTHON`` instead of a
Java trace. Each case needs its own SparkContext started with another
worker Python, so they run in a subprocess (one context at a time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

if os.environ.get("LSHDB_REQUIRE_SPARK") != "1":
    pytest.importorskip("pyspark")

SCRIPT = """
import json, os, sys
from pyspark.sql import SparkSession
import lshdb
from lshdb import spark as ls

def session():
    s = (SparkSession.builder.master("local[1]").appName("lshdb-workers")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
         .getOrCreate())
    s.sparkContext.setLogLevel("OFF")
    return s

out = {}
cases = (("missing", sys.argv[1]), ("other_version", sys.argv[2]), ("no_python", sys.argv[3]))
for case, python in cases:
    os.environ["PYSPARK_PYTHON"] = python
    spark = session()
    df = spark.createDataFrame([("a", "some text to sketch here")], "id string, text string")
    try:
        ls.dedup(df, threshold=0.8)
        out[case] = None
    except lshdb.LshdbError as e:
        out[case] = [type(e).__name__, str(e)]
    spark.stop()
print(json.dumps(out))
"""


def test_workers_without_lshdb_or_with_another_version_get_a_short_error(tmp_path: Path) -> None:
    # A Python of the driver's version without lshdb: an empty venv.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    bare = str(tmp_path / "bare" / "bin" / "python")
    # The same, seeing a fake lshdb 0.0.0 first.
    fake = tmp_path / "fake" / "lshdb"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "0.0.0"\n')
    wrapper = tmp_path / "python-with-old-lshdb"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{fake.parent}:$PYTHONPATH" exec "{bare}" "$@"\n')
    wrapper.chmod(0o755)

    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), bare, str(wrapper), str(tmp_path / "no-such-python")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    for case, needle in (
        ("missing", "No module named 'lshdb'"),
        ("other_version", "have lshdb 0.0.0"),
        ("no_python", "Cannot run program"),
    ):
        assert out[case] is not None, f"{case}: dedup did not fail"
        kind, message = out[case]
        assert kind == "SparkWorkerError", message
        assert needle in message and "PYSPARK_PYTHON" in message and "spark.pyspark.python" in message, message
        assert "\n" not in message and len(message) < 600, message  # short: no Java trace
