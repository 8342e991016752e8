"""Every exception class, raised for real, with the library's message and
the built-in base a Python user expects."""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import pytest

import lshdb
from conftest import run_python


def test_exception_hierarchy() -> None:
    for name in lshdb._errors.__all__:
        assert issubclass(getattr(lshdb, name), lshdb.LshdbError)
    assert issubclass(lshdb.InvalidInput, ValueError)
    assert issubclass(lshdb.NotFound, KeyError)
    assert issubclass(lshdb.FileExists, FileExistsError)
    assert issubclass(lshdb.StorageError, OSError)
    assert issubclass(lshdb.DatabaseClosed, ValueError)


def test_the_exceptions_are_defined_once_in_errors_py() -> None:
    """lshdb/_errors.py is the one list: its __all__ names exactly the
    classes it defines, the package re-exports exactly those, and every
    class the Rust bindings raise by name (python/src/errors.rs) is one."""
    errors = lshdb._errors
    defined = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, lshdb.LshdbError) and value.__module__ == errors.__name__
    }
    assert set(errors.__all__) == defined
    assert len(errors.__all__) == len(defined)
    assert defined <= set(lshdb.__all__)
    assert all(getattr(lshdb, name) is getattr(errors, name) for name in defined)
    rust = (Path(__file__).resolve().parents[1] / "src" / "errors.rs").read_text(encoding="utf-8")
    raised = set(re.findall(r'=> "(\w+)"', rust)) | set(re.findall(r'raise\(\s*py,\s*"(\w+)"', rust))
    assert {"InvalidInput", "DatabaseClosed", "InternalError", "StorageError"} <= raised  # the scan works
    assert raised <= defined, f"errors.rs raises classes _errors.py does not define: {sorted(raised - defined)}"


def test_invalid_input(db: lshdb.Database) -> None:
    with pytest.raises(lshdb.InvalidInput, match="empty after normalisation"):
        db.insert("a", "   ")
    with pytest.raises(ValueError, match="1 to 4096 bytes"):
        db.insert("", "text")
    # A query threshold may be 1 (exact duplicates), not above.
    with pytest.raises(lshdb.InvalidInput, match=r"threshold.*got 1\.5"):
        db.query("some text", threshold=1.5)
    with pytest.raises(lshdb.InvalidInput, match="bands"):
        lshdb.Database.create(str(db.path) + "2", bands=4)


def test_not_found(db: lshdb.Database) -> None:
    with pytest.raises(KeyError) as info:
        db.query(key="missing")
    assert isinstance(info.value, lshdb.NotFound)
    assert str(info.value) == "no document with key `missing`"
    with pytest.raises(lshdb.NotFound):
        db["missing"]


