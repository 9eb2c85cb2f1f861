"""House style is part of the test suite, so README's one test command checks it too:
`ruff check` (lint) and `ruff format --check` (layout) over the repository's code, and
every function of the package short enough to read on one screen."""

import ast
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


# A function a learner reads should fit on one screen: at most this many lines from `def`
# to its last line, its docstring not counted (blank lines and comments are).
MAX_FUNCTION_LINES = 50


def _function_lengths(path: Path):
    """(name, lines without the docstring) for every def in a file, nested ones included."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if ast.get_docstring(node, clean=False) is not None:
                doc = node.body[0]
                lines -= doc.end_lineno - doc.lineno + 1
            yield node.name, lines


def test_functions_fit_on_a_screen():
    package = ROOT / "tinygrad_edu"
    too_long = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        for name, lines in _function_lengths(path):
            if lines > MAX_FUNCTION_LINES:
                too_long.append(f"{where}: {name} has {lines} lines (at most {MAX_FUNCTION_LINES})")
    assert not too_long, (
        "split these into functions of one idea each (docstring not counted):\n"
        + "\n".join(too_long)
    )
