"""House style is part of the test suite, so README's one test command checks it too:
`ruff check` (lint) and `ruff format --check` (layout) over the repository's code."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the code, by name: a virtual environment made inside the checkout is not ours to lint
CODE = ["tinygrad_edu", "tests", "scripts", "benchmarks"]


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(args):
    pytest.importorskip("ruff", reason="ruff comes with the dev extra: pip install -e '.[dev]'")
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", *args, *CODE], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, (
        f"ruff {' '.join(args)} found something (run `ruff {' '.join(args).replace(' --check', '')}"
        f" .` to see or fix it):\n{proc.stdout}{proc.stderr}"
    )
