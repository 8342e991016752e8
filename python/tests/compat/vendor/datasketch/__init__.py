"""datasketch's own tests, vendored unchanged but for their import lines (see
../../conftest.py and LICENSE)."""
