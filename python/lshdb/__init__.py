"""lshdb: a persistent, embedded near-duplicate database.

Documents become sets of hashed shingles; MinHash signatures and LSH
banding find candidates; every hit is verified with exact Jaccard
similarity on the stored sets. The database is one crash-safe file (redb);
this package is the Rust library with a Python face, plus the same sketch
kernels as vectorised batch functions (:class:`Sketcher`).

>>> import lshdb, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "pages.lshdb")
>>> with lshdb.Database.create(path, threshold=0.7) as db:
...     db.insert("a", "The quick brown fox jumps over the lazy dog")
...     db.query("the quick brown fox jumps over the lazy dog!")[0].key
'a'

Every call releases the GIL while Rust works; a ``Database`` may be shared
by many threads. See ``docs/python.md``.

This module only re-exports. Each area is a private module: the handle
(``_database`` with its area mixins, ``_batch``, ``_labels``), the kernels (``_sketcher``), the result types
(``_results``), the exceptions (``_errors``, their one definition),
argument checks (``_checks``) and input conversion (``_inputs``) around
the native module ``_lshdb`` (whose signatures ``_lshdb.pyi`` states).
"""

from . import _errors, _lshdb
from ._batch import Batch
from ._database import Database
from ._errors import *  # noqa: F401,F403 -- every exception, as _errors.__all__ lists them
from ._labels import Labels
from ._results import (
    Cluster,
    ContainmentHit,
    DocumentCluster,
    ExportedDocument,
    Hit,
    Pair,
    SimHashHit,
    StoredDocument,
    UniqueResult,
)
from ._sketcher import Sketcher, jaccard

__version__: str = _lshdb.__version__
#: The file format version this build writes and reads.
FORMAT_VERSION: int = _lshdb.FORMAT_VERSION
#: The longest accepted key, in bytes of UTF-8.
MAX_KEY_BYTES: int = _lshdb.MAX_KEY_BYTES
#: The largest accepted document, in bytes.
MAX_DOCUMENT_BYTES: int = _lshdb.MAX_DOCUMENT_BYTES

__all__ = [
    "Database",
    "Batch",
    "Labels",
    "Sketcher",
    "Hit",
    "Pair",
    "StoredDocument",
    "SimHashHit",
    "ContainmentHit",
    "UniqueResult",
    "ExportedDocument",
    "Cluster",
    "DocumentCluster",
    "jaccard",
    "FORMAT_VERSION",
    "MAX_KEY_BYTES",
    "MAX_DOCUMENT_BYTES",
]
__all__ += _errors.__all__

# The public classes are named as `lshdb.X` (in reprs, help() and pickles),
# wherever they are defined; the exceptions keep `lshdb._errors`, as before.
_PUBLIC = (Database, Batch, Labels, Sketcher, Hit, Pair, StoredDocument, SimHashHit)
for _public in _PUBLIC + (ContainmentHit, UniqueResult, ExportedDocument, jaccard):
    _public.__module__ = __name__
del _public, _PUBLIC
