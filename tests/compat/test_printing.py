"""`print(t)` lays out a tensor as PyTorch does (core/printing.py): the same widths,
notation, line breaks and summaries, for many shapes, dtypes and values (large, small,
negative, nan, inf, whole, empty, more than 1000 numbers), compared with torch's own
`str(t)`. The known differences of docs/pytorch_compat.md are normalised away: a dtype
prints as `float32` (PyTorch: `torch.float32`) and a node as `MulBackward`
(PyTorch: `MulBackward0`).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

SHAPES = [(), (1,), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0,), (0, 3), (2, 0, 1), (30,)]
BIG_SHAPES = [(1001,), (40, 40), (11, 11, 11), (2, 700), (4, 300, 1)]
SCALES = [1e-6, 1e-3, 0.5, 1.0, 37.0, 1e4, 1e9]
FLOATS = ["float32", "float64", "float16"]
WHOLE = ["int64", "int32", "int16", "uint8", "bool"]


def _values(shape, scale, kind, seed):
    rng = np.random.default_rng(seed)
    x = np.asarray(rng.standard_normal(shape) * scale)
    if kind == "whole":
        x = np.asarray(np.round(x))
    elif kind == "specials" and x.size >= 3:
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, 3, replace=False)] = [np.nan, np.inf, -np.inf]
    elif kind == "zeros" and x.size:
        x.reshape(-1)[::2] = 0.0
    return x


def _normalised(text: str) -> str:
    text = text.replace("torch.", "")
    return re.sub(r"Backward\d+>", "Backward>", text)


def _both(arr: np.ndarray, dtype: str, requires_grad: bool = False) -> tuple[str, str]:
    arr = np.asarray(arr)  # numpy gives 0-d results as numpy scalars; keep them arrays
    theirs = torch.tensor(arr, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    ours = tg.tensor(arr.astype(dtype), requires_grad=requires_grad)
    return str(theirs), str(ours)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", ["plain", "whole", "specials", "zeros"])
def test_floats_print_as_in_pytorch(default, shape, dtype, kind):
    for k, scale in enumerate(SCALES):
        if dtype == "float16" and scale > 1e4:
            continue  # past float16's range: inf on both sides, checked by "specials"
        arr = _values(shape, scale, kind, seed=k)
        theirs, ours = _both(arr, dtype, requires_grad=k % 2 == 1 and dtype != "float16")
        assert _normalised(ours) == _normalised(theirs), f"scale {scale}\n{theirs}\n{ours}"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", WHOLE)
def test_whole_numbers_and_booleans_print_as_in_pytorch(default, shape, dtype):
    for k, scale in enumerate([1.0, 5.0, 90.0, 3e4]):
        arr = _values(shape, scale, "whole", seed=k)
        arr = arr > 0 if dtype == "bool" else np.abs(arr) if dtype == "uint8" else arr
        if dtype in ("uint8", "int16"):
            arr = np.clip(
                np.asarray(arr), 0 if dtype == "uint8" else -3e4, 255 if dtype == "uint8" else 3e4
            )
        theirs, ours = _both(arr, dtype)
        assert _normalised(ours) == _normalised(theirs), f"scale {scale}\n{theirs}\n{ours}"


@pytest.mark.parametrize("shape", BIG_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_big_tensors_are_summarised_as_in_pytorch(default, shape, dtype):
    for k, scale in enumerate([1.0, 1e-5, 1000.0]):
        arr = _values(shape, scale, "plain" if dtype != "int64" else "whole", seed=k)
        arr = arr > 0 if dtype == "bool" else arr
        theirs, ours = _both(arr, dtype)
        assert _normalised(ours) == _normalised(theirs), f"scale {scale}\n{theirs}\n{ours}"


def test_suffixes_wrap_and_nodes_print_as_in_pytorch(default):
    outs = {}
    for lib in (torch, tg):
        x = lib.tensor(np.linspace(-2, 2, 9), requires_grad=True)
        outs[lib] = [x * 2, (x * 1e-6).exp(), x.reshape(3, 3) * 3e5, x[:5].sum()]
    for theirs, ours in zip(outs[torch], outs[tg]):
        assert _normalised(str(ours)) == _normalised(str(theirs))


def test_numpy_alone_would_differ():
    """What the tests above guard: numpy's layout is not PyTorch's."""
    arr = np.array([1e-5, 1.0, 100.0])
    assert np.array2string(arr, separator=", ") == "[1.e-05, 1.e+00, 1.e+02]"
    assert str(tg.tensor(arr)) == "tensor([1.0000e-05, 1.0000e+00, 1.0000e+02])"
