"""PyTorch's integer-flavoured arithmetic: `%`, `//`, fmod, rounding division, bitwise and
logical ops, trunc and frac, lerp, addcmul and addcdiv, clamp with tensor bounds (issue 30).

The primitives (Remainder, Fmod, FloorDivide, ...) are one class each, forward and
derivative side by side; the rest are built from primitives. Operands are first cast
to the dtype PyTorch would compute in (`result_dtype`), so `int % int` stays int64,
`int % 2.5` is the default float and `int32 % 3` stays int32, as in PyTorch.
Core layer.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from .. import source
from ..dtypes import _default as _default_dtype
from ..errors import BackwardError, DataError, message
from ..function import Function
from .common import data

if TYPE_CHECKING:
    from ..tensor import Tensor

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def _t() -> Any:
    from ..tensor import Tensor  # here, not at the top: tensor.py imports this module

    return Tensor


def _tensor(x: Any) -> TypeGuard[Tensor]:
    return isinstance(x, _t())


def result_dtype(*operands: Any) -> np.dtype:
    """The dtype PyTorch computes `a <op> b` in: the highest kind (bool < int < float) wins;
    within it, tensors with axes decide before 0-d tensors, and those before Python numbers
    (so `int32_tensor % 3` stays int32 and `int_tensor % 2.5` takes the default float)."""
    rank = max(_KIND_RANK[_kind(x)] for x in operands)
    with_axes = [x.dtype for x in operands if _tensor(x) and x.ndim]
    zero_d = [x.dtype for x in operands if _tensor(x) and not x.ndim]
    for group in (with_axes, zero_d):
        top = [d for d in group if _KIND_RANK[d.kind] == rank]
        if top:
            return np.result_type(*top)
    return [np.dtype(np.bool_), np.dtype(np.int64), _default_dtype[0]][rank]


def _kind(x: Any) -> str:
    if _tensor(x):
        return x.dtype.kind
    if isinstance(x, (bool, np.bool_)):
        return "b"
    if isinstance(x, numbers.Integral):
        return "i"
    if isinstance(x, numbers.Real):
        return "f"
    raise DataError(message("arithmetic", f"expected a tensor or a number, got {x!r}"))


def as_dtype(x: Any, dt: np.dtype) -> Any:
    """`x` in dtype `dt`: a tensor through `to` (in the graph), a number as a 0-d array."""
    if _tensor(x):
        return x if x.dtype == dt else x.to(dt)
    return np.asarray(x, dtype=dt)


def _pair(a: Any, b: Any) -> tuple[Any, Any]:
    dt = result_dtype(a, b)
    return as_dtype(a, dt), as_dtype(b, dt)


def promote(a: Tensor, other: Any, b: Any, op: str) -> tuple[Any, Any]:
    """`a <op> other` for `+ - * / **` with operands of two dtypes (`b` is `other` as the
    operator will use it): both in PyTorch's result dtype, so an int tensor with a Python
    float, or with a float32 tensor, gives the default float (numpy would give float64), and
    `/` of integers gives the default float. The cast is a recorded `to`, so gradients flow
    back in each operand's own dtype, as in PyTorch."""
    if not (_tensor(other) or isinstance(other, numbers.Number)):
        other = _t()._make(np.asarray(b))  # a numpy array takes part as a tensor
    if op == "-" and "b" in (a.dtype.kind, _kind(other)):
        raise DataError(
            message(
                "sub",
                f"cannot subtract with a boolean operand (shapes {a.shape!r} and "
                f"{np.shape(b)!r}), as in PyTorch",
                source.here(),
                "to invert a mask use ~mask or mask.logical_not(); for two masks, a ^ b",
            )
        )
    dt = result_dtype(a, other)
    if op == "/" and dt.kind != "f":  # true division of whole numbers: the default float
        dt = _default_dtype[0]
    if op == "**" and dt.kind == "b":
        raise DataError(
            message(
                "pow",
                f"cannot raise a boolean tensor to a boolean power (shapes {a.shape!r} and "
                f"{np.shape(b)!r}), as in PyTorch",
                source.here(),
                "convert the base first with .long() or .float()",
            )
        )
    return as_dtype(a, dt), as_dtype(b, dt)


