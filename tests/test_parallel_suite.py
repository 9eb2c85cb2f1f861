"""The suite runs on pytest-xdist workers (conftest.py at the root): what that relies on."""

import copy
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_this_pytest_lets_xdist_tag_a_test_with_its_group(request):
    # --dist loadgroup keeps a group on one worker by renaming each test to
    # "<nodeid>@<group>" through item._nodeid; a pytest that ignores _nodeid (9.2) makes
    # every lesson cell its own group, and cells run without the cells before them
    item = copy.copy(request.node)
    item._nodeid = item.nodeid + "@lesson"
    assert item.nodeid.endswith("@lesson")


@pytest.mark.slow
def test_a_lessons_cells_stay_on_one_worker():
    # two cells, the second using the first's variable: split across workers, it fails.
    # Inside the repository, where the root conftest.py applies (a folder of its own)
    (ROOT / "build").mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="parallel-suite-", dir=ROOT / "build"))
    lesson = folder / "two_cells.ipynb"
    lesson.write_text(
        '{"cells": ['
        '{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],'
        ' "source": ["value = 41"]},'
        '{"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],'
        ' "source": ["assert value == 41"]}],'
        ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    try:
        run = _pytest_on_two_workers(lesson)
    finally:
        shutil.rmtree(folder)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout


def _pytest_on_two_workers(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(path),
            "-n",
            "2",
            "-q",
            "-p",
            "no:randomly",
            "--rootdir",
            str(ROOT),
            "-c",
            str(ROOT / "pyproject.toml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTEST_ADDOPTS": ""},
        timeout=300,
    )
