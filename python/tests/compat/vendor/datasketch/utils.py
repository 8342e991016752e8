"""Test utilities."""


def fake_hash_func(data):
    """Fake hash function that returns the input data unchanged."""
    return data
