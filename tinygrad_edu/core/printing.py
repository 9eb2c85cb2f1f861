"""How a tensor prints: `repr(t)` and `print(t)` lay the numbers out as PyTorch does.

One width for every number of a tensor, chosen from the numbers themselves:

- whole numbers and booleans: the longest of them, `tensor([  1, -20,   3])`;
- floats that are all whole: `tensor([ 1., 20.])`, a point after each;
- other floats: 4 decimals, `tensor([0.5000, 2.2500])`;
- scientific notation when the nonzero finite magnitudes span more than 1000x, or one
  exceeds 1e8, or one is below 1e-4: `tensor([1.0000e-05, 1.0000e+00])`.

nan, inf and zeros never decide the width. Rows wrap at 80 columns; a tensor of more than
1000 numbers shows the first and last 3 along each axis with `...` between. What follows
the numbers (`dtype=`, `grad_fn=`, `requires_grad=True`, `name=`) goes onto a new line when
it would pass 80 columns. numpy's own array printing differs in all of these (its widths,
its scientific cut-offs, 75 columns), hence this module. Core layer: numpy only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

PRECISION = 4  # decimals, as PyTorch's default print options
THRESHOLD = 1000  # more numbers than this are summarised
EDGEITEMS = 3  # numbers kept at each end of a summarised axis
LINEWIDTH = 80


def tensor_repr(data: np.ndarray, suffixes: list[str]) -> str:
    """`tensor(<numbers>, <suffixes>)` for the array `data`."""
    prefix = "tensor("
    if data.size == 0:
        body = "[]"
    else:
        summarize = data.size > THRESHOLD
        fmt = number_format(_edges(data) if summarize else data)
        body = _block(data, len(prefix), summarize, fmt)
    return _with_suffixes(prefix + body, suffixes, len(prefix))


def empty_suffixes(data: np.ndarray, default: np.dtype) -> list[str]:
    """An empty tensor shows its shape unless it is (0,), and its dtype unless it is the
    default float: no number tells the dtype."""
    out = [] if data.ndim == 1 else [f"size={data.shape!r}"]
    return out + ([] if data.dtype == default else [f"dtype={data.dtype}"])


class NumberFormat:
    """Writes one number of a tensor at the `width` all of its numbers share."""

    def __init__(self, text: Callable[[Any], str], width: int) -> None:
        self.text, self.width = text, width

    def __call__(self, v: Any) -> str:
        return self.text(v).rjust(self.width)


def number_format(data: np.ndarray) -> NumberFormat:
    """The format of `data`'s numbers: the notation and width, from the numbers themselves."""
    values = data.reshape(-1)
    if values.dtype.kind != "f":  # whole numbers, booleans: as Python writes them
        return NumberFormat(str, max([1] + [len(str(v)) for v in values.tolist()]))
    # NOTE: float32 numbers are widened to Python floats exactly, so "0.1000" not "0.1"
    finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
    whole = bool(np.all(finite == np.ceil(finite)))
    sci = False
    if finite.size:
        lo, hi = np.abs(finite).min(), np.abs(finite).max()
        sci = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
    if sci:
        spec = f".{PRECISION}e"
    elif whole:
        spec = ".0f"
    else:
        spec = f".{PRECISION}f"
    point = "." if whole and not sci else ""  # 3. says "a float", not the int 3

    def text(v: float) -> str:
        return format(v, spec) + (point if np.isfinite(v) else "")

    return NumberFormat(text, max([1] + [len(text(v)) for v in finite.tolist()]))


def _edges(data: np.ndarray) -> np.ndarray:
    """The numbers a summarised print shows: the first and last few along every axis."""
    for axis, n in enumerate(data.shape):
        if n > 2 * EDGEITEMS:
            keep = list(range(EDGEITEMS)) + list(range(n - EDGEITEMS, n))
            data = np.take(data, keep, axis=axis)
    return data


def _block(data: np.ndarray, indent: int, summarize: bool, fmt: NumberFormat) -> str:
    """The bracketed numbers of `data`, whose first line starts at column `indent`."""
    if data.ndim == 0:
        return fmt(data.item())
    n = data.shape[0]
    cut = summarize and n > 2 * EDGEITEMS
    rows = list(range(EDGEITEMS)) + [-1] + list(range(n - EDGEITEMS, n)) if cut else range(n)
    if data.ndim == 1:
        items = [" ..." if i < 0 else fmt(data[i].item()) for i in rows]
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))  # ", " after each
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = ["..." if i < 0 else _block(data[i], indent + 1, summarize, fmt) for i in rows]
    # a blank line between blocks for each axis below the first, as PyTorch
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    # NOTE: PyTorch counts the last line as 2 longer than it is (its rfind of -1 when there
    # is one line); the same count gives the same breaks
    last = len(text) - text.rfind("\n") + 1
    out = [text]
    for s in suffixes:
        # `dtype=float32` counts as PyTorch's `dtype=torch.float32`: lines break where its do
        n = len(s) + (len("torch.") if s.startswith("dtype=") else 0)
        if last + n + 2 > LINEWIDTH:
            out.append(",\n" + " " * indent + s)
            last = indent + n
        else:
            out.append(", " + s)
            last += n + 2
    return "".join(out) + ")"
