"""What the indexing family's ops share (issue 30): dims and index tensors checked and
read as PyTorch reads them, with errors that name the op. Core layer.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, ShapeError, message


def _t() -> Any:
    from ...tensor import Tensor  # here, not at the top: tensor.py imports this module

    return Tensor


def _dims(t: Any, dims: Any, op: str) -> tuple[int, ...]:
    """`dims` (an int, or a tuple or list of them) as non-negative axes of `t`."""
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    n = max(t.ndim, 1)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or not -n <= d < n:
            raise ShapeError(
                message(
                    op,
                    f"dim {d!r} is out of range for a tensor with {t.ndim} axes (shape {t.shape!r})",
                    source.here(),
                    f"use dims in -{n} .. {n - 1}",
                )
            )
    out = tuple(int(d) % n for d in dims)
    if len(set(out)) != len(out):
        raise ShapeError(message(op, f"dims {dims!r} name an axis twice", source.here()))
    return out


def _indices(index: Any, op: str) -> np.ndarray:
    """An index tensor's integers (PyTorch refuses float indices, and so do we)."""
    arr = np.asarray(index._data if isinstance(index, _t()) else index)
    if arr.dtype.kind not in "iu":
        raise DataError(
            message(
                op,
                f"index must hold integers (int64), got {arr.dtype} of shape {arr.shape!r}",
                source.here(),
                "convert it with .long()",
            )
        )
    return arr.astype(np.intp, copy=False)


def _same_dtype(op: str, t: Any, src: Any) -> None:
    """PyTorch's index_add, scatter and scatter_add refuse a source of another dtype (the
    result would have to be rounded into the tensor's or promoted away from it)."""
    if isinstance(src, _t()) and src.dtype != t.dtype:
        raise DataError(
            message(
                op,
                f"the source is {src.dtype} but the tensor is {t.dtype} (shapes {src.shape!r} "
                f"and {t.shape!r}); PyTorch needs one dtype",
                source.here(),
                f"convert the source with .to({t.dtype})",
            )
        )


def _at_least_2d(t: Any, op: str) -> None:
    if t.ndim < 2:
        raise ShapeError(
            message(op, f"needs a tensor with 2 or more axes, got shape {t.shape!r}", source.here())
        )


def _ints(x: Any) -> tuple[int, ...]:
    return (int(x),) if isinstance(x, numbers.Integral) else tuple(int(v) for v in x)
