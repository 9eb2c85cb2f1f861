"""PyTorch's integer-flavoured arithmetic: `%`, `//`, fmod, rounding division, bitwise and
logical ops, trunc and frac, lerp, addcmul and addcdiv, clamp with tensor bounds (issue 30).

The primitives (Remainder, Fmod, FloorDivide, ...) are one class each, forward and
derivative side by side; the rest are built from primitives. Operands are first cast
to the dtype PyTorch would compute in (`result_dtype`), so `int % int` stays int64,
`int % 2.5` is the default float and `int32 % 3` stays int32, as in PyTorch.
Core layer.
"""

from __future__ import annotations

from typing import Any

from ... import source
from ...errors import DataError, message
from ..common import storable
from .bitwise import (
    Bitwise,
    BitwiseNot,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
)
from .division import (
    FloorDivide,
    Fmod,
    IntegerDivisionError,
    Remainder,
    RoundingDivide,
    div,
    floor_divide,
    fmod,
    remainder,
    rfloordiv,
    rremainder,
)
from .pointwise import (
    Frac,
    Sign,
    Trunc,
    addcdiv,
    addcmul,
    clamp,
    clamp_max,
    clamp_min,
    frac,
    lerp,
    refuse_negative_power,
    sign,
    trunc,
)
from .promotion import as_dtype, promote, result_dtype, wrapped

__all__ = [
    "Bitwise",
    "BitwiseNot",
    "FloorDivide",
    "Fmod",
    "Frac",
    "IntegerDivisionError",
    "METHODS",
    "Remainder",
    "RoundingDivide",
    "Sign",
    "Trunc",
    "as_dtype",
    "promote",
    "refuse_negative_power",
    "result_dtype",
    "wrapped",
]


def _inplace(name: str, fn: Any) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        def step(t: Any) -> Any:
            out = fn(t, *args, **kwargs)
            # PyTorch stores a result only in a dtype of its kind or above (float into an
            # int tensor is refused, not rounded)
            if not storable(out.dtype, self.dtype):
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
    "clamp_min": clamp_min,
    "clamp_max": clamp_max,
}


def _comparison(symbol: str) -> Any:
    def compare(self: Any, other: Any) -> Any:
        return getattr(self, _DUNDER[symbol])(other)

    compare.__doc__ = f"`x {symbol} other`, PyTorch's method and function spelling of it."
    return compare


_DUNDER = {"==": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__"}
_DUNDER[">="] = "__ge__"
# PyTorch's names for the comparison operators, and their longer aliases
for _symbol, _names in {
    "==": ("eq",),
    "!=": ("ne", "not_equal"),
    "<": ("lt", "less"),
    "<=": ("le", "less_equal"),
    ">": ("gt", "greater"),
    ">=": ("ge", "greater_equal"),
}.items():
    METHODS.update(dict.fromkeys(_names, _comparison(_symbol)))


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
            "clamp_min",
            "clamp_max",
        )
        + ("addcdiv", "sign", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not")
        + ("logical_and", "logical_or", "logical_not")
    }
)


METHODS["__imod__"] = METHODS["remainder_"]
METHODS["clip_"] = METHODS["clamp_"]  # PyTorch's alias, with clamp_'s dtype rule


METHODS["__ifloordiv__"] = METHODS["floor_divide_"]
# `x &= m` changes x in place, as in PyTorch (without these Python rebinds x to `x & m`,
# and every other name for x, a view or an alias, keeps the old numbers)
METHODS["__iand__"] = METHODS["bitwise_and_"]
METHODS["__ior__"] = METHODS["bitwise_or_"]
METHODS["__ixor__"] = METHODS["bitwise_xor_"]
