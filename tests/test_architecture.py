"""Layering rules: import-linter contracts, and a bare import pulls in nothing optional."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

OPTIONAL = ["graphviz", "ipywidgets", "IPython", "matplotlib", "anywidget", "traitlets"]


def test_import_contracts_hold():
    # beside this Python first: a venv that was never activated has it there, not on PATH
    beside = Path(sys.executable).parent / "lint-imports"
    exe = str(beside) if beside.exists() else shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is missing: install the dev extra (pip install -e '.[dev]')")
    proc = subprocess.run([exe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_graph_loads_nothing_from_the_layers_above_it():
    # graph sits below static and the debug views: static's drawing lives in static/
    # (program_graph.py) and registers itself with build_graph, so drawing tensors
    # never loads the static compiler
    code = (
        "import sys, json, tinygrad_edu.graph; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(("
        "'tinygrad_edu.static', 'tinygrad_edu.debug', 'tinygrad_edu.render', "
        "'tinygrad_edu.widgets', 'tinygrad_edu.nn')))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_a_static_graph_draws_through_its_registered_converter():
    code = (
        "import tinygrad_edu as tg; from tinygrad_edu.graph import build_graph; "
        "print(build_graph(tg.static.trace(lambda x: x * 2, tg.tensor([1.0]))).summary())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "static graph, 4 nodes (3 tensors, 1 op)"


@pytest.mark.parametrize(
    "module",
    [
        "tinygrad_edu",
        "tinygrad_edu.nn",
        "tinygrad_edu.static",
        "tinygrad_edu.debug",
        "tinygrad_edu.graph",
    ],
)
def test_import_pulls_in_no_optional_dependency(module):
    code = (
        f"import sys, json, {module}; "
        f"print(json.dumps([m for m in {OPTIONAL!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
