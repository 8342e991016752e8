"""A check, once per SparkContext, that Spark's Python workers import the
same lshdb as the driver.

The jobs run lshdb's Rust kernels inside the workers. A worker started
with another interpreter (``PYSPARK_PYTHON`` / ``spark.pyspark.python``
unset, or pointing to a Python without lshdb) would otherwise fail the
first stage with "No module named 'lshdb'" deep inside a long Java trace;
one tiny job up front turns that into :class:`lshdb.SparkWorkerError`,
which names the setting to fix. A passed check is remembered on the
SparkContext (a new context checks again); a failed one is not.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Optional, Tuple

from .. import __version__
from .._errors import SparkWorkerError

#: The attribute of the SparkContext that records a passed check.
MARK = "_lshdb_workers_checked"
#: The Python exception lines a failed task's trace quotes.
_PYTHON_ERROR = re.compile(r"^(\w+(?:Error|Exception)): (.*)$", re.MULTILINE)
#: Why the task failed, in the Java exception's first line.
_TASK_FAILURE = re.compile(r"most recent failure: Lost task [^:]*\): (.*)$", re.MULTILINE)


def _cause(error: BaseException) -> str:
    """The Python error a failed job reports, without the Java trace."""
    text = str(error)
    found = _PYTHON_ERROR.findall(text)
    python = [f"{kind}: {message}" for kind, message in found if not kind.startswith(("org.", "java.", "py4j."))]
    if python:
        return python[-1].strip()
    task = _TASK_FAILURE.search(text)  # a worker that did not start
    if task:
        return task.group(1).strip()[:300]
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return first[:300]


def _hint() -> str:
    return (
        f"set PYSPARK_PYTHON (or spark.pyspark.python) to a Python that has lshdb {__version__} "
        f"installed, such as this driver's {sys.executable}, before the SparkSession starts"
    )


def check(spark: Any) -> None:
    """Raises :class:`SparkWorkerError` unless Spark's Python workers import
    lshdb of the driver's version. Runs one one-row job per SparkContext;
    later calls return at once. Does nothing where there is no
    SparkContext (Spark Connect)."""
    try:
        sc = spark.sparkContext
    except Exception:  # Spark Connect: no context to run a probe on
        return
    if getattr(sc, MARK, None) == __version__:
        return

    def probe(_: Any) -> Tuple[str, Optional[str], Optional[str]]:
        """Runs in a worker: its interpreter, and lshdb's version or why it
        could not be imported. A nested function, so that Spark ships it by
        value and it runs where lshdb is missing (which a reference to a
        function of lshdb would not)."""
        import sys

        try:
            import lshdb

            return sys.executable, str(lshdb.__version__), None
        except Exception as e:  # any import failure is the answer
            return sys.executable, None, f"{type(e).__name__}: {e}"

    try:
        executable, version, error = sc.parallelize([0], 1).map(probe).collect()[0]
    except Exception as e:  # Py4JJavaError, PySparkRuntimeError, ...
        raise SparkWorkerError(
            f"lshdb.spark: Spark's Python workers could not run a task ({_cause(e)}); {_hint()}"
        ) from None
    if version is None:
        raise SparkWorkerError(
            f"lshdb.spark: Spark's Python workers ({executable}) cannot import lshdb ({error}); {_hint()}"
        )
    if version != __version__:
        raise SparkWorkerError(
            f"lshdb.spark: Spark's Python workers ({executable}) have lshdb {version}, the driver "
            f"{__version__}; {_hint()}"
        )
    setattr(sc, MARK, __version__)

