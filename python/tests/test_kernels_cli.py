"""The kernels agree with `lshdb inspect`, the Rust CLI's own view of a
text (every shingle, the whole signature, every band key, the SimHash),
for several settings. The binary is the one `cargo test` builds
(target/debug/lshdb) or a release build; tools/test.sh always has one."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import lshdb

ROOT = Path(__file__).resolve().parents[2]


def cli() -> Optional[str]:
    for candidate in (
        os.environ.get("LSHDB_CLI"),
        ROOT / "target" / "debug" / "lshdb",
        ROOT / "target" / "release" / "lshdb",
    ):
        if candidate and Path(candidate).is_file():
            return str(candidate)
    return None


def inspect(binary: str, text: str, shingle: str, num_perm: int, threshold: float) -> Dict[str, List[int]]:
    out = subprocess.run(
        [binary, "inspect", "--text", text, "--shingle", shingle,
         "--num-perm", str(num_perm), "--threshold", str(threshold)],
        capture_output=True, text=True, check=True,
    ).stdout
    section = ""
    parsed: Dict[str, List[int]] = {"shingles": [], "signature": [], "band_keys": [], "simhash": []}
    for line in out.splitlines():
        if line.startswith("shingles:"):
            section = "shingles"
        elif line.startswith("signature"):
            section = "signature"
        elif line.startswith("band keys"):
            section = "band_keys"
        elif line.startswith("simhash:"):
            parsed["simhash"] = [int(line.split()[1], 16)]
        elif section == "shingles" and line.startswith("  "):
            parsed["shingles"].append(int(line.split()[0]))
        elif section == "signature" and line.startswith("  "):
            parsed["signature"].extend(int(v) for v in line.split())
        elif section == "band_keys" and re.match(r"^\s+\d+\s+[0-9a-f]{16}$", line):
            parsed["band_keys"].append(int(line.split()[1], 16))
    return parsed


CASES = [
    ("The quick brown fox jumps over the lazy dog", "char:5", 128, 0.8),
    ("An embedded, fast, safe and concurrent key-value store written in Rust.", "char:3", 64, 0.5),
    ("Ünïcödé  text,\twith   odd white space — and dashes", "word:2", 256, 0.7),
    ("It is the stop words that anchor these shingles in the text", "stopword:3", 32, 0.6),
    ("short", "char:9", 128, 0.9),
]


@pytest.mark.skipif(cli() is None, reason="no lshdb binary: run `cargo build` (tools/test.sh does)")
@pytest.mark.parametrize("text,shingle,num_perm,threshold", CASES)
def test_kernels_equal_lshdb_inspect(text: str, shingle: str, num_perm: int, threshold: float) -> None:
    binary = cli()
    assert binary is not None
    expected = inspect(binary, text, shingle, num_perm, threshold)
    sk = lshdb.Sketcher(shingle, num_perm=num_perm, threshold=threshold)
    assert sk.shingles([text])[0].tolist() == sorted(set(expected["shingles"]))
    assert sk.signatures([text])[0].tolist() == expected["signature"]
    assert len(expected["signature"]) == num_perm
    assert sk.band_keys([text])[0].tolist() == expected["band_keys"]
    assert len(expected["band_keys"]) == sk.bands
    assert sk.simhash([text]).tolist() == expected["simhash"]
