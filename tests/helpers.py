"""Helpers shared by test files in several folders (tests/ is on sys.path via conftest)."""

import os
import sys


def site_of(fragment: str) -> str:
    """`path, line N: text` of the first line in the caller's file containing `fragment`,
    as `built at:` prints it (path relative to the working directory)."""
    filename = sys._getframe(1).f_code.co_filename
    with open(filename) as f:
        for i, line in enumerate(f, 1):
            if fragment in line and "site_of(" not in line:
                return f"{os.path.relpath(filename)}, line {i}: {line.strip()}"
    raise LookupError(fragment)
