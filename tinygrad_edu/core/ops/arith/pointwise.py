"""trunc, frac, sign, lerp, addcmul/addcdiv and clamp with tensor bounds (issue 30), in
PyTorch's dtypes; Trunc, Frac and Sign are primitives with a zero derivative. Core
layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, message
from ...function import Function
from ..common import data
from .promotion import _t, _tensor


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


def refuse_negative_power(self: Any, exponent: Any) -> None:
    """`int_tensor ** -1` is refused, as PyTorch refuses a negative number as the power of
    whole numbers (with a tensor of powers it gives 0, 1 or -1: elementwise.Pow).
    `Tensor.__pow__` calls it for a negative Python int only, off the common path."""
    if self.dtype.kind in "iub":
        raise ValueError(
            message(
                "pow",
                f"whole numbers ({self.dtype}, shape {self.shape!r}) to the negative power "
                f"{exponent} are not allowed, as in PyTorch",
                source.here(),
                f"use a float power ({exponent}.0) or convert the tensor with .float()",
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
    # PyTorch casts `value` to the result's dtype: 1.7 counts as 1 when all three are whole
    if isinstance(value, float) and not any(
        _tensor(t) and t.dtype.kind == "f" for t in (self, tensor1, tensor2)
    ):
        value = int(value)
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
    from ...creation import where

    out = self
    if min is not None:  # a tie keeps the input, as PyTorch's mask self >= min
        out = where(_past(out < min, min), min, out)
    if max is not None:
        out = where(_past(out > max, max), max, out)  # min > max gives max everywhere, as PyTorch
    return out


def _past(beyond: Any, bound: Any) -> Any:
    # a nan bound gives nan, as PyTorch's clamp (no comparison with nan is true)
    return beyond | (bound != bound) if _tensor(bound) and bound.dtype.kind == "f" else beyond


def clamp_min(self: Any, min: Any) -> Any:  # noqa: A002 - PyTorch's name
    return clamp(self, min, None)


def clamp_max(self: Any, max: Any) -> Any:  # noqa: A002 - PyTorch's name
    return clamp(self, None, max)


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
