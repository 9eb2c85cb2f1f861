"""Which Chromium the suite drives, with which flags, and what happens when it is missing.

Skipping is right on a laptop without a browser; in CI (the CI environment variable set)
a missing browser must fail the run, or the e2e suite could silently never run there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> Path:
    """/usr/bin/chromium (Debian), or TG_E2E_CHROMIUM when set (tests of this gate use it)."""
    return Path(os.environ.get("TG_E2E_CHROMIUM", "/usr/bin/chromium"))


def missing(chromium: Path) -> str | None:
    """Why the browser cannot run here, or None when it can."""
    if not chromium.is_file() or not os.access(chromium, os.X_OK):
        return f"{chromium} not found (Debian: apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install -e .[dev])"
    return None


def require(problem: str | None, ci: bool) -> None:
    """Return when there is no problem; otherwise skip the test, or fail it in CI."""
    if problem is None:
        return
    if ci:
        pytest.fail(f"e2e: CI is set but {problem}", pytrace=False)
    pytest.skip(f"e2e: {problem}")
