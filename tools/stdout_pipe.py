"""Stopping quietly when the reader of stdout goes away (``| head``)."""

import os
import sys


def quiet_stdout() -> None:
    """After a ``BrokenPipeError``: points ``sys.stdout`` at the null
    device, so that Python's flush at exit does not raise again."""
    try:
        sys.stdout = open(os.devnull, "w")
    except OSError:
        pass
