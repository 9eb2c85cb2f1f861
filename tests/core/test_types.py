"""The package's type hints are checked, and a user's IDE sees what the code does.

mypy runs over the whole package with pyproject.toml's settings: 0 errors, and core/
checked with the flags `--strict` turns on. A learner's code typed against the public
API sees `Tensor` methods return `Tensor` (so `x.exp().sum()` completes in an IDE), and
the generated functions (`tg.exp`) are declared for type checkers.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is missing: install the dev extra (pip install -e '.[dev]')")
    return subprocess.run(
        [sys.executable, "-m", "mypy", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_mypy_finds_no_error_in_the_package():
    proc = _mypy()  # files and settings from pyproject.toml's [tool.mypy]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout, proc.stdout


def test_core_is_checked_strictly():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    strict_core = text.split('module = ["tinygrad_edu.core", "tinygrad_edu.core.*"]', 1)[1]
    for flag in ("disallow_untyped_defs", "disallow_any_generics", "warn_return_any"):
        assert f"{flag} = true" in strict_core.split("[[", 1)[0]


def test_a_learners_code_sees_tensors_come_back(tmp_path):
    code = tmp_path / "learner.py"
    code.write_text(
        "import tinygrad_edu as tg\n"
        "x = tg.tensor([1.0, 2.0], requires_grad=True)\n"
        "y: tg.Tensor = (x * 2).exp().sum().relu().clamp(0, 1) @ x.reshape(2, 1)\n"
        "z: tg.Tensor = tg.exp(x) + tg.sum(x) + x.T + x.pow(2) + x.detach()\n"
        "wrong: int = x.mean()\n"
        # methods the op packages install in a loop (declared in core/op_methods.pyi)
        "w: tg.Tensor = x.remainder(2) + x.cumsum(0) + x.div(2) + x.sort().values\n"
    )
    # no cache written (/dev/null): the package's own mypy run may be writing
    # .mypy_cache at the same moment in another worker
    proc = _mypy("--no-incremental", "--cache-dir=/dev/null", "--follow-imports=silent", str(code))
    lines = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert len(lines) == 1, proc.stdout
    assert lines[0].startswith(f"{code}:5: error: Incompatible types in assignment")
    assert '(expression has type "Tensor", variable has type "int")' in lines[0]


def test_the_generated_functions_are_declared_for_type_checkers():
    tree = ast.parse((ROOT / "tinygrad_edu" / "core" / "functions.py").read_text())
    methods = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_METHODS"
    )
    generated = {elt.value for elt in methods.elts}
    checking = next(node for node in tree.body if isinstance(node, ast.If))
    declared = {
        target.id
        for node in checking.body
        if isinstance(node, ast.Assign)
        for target in node.targets
    }
    assert declared == generated


def test_mypy_is_in_the_dev_extra():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    dev = text.split("\ndev = [", 1)[1].split("\n]", 1)[0]
    assert '"mypy>=' in dev


def test_the_installed_op_methods_are_declared_as_the_script_writes_them():
    """core/op_methods.pyi declares every method of the op packages' METHODS dicts; after a
    new op it must be rewritten (scripts/op_method_stubs.py), or an IDE would not know it."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "op_method_stubs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    from tinygrad_edu.core.tensor import TORCH_OP_MODULES

    installed = {name for module in TORCH_OP_MODULES for name in module.METHODS}
    stub = ast.parse((ROOT / "tinygrad_edu" / "core" / "op_methods.pyi").read_text())
    (cls,) = [node for node in stub.body if isinstance(node, ast.ClassDef)]
    assert {f.name for f in cls.body if isinstance(f, ast.FunctionDef)} == installed