def _refuse_zero(op: str, a: np.ndarray, b: np.ndarray) -> None:
    """Integer division by zero has no answer; PyTorch raises, numpy would give 0."""
    if b.dtype.kind in "iub" and not np.all(b):
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


# --- primitives ---------------------------------------------------------------------------


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


class Trunc(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return np.trunc(a) if a.dtype.kind == "f" else a.copy()

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (np.zeros(data(g).shape, data(g).dtype),)  # a step function: flat


class Frac(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return a - np.trunc(a)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (g,)  # x - trunc(x): slope 1 between the steps


class Bitwise(Function):
    """`&`, `|`, `^`, `~` and the logical_* ops: on bool or integer tensors, no gradient."""

    _UFUNCS = {
        "bitwise_and": np.bitwise_and,
        "bitwise_or": np.bitwise_or,
        "bitwise_xor": np.bitwise_xor,
        "logical_and": np.logical_and,
        "logical_or": np.logical_or,
        "logical_xor": np.logical_xor,
    }

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, op: str) -> Any:
        return Bitwise._UFUNCS[op](a, b)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return None, None


class BitwiseNot(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, logical: bool) -> Any:
        return np.logical_not(a) if logical else np.invert(a)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (None,)


# --- the methods: Tensor.<name>(self, ...) --------------------------------------------------


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


def trunc(self: Any) -> Any:
    if self.dtype == np.bool_:
        raise DataError(
            message("trunc", "has no boolean version, as in PyTorch", source.here(), ".float()")
        )
    return Trunc.apply(self)


def frac(self: Any) -> Any:
    if self.dtype.kind != "f":
        raise DataError(
            message("frac", f"needs a float tensor, got {self.dtype}", source.here(), ".float()")
        )
    return Frac.apply(self)


def _bitwise(op: str, a: Any, b: Any) -> Any:
    logical = op.startswith("logical")
    if logical:  # any dtypes: nonzero is true; the answer is bool
        x = a if _tensor(a) else np.asarray(a)
        y = b if _tensor(b) else np.asarray(b)
    else:
        x, y = _pair(a, b)
        if x.dtype.kind == "f":
            raise DataError(
                message(
                    op,
                    f"needs bool or integer tensors, got {x.dtype} (shapes {np.shape(a)!r} and "
                    f"{np.shape(b)!r}), as in PyTorch",
                    source.here(),
                    "for masks compare first (x > 0); for and/or of conditions use bool tensors",
                )
            )
    return Bitwise.apply(x, y, op=op)


def bitwise_and(self: Any, other: Any) -> Any:
    return _bitwise("bitwise_and", self, other)


def bitwise_or(self: Any, other: Any) -> Any:
    return _bitwise("bitwise_or", self, other)


def bitwise_xor(self: Any, other: Any) -> Any:
    return _bitwise("bitwise_xor", self, other)


def logical_and(self: Any, other: Any) -> Any:
    return _bitwise("logical_and", self, other)


def logical_or(self: Any, other: Any) -> Any:
    return _bitwise("logical_or", self, other)


def logical_xor(self: Any, other: Any) -> Any:
    return _bitwise("logical_xor", self, other)


def bitwise_not(self: Any) -> Any:
    if self.dtype.kind == "f":
        raise DataError(
            message(
                "bitwise_not",
                f"~ needs a bool or integer tensor, got {self.dtype} (shape {self.shape!r})",
                source.here(),
                "for a mask compare first: ~(x > 0)",
            )
        )
    return BitwiseNot.apply(self, logical=False)


def logical_not(self: Any) -> Any:
    return BitwiseNot.apply(self, logical=True)


def lerp(self: Any, end: Any, weight: Any) -> Any:
    """`self + weight * (end - self)`, built from primitives, so all three get gradients."""
    if self.dtype.kind != "f" or not _tensor(end) or end.dtype != self.dtype:
        raise DataError(
            message(
                "lerp",
                f"needs float tensors of one dtype, got {self.dtype} and "
                f"{getattr(end, 'dtype', type(end).__name__)}, as in PyTorch",
                source.here(),
                "convert both with .float()",
            )
        )
    return self + weight * (end - self)


def addcmul(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    return self + value * (tensor1 * tensor2)


def addcdiv(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    if not any(_tensor(t) and t.dtype.kind == "f" for t in (tensor1, tensor2)):
        raise DataError(
            message(
                "addcdiv",
                "integer division with addcdiv is not supported (PyTorch refuses it too)",
                source.here(),
                "convert tensor1 or tensor2 to float",
            )
        )
    return self + value * (tensor1 / tensor2)


def clamp(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - PyTorch's names
    """`clamp` whose bounds may be tensors (broadcast, and given their own gradients where
    they win, as in PyTorch); plain numbers go to the Clip primitive."""
    if not _tensor(min) and not _tensor(max):
        return _t().clip(self, min, max)
    from ..creation import where

    out = self
    if min is not None:
        out = where(out < min, min, out)  # a tie keeps the input, as PyTorch's mask self >= min
    if max is not None:
        out = where(out > max, max, out)  # min > max gives max everywhere, as PyTorch
    return out


def sign(self: Any) -> Any:
    """-1, 0 or 1 in the tensor's own dtype (bool stays bool), gradient 0."""
    if self.dtype == np.bool_:
        return self.clone()
    return Sign.apply(self)


class Sign(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return np.sign(a)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (np.zeros(data(g).shape, data(g).dtype),)


def _inplace(name: str, fn: Any) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        def step(t: Any) -> Any:
            out = fn(t, *args, **kwargs)
            # PyTorch stores a result only in a dtype of its kind or above (float into an
            # int tensor is refused, not rounded)
            if not np.can_cast(out.dtype, self.dtype, "same_kind"):
                raise DataError(
                    message(
                        name,
                        f"the result is {out.dtype}, which cannot be stored in this {self.dtype} "
                        f"tensor (shape {self.shape!r}), as in PyTorch",
                        source.here(),
                        f"use the out-of-place {name[:-1]}(...), or convert the tensor first",
                    )
                )
            return out.to(self.dtype)

        return self._inplace(name, step)

    method.__name__ = name
    return method


METHODS = {
    "remainder": remainder,
    "__mod__": remainder,
    "__rmod__": rremainder,
    "fmod": fmod,
    "floor_divide": floor_divide,
    "__floordiv__": floor_divide,
    "__rfloordiv__": rfloordiv,
    "div": div,
    "divide": div,
    "true_divide": lambda self, other: self / other,
    "trunc": trunc,
    "fix": trunc,
    "frac": frac,
    "sign": sign,
    "bitwise_and": bitwise_and,
    "bitwise_or": bitwise_or,
    "bitwise_xor": bitwise_xor,
    "bitwise_not": bitwise_not,
    "__and__": bitwise_and,
    "__rand__": bitwise_and,
    "__or__": bitwise_or,
    "__ror__": bitwise_or,
    "__xor__": bitwise_xor,
    "__rxor__": bitwise_xor,
    "__invert__": bitwise_not,
    "logical_and": logical_and,
    "logical_or": logical_or,
    "logical_xor": logical_xor,
    "logical_not": logical_not,
    "lerp": lerp,
    "addcmul": addcmul,
    "addcdiv": addcdiv,
    "clamp": clamp,
}
METHODS.update(
    {
        f"{name}_": _inplace(f"{name}_", METHODS[name])
        for name in (
            "remainder",
            "fmod",
            "floor_divide",
            "trunc",
            "frac",
            "lerp",
            "addcmul",
            "clamp",
        )
        + ("addcdiv", "sign", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
        + ("logical_and", "logical_or", "logical_not")
    }
)
METHODS["__imod__"] = METHODS["remainder_"]
METHODS["__ifloordiv__"] = METHODS["floor_divide_"]