def test_file_exists(db: lshdb.Database) -> None:
    with pytest.raises(FileExistsError, match="already exists"):
        lshdb.Database.create(db.path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text, not a database\n" * 100)
    with pytest.raises(lshdb.NotADatabase, match="is not an lshdb database"):
        lshdb.Database.open(path)


def test_storage_error_carries_the_os_error(tmp_path: Path) -> None:
    with pytest.raises(lshdb.StorageError) as info:
        lshdb.Database.open(tmp_path / "missing-dir" / "x.lshdb")
    assert isinstance(info.value, OSError)
    assert "No such file or directory" in str(info.value)  # the source chain


def test_config_mismatch(db: lshdb.Database) -> None:
    db.close()
    with pytest.raises(lshdb.ConfigMismatch, match="threshold"):
        lshdb.Database.open(db.path, expect={"threshold": 0.9, "store_text": True})
    with lshdb.Database.open(db.path, expect={"threshold": 0.5, "store_text": True}):
        pass


def test_already_open_and_read_only(db: lshdb.Database) -> None:
    with pytest.raises(lshdb.AlreadyOpen, match="one writer per file") as info:
        lshdb.Database.open(db.path)
    assert "wait=SECONDS" in str(info.value) and "--wait" not in str(info.value)
    with pytest.raises(lshdb.AlreadyOpen, match="after waiting 0.2 seconds") as info:
        lshdb.Database.open(db.path, wait=0.2)
    assert "wait=" not in str(info.value)
    with lshdb.Database.open(db.path, read_only=True) as reader:
        with pytest.raises(lshdb.ReadOnlyError, match="read-only"):
            reader.insert("a", "some text")
        with pytest.raises(lshdb.ReadOnlyError):
            reader.compact()


def test_index_disabled(db: lshdb.Database) -> None:
    db.insert("a", "some text")
    with pytest.raises(lshdb.IndexDisabled, match="not enabled"):
        db.simhash_search("some text", 2)


def test_database_closed(db: lshdb.Database) -> None:
    db.close()
    with pytest.raises(lshdb.DatabaseClosed):
        db.insert("a", "text")


def test_a_killed_writers_file_is_repaired_by_a_reader(path: Path) -> None:
    killed = run_python(
        """
        import os, signal, sys, lshdb
        db = lshdb.Database.create(sys.argv[1])
        db.insert("a", "written before the writer was killed")
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        str(path),
    )
    assert killed.returncode == -9
    # In a read-only folder, a read-only open cannot repair it.
    path.parent.chmod(0o555)
    try:
        with pytest.raises(lshdb.NeedsRepair, match="not closed cleanly") as info:
            lshdb.Database.open(path, read_only=True)
    finally:
        path.parent.chmod(0o755)
    assert "--pages" not in str(info.value)  # no CLI flag in Python
    # Where it may write the file, a read-only open repairs it and goes on.
    with lshdb.Database.open(path, read_only=True) as db:
        assert db.read_only and len(db) == 1
    with lshdb.Database.open(path) as db:
        assert len(db) == 1


def _patch(path: Path, old: bytes, new: bytes) -> int:
    """Replaces every occurrence of `old` in the file (every copy redb
    keeps), returning how many there were."""
    data = path.read_bytes()
    count = data.count(old)
    path.write_bytes(data.replace(old, new))
    return count


def test_format_version_error(path: Path) -> None:
    lshdb.Database.create(path).close()
    stored = b"lshdb\0\0\0" + lshdb.FORMAT_VERSION.to_bytes(4, "little")
    assert _patch(path, stored, b"lshdb\0\0\0" + (99).to_bytes(4, "little")) >= 1
    with pytest.raises(lshdb.FormatVersionError, match="format version 99"):
        lshdb.Database.open(path)


def test_corrupted_then_poisoned(path: Path) -> None:
    secret = "Z" * 64
    with lshdb.Database.create(path, store_text=True) as db:
        db.insert("victim", f"a stored text that will be damaged {secret}")
        db.insert("other", "another document that stays readable")
    assert _patch(path, secret.encode(), b"Y" * 64) >= 1
    with lshdb.Database.open(path) as db:
        with pytest.raises(lshdb.Corrupted, match="damaged"):
            db.get("victim")
        assert db.get("other") is not None
        assert db.check()["clean"] is False
        # A write that meets the damage (dedup-on-write finds the victim and
        # reads its damaged record) fails, and poisons the handle.
        with pytest.raises(lshdb.Corrupted):
            db.insert_unique("copy", f"a stored text that will be damaged {secret}", 0.5)
        with pytest.raises(lshdb.Poisoned, match="reopen"):
            db.insert("new", "a write after the failed one")


def test_a_rust_panic_becomes_internal_error() -> None:
    with pytest.raises(lshdb.InternalError, match="deliberate panic"):
        lshdb._lshdb._panic_for_tests()
    assert not issubclass(lshdb.InternalError, BaseException) or issubclass(
        lshdb.InternalError, Exception
    )


def test_os_error_messages_keep_the_path(tmp_path: Path) -> None:
    target = tmp_path / "dir.lshdb"
    os.mkdir(target)
    with pytest.raises(lshdb.LshdbError) as info:
        lshdb.Database.open(target)
    assert "dir.lshdb" in str(info.value)


def test_a_cut_file_is_corrupted_and_says_truncated(path: Path) -> None:
    with lshdb.Database.create(path, 0.5) as db:
        db.insert_many([(f"k{i}", f"document {i} with its own words {i * 13}") for i in range(2000)])
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(lshdb.Corrupted, match="truncated"):
        with lshdb.Database.open(path, read_only=True) as db:
            db.check()
