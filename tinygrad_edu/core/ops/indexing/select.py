"""nonzero/argwhere, masked_select, index_select, index_add(_) and take_along_dim (issue
30), built on the core's Index and IndexAdd, whose gradients the core checks. Core
layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, ShapeError, message
from ..common import values_read
from ..movement import IndexAdd
from .shared import _dims, _indices, _same_dtype, _t


def nonzero(self: Any, *, as_tuple: bool = False) -> Any:
    """Where the elements are not zero: an (n, ndim) int64 tensor, or one per axis."""
    values_read(self, "nonzero")
    found = np.nonzero(np.atleast_1d(self._data))
    if as_tuple:  # a number counts as a vector of one, as in PyTorch
        return tuple(_t()._make(i.astype(np.int64)) for i in found)
    count = found[0].size if self.ndim else int(found[0].size)  # a number: 1 row or none
    return _t()._make(
        np.stack(found, axis=1).astype(np.int64)[:, : self.ndim].reshape(count, self.ndim)
    )


def argwhere(self: Any) -> Any:
    return nonzero(self)


def masked_select(self: Any, mask: Any) -> Any:
    """The elements where `mask` holds (both broadcast), as a vector in the graph."""
    if isinstance(mask, _t()):
        values_read(mask, "index")  # the mask's values choose the elements (and the shape)
    m = mask._data if isinstance(mask, _t()) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise DataError(
            message("masked_select", f"mask must be boolean, got {m.dtype}", source.here(), "x > 0")
        )
    shape = np.broadcast_shapes(self.shape, m.shape)
    x = self if self.shape == shape else self.expand(shape)
    return x[np.broadcast_to(m, shape)]


def index_select(self: Any, dim: int, index: Any) -> Any:
    idx = _indices(index, "index_select")
    if idx.ndim > 1:
        raise ShapeError(
            message(
                "index_select", f"index must be a vector, got shape {idx.shape!r}", source.here()
            )
        )
    (d,) = _dims(self, dim, "index_select")
    return self[(slice(None),) * d + (idx.reshape(-1),)]


def index_add(self: Any, dim: int, index: Any, source_: Any, *, alpha: Any = 1) -> Any:
    """`self` with `alpha * source` added at `index` along `dim` (repeats add up)."""
    idx = _indices(index, "index_add")
    (d,) = _dims(self, dim, "index_add")
    _same_dtype("index_add", self, source_)
    add = source_ if alpha == 1 else source_ * alpha
    place = (slice(None),) * d + (idx.reshape(-1),)
    return self + IndexAdd.apply(add, shape=self.shape, index=place)


def index_add_(self: Any, dim: int, index: Any, source_: Any, *, alpha: Any = 1) -> Any:
    return self._inplace("index_add_", lambda t: index_add(t, dim, index, source_, alpha=alpha))


def take_along_dim(self: Any, indices: Any, dim: Any = None) -> Any:
    from ...torch_api import gather

    idx = _indices(indices, "take_along_dim")
    if dim is None:
        return gather(self.reshape(-1), 0, idx.reshape(-1))
    (d,) = _dims(self, dim, "take_along_dim")
    if idx.ndim != self.ndim:
        raise ShapeError(
            message(
                "take_along_dim",
                f"indices have {idx.ndim} axes, the tensor {self.ndim} (shape {self.shape!r})",
                source.here(),
            )
        )
    # broadcast every axis but `dim`, as PyTorch
    shape = list(np.broadcast_shapes(self.shape[:d] + (1,) + self.shape[d + 1 :],
                                      idx.shape[:d] + (1,) + idx.shape[d + 1 :]))  # fmt: skip
    x_shape, i_shape = list(shape), list(shape)
    x_shape[d], i_shape[d] = self.shape[d], idx.shape[d]
    x = self if tuple(x_shape) == self.shape else self.expand(tuple(x_shape))
    return gather(x, d, np.broadcast_to(idx, tuple(i_shape)))
