"""cumsum, cumprod and logsumexp (issue 30): CumSum and CumProd are primitives (cumprod's
backward without division, so exact where a factor is 0, and twice differentiable);
float32 adds up in float64, as PyTorch's. Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...dtypes import get_default_dtype
from ...errors import message
from ...function import Function
from ..common import is_array
from ..indexing import Flip, _dims
from .shared import _axis, _t


def _running_dtype(a: np.ndarray) -> np.dtype:
    """PyTorch's: integers and bools add up in int64; floats keep their dtype."""
    return np.dtype(np.int64) if a.dtype.kind in "biu" else a.dtype


class CumSum(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, axis: int) -> Any:
        ctx.axis = axis
        dt = _running_dtype(a)
        if dt.kind == "f" and dt.itemsize < 8:  # PyTorch adds float32 up in float64 (its
            return np.cumsum(a, axis=axis, dtype=np.float64).astype(dt)  # accumulate type)
        return np.cumsum(a, axis=axis, dtype=dt)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        # each input adds into every later output: the gradient is g summed from the end
        d = ctx.axis
        if is_array(g):
            return (np.flip(np.cumsum(np.flip(g, d), axis=d), d).copy(),)
        return (Flip.apply(CumSum.apply(Flip.apply(g, dims=(d,)), axis=d), dims=(d,)),)


class CumProd(Function):
    saved_names = ("self",)

    @staticmethod
    def forward(ctx: Any, a: Any, axis: int) -> Any:
        ctx.axis = axis
        ctx.save_for_backward(a)
        return np.cumprod(a, axis=axis, dtype=_running_dtype(a))

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        # out_k = x_0 ... x_k, so d(sum_k g_k out_k)/dx_j = L_j * R_j with L_j = x_0 ... x_{j-1}
        # and R_j = g_j + x_{j+1} R_{j+1}: no division, so it is exact where some x are 0
        # (where PyTorch also takes care). Written with ops arrays and Tensors share.
        (a,) = ctx.saved_tensors
        d = ctx.axis
        x = a.swapaxes(d, -1) if is_array(a) else a.transpose(d, -1)
        gg = g.swapaxes(d, -1) if is_array(g) else g.transpose(d, -1)
        n = x.shape[-1]
        if n == 0:
            return (g,)
        left, acc = [], None
        for j in range(n):
            left.append(acc if acc is not None else x[..., 0] * 0 + 1)
            acc = x[..., j] if acc is None else acc * x[..., j]
        right = [None] * n
        right[n - 1] = gg[..., n - 1]
        for j in range(n - 2, -1, -1):
            right[j] = gg[..., j] + x[..., j + 1] * right[j + 1]
        parts = [left[j] * right[j] for j in range(n)]
        if is_array(a) and is_array(g):
            out = np.stack(parts, axis=-1)
            return (out.swapaxes(d, -1),)
        from ...creation import stack

        return (stack(parts, -1).transpose(d, -1),)


def _running(op: type[Function], self: Any, dim: Any, dtype: Any) -> Any:
    if dim is None:
        raise TypeError(
            message(
                op.__name__.lower(),
                "needs the dim to run along",
                source.here(),
                "x.cumsum(0), or x.cumsum(dim=-1)",
            )
        )
    if dtype is not None:  # PyTorch casts first, then adds up in that dtype
        self = self.to(dtype)
    if self.ndim == 0:
        return op.apply(self.reshape(1), axis=0).reshape(())
    return op.apply(self, axis=_axis(self, dim, op.__name__.lower()))


def cumsum(self: Any, dim: Any = None, *, dtype: Any = None, axis: Any = None) -> Any:
    return _running(CumSum, self, dim if axis is None else axis, dtype)  # axis: numpy's name


def cumprod(self: Any, dim: Any = None, *, dtype: Any = None, axis: Any = None) -> Any:
    return _running(CumProd, self, dim if axis is None else axis, dtype)


def logsumexp(self: Any, dim: Any, keepdim: bool = False) -> Any:
    """log(sum(exp(x))) over `dim` (an int or a tuple), shifted by the max so it does not
    overflow; a row of -inf gives -inf, as PyTorch."""
    if self.dtype.kind != "f":  # whole numbers give the default float, as PyTorch's (and
        self = self.astype(get_default_dtype())  # uint8 - max would wrap around)
    dims = _dims(self, dim, "logsumexp") if self.ndim else ()
    if not dims:
        return self * 1
    m = np.max(self._data, axis=dims, keepdims=True) if self._data.size else 0.0
    m = _t()._make(np.where(np.isfinite(m), m, 0).astype(self.dtype))  # a constant shift
    out = (self - m).exp().sum(dims, keepdims=True).log() + m
    if keepdim:
        return out
    return out.reshape(tuple(n for i, n in enumerate(self.shape) if i not in dims))
