"""torch.linalg.norm / vector_norm and Tensor.norm (issue 30): VectorNorm is a primitive
whose gradient is 0 where the norm is 0 (a zero row in cdist or normalize), as
PyTorch's, where sqrt's would be nan. Core layer.
"""

from __future__ import annotations

import numbers
import types
from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, message
from ...function import Function
from ..common import broadcast_to, data, is_array, where
from ..indexing import _dims
from .shared import _tensor


class VectorNorm(Function):
    """(sum |x|^p)^(1/p) over `axes` (inf: max |x|, 0: the count of non-zeros)."""

    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx: Any, a: Any, p: float, axes: tuple[int, ...], keepdims: bool) -> Any:
        ctx.p, ctx.axes, ctx.keepdims, ctx.shape = p, axes, keepdims, a.shape
        x = np.abs(a)
        if p == np.inf:
            out = np.max(x, axis=axes, keepdims=True, initial=0)
        elif p == -np.inf:
            out = np.min(x, axis=axes, keepdims=True)
        elif p == 0:
            out = np.sum(x != 0, axis=axes, keepdims=True).astype(a.dtype)
        elif p == 1:
            out = np.sum(x, axis=axes, keepdims=True)
        elif p == 2:
            out = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        else:
            out = np.sum(x**p, axis=axes, keepdims=True) ** (1.0 / p)
        ctx.save_for_backward(a, out)
        return out if keepdims else np.squeeze(out, axis=axes)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, out = ctx.saved_tensors  # out kept with its axes
        if not ctx.keepdims:
            g = g.reshape(out.shape)
        p, x, n = ctx.p, data(a), data(out)
        sign = np.sign(x)
        if p == 0:
            return (broadcast_to(g * 0, ctx.shape),)
        if p == 1:
            return (g * sign,)
        if p in (np.inf, -np.inf):  # the extreme elements share the gradient, as PyTorch
            hit = np.abs(x) == n
            share = sign * hit / np.maximum(hit.sum(axis=ctx.axes, keepdims=True), 1)
            return (g * share.astype(x.dtype),)
        # d||x||/dx = x |x|^(p-2) / ||x||^(p-1), and 0 where the norm is 0 (PyTorch's);
        # written with ops arrays and Tensors share, so a second derivative is right too
        zero = n == 0
        safe = where(zero, 1.0, out)
        if p == 2:
            return (where(zero, 0.0, g * a / safe),)
        size = np.abs(a) if is_array(a) else a.abs()
        return (where(zero, 0.0, g * sign * size ** (p - 1) / safe ** (p - 1)),)


def vector_norm(
    x: Any,
    ord: Any = 2,  # noqa: A002 - PyTorch's name
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Any:
    x = _tensor(x)
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.kind != "f":
        raise DataError(
            message(
                "vector_norm",
                f"needs a float tensor, got {x.dtype}, as in PyTorch",
                source.here(),
                ".float()",
            )
        )
    if x.ndim == 0:  # a number is a vector of one (numpy's reductions over no axis fail)
        _dims(x.reshape(1), 0 if dim is None else dim, "vector_norm")  # dim 0 or -1 only
        return vector_norm(x.reshape(1), ord, None, False).reshape(())
    axes = tuple(range(x.ndim)) if dim is None else _dims(x, dim, "vector_norm")
    p = float(ord) if not isinstance(ord, str) else ord
    if isinstance(p, str):
        raise ValueError(message("vector_norm", f"ord must be a number, got {ord!r}"))
    return VectorNorm.apply(x, p=p, axes=axes, keepdims=keepdim)


def norm(
    A: Any,  # noqa: N803 - PyTorch's name for a matrix
    ord: Any = None,  # noqa: A002 - PyTorch's name
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Any:
    """`torch.linalg.norm`: the vector norm, or for two dims 'fro' and the 1 / inf matrix
    norms (the largest column / row sum of |A|). Norms built on singular values are refused."""
    A = _tensor(A)  # noqa: N806 - PyTorch's name for a matrix
    if dim is None and ord is not None and A.ndim == 2:
        dim = (0, 1)
    if dim is None or isinstance(dim, numbers.Integral) or len(tuple(dim)) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    d0, d1 = _dims(A, dim, "linalg.norm")
    if ord in (None, "fro"):
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in (1, -1, np.inf, -np.inf):
        over, then = (d0, d1) if ord in (1, -1) else (d1, d0)  # column sums, or row sums
        sums = A.abs().sum(over, keepdims=True)
        pick = sums.amax(then, keepdim=True) if ord > 0 else sums.amin(then, keepdim=True)
        return pick if keepdim else pick.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise NotImplementedError(
        message(
            "linalg.norm",
            f"ord={ord!r} over two dims needs singular values, which are not supported",
            source.here(),
            "use 'fro', 1, -1, inf or -inf, or a vector norm over one dim",
        )
    )


linalg = types.SimpleNamespace(norm=norm, vector_norm=vector_norm)
