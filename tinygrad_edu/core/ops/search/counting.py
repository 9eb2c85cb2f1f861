"""var_mean/std_mean, count_nonzero, bincount, histc, searchsorted and bucketize (issue
30): counting and searching give integers, outside the graph, as in PyTorch. Core
layer.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ... import source
from ...errors import DataError, ShapeError, message
from ..common import values_read
from ..indexing import _dims
from .shared import _t


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


def nansum(self: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """The sum with each nan counted as 0, as PyTorch's; a nan's gradient is 0 (the fill
    takes its place in the graph), the others' 1, as for sum."""
    x = self.masked_fill(self != self, 0) if self.dtype.kind == "f" else self  # nan != nan
    return x.sum(dim=dim, keepdim=keepdim, dtype=dtype)


def count_nonzero(self: Any, dim: Any = None) -> Any:
    # a number counts as a vector of one, so its dim 0 (or -1) is accepted, as in PyTorch
    x = self if self.ndim else self.reshape(1)
    axis = None if dim is None else _dims(x, dim, "count_nonzero")
    values_read(self, "count_nonzero")
    return _t()._make(np.asarray(np.count_nonzero(x._data, axis=axis), dtype=np.int64))


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
    # numpy counts in its own index integer (np.intp): int32 where numpy is 32-bit (the
    # browser's Pyodide), which refuses int64 labels; a label past it could not be counted
    if x.size and int(x.max()) > np.iinfo(np.intp).max:
        raise DataError(
            message(
                "bincount", f"a label of {int(x.max())} is too large to count here", source.here()
            )
        )
    out = np.bincount(x.astype(np.intp, copy=False), weights=w, minlength=minlength)
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
    where = ((inside - lo) * bins / (hi - lo)).astype(np.intp)  # np.bincount's own integer
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
