"""Reductions (sum, max, min) and the softmax family, with numpy's `axis`/`keepdims`.

A reduction's backward spreads the gradient back over the axes it removed; `sum_to`
(in common.py) is the reverse trip that the engine uses to undo broadcasting.
Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import source
from ..errors import message
from ..function import Function
from .common import broadcast_to, data, exp, where


def _kept_shape(
    shape: tuple[Any, ...], axis: Any, keepdims: bool, g_shape: tuple[Any, ...]
) -> tuple[Any, ...]:
    """The shape of the reduced result *with* keepdims, to re-insert removed axes."""
    if axis is None:
        return (1,) * len(shape)
    if keepdims:
        return g_shape
    given = axis if isinstance(axis, tuple) else (axis,)
    if not shape:  # a number's dim 0 (or -1) is the number itself: nothing to re-insert
        return shape
    axes = {a % len(shape) for a in given}
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def whole_total_dtype(dt: np.dtype) -> Any:
    """int64 for bool and integers below 64 bits (PyTorch's sum and prod); else the dtype's own."""
    return np.int64 if dt.kind in "bui" and (dt.kind != "u" or dt.itemsize < 8) else None


class Sum(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        ctx.a_shape, ctx.axis, ctx.keepdims = a.shape, axis, keepdims
        # np.add.reduce is what a.sum() calls, minus numpy's Python wrapper; bool and small
        # whole numbers add up in int64, as in PyTorch (numpy sums uint8 in uint64)
        wide = None if a.dtype.kind == "f" else whole_total_dtype(a.dtype)
        return np.asarray(np.add.reduce(a, axis=axis, keepdims=keepdims, dtype=wide))  # type: ignore[call-overload]

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        # every input element contributes once: d(sum)/da_i = 1, so repeat g
        kept = _kept_shape(ctx.a_shape, ctx.axis, ctx.keepdims, g.shape)
        return (broadcast_to(g.reshape(kept), ctx.a_shape),)


class Max(Function):
    saved_names = ("self", "result")

    _reduce = staticmethod(np.max)

    @classmethod
    def forward(cls, ctx: Any, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        ctx.a_shape, ctx.axis, ctx.keepdims = a.shape, axis, keepdims
        out = np.asarray(cls._reduce(a, axis=axis, keepdims=keepdims))  # type: ignore[arg-type]
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, out = ctx.saved_tensors
        kept = _kept_shape(ctx.a_shape, ctx.axis, ctx.keepdims, g.shape)
        # the gradient goes to the winning element(s); ties share it evenly
        x, best = data(a), data(out).reshape(kept)
        if ctx.axis is None:
            # NOTE: PyTorch's max() of all elements: a nan wins (max is nan), and the share is
            # selected, so an infinite gradient stays 0 at the losers
            hit = np.isnan(x) if np.isnan(best).any() else x == best
            share = g.reshape(kept) / hit.sum()
            return (where(hit, share, 0.0),)
        # NOTE: PyTorch's amax(dim): the share is multiplied by the mask, so a row whose max
        # is nan (no element equals it) gets nan everywhere
        hit = x == best
        share = (hit / hit.sum(axis=ctx.axis, keepdims=True)).astype(data(g).dtype)
        return (g.reshape(kept) * share,)

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        a = arrays[0]
        if np.size(a) == 0 and "zero-size" in str(err):
            op = cls.__name__.lower()
            return ValueError(
                message(
                    op,
                    f"a tensor with no elements (shape {np.shape(a)!r}) has no "
                    f"{'largest' if op == 'max' else 'smallest'} element",
                    source.here(),
                    "reduce over an axis whose size is not 0 (axis=...), or check why the tensor "
                    "is empty",
                )
            )
        return super()._explain(err, arrays, kwargs)


class Min(Max):
    _reduce = staticmethod(np.min)


class Softmax(Function):
    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any, axis: Any = -1) -> Any:
        ctx.axis = axis
        if a.size == 0:  # nothing to normalise (an empty axis has no max): empty, as PyTorch
            out = np.array(a, copy=True)
            ctx.save_for_backward(out)
            return out
        e = np.exp(a - a.max(axis=axis, keepdims=True))  # shift by the max: no overflow
        out = e / e.sum(axis=axis, keepdims=True)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (s,) = ctx.saved_tensors
        # dL/da = s * (g - sum(g * s)): the Jacobian diag(s) - s s^T applied to g
        return (s * (g - (g * s).sum(axis=ctx.axis, keepdims=True)),)


class LogSoftmax(Function):
    saved_names = ("result",)

    @staticmethod
    def forward(ctx: Any, a: Any, axis: Any = -1) -> Any:
        ctx.axis = axis
        if a.size == 0:  # an empty axis: an empty result, as PyTorch
            out = np.array(a, copy=True)
            ctx.save_for_backward(out)
            return out
        shifted = a - a.max(axis=axis, keepdims=True)
        out = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))  # log-sum-exp
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (out,) = ctx.saved_tensors
        # d(log softmax)/da applied to g: g - softmax * sum(g)
        return (g - exp(out) * g.sum(axis=ctx.axis, keepdims=True),)
