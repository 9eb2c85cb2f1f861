"""PyTorch's running reductions, order statistics and searches (issue 30): cumsum and
cumprod (with gradients), sort/argsort (`stable`, nan last as PyTorch), kthvalue, median,
mode, var_mean/std_mean, count_nonzero, bincount, histc, searchsorted, bucketize.

CumSum and CumProd are primitives (forward and backward side by side); the order
statistics pick their elements with `gather`, so the gradient goes to the element picked,
as in PyTorch. Counting and searching give integers, outside the graph. Core layer.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .. import source
from ..errors import DataError, ShapeError, message
from ..function import Function
from .common import is_array, values_read
from .indexing import Flip, _dims


def _t() -> Any:
    from ..tensor import Tensor  # here, not at the top: tensor.py imports this module

    return Tensor


def _axis(t: Any, dim: Any, op: str) -> int:
    return _dims(t, dim, op)[0]


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
        from ..creation import stack

        return (stack(parts, -1).transpose(d, -1),)


# --- the methods ---------------------------------------------------------------------------


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
    dims = _dims(self, dim, "logsumexp") if self.ndim else ()
    if not dims:
        return self * 1
    m = np.max(self._data, axis=dims, keepdims=True) if self._data.size else 0.0
    m = _t()._make(np.where(np.isfinite(m), m, 0).astype(self.dtype))  # a constant shift
    out = (self - m).exp().sum(dims, keepdims=True).log() + m
    if keepdim:
        return out
    return out.reshape(tuple(n for i, n in enumerate(self.shape) if i not in dims))


def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """A stable order along `axis`; nan counts as the largest value, as PyTorch's sort."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")  # numpy too puts nan last
    # negated keys, not a flipped ascending order (which would reverse ties); nan first
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        return np.lexsort((np.where(nan, 0, -x), ~nan), axis=axis)
    return np.argsort(-x.astype(np.int64), axis=axis, kind="stable")


