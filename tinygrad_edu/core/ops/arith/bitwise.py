"""Bitwise and logical ops on bool and int tensors (issue 30): `& | ^ ~` are bitwise, as
in PyTorch (on bool tensors that is the logical op), `logical_*` give bool tensors of
any operands. No gradients: PyTorch has none. Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, message
from ...function import Function
from .promotion import _pair, _tensor


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
