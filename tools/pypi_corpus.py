#!/usr/bin/env python3
"""Writes the PyPI package summaries as JSON Lines {"id": name, "text": summary}.

Source: /usr/share/package-lists/pypi.tsv (on every machine of this project;
columns name, version, month, rank, summary). Packages without a summary are
left out: 841,708 lines from the list of 2026-11.

Usage: python3 tools/pypi_corpus.py [--out tools/data/pypi.jsonl]
"""

import argparse
import json
import sys

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--tsv", default="/usr/share/package-lists/pypi.tsv")
parser.add_argument("--out", default="tools/data/pypi.jsonl")
args = parser.parse_args()
written = 0
with open(args.tsv, encoding="utf-8") as tsv, open(args.out, "w", encoding="utf-8") as out:
    next(tsv)  # the header
    for line in tsv:
        parts = line.rstrip("\n").split("\t")
        if len(parts) >= 5 and parts[4].strip():
            out.write(json.dumps({"id": parts[0], "text": parts[4]}) + "\n")
            written += 1
print(f"pypi: {written} summaries -> {args.out}", file=sys.stderr)
