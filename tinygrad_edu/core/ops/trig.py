"""sin, cos and erf: the elementwise functions no composition of the others can give.

Kept apart from elementwise.py so the ops PyTorch courses need (`torch.sin` for the
polynomial-fit tutorial, `erf` for GELU) are easy to find. Each backward uses Tensor
methods, so `create_graph=True` differentiates it again. Core layer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..function import Function
from .common import floating, is_array

_erf = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; math.erf is exact to 1 ulp


def _cos(x: Any) -> Any:
    return np.cos(x) if is_array(x) else x.cos()


def _sin(x: Any) -> Any:
    return np.sin(x) if is_array(x) else x.sin()


class Sin(Function):
    saved_names = ("self",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        a = floating(a)
        ctx.save_for_backward(a)
        return np.sin(a)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (a,) = ctx.saved_tensors
        return (g * _cos(a),)  # d(sin a)/da = cos a


class Cos(Function):
    saved_names = ("self",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        a = floating(a)
        ctx.save_for_backward(a)
        return np.cos(a)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (a,) = ctx.saved_tensors
        return (-g * _sin(a),)  # d(cos a)/da = -sin a


class Erf(Function):
    saved_names = ("self",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        a = floating(a)  # erf of whole numbers was cast back to them: all 0 or +-1
        ctx.save_for_backward(a)
        return np.asarray(_erf(a), dtype=a.dtype)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (a,) = ctx.saved_tensors
        # d(erf a)/da = 2/sqrt(pi) exp(-a^2)
        bump = np.exp(-a * a) if is_array(a) else (-(a * a)).exp()
        return (g * (2.0 / math.sqrt(math.pi)) * bump,)
