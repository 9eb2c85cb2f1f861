"""The node view: outer layers read core objects through public attributes only.

docs/architecture.md ("The node view") lists what a Tensor and a grad_fn node show to
graph, render, static, debug, widgets and nn. This test reads every module outside
core and fails on any attribute access (or getattr/setattr/hasattr by name) of one of
core's private fields, so a shortcut through `node._next` cannot come back; and on any
private name one layer takes from another (`from ..core.grad_mode import _state`,
`engine._root`, `Tensor._make`): each layer offers a small public accessor instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import tinygrad_edu as tg

PACKAGE = Path(tg.__file__).parent

# the private fields of Tensor, Node and Function that `Function.apply` and the core fill in
CORE_PRIVATE = {
    "_grad",
    "_requires_grad",
    "_grad_fn",
    "_vc",
    "_counter",
    "_id",
    "_accumulator",
    "_retains_grad",
    "_hooks",
    "_view",
    "_next",
    "_arity",
    "_edge0",
    "_edge1",
    "_edges_more",
    "_code",
    "_offset",
    "_scope",
    "_inputs_meta",
    "_out_meta",
    "_out_ref",
    "_out_number",
    "_saved",
    "_to_save",
    "_as_tensors",
    "_mark",
    "_mark_text",
    "_pre_hooks",
    "_retained",
}

# (file, field): reads that have no public form yet, each with its reason
ALLOWED = {
    # the version counter's identity tells a tensor's detach() aliases apart from a copy
    ("static/tracer.py", "_vc"),
}


# (file, reach): private names taken from another layer that have no public form yet
ALLOWED_REACHES = {
    # backward_steps checks its loss exactly as backward() does; core/engine.py is being
    # reworked (the reading path), and its root check gets its public name there
    ("debug/stepping.py", "engine._root"),
}


def _layer(parts: list[str]) -> str:
    """The layer a module path (inside the package) belongs to: `core`, `graph`, ..."""
    return parts[0].removesuffix(".py") if parts else ""


def _imported_layer(node: ast.ImportFrom | ast.alias, level: int, rel: str) -> str | None:
    module = node.module if isinstance(node, ast.ImportFrom) else node.name
    if level:  # relative: `from ..core import engine` in graph/build.py
        here = rel.split("/")[:-1]
        return _layer(here[: len(here) - level + 1] + (module.split(".") if module else []))
    if module and module.startswith("tinygrad_edu."):
        return _layer(module.split(".")[1:])
    return None


def _private_reaches(path: Path, rel: str) -> list[tuple[int, str]]:
    """Private names this module takes from another layer: imported, or read off a module
    or class imported from there."""
    tree = ast.parse(path.read_text(), filename=str(path))
    mine = _layer(rel.split("/"))
    foreign: set[str] = set()  # names bound to another layer's modules and classes
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            layer = _imported_layer(node, node.level, rel)
            if layer is None or layer == mine:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append((node.lineno, f"import {alias.name}"))
                foreign.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                layer = _imported_layer(alias, 0, rel)
                if layer is not None and layer != mine:
                    foreign.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in foreign
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


def test_no_layer_takes_another_layers_private_names():
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("core/"):
            continue
        for line, reach in _private_reaches(path, rel):
            if (rel, reach) not in ALLOWED_REACHES:
                offences.append(f"tinygrad_edu/{rel}:{line}: {reach}")
    assert offences == [], "add a public accessor in the owning layer:\n" + "\n".join(offences)


def test_the_checker_finds_a_private_reach(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from ..core.grad_mode import _state\n"
        "from ..core import engine\n"
        "from ..core.tensor import Tensor\n"
        "from .describe import _ASSIGN\n"  # the same layer: its own business
        "root = engine._root(t)\n"
        "t = Tensor._make(a)\n"
    )
    assert _private_reaches(bad, "debug/bad.py") == [
        (1, "import _state"),
        (5, "engine._root"),
        (6, "Tensor._make"),
    ]


def _private_reads(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in CORE_PRIVATE:
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue  # a class's own field of that name, not core's
            found.append((node.lineno, node.attr))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in CORE_PRIVATE
        ):
            found.append((node.lineno, node.args[1].value))
    return found


def test_no_module_outside_core_reads_a_core_private_field():
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("core/"):
            continue
        for line, field in _private_reads(path):
            if (rel, field) not in ALLOWED:
                offences.append(f"tinygrad_edu/{rel}:{line}: .{field}")
    assert offences == [], "use the node view (docs/architecture.md):\n" + "\n".join(offences)


def test_the_checker_finds_a_private_read(tmp_path):
    # the test above must be able to fail: a read through an attribute and through getattr
    bad = tmp_path / "bad.py"
    bad.write_text("def f(n):\n    a = n._next\n    return getattr(n, '_saved', None), self._id\n")
    assert _private_reads(bad) == [(2, "_next"), (3, "_saved")]


def test_node_view_describes_an_op():
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    c = tg.tensor([3.0, 4.0], name="c")
    y = x * c
    node = y.grad_fn
    assert node.op == "Mul" and node.name == "MulBackward"
    assert node.next_functions[0][0] is x.grad_node and node.next_functions[1] == (None, 0)
    assert node.input_meta == (((2,), np.dtype("float64")), ((2,), np.dtype("float64")))
    assert node.output_meta == ((2,), np.dtype("float64"))
    assert node.module_path == ()
    assert node.creation_number > x.grad_node.creation_number
    assert y.creation_number > c.creation_number > x.creation_number
    assert node.site.lineno == test_node_view_describes_an_op.__code__.co_firstlineno + 3
    saved = node.saved_values()
    kept = [s for s in saved if s.value is not None]  # d(x*c)/dx = c: only c is needed
    assert len(kept) == 1 and kept[0].tensor is c and not kept[0].is_output
    np.testing.assert_array_equal(kept[0].value, [3.0, 4.0])
    assert not node.freed and node.output() is y
    y.sum().backward()
    assert node.freed and node.saved_values() == ()


def test_node_view_marks_and_held_grad():
    x = tg.tensor(2.0, requires_grad=True)
    y = x.exp()
    assert y.grad_fn.mark is None and y.grad_fn.mark_text == ""
    y.grad_fn.set_mark("gradcheck", "why")
    assert (y.grad_fn.mark, y.grad_fn.mark_text) == ("gradcheck", "why")
    y.backward()
    with pytest.warns(UserWarning):
        assert y.grad is None  # .grad of a non-leaf warns, as in PyTorch
    assert y.grad_held is None and float(x.grad_held.item()) == pytest.approx(np.exp(2.0))
