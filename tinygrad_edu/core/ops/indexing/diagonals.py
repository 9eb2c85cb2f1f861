"""diagonal, diag, diag_embed, tril_/triu_ (issue 30): Diagonal is a writable view, as
PyTorch's (writing into it writes into the matrix), and its backward DiagonalScatter
puts a gradient back on the diagonal of zeros. Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...errors import ShapeError, message
from ...function import Function
from .shared import _dims


class Diagonal(Function):
    """The diagonal (`offset` above the main one) of the axes dim1, dim2, as the last axis:
    a view, as PyTorch's, and a writable one (numpy's own is read-only)."""

    _is_view = True

    @staticmethod
    def forward(ctx: Any, a: Any, offset: int, dim1: int, dim2: int) -> Any:
        ctx.a_shape, ctx.args = a.shape, (offset, dim1, dim2)
        out = np.diagonal(a, offset, dim1, dim2)
        if a.flags.writeable:
            out.flags.writeable = True
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (DiagonalScatter.apply(g, shape=ctx.a_shape, args=ctx.args),)


class DiagonalScatter(Function):
    """Zeros of `shape` with `g` on the diagonal `args` = (offset, dim1, dim2): the backward
    of Diagonal, and `diag_embed` / `diag` of a vector."""

    @staticmethod
    def forward(ctx: Any, g: Any, shape: tuple[int, ...], args: tuple[int, int, int]) -> Any:
        ctx.args = args
        out = np.zeros(shape, dtype=g.dtype)
        view = np.diagonal(out, *args)
        view.flags.writeable = True
        view[...] = g
        return out

    @staticmethod
    def backward(ctx: Any, gg: Any) -> Any:
        return (Diagonal.apply(gg, *(), **dict(zip(("offset", "dim1", "dim2"), ctx.args))),)


def diagonal(self: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    d1, d2 = _dims(self, (dim1, dim2), "diagonal")
    return Diagonal.apply(self, offset=int(offset), dim1=d1, dim2=d2)


def diag_embed(self: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    n = self.ndim + 1
    d1, d2 = (int(dim1) % n, int(dim2) % n)
    if d1 == d2:
        raise ShapeError(message("diag_embed", "dim1 and dim2 must differ", source.here()))
    size = self.shape[-1] + abs(int(offset)) if self.ndim else 1
    rest = list(self.shape[:-1])
    shape = []
    for i in range(n):
        shape.append(size if i in (d1, d2) else rest.pop(0))
    return DiagonalScatter.apply(self, shape=tuple(shape), args=(int(offset), d1, d2))


def diag(self: Any, diagonal: int = 0) -> Any:
    """A vector: the square matrix with it on the `diagonal`-th diagonal. A matrix: a copy of
    that diagonal, as `torch.diag`."""
    if self.ndim == 1:
        n = self.shape[0] + abs(int(diagonal))
        return DiagonalScatter.apply(self, shape=(n, n), args=(int(diagonal), 0, 1))
    if self.ndim == 2:
        return Diagonal.apply(self, offset=int(diagonal), dim1=0, dim2=1).clone()
    raise ShapeError(
        message(
            "diag",
            f"expects a vector or a matrix, got shape {self.shape!r}",
            source.here(),
            "use .diagonal(offset, dim1, dim2) or torch.diag_embed for more axes",
        )
    )


def tril_(self: Any, diagonal: int = 0) -> Any:
    return self._inplace("tril_", lambda t: t.tril(diagonal))


def triu_(self: Any, diagonal: int = 0) -> Any:
    return self._inplace("triu_", lambda t: t.triu(diagonal))
