"""`%`, `//`, fmod and `div(rounding_mode=)` (issue 30): Remainder, Fmod, FloorDivide and
RoundingDivide, one class each with forward and derivative side by side. Integer
division by zero and boolean operands are refused, as PyTorch's kernels refuse them.
Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...errors import BackwardError, DataError, message
from ...function import Function
from ..common import data
from .promotion import _pair


def _refuse_zero(op: str, a: np.ndarray, b: np.ndarray) -> None:
    """Integer division by zero has no answer; PyTorch raises, numpy would give 0."""
    if b.dtype.kind in "iub" and a.size and not np.all(b):  # an empty result divides nothing
        raise IntegerDivisionError(
            message(
                op,
                f"integer division by zero (shapes {a.shape!r} and {b.shape!r})",
                source.here(),
                "divide floats (x.float()) to get inf or nan, or keep zeros out of the divisor",
            )
        )


class IntegerDivisionError(ZeroDivisionError, RuntimeError):
    """PyTorch raises a RuntimeError; Python's own name for it is ZeroDivisionError."""


class Remainder(Function):
    """`a % b` with the sign of `b`, as Python's (and PyTorch's) remainder."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        _refuse_zero("remainder", a, b)
        ctx.save_for_backward(a, b)
        return np.remainder(a, b)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b = ctx.saved_tensors
        # a % b = a - floor(a / b) * b, and floor is flat: d/da = 1, d/db = -floor(a / b)
        return g, -g * np.floor(data(a) / data(b))


class Fmod(Function):
    """C's fmod: the remainder with the sign of `a` (a - trunc(a / b) * b)."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        _refuse_zero("fmod", a, b)
        ctx.save_for_backward(a, b)
        return np.fmod(a, b)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b = ctx.saved_tensors
        return g, -g * np.trunc(data(a) / data(b))


class FloorDivide(Function):
    """`a // b`: floor(a / b). PyTorch has no derivative for it (aten::floor_divide), so
    backward refuses, as PyTorch's does, rather than invent one."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        _refuse_zero("floor_divide", a, b)
        ctx.shapes = (a.shape, b.shape)
        return np.floor_divide(a, b)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        raise BackwardError(
            message(
                "floor_divide",
                f"has no derivative, as in PyTorch (shapes {ctx.shapes[0]!r} // {ctx.shapes[1]!r})",
                getattr(ctx, "site", None),
                "use torch.div(a, b, rounding_mode='floor'), whose gradient is 0, or detach() "
                "the result",
            )
        )


class RoundingDivide(Function):
    """`div(a, b, rounding_mode='trunc' | 'floor')`: a step function, gradient 0 (PyTorch's)."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, mode: str) -> Any:
        _refuse_zero("div", a, b)
        if a.dtype.kind == "f":
            q = a / b
            return np.trunc(q) if mode == "trunc" else np.floor_divide(a, b)
        if mode == "floor":
            return np.floor_divide(a, b)
        # C's integer division truncates toward zero: the quotient of the sizes, signed
        q = np.floor_divide(np.abs(a), np.abs(b))
        return np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b))

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        zeros = np.zeros(data(g).shape, data(g).dtype)
        return zeros, zeros


def _not_bool(op: str, a: Any, b: Any) -> tuple[Any, Any]:
    """The operands in their common dtype; two booleans are refused, as PyTorch's kernels
    for division and remainder have no bool version."""
    x, y = _pair(a, b)
    if x.dtype == np.bool_:
        raise _no_bool(op, a, b)
    return x, y


def remainder(self: Any, other: Any) -> Any:
    return Remainder.apply(*_not_bool("remainder", self, other))


def rremainder(self: Any, other: Any) -> Any:
    return Remainder.apply(*_not_bool("remainder", other, self))


def fmod(self: Any, other: Any) -> Any:
    return Fmod.apply(*_not_bool("fmod", self, other))


def floor_divide(self: Any, other: Any) -> Any:
    return FloorDivide.apply(*_not_bool("floor_divide", self, other))


def rfloordiv(self: Any, other: Any) -> Any:
    return floor_divide(other, self)


def div(self: Any, other: Any, *, rounding_mode: str | None = None) -> Any:
    """`a / b`; `rounding_mode='trunc'` rounds toward zero, `'floor'` down, as in PyTorch."""
    if rounding_mode is None:
        return self / other
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(
            message(
                "div",
                f"rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}",
                source.here(),
            )
        )
    return RoundingDivide.apply(*_not_bool("div", self, other), mode=rounding_mode)


def _no_bool(op: str, a: Any, b: Any) -> DataError:
    return DataError(
        message(
            op,
            f"cannot divide boolean tensors or take their remainder (shapes {np.shape(a)!r} and "
            f"{np.shape(b)!r}), as in PyTorch",
            source.here(),
            "convert them first with .long() or .float()",
        )
    )