def argsort(self: Any, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
    """Indices that sort along `dim`, always stable (ties keep their order), so `stable=True`
    and the default agree (PyTorch's default order of ties is not promised)."""
    values_read(self, "argsort")
    if self.ndim == 0:
        return _t()._make(np.asarray(0, dtype=np.int64))
    d = _axis(self, dim, "argsort")
    return _t()._make(_order(self._data, d, descending).astype(np.int64))


def sort(self: Any, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
    from ..torch_api import gather, return_type

    idx = argsort(self, dim, descending)
    if self.ndim == 0:
        return return_type("sort")(self * 1, idx)
    return return_type("sort")(gather(self, _axis(self, dim, "sort"), idx._data), idx)


def _pick(self: Any, op: str, dim: int, keepdim: bool, choose: Any) -> Any:
    """(values, indices) of the element `choose(x, axis)` picks along `dim`; the values take
    the gradient of the picked element only."""
    from ..torch_api import gather, return_type

    pair = return_type(op)
    if self.dtype == np.bool_ and op != "mode":  # PyTorch's kernels have no bool version
        raise DataError(
            message(op, f"needs numbers, got a bool tensor of shape {self.shape!r}", source.here(),
                    "convert it with .long() or .float()")
        )  # fmt: skip
    values_read(self, op)
    if self.ndim == 0:
        return pair(self * 1, _t()._make(np.asarray(0, dtype=np.int64)))
    d = _axis(self, dim, op)
    if self.shape[d] == 0:
        raise ShapeError(
            message(op, f"dim {dim} of shape {self.shape!r} has no elements", source.here())
        )
    idx = np.expand_dims(choose(self._data, d), d).astype(np.int64)
    values = gather(self, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return pair(values, _t()._make(idx))


def kthvalue(self: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    n = self.shape[_axis(self, dim, "kthvalue")] if self.ndim else 1
    if not 1 <= k <= n:
        raise ShapeError(
            message(
                "kthvalue",
                f"k={k} is out of range for a dim of size {n} (shape {self.shape!r})",
                source.here(),
                f"k counts from 1 (the smallest) to {n}",
            )
        )
    return _pick(
        self, "kthvalue", dim, keepdim, lambda x, d: np.take(_order(x, d, False), k - 1, axis=d)
    )


def median(self: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """The lower median (the smaller middle element of an even count), as PyTorch; with `dim`,
    (values, indices)."""
    if dim is None:
        flat = self.reshape(-1)
        if flat.shape[0] == 0:
            raise ShapeError(message("median", "a tensor with no elements", source.here()))
        return _pick(flat, "median", 0, False, _middle).values
    return _pick(self, "median", dim, keepdim, _middle)


def _middle(x: np.ndarray, d: int) -> np.ndarray:
    # nan sorts last; PyTorch's median is nan when a nan is there: pick it then
    order = _order(x, d, False)
    n = x.shape[d]
    mid = np.take(order, (n - 1) // 2, axis=d)
    last = np.take(order, n - 1, axis=d)
    has_nan = np.isnan(x).any(axis=d) if x.dtype.kind == "f" else False
    picked: np.ndarray = np.where(has_nan, last, mid)
    return picked


def mode(self: Any, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value (the smallest of those tied) and its last position, as PyTorch."""

    def choose(x: np.ndarray, d: int) -> np.ndarray:
        moved = np.moveaxis(x, d, -1)
        rows = moved.reshape(-1, moved.shape[-1])
        out = np.empty(len(rows), dtype=np.int64)
        for r, row in enumerate(rows):
            values, counts = np.unique(row, return_counts=True)
            best = values[np.argmax(counts)]  # unique sorts: the smallest of the most frequent
            out[r] = np.flatnonzero(row == best)[-1]
        return out.reshape(moved.shape[:-1])

    return _pick(self, "mode", dim, keepdim, choose)


def _var_std_args(dim: Any, unbiased: Any, correction: Any) -> tuple[Any, Any]:
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


def _spread_and_mean(
    self: Any, spread: str, dim: Any, unbiased: Any, keepdim: bool, correction: Any
) -> tuple[Any, Any]:
    """`(self.var(...), self.mean(...))` or with `std`: PyTorch's var_mean and std_mean."""
    dim, correction = _var_std_args(dim, unbiased, correction)
    return (
        getattr(self, spread)(dim=dim, correction=correction, keepdim=keepdim),
        self.mean(dim=dim, keepdim=keepdim),
    )


def var_mean(
    self: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple[Any, Any]:
    return _spread_and_mean(self, "var", dim, unbiased, keepdim, correction)


def std_mean(
    self: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple[Any, Any]:
    return _spread_and_mean(self, "std", dim, unbiased, keepdim, correction)


def count_nonzero(self: Any, dim: Any = None) -> Any:
    axis = None if dim is None else _dims(self, dim, "count_nonzero")
    values_read(self, "count_nonzero")
    return _t()._make(np.asarray(np.count_nonzero(self._data, axis=axis), dtype=np.int64))


def bincount(self: Any, weights: Any = None, minlength: int = 0) -> Any:
    values_read(self, "bincount")
    x = self._data
    if x.ndim != 1 or x.dtype.kind not in "iu" or (x < 0).any():
        raise DataError(
            message(
                "bincount",
                f"needs a vector of non-negative integers, got {x.dtype} of shape {x.shape!r}",
                source.here(),
                "count class labels with .long()",
            )
        )
    w = None if weights is None else np.asarray(getattr(weights, "_data", weights))
    out = np.bincount(x, weights=w, minlength=minlength)
    dt = np.int64 if w is None else (w.dtype if w.dtype.kind == "f" else np.float64)
    return _t()._make(out.astype(dt))


def histc(self: Any, bins: int = 100, min: float = 0, max: float = 0) -> Any:  # noqa: A002
    """Counts in `bins` equal bins over [min, max] (the data's range when min == max); values
    outside are left out, and max falls in the last bin, as PyTorch's."""
    values_read(self, "histc")
    x = self._data
    if x.dtype.kind != "f":
        raise DataError(message("histc", f"needs a float tensor, got {x.dtype}", source.here()))
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    inside = x[(x >= lo) & (x <= hi)]
    # PyTorch's bin: (x - min) * bins / (max - min), rounded down; max goes to the last bin
    where = ((inside - lo) * bins / (hi - lo)).astype(np.int64)
    where = np.minimum(where, bins - 1)
    return _t()._make(np.bincount(where, minlength=bins).astype(x.dtype))


def searchsorted(
    sorted_sequence: Any,
    values: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: Literal["left", "right"] | None = None,
) -> Any:
    """Where each value would go in the (last axis of the) sorted sequence to keep it sorted."""
    for t in (sorted_sequence, values):
        if isinstance(t, _t()):
            values_read(t, "searchsorted")
    seq = np.asarray(getattr(sorted_sequence, "_data", sorted_sequence))
    vals = np.asarray(getattr(values, "_data", values))
    how = side or ("right" if right else "left")
    if seq.ndim <= 1:
        out = np.searchsorted(seq, vals, side=how)
    else:
        if vals.shape[:-1] != seq.shape[:-1]:
            raise ShapeError(
                message(
                    "searchsorted",
                    f"the leading dims of the sequence {seq.shape!r} and the values "
                    f"{vals.shape!r} must match",
                    source.here(),
                )
            )
        s2, v2 = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
        out = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(s2, v2)]).reshape(
            vals.shape
        )
    return _t()._make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))


def bucketize(self: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False) -> Any:
    for t in (self, boundaries):
        if isinstance(t, _t()):
            values_read(t, "bucketize")
    b = np.asarray(getattr(boundaries, "_data", boundaries))
    if b.ndim != 1:
        raise ShapeError(
            message("bucketize", f"boundaries must be a vector, got {b.shape!r}", source.here())
        )
    data = self._data if isinstance(self, _t()) else np.asarray(self)
    return searchsorted(b, data, out_int32=out_int32, right=right)


METHODS = {
    "cumsum": cumsum,
    "cumprod": cumprod,
    "argsort": argsort,
    "sort": sort,
    "kthvalue": kthvalue,
    "median": median,
    "mode": mode,
    "count_nonzero": count_nonzero,
    "bincount": bincount,
    "histc": histc,
    "logsumexp": logsumexp,
}
FUNCTIONS = {
    "var_mean": var_mean,
    "std_mean": std_mean,
    "searchsorted": searchsorted,
    "bucketize": bucketize,
}
