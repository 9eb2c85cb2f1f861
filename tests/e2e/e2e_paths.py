"""Where the browser tests find the lessons and put their screenshots.

A module of its own, not `conftest`: another folder's conftest.py (tests/static has one)
can be the module that `import conftest` finds, depending on which tests ran first.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SHOTS = REPO / "build" / "e2e"
