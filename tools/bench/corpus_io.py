"""Reading a JSON Lines corpus ({"id", "text"} per line, as
tools/debian_corpus.py and tools/pypi_corpus.py write) for the Python
benchmark drivers beside this file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional, Tuple


def read_corpus(path: Path, limit: Optional[int] = None) -> Tuple[List[str], List[str]]:
    """The corpus's ids (as str) and texts, the first `limit` when given."""
    keys, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            keys.append(str(doc["id"]))
            texts.append(doc["text"])
            if limit and len(keys) >= limit:
                break
    return keys, texts


def print_json(out: object) -> None:
    """A driver's result on standard output: one indented JSON document."""
    json.dump(out, sys.stdout, indent=2)
    print()
