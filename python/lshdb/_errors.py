"""lshdb's exceptions, mapped from the Rust library's ``lshdb::Error``.

Every exception lshdb raises is an :class:`LshdbError`; most also subclass
the built-in exception they resemble, so ``except ValueError`` or
``except KeyError`` work as a Python user expects. The message is the
library's own, followed by its cause chain (the operating system's or the
storage engine's error).
"""

from __future__ import annotations

__all__ = [
    "LshdbError",
    "InvalidInput",
    "NotFound",
    "FileExists",
    "NotADatabase",
    "FormatVersionError",
    "ConfigMismatch",
    "AlreadyOpen",
    "ReadOnlyError",
    "NeedsRepair",
    "Corrupted",
    "IndexDisabled",
    "Poisoned",
    "StorageError",
    "DatabaseClosed",
    "InternalError",
    "InvalidType",
    "SparkWorkerError",
]


class LshdbError(Exception):
    """Base class of every lshdb error."""


class InvalidInput(LshdbError, ValueError):
    """A parameter out of range, an empty document, a bad key, a document
    too large (``InvalidParameter``, ``EmptyDocument``, ``InvalidKey``,
    ``DocumentTooLarge``)."""


class NotFound(LshdbError, KeyError):
    """No document is stored under the key."""

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return str(self.args[0]) if self.args else ""


class FileExists(LshdbError, FileExistsError):
    """``Database.create`` was given a path that exists."""


class NotADatabase(LshdbError):
    """The file exists but is not an lshdb database."""


class FormatVersionError(LshdbError):
    """The file has a format version this build does not read."""


class ConfigMismatch(LshdbError):
    """An option contradicts the configuration stored in the file."""


class AlreadyOpen(LshdbError):
    """Another process or handle has the file open for writing (lshdb allows
    one writer per file; read-only opens work meanwhile)."""


class ReadOnlyError(LshdbError):
    """A write on a handle opened with ``read_only=True``."""


class NeedsRepair(LshdbError):
    """The file was not closed cleanly, and this read-only open could not
    repair it (the file or its folder is read-only); a writer repairs it."""


class Corrupted(LshdbError):
    """Stored data failed its checksum or could not be decoded."""


class IndexDisabled(LshdbError):
    """The database was created without the index this call needs (for
    example ``simhash_search`` without ``simhash=``)."""


class Poisoned(LshdbError):
    """An earlier write failed on storage; reopen the database to write."""


class StorageError(LshdbError, OSError):
    """An I/O or storage-engine error not covered by another class."""


class DatabaseClosed(LshdbError, ValueError):
    """The handle was closed (as ``ValueError`` for a closed file), or it was
    opened in another process: a handle does not cross ``fork()``, so in a
    forked child (``multiprocessing``'s ``fork`` start method) every call
    raises this; open the database again in the child."""


class InternalError(LshdbError):
    """A bug in lshdb (a Rust panic, caught before it reached Python)."""


class InvalidType(InvalidInput, TypeError):
    """An argument of the wrong type (an int key, bytes text, ``None`` for
    a required value); the message names the call and the argument. Also a
    :class:`InvalidInput` (so a ``ValueError``), as such arguments were
    before this class existed."""


class SparkWorkerError(LshdbError):
    """``lshdb.spark``: Spark's Python workers cannot import lshdb, or import
    another version than the driver's (set ``PYSPARK_PYTHON`` or
    ``spark.pyspark.python``)."""
