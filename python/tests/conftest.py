"""Shared fixtures: a fresh database path per test, and small corpora."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

import lshdb

BASE = (
    "An embedded, fast, safe and concurrent key-value store written in pure Rust "
    "with ACID transactions, crash safety and zero-copy reads"
)


def corpus(groups: int = 20, per_group: int = 3) -> List[Tuple[str, str]]:
    """`groups` clusters of near-duplicates (a few words changed), disjoint
    from each other."""
    docs = []
    for g in range(groups):
        words = [f"w{g}x{i}" for i in range(40)]
        for v in range(per_group):
            variant = list(words)
            variant[v * 3] = f"changed{v}"
            docs.append((f"g{g:03}-{v}", " ".join(variant)))
    return docs


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "test.lshdb"


@pytest.fixture
def db(path: Path) -> Iterator[lshdb.Database]:
    with lshdb.Database.create(path, threshold=0.5, store_text=True) as d:
        yield d


def run_python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter (another process)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


def counts_while(call: Callable[[], object]) -> Tuple[int, float]:
    """Runs `call` while a Python thread counts in a loop; returns the
    count and how long `call` took. With the GIL held through `call`, the
    thread could not count at all."""
    done = threading.Event()
    counts: List[int] = []

    def count() -> None:
        n = 0
        while not done.is_set():
            n += 1
        counts.append(n)

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.05)
    before = time.perf_counter()
    try:
        call()
    finally:
        elapsed = time.perf_counter() - before
        done.set()
        counter.join()
    return counts[0], elapsed
