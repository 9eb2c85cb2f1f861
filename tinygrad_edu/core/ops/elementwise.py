"""Elementwise ops: one class each, forward and its derivative side by side.

Binary ops broadcast like numpy in forward; the engine sums each gradient back to its
input's shape (`sum_to`), so the rules below are written for same-shaped operands.
Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..function import Function
from .common import data, floating, log, needs, where, zero_slope, zero_where


class Add(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        return a + b

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g, g  # d(a+b)/da = d(a+b)/db = 1


class Sub(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        return a - b

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g, -g  # d(a-b)/db = -1


class Mul(Function):
    saved_names = ("self", "other")  # PyTorch's `grad_fn._saved_<name>`

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        na, nb = needs(ctx, 2)
        # save only what backward uses, as PyTorch does: `d += 3 * d` then changes nothing saved
        ctx.save_for_backward(a if nb else None, b if na else None)
        return a * b

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        return (g * b if na else None), (g * a if nb else None)  # d(ab)/da = b, d(ab)/db = a


class Div(Function):
    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        na, nb = needs(ctx, 2)
        ctx.save_for_backward(a if nb else None, b)  # a only for d/db
        return a / b

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        # d(a/b)/da = 1/b, d(a/b)/db = -a/b^2, written as PyTorch does, -(a/b)/b, so the
        # infinities and nans of a second derivative at b = 0 are PyTorch's
        return (g / b if na else None), (-g * (a / b / b) if nb else None)


class Reciprocal(Function):
    """`1 / a`; a number divided by a tensor is `Reciprocal(a) * number`, as in PyTorch, so
    what is saved (the result, not `a`) and the second derivative are PyTorch's."""

    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = 1 / a
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        return (-g * out * out,)  # d(1/a)/da = -1/a^2 = -(1/a)^2


