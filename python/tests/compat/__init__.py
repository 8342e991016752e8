"""datasketch's own LSH tests, vendored (see conftest.py and LICENSE)."""
