"""scatter(_), scatter_add(_) and scatter_reduce ('sum', 'mean', 'amax', 'amin') (issue 30),
built on the core's IndexPut and IndexAdd; amax/amin share the gradient among the
elements equal to the result, as PyTorch. Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...errors import ShapeError, message
from ..movement import IndexAdd, IndexPut
from .shared import _dims, _indices, _same_dtype, _t


def _grid(op: str, self: Any, dim: int, index: Any) -> tuple[tuple[Any, ...], tuple[slice, ...]]:
    """numpy's index for `out[index[i][j]][j]` (dim 0, and so on): an open grid over the
    index's shape, with the index along `dim`."""
    idx = _indices(index, op)
    (d,) = _dims(self, dim, op)
    if idx.ndim != self.ndim:
        raise ShapeError(
            message(
                op,
                f"index has {idx.ndim} axes but the tensor has {self.ndim} (shape {self.shape!r})",
                source.here(),
                "give the index as many axes as the tensor",
            )
        )
    grid = list(np.ogrid[tuple(slice(n) for n in idx.shape)])
    grid[d] = idx
    return tuple(grid), tuple(slice(0, n) for n in idx.shape)


def scatter(
    self: Any, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None
) -> Any:
    """`out[index[i][j]][j] = src[i][j]` (dim 0), the rest of `self` unchanged."""
    if reduce is not None:
        raise NotImplementedError(
            message(
                "scatter",
                "reduce= is not supported",
                source.here(),
                "use scatter_reduce or scatter_add",
            )
        )
    grid, part = _grid("scatter", self, dim, index)
    src = value if src is None else src
    _same_dtype("scatter", self, src)
    vals = src[part] if isinstance(src, _t()) else np.asarray(src, dtype=self.dtype)
    return IndexPut.apply(self, vals, index=grid)


def scatter_(
    self: Any, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None
) -> Any:
    return self._inplace(
        "scatter_", lambda t: scatter(t, dim, index, src, value=value, reduce=reduce)
    )


def scatter_add(self: Any, dim: int, index: Any, src: Any) -> Any:
    grid, part = _grid("scatter_add", self, dim, index)
    _same_dtype("scatter_add", self, src)
    return self + IndexAdd.apply(src[part], shape=self.shape, index=grid)


def scatter_add_(self: Any, dim: int, index: Any, src: Any) -> Any:
    return self._inplace("scatter_add_", lambda t: scatter_add(t, dim, index, src))


def scatter_reduce(
    self: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """Reduce `src` into `self` at `index` along `dim`: 'sum', 'mean', 'amax' or 'amin'.

    amax/amin share the gradient evenly among the elements equal to the result, as PyTorch.
    """
    if reduce not in ("sum", "mean", "amax", "amin"):
        raise NotImplementedError(
            message(
                "scatter_reduce",
                f"reduce={reduce!r} is not supported ('sum', 'mean', 'amax', 'amin' are)",
                source.here(),
            )
        )
    grid, part = _grid("scatter_reduce", self, dim, index)
    _same_dtype("scatter_reduce", self, src)
    part_src = src[part]
    tensor = _t()
    hit = np.zeros(self.shape, dtype=np.int64)  # how many src elements land on each place
    np.add.at(hit, grid, 1)
    keep = tensor._make((hit == 0) | include_self)  # where self's own value takes part
    zero = tensor._make(np.zeros((), self.dtype))
    own = _where(keep, self, zero)
    if reduce in ("sum", "mean"):
        total = own + IndexAdd.apply(part_src, shape=self.shape, index=grid)
        if reduce == "sum":
            return total
        count = hit + keep._data
        return (
            total / tensor._make(count.astype(self.dtype))
            if self.dtype.kind == "f"
            else tensor._make(np.floor_divide(total._data, count))
        )
    best = np.where(keep._data, self._data, -np.inf if reduce == "amax" else np.inf)
    (np.maximum if reduce == "amax" else np.minimum).at(best, grid, part_src._data)
    best = best.astype(self.dtype)
    won_self = keep._data & (self._data == best)
    won_src = part_src._data == best[grid]
    count = won_self.astype(np.int64)
    np.add.at(count, grid, won_src)
    # the winners, each with its share: (sum of winners) / (their count) is the result
    share = _where(tensor._make(won_self), self, zero) + IndexAdd.apply(
        _where(tensor._make(won_src), part_src, zero), shape=self.shape, index=grid
    )
    if self.dtype.kind != "f":
        return tensor._make(best)
    return share / tensor._make(np.maximum(count, 1).astype(self.dtype))


def _where(cond: Any, a: Any, b: Any) -> Any:
    from ...creation import where

    return where(cond, a, b)
