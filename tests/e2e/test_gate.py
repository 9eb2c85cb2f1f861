"""The e2e suite skips on a machine without a browser, but never silently in CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from browser import missing, require

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def test_missing_chromium_is_named():
    assert (
        missing(Path("/nonexistent/chromium"))
        == "/nonexistent/chromium not found (Debian: apt-get install -y chromium)"
    )


def test_missing_playwright_is_named(monkeypatch):
    # A None entry in sys.modules makes `import playwright.sync_api` raise ImportError.
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    assert (
        missing(Path(sys.executable))
        == "the playwright Python package is not installed (pip install -e .[dev])"
    )


def test_nothing_missing_here_passes_through():
    require(None, ci=True)
    require(None, ci=False)


def test_missing_browser_skips_outside_ci():
    with pytest.raises(pytest.skip.Exception, match="^e2e: no chromium$"):
        require("no chromium", ci=False)


def test_missing_browser_fails_in_ci():
    with pytest.raises(pytest.fail.Exception, match="^e2e: CI is set but no chromium$"):
        require("no chromium", ci=True)


def test_ci_run_without_chromium_fails_every_e2e_test(tmp_path):
    # The whole chain, as .ci/run would see it: env var -> fixture -> pytest exit status.
    env = dict(os.environ, CI="true", TG_E2E_CHROMIUM="/nonexistent/chromium")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/e2e/test_core_in_lab.py",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "2 errors" in run.stdout
    assert "e2e: CI is set but /nonexistent/chromium not found" in run.stdout