class Neg(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return -a

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (-g,)


class Pow(Function):
    saved_names = ("self", "exponent", "result")

    @staticmethod
    def forward(
        ctx: Any, a: Any, b: Any, rsqrt: bool = False, tensor_exponent: bool = False
    ) -> Any:
        out = _whole_power(a, b) if a.dtype.kind in "iub" and b.dtype.kind in "iu" else a**b
        if rsqrt:  # PyTorch's x ** -0.5 is 1 / sqrt(x): -inf at -0.0 (IEEE pow gives +inf)
            out = 1 / np.sqrt(a)
        elif tensor_exponent and b == 0.5:
            # numpy takes a 0-d 0.5 as sqrt (-0.0 stays -0.0, -inf gives nan); PyTorch's
            # x ** tensor(0.5) is IEEE pow, which gives 0.0 and inf there
            out = np.where((a == 0) | np.isneginf(a), np.abs(a), out)
        ctx.save_for_backward(a, b, out if needs(ctx, 2)[1] else None)  # out only for d/db
        # a number as exponent (PyTorch's Tensor ** Scalar) takes PyTorch's simpler rule
        ctx.number_power = np.ndim(b) == 0 and not tensor_exponent
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b, out = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        # d(a^b)/da = b a^(b-1); NOTE: PyTorch takes it as 0 where b == 0, also at a == 0
        # (where the formula gives 0 * inf = nan): x ** 0 is the constant 1
        if not na:
            ga = None
        elif ctx.number_power:  # x ** 0 has slope 0: a constant, with no graph of its own
            ga = g * b * _power(a, b) if data(b) != 0 else np.zeros_like(data(g))
        else:
            ga = where(data(b) == 0, 0.0, g * b * a ** (b - 1))
        # d(a^b)/db = a^b ln a; NOTE: 0 where a == 0 and b >= 0, as PyTorch (ln 0 = -inf),
        # and g outside the selection, as there: a nan from above stays nan
        gb = g * where((data(a) == 0) & (data(b) >= 0), 0.0, out * log(a)) if nb else None
        return ga, gb


def _whole_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whole numbers to whole powers, as PyTorch's kernel: a negative power of 1 is 1, of -1
    is 1 or -1, of any other number 0 (the fraction's whole part); numpy refuses them."""
    negative = b < 0
    if not np.any(negative):
        return np.asarray(a**b)
    out = a ** np.where(negative, 0, b).astype(b.dtype)
    unit = np.where(b % 2 == 0, 1, a)  # (+-1) ** b for the |a| == 1 elements
    return np.where(negative, np.where(np.abs(a) == 1, unit, 0), out).astype(out.dtype)


def _power(a: Any, b: Any) -> Any:
    """`a ** (b - 1)` as PyTorch's kernel computes it for a number `b`: for b = 0.5 it is
    `1 / sqrt(a)`, which keeps the sign of a zero (-inf at -0.0, where IEEE pow gives +inf)."""
    if isinstance(a, np.ndarray):
        return 1.0 / np.sqrt(a) if data(b) == 0.5 else a ** (b - 1)
    # on Tensors (create_graph), one Pow with `b - 1` taken as a number, as PyTorch's: so
    # its own slope is PyTorch's too (-0.5 a ** -1.5 = +inf at -0.0, where 1 / sqrt(a)'s is
    # -inf; a tensor exponent would be IEEE pow)
    return Pow.apply(a, b - 1, rsqrt=bool(data(b) == 0.5))


class Exp(Function):
    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = np.exp(floating(a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        return (g * out,)  # d(e^a)/da = e^a


class Log(Function):
    saved_names = ("self",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        a = floating(a)
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (a,) = ctx.saved_tensors
        return (g / a,)  # d(ln a)/da = 1/a


class Tanh(Function):
    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = np.tanh(floating(a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        return (g * (1 - out * out),)  # d(tanh a)/da = 1 - tanh(a)^2


class ReLU(Function):
    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = np.maximum(0, a)  # a second: numpy keeps it on a tie, so relu(-0.0) is -0.0
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        # NOTE: relu'(0) is taken as 0, like PyTorch; selected, not multiplied by a mask, so an
        # infinite gradient from above (sqrt(relu(x)) at x <= 0) gives 0, not 0 * inf = nan
        if type(g) is np.ndarray:  # the usual backward, on arrays
            return (zero_where(out <= 0, g),)
        return (zero_slope(where(data(out) <= 0, 0.0, g), out),)


class Sigmoid(Function):
    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = 1 / (1 + np.exp(-floating(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        return (sigmoid_slope(g, out),)  # d(sigma)/da = sigma (1 - sigma)


def sigmoid_slope(g: Any, s: Any) -> Any:
    """`g * s * (1 - s)`: on arrays computed, on Tensors (create_graph) the op below."""
    if isinstance(g, np.ndarray) and isinstance(s, np.ndarray):
        return g * s * (1 - s)
    return SigmoidSlope.apply(g, s)


class SigmoidSlope(Function):
    """Sigmoid's backward as one op, as PyTorch's `sigmoid_backward`: its own slope in `s` is
    then one term, `g (1 - 2 s)`. Recorded as the product `g * s * (1 - s)`, it would be two
    terms of opposite signs, and an infinite `g` makes `inf - inf = nan` of them."""

    @staticmethod
    def forward(ctx: Any, g: Any, s: Any) -> Any:
        ctx.save_for_backward(g, s)
        return g * s * (1 - s)

    @staticmethod
    def backward(ctx: Any, gg: Any) -> Any:
        g, s = ctx.saved_tensors
        ng, ns = ctx.needs_input_grad
        return (sigmoid_slope(gg, s) if ng else None), (gg * g * (1 - 2 * s) if ns else None)


class Abs(Function):
    saved_names = ("self",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        ctx.save_for_backward(a)
        return np.abs(a)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (a,) = ctx.saved_tensors
        # NOTE: |a|'(0) is taken as 0, and |nan|' as 0, like PyTorch (its sgn(nan) is 0); a
        # product, as in PyTorch, so sqrt(abs(x)) at 0 gives inf * 0 = nan there too
        sign = np.sign(data(a))
        return (zero_slope(g * np.where(np.isnan(sign), 0.0, sign).astype(sign.dtype), a),)


class Sqrt(Function):
    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = np.sqrt(floating(a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        return (g / (2 * out),)  # d(sqrt a)/da = 1 / (2 sqrt a): infinite at 0


class Clip(Function):
    saved_names = ("self",)

    @staticmethod
    def forward(ctx: Any, a: Any, lo: Any = None, hi: Any = None) -> Any:
        ctx.save_for_backward(a)
        ctx.lo, ctx.hi = lo, hi
        # the value second: on a tie (-0.0 against a bound 0) numpy keeps it, as PyTorch does
        out = a.copy() if lo is None else np.maximum(lo, a)
        return out if hi is None else np.minimum(hi, out)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (a,) = ctx.saved_tensors
        x = data(a)
        inside = np.ones(x.shape, dtype=bool)
        if ctx.lo is not None:
            inside &= x >= ctx.lo
        if ctx.hi is not None:
            inside &= x <= ctx.hi
        # 1 inside [lo, hi] (bounds included, as PyTorch's clamp), 0 where the value was
        # clipped or is nan: selected, so an infinite gradient from above stays 0 there
        return (where(inside, g, 0.0),)


class Where(Function):
    @staticmethod
    def forward(ctx: Any, cond: Any, a: Any, b: Any) -> Any:
        ctx.cond = np.asarray(cond, dtype=bool)
        return np.where(ctx.cond, a, b)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        na, nb = ctx.needs_input_grad[1:]
        zero = np.zeros((), dtype=data(g).dtype)
        ga = where(ctx.cond, g, zero) if na else None
        gb = where(ctx.cond, zero, g) if nb else None
        return None, ga, gb


class Compare(Function):
    """`a < b` and friends as an op, so a static trace can replay comparisons.

    Tensors call it only to tell observers; it never makes a graph node (no gradient).
    """

    _UFUNCS = {
        "<": np.less,
        "<=": np.less_equal,
        ">": np.greater,
        ">=": np.greater_equal,
        "==": np.equal,
        "!=": np.not_equal,
    }

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, symbol: str) -> Any:
        return Compare._UFUNCS[symbol](a, b)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return None, None  # a step function: no gradient


class Clone(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return a.copy()

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (g,)


class Cast(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dtype: Any) -> Any:
        ctx.in_dtype = a.dtype
        return a.astype(dtype)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (g.astype(ctx.in_dtype),)


class Fill(Function):
    """`t.fill_(v)` / `t.zero_()` on a tensor in the graph: the old values stop mattering."""

    @staticmethod
    def forward(ctx: Any, a: Any, value: Any) -> Any:
        return np.full_like(a, value)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        # the output does not depend on the old values: zeros (not g * 0, which is nan
        # where g is infinite), as PyTorch's fill_
        return (np.zeros(data(g).shape, data(g).dtype),)
