"""flip, fliplr, flipud, roll and rot90 (issue 30): Flip and Roll are primitives whose
backward is another flip or roll (so `create_graph=True` works); rot90 is flips and a
swap of axes. All copies, as in PyTorch. Core layer.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ... import source
from ...errors import ShapeError, message
from ...function import Function
from ..common import is_array
from .shared import _at_least_2d, _dims, _ints


class Flip(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...]) -> Any:
        ctx.dims = dims
        return np.flip(a, dims).copy()  # a copy, as PyTorch's flip

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (np.flip(g, ctx.dims).copy() if is_array(g) else Flip.apply(g, dims=ctx.dims),)


class Roll(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
        ctx.shifts, ctx.dims = shifts, dims
        return np.roll(a, shifts, dims)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        back = tuple(-s for s in ctx.shifts)  # roll the other way
        if is_array(g):
            return (np.roll(g, back, ctx.dims),)
        return (Roll.apply(g, shifts=back, dims=ctx.dims),)


def flip(self: Any, *given: Any, **kwargs: Any) -> Any:
    dims: Any = kwargs.pop("dims", given)  # x.flip(0), x.flip((0, 1)), x.flip(dims=[0])
    if not dims and dims != []:  # PyTorch needs them: flip() alone is not "flip everything"
        raise TypeError(
            message(
                "flip", "missing the dims to flip", source.here(), "x.flip(0) or x.flip((0, 1))"
            )
        )
    dims = dims[0] if len(dims) == 1 and not isinstance(dims[0], numbers.Integral) else dims
    return Flip.apply(self, dims=_dims(self, dims, "flip"))


def fliplr(self: Any) -> Any:
    _at_least_2d(self, "fliplr")
    return flip(self, 1)


def flipud(self: Any) -> Any:
    if self.ndim < 1:
        raise ShapeError(message("flipud", "needs a tensor with axes, got a number", source.here()))
    return flip(self, 0)


def roll(self: Any, shifts: Any, dims: Any = None) -> Any:
    if dims is None:  # PyTorch: roll the flattened numbers, keep the shape
        return Roll.apply(self.reshape(-1), shifts=_ints(shifts), dims=(0,)).reshape(self.shape)
    shifts, dims = _ints(shifts), _dims(self, dims, "roll")
    if len(shifts) != len(dims):
        raise ShapeError(
            message(
                "roll",
                f"needs one shift per dim, got shifts {shifts!r} for dims {dims!r}",
                source.here(),
            )
        )
    return Roll.apply(self, shifts=shifts, dims=dims)


def rot90(self: Any, k: int = 1, dims: Any = (0, 1)) -> Any:
    """Turn by 90 degrees k times, from the first of `dims` toward the second."""
    d0, d1 = _dims(self, dims, "rot90") if len(dims) == 2 else (None, None)
    if d0 is None:
        raise ShapeError(message("rot90", f"needs two dims, got {dims!r}", source.here()))
    k %= 4
    if k == 1:
        return flip(self, d1).swapaxes(d0, d1)
    if k == 2:
        return flip(self, (d0, d1))
    if k == 3:
        return flip(self, d0).swapaxes(d0, d1)
    return self.clone()
