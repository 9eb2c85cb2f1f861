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


def documented_imports() -> dict[str, set[str]]:
    """docs/architecture.md's `package -> imports` block, as a dict."""
    text = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text()
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    out = {}
    for line in block.strip().splitlines():
        package, _, imports = line.partition("->")
        out[package.strip()] = {p.strip() for p in imports.split(",") if p.strip()}
    return out


def real_imports() -> dict[str, set[str]]:
    """Which top-level package or module of tinygrad_edu imports which (runtime imports)."""
    grimp = pytest.importorskip("grimp")  # import-linter's own import graph (the dev extra)
    graph = grimp.build_graph("tinygrad_edu", exclude_type_checking_imports=True)
    out: dict[str, set[str]] = {}
    for module in graph.modules:
        parts = module.split(".")
        if len(parts) < 2 or parts[1] == "__main__":  # the package's own door, `python -m`
            continue
        out.setdefault(parts[1], set())
        for imported in graph.find_modules_directly_imported_by(module):
            other = imported.split(".")
            if len(other) > 1 and other[1] != parts[1]:
                out[parts[1]].add(other[1])
    return out


def test_the_documented_layers_are_the_real_imports():
    # the drawing in docs/architecture.md is the import graph, not a wish: a new import
    # between packages fails here until the drawing (and pyproject's contract) says it
    assert documented_imports() == real_imports()


def test_graph_loads_nothing_from_the_layers_above_it():
    # graph sits beside debug, below static: static's drawing lives in static/
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
