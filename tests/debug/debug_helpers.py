"""Test helpers: the line number of a source line in the calling test file."""

import sys


def line_of(fragment: str) -> int:
    """1-based number of the first line of the caller's file that contains `fragment`."""
    filename = sys._getframe(1).f_code.co_filename
    with open(filename) as f:
        for i, line in enumerate(f, 1):
            if fragment in line and "line_of(" not in line:
                return i
    raise LookupError(fragment)
