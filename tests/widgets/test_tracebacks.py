"""Errors at learner size: house message first, the learner's frames, library folded."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

import tinygrad_edu as tg
from tinygrad_edu.core.errors import ShapeError
from tinygrad_edu.widgets import tracebacks

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def multiply(a, b):
    return a @ b


def test_short_text_puts_the_message_first_and_folds_library_frames():
    x = tg.tensor([[1.0, 2.0, 3.0]], requires_grad=True, name="x")
    with pytest.raises(ShapeError) as err:
        multiply(x, x)
    text = ANSI.sub("", tracebacks.short_text(err.type, err.value, err.tb))
    lines = text.splitlines()
    assert lines[0] == f"ShapeError: {str(err.value).splitlines()[0]}"
    assert any(line.startswith("  hint: did you mean a @ b.T") for line in lines)
    mine = lines[lines.index("your code:") + 1 :]
    assert mine[0].startswith("  tests/widgets/test_tracebacks.py, line ")
    assert mine[0].endswith(
        ", in test_short_text_puts_the_message_first_and_folds_library_frames: multiply(x, x)"
    )
    assert mine[1].endswith(", in multiply: return a @ b")
    assert re.fullmatch(
        r"\(\+ \d+ library frames in tinygrad_edu; %tb shows the full "
        r"traceback\)",
        mine[2],
    )


def test_library_package_tells_learner_code_from_libraries():
    assert tracebacks.library_package(tg.__file__) == "tinygrad_edu"
    assert tracebacks.library_package(pytest.__file__) == "pytest"
    assert tracebacks.library_package(re.__file__) == "re"
    assert tracebacks.library_package(__file__) is None
    assert tracebacks.is_ours(ShapeError) and not tracebacks.is_ours(ValueError)


CELLS = [
    "import tinygrad_edu as tg\n%load_ext tinygrad_edu",
    'x = tg.tensor([[1.0, 2, 3], [4, 5, 6]], requires_grad=True, name="x")\n'
    "def f(a, b):\n    return a @ b\n\ny = f(x, x)",
    "%tb",
    "1 / 0",
    "%unload_ext tinygrad_edu\ny = f(x, x)",
]


def test_in_a_kernel_our_errors_are_short_and_others_unchanged():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    (short,) = [o for o in nb.cells[1].outputs if o["output_type"] == "error"]
    assert short["ename"] == "ShapeError"  # what nbval compares stays the same
    assert short["evalue"].startswith("matmul: cannot multiply (2, 3) @ (2, 3)")
    lines = ANSI.sub("", "\n".join(short["traceback"])).splitlines()
    assert lines[:4] == [
        "ShapeError: matmul: cannot multiply (2, 3) @ (2, 3): inner sizes 3 and 2 differ",
        "  built at: cell [2], line 3: return a @ b",
        "  hint: did you mean a @ b.T? b.T has shape (3, 2), and the product shape (2, 2)",
        "",
    ]
    assert lines[4:7] == [
        "your code:",
        "  cell [2], line 5: y = f(x, x)",
        "  cell [2], line 3, in f: return a @ b",
    ]
    assert lines[7].startswith("(+ ") and lines[7].endswith("%tb shows the full traceback)")
    full = ANSI.sub(
        "",
        "".join(o.get("text", "") + "\n".join(o.get("traceback", [])) for o in nb.cells[2].outputs),
    )
    assert "function.py" in full or "tensor.py" in full  # %tb: every frame is there
    (plain,) = [o for o in nb.cells[3].outputs if o["output_type"] == "error"]
    assert "Traceback (most recent call last)" in ANSI.sub("", "\n".join(plain["traceback"]))
    (after,) = [o for o in nb.cells[4].outputs if o["output_type"] == "error"]
    assert "Traceback (most recent call last)" in ANSI.sub("", "\n".join(after["traceback"]))
