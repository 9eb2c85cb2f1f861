"""sort/argsort (stable, nan the largest, as PyTorch), kthvalue, median and mode (issue
30): the order comes from numpy, the values are picked with `gather`, so the gradient
goes to the element picked. Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, ShapeError, message
from ..common import values_read
from .shared import _axis, _t


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
    from ...torch_api import gather, return_type

    idx = argsort(self, dim, descending)
    if self.ndim == 0:
        return return_type("sort")(self.clone(), idx)  # bool stays bool
    return return_type("sort")(gather(self, _axis(self, dim, "sort"), idx._data), idx)


def _pick(self: Any, op: str, dim: int, keepdim: bool, choose: Any) -> Any:
    """(values, indices) of the element `choose(x, axis)` picks along `dim`; the values take
    the gradient of the picked element only."""
    from ...torch_api import gather, return_type

    pair = return_type(op)
    if self.dtype == np.bool_ and op != "mode":  # PyTorch's kernels have no bool version
        raise DataError(
            message(op, f"needs numbers, got a bool tensor of shape {self.shape!r}", source.here(),
                    "convert it with .long() or .float()")
        )  # fmt: skip
    values_read(self, op)
    if self.ndim == 0:
        return pair(self.clone(), _t()._make(np.asarray(0, dtype=np.int64)))  # bool stays bool
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

    def choose(x: np.ndarray, d: int) -> np.ndarray:
        rows = np.moveaxis(x, d, -1)
        flat = rows.reshape(-1, rows.shape[-1])
        # the sorted order's pick is the answer where the k-th value has no tie in its row
        out: np.ndarray = np.take(_order(x, d, False), k - 1, axis=d).reshape(-1).astype(np.int64)
        value = np.take_along_axis(flat, out[:, None], 1)
        same = (flat == value) | ((flat != flat) & (value != value))  # nan ties nan
        for r in np.flatnonzero(same.sum(axis=1) > 1):  # ties: PyTorch's quickselect decides
            out[r] = _select(flat[r].tolist(), k - 1)
        return out.reshape(rows.shape[:-1])

    return _pick(self, "kthvalue", dim, keepdim, choose)


def _select(row: list[Any], k: int) -> int:
    """The position of the (k+1)-th smallest of `row` as PyTorch's CPU kernel finds it: a
    quickselect with the median of three as pivot. Among tied values it may be any of them
    (3 of twenty equal numbers is at index 13), so a sort's order would pick another one, and
    the gradient would go to another element. nan counts as the largest value. Plain Python
    on one row: kthvalue calls it only for rows with a tie."""
    vals, idx = row[:], list(range(len(row)))

    def above(a: Any, b: Any) -> bool:
        return bool((a != a and b == b) or a > b)  # a != a: a is nan

    def swap(i: int, j: int) -> None:
        vals[i], vals[j], idx[i], idx[j] = vals[j], vals[i], idx[j], idx[i]

    lo, hi = 0, len(vals) - 1
    while hi > lo + 1:
        mid = lo + (hi - lo) // 2
        swap(mid, lo + 1)  # order vals[lo + 1] <= vals[lo] <= vals[hi]: vals[lo] is the pivot
        for i, j in ((lo + 1, hi), (lo, hi), (lo + 1, lo)):
            if above(vals[i], vals[j]):
                swap(i, j)
        i, j, pivot = lo + 1, hi, vals[lo]
        while True:  # partition: smaller before j, larger after i
            i += 1
            while above(pivot, vals[i]):
                i += 1
            j -= 1
            while above(vals[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    if hi == lo + 1 and above(vals[lo], vals[hi]):
        swap(lo, hi)
    return idx[k]


def median(self: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """The lower median (the smaller middle element of an even count), as PyTorch; with `dim`,
    (values, indices)."""
    if dim is None:
        flat = self.reshape(-1)
        if flat.shape[0] == 0:
            raise ShapeError(message("median", "a tensor with no elements", source.here()))
        picked = _pick(flat, "median", 0, False, _middle).values
        if flat.dtype.kind != "f" or np.isnan(picked._data):
            return picked
        # PyTorch shares this median's gradient between the elements equal to it (as amax
        # shares between ties); with `dim`, the one picked element gets it
        return flat.masked_fill(flat != picked, -np.inf).amax()
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
