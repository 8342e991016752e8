"""Several processes on one file: reopening, and read-only readers beside
a writer."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import lshdb
from conftest import corpus, run_python


def test_reopen_across_processes(path: Path) -> None:
    done = run_python(
        """
        import sys, lshdb
        with lshdb.Database.create(sys.argv[1], 0.5, store_text=True) as db:
            db.insert("a", "The quick brown fox jumps over the lazy dog")
            db.insert_items("basket", ["milk", 7])
        """,
        str(path),
    )
    assert done.returncode == 0, done.stderr
    with lshdb.Database.open(path) as db:
        assert len(db) == 2
        assert db.query("The quick brown fox jumps over the lazy dog")[0] == lshdb.Hit("a", 1.0)
        db.insert("b", "written by the second process")
    again = run_python(
        """
        import sys, lshdb
        with lshdb.Database.open(sys.argv[1], read_only=True) as db:
            print(sorted(db.keys()), db.get("b").text)
        """,
        str(path),
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "['a', 'b', 'basket'] written by the second process"


def test_read_only_reader_process_follows_this_writer(path: Path) -> None:
    docs = corpus(groups=40)
    with lshdb.Database.create(path, 0.5) as db:
        db.insert("first", "the reader opens after this first commit")
        reader = subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(
                    """
                    import sys, time, lshdb
                    db = lshdb.Database.open(sys.argv[1], read_only=True)
                    try:
                        db.insert("x", "a reader cannot write")
                    except lshdb.ReadOnlyError:
                        print("read-only refused", flush=True)
                    # A second writer is refused while this process's writer is open.
                    try:
                        lshdb.Database.open(sys.argv[1])
                    except lshdb.AlreadyOpen:
                        print("second writer refused", flush=True)
                    deadline = time.time() + 60
                    seen = set()
                    while time.time() < deadline:
                        n = len(db)
                        seen.add(n)
                        if n == int(sys.argv[2]):
                            break
                        time.sleep(0.005)
                    print("saw", n, "distinct counts", len(seen), db.check()["clean"], flush=True)
                    """
                ),
                str(path),
                str(len(docs) + 1),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.3)
        for key, text in docs:  # one durable commit each, while the reader reads
            db.insert(key, text)
        out, err = reader.communicate(timeout=90)
    assert reader.returncode == 0, err
    lines = out.splitlines()
    assert lines[0] == "read-only refused" and lines[1] == "second writer refused"
    assert lines[2].startswith(f"saw {len(docs) + 1} ") and lines[2].endswith("True"), out
