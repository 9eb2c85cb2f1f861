"""Short, deterministic text summaries of values and gradients for graph labels.

Numbers go through Python's own `format` (never numpy's repr, which changed between
numpy 1 and 2), so labels repeat exactly across machines. Graph layer: numpy and the
standard library only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

SMALL = 4  # tensors with at most this many elements show every value
_INFINITIES = (math.inf, -math.inf)


def num(v: float) -> str:
    """One number with 4 significant digits: `2`, `-0.5`, `1.235e+05`, `nan`."""
    v = float(v)
    if v != v:
        return "nan"
    if v in _INFINITIES:
        return "inf" if v > 0 else "-inf"
    text = f"{v:.4g}"
    return "0" if text == "-0" else text


def summarise_array(arr: Any) -> str:
    r"""Describe an array in one short line.

    Rules: one element -> `2.0000` (micrograd's `%.4f`); up to SMALL elements ->
    `[1, 2.5, 3]`; larger -> `mean 0.1234 std 1.1`; NaN/inf counts are appended
    (`3 nan`) because they are what a learner hunts for.

    Example:
        >>> import numpy as np
        >>> summarise_array(np.array(2.0)), summarise_array(np.array([1.0, 2.5]))
        ('2.0000', '[1, 2.5]')
        >>> summarise_array(np.array([1.0, np.nan, 3.0, 4.0, 5.0]))
        'mean 3.25 std 1.479, 1 nan'
    """
    a = np.asarray(arr)
    if a.size == 0:
        return "empty"
    if a.dtype.kind == "b":
        a = a.astype(np.int64)
    if a.size == 1:
        v = float(a.reshape(()))
        if not np.isfinite(v):
            return num(v)
        text = f"{v:.4f}"
        # NOTE: a value that rounds to zero keeps no sign: float noise (-1e-9 here, 1e-9 on
        # another CPU) must not print as `-0.0000` on one machine and `0.0000` on the next
        return text[1:] if text == "-0.0000" else text
    if a.size <= SMALL:
        return "[" + ", ".join(num(v) for v in a.reshape(-1).tolist()) + "]"
    flat = a.reshape(-1).astype(np.float64, copy=False)
    finite = np.isfinite(flat)
    if np.logical_and.reduce(finite):  # the usual case, in two numpy calls: no nan, no inf
        return _mean_std_text(flat)
    nan = int(np.isnan(flat).sum())
    inf = int(flat.size - finite.sum() - nan)
    if finite.any():
        good = flat[finite] if not finite.all() else flat
        text = _mean_std_text(good)
    else:
        text = "no finite values"
    if nan:
        text += f", {nan} nan"
    if inf:
        text += f", {inf} inf"
    return text


def _mean_std_text(a: np.ndarray) -> str:
    r"""`mean 0.1234 std 1.1`, with a mean that is float noise next to its std read as 0.

    NOTE: numpy sums float32 in another order on another CPU (its AVX-512, AVX2 and
    baseline paths), so the mean of values that cancel is exactly 0 on one machine and
    1e-12 on the next. The std is shown to 4 significant digits; a mean smaller than half
    its last digit is not different from 0 at that precision, so it reads 0, the same on
    every CPU. A mean that matters (larger than that) is shown as it is.

    Example:
        >>> import numpy as np
        >>> _mean_std_text(np.array([-1.5, 1.5, 1e-9]))
        'mean 0 std 1.225'
        >>> _mean_std_text(np.array([0.9, 1.1, 1.0]))
        'mean 1 std 0.08165'
    """
    mean, std = _mean_std(a)
    if std > 0 and abs(mean) < 0.5 * 10.0 ** (math.floor(math.log10(std)) - 3):
        mean = 0.0
    return f"mean {num(mean)} std {num(std)}"


def _mean_std(a: np.ndarray) -> tuple[float, float]:
    """`a.mean()` and `a.std()` to the last bit, without numpy's Python wrappers around them.

    The live graph labels every tensor of a cell after it runs: the wrappers cost more than
    the sums on learner-sized arrays. Same steps as numpy: pairwise sum over n, then the
    mean of squared deviations, square-rooted.
    """
    n = a.size
    mean = np.add.reduce(a) / n
    deviation = a - mean
    return float(mean), math.sqrt(np.add.reduce(deviation * deviation) / n)


_DTYPE_TEXT: dict = {}  # dtype -> its name, made once: numpy's str(dtype) is slow Python code


def dtype_text(dtype: Any) -> str:
    """`"float64"`: the dtype's name, as `str(dtype)` (labels name about 100 a drawing)."""
    text = _DTYPE_TEXT.get(dtype)
    if text is None:
        text = _DTYPE_TEXT[dtype] = str(dtype)
    return text


def shape_text(shape: tuple | None) -> str:
    """`(3, 2)` / `()` for a scalar / `""` when unknown."""
    if shape is None:
        return ""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(s) for s in shape) + ")"
