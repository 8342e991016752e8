#!/usr/bin/env bash
# The project's one test command (README, .ci/run): the Rust workspace's
# tests, then the Python package built and installed as a user installs it
# (`pip install ./python`, a release build) into a virtual environment
# under target/py-venv, its type stubs checked with mypy, and its pytest
# suite. Needs only Rust, Python >= 3.9 with pip, and access to PyPI.
# Fails on any failure, including a pytest run that collected no test.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=target/py-venv

echo "== cargo test --workspace"
cargo test --workspace

echo "== Python virtual environment ($VENV)"
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
# PySpark for the lshdb.spark tests (Spark local mode; needs Java 17).
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-spark.txt
# The build backend runs the environment's `maturin` by name.
export PATH="$PWD/$VENV/bin:$PATH"

echo "== pip install ./python"
# --no-build-isolation: build with the pinned maturin of the environment
# instead of fetching one per run; cargo reuses target/ between runs.
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    --no-build-isolation --no-deps --force-reinstall ./python

echo "== mypy: the stubs against the built module, the package and tests against the stubs"
"$VENV/bin/python" -m mypy.stubtest lshdb._lshdb
(cd python && "../$VENV/bin/python" -m mypy --strict lshdb && "../$VENV/bin/python" -m mypy tests)

echo "== pytest"
status=0
# From the repository's root, so that the installed package is tested,
# not python/lshdb/ (which has no native module).
# pyspark is installed above: its tests must run, not skip.
LSHDB_REQUIRE_SPARK=1 "$VENV/bin/python" -m pytest -q -p no:cacheprovider -rs python/tests || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no test: failing" >&2
    exit 1
fi
exit "$status"
