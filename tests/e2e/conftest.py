"""Fixtures for the end-to-end suite: one JupyterLab server and one headless Chromium per
test process (each pytest-xdist worker has its own), a fresh page per test, screenshots
under build/e2e/.

Without /usr/bin/chromium or the playwright package the suite is skipped with the reason,
unless the CI environment variable is set: then every e2e test fails, because CI must
install them (`apt-get install chromium`, `pip install -e .[dev]`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from browser import CHROMIUM_FLAGS, chromium_path, missing, require
from driver import NotebookPage
from e2e_paths import SHOTS
from labserver import LabServer

# when this worker collected the tests: older screenshots are from an earlier run (under
# pytest-xdist the other workers' screenshots of this run are newer, and stay)
RUN_STARTED = time.time()
WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1, ... under pytest-xdist

# TG_E2E_SABOTAGE=svg runs every notebook with the SVG renderer replaced by one that returns
# an empty SVG (a widget whose picture is never set). The suite must then fail: this is how
# one checks, by hand, that the graph assertions can fail at all.
SABOTAGE_SVG = (
    "# e2e sabotage (TG_E2E_SABOTAGE=svg): every drawing comes out as an empty SVG\n"
    "import tinygrad_edu.render.drawing as _e2e_drawing\n"
    "import tinygrad_edu.render.svg as _e2e_svg\n"
    "_e2e_empty = lambda *args, **kwargs: "
    '\'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>\'\n'
    "_e2e_svg.dot_to_svg = _e2e_drawing.dot_to_svg = _e2e_empty\n"
)


def _copy_cleared(source: Path, dest: Path) -> None:
    """Copy a notebook without its saved outputs, so only what this run draws can pass.

    With TG_E2E_SABOTAGE=svg the sabotage goes in front of the first code cell (cell
    indices stay what the tests expect)."""
    nb = nbformat.read(str(source), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    if os.environ.get("TG_E2E_SABOTAGE") == "svg":
        first = next(c for c in nb.cells if c.cell_type == "code")
        first.source = SABOTAGE_SVG + first.source
    nbformat.write(nb, str(dest))


@pytest.fixture(scope="session")
def _browser_available() -> None:
    require(missing(chromium_path()), ci=bool(os.environ.get("CI")))


@pytest.fixture(scope="session")
def lab_server(_browser_available, tmp_path_factory):
    """A JupyterLab server serving an empty temporary folder (tests copy notebooks in)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):  # a FAILED-*.png from an earlier run would mislead
        if old.stat().st_mtime < RUN_STARTED:
            old.unlink(missing_ok=True)
    base = Path(tempfile.mkdtemp(prefix="tg-e2e-"))
    server = LabServer(base, SHOTS / (f"jupyterlab-{WORKER}.log" if WORKER else "jupyterlab.log"))
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def browser_context(_browser_available, playwright_api):
    """A persistent Chromium context with a fresh user-data-dir (driven by the process's
    one Playwright: tests/conftest.py)."""
    profile = Path(tempfile.mkdtemp(prefix="tg-e2e-chromium-"))
    pw = playwright_api
    context = None
    try:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(chromium_path()),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900},
            timeout=60_000,
        )
        context.set_default_timeout(30_000)
        yield context
    finally:
        if context is not None:
            try:
                context.close()
            except Exception:  # a crashed browser must not hide the test's own failure
                pass
        shutil.rmtree(profile, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    # Remember each phase's report on the item, so fixtures can screenshot failures.
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def open_notebook(request, lab_server, browser_context):
    """open_notebook(source_path_or_name, ui="lab") -> NotebookPage.

    Copies the notebook into the server root (so the lesson files are never modified), opens
    it in a new page, and on teardown screenshots failures and stops the kernels.
    """
    pages: list[NotebookPage] = []
    test_name = request.node.name.replace("[", "-").replace("]", "")

    def _open(source: Path, ui: str = "lab") -> NotebookPage:
        name = f"{test_name}-{source.name}"
        _copy_cleared(source, lab_server.root / name)
        page = browser_context.new_page()
        nb = NotebookPage(page, lab_server, name, ui, SHOTS)
        pages.append(nb)
        return nb.open()

    yield _open
    failed = getattr(request.node, "rep_call", None)
    failed = failed is not None and failed.failed
    if failed:  # pytest shows this under "Captured stdout teardown"
        print(f"--- end of {lab_server.log_path} ---\n{lab_server.log_tail(2000)}")
    for i, nb in enumerate(pages):
        if failed:
            try:
                nb.screenshot(f"FAILED-{test_name}-{i}")
            except Exception:
                pass
        nb.page.close()
    lab_server.shutdown_kernels()
