"""Movement ops: reshape, transpose, broadcast, indexing, cat and stack.

They move numbers around without changing them, so each backward moves the
gradient back the same way. Ops marked `_is_view` return a window on their input's
numbers when numpy can (a *view*, see core/views.py), as PyTorch's do. Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import source
from ..errors import ShapeError, message
from ..function import Function
from .common import is_array, sum_to, where


class Reshape(Function):
    _is_view = True  # when numpy can reshape without copying

    @staticmethod
    def forward(ctx: Any, a: Any, shape: Any) -> Any:
        ctx.a_shape = a.shape
        return a.reshape(shape)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (g.reshape(ctx.a_shape),)

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        a, shape = arrays[0], kwargs["shape"]
        return ShapeError(
            message(
                "reshape",
                f"cannot reshape {a.shape!r} ({a.size} elements) into {shape!r}",
                source.here(),
                "the new shape must hold the same number of elements; one size may be -1 to infer it",
            )
        )


class Transpose(Function):
    _is_view = True

    @staticmethod
    def forward(ctx: Any, a: Any, axes: Any = None) -> Any:
        ctx.axes = axes
        return np.transpose(a, axes)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        if ctx.axes is None:
            return (g.transpose(),)  # reversing the axes again undoes it
        inverse = tuple(int(i) for i in np.argsort(ctx.axes))
        # NOTE: a Tensor's transpose(a, b) swaps two axes (PyTorch); permute is numpy's order
        return (g.transpose(inverse) if is_array(g) else g.permute(inverse),)

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        n = arrays[0].ndim
        return ShapeError(
            message(
                "permute",
                f"axes {kwargs.get('axes')!r} do not reorder the {n} axes of a tensor of "
                f"shape {arrays[0].shape!r}",
                source.here(),
                f"name each axis 0 .. {n - 1} exactly once",
            )
        )


class BroadcastTo(Function):
    _is_view = True  # a read-only one: several of its elements are one number

    @staticmethod
    def forward(ctx: Any, a: Any, shape: Any) -> Any:
        ctx.a_shape = a.shape
        out = np.broadcast_to(a, shape)
        # writable where `a` is, as PyTorch's expand is: a row of it is one copy of each
        # number (core/views.py refuses writes where one number stands for several)
        return np.lib.stride_tricks.as_strided(
            a, out.shape, out.strides, writeable=a.flags.writeable
        )

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (sum_to(g, ctx.a_shape),)  # copies of one value: their gradients add up

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        a, shape = arrays[0], kwargs["shape"]
        return ShapeError(
            message(
                "broadcast_to",
                f"cannot broadcast shape {a.shape!r} to {tuple(shape)!r}",
                source.here(),
                "compared from the right, each size must equal the target's or be 1",
            )
        )


class Index(Function):
    _is_view = True  # for basic indexing (ints, slices); integer arrays and masks copy

    @staticmethod
    def forward(ctx: Any, a: Any, index: Any) -> Any:
        ctx.a_shape, ctx.index = a.shape, index
        return select(a, index)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        if is_array(g):
            full = np.zeros(ctx.a_shape, dtype=g.dtype)
            np.add.at(full, ctx.index, g)  # repeated indices add up, like in `a[i] + a[i]`
            return (full,)
        return (IndexAdd.apply(g, shape=ctx.a_shape, index=ctx.index),)

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        return ShapeError(
            message(
                "index", f"{err} (tensor shape {arrays[0].shape!r})", source.here(), index_hint(err)
            )
        )


def index_hint(err: Exception) -> str:
    """What to do about a numpy indexing error, in the learner's terms."""
    text = str(err)
    if "integer" in text and ("type" in text or "valid indices" in text):
        return (
            "index with whole numbers, slices (:) or a boolean mask; a float index "
            "converts with .astype('int64')"
        )
    if "boolean index" in text:
        return "a mask must have the size of the axis it selects from"
    return "valid positions along an axis of size n are 0 .. n-1 (or -n .. -1)"


def select(a: np.ndarray, index: Any) -> Any:
    """`a[index]` as an array: a view for basic indices, even `a[0, 1]` (numpy would give a
    number there; PyTorch gives a 0-d view), a copy for integer arrays and masks."""
    out = a[index]
    if type(out) is not np.ndarray:
        out = a[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
    return out


class Detach(Function):
    """The same numbers with no gradient back: `t.detach()`, or an op run under `no_grad`,
    as a static graph records it. Eager `detach()` makes no node; the tracer hears of it
    (Tensor.detach tells observers), so a replayed graph cuts the gradient there too."""

    _is_view = True

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return a

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (None,)  # no gradient flows back through a detach


class IndexAdd(Function):
    """Scatter-add `g` into zeros: the backward of indexing, differentiable itself."""

    @staticmethod
    def forward(ctx: Any, g: Any, shape: Any, index: Any) -> Any:
        ctx.index = index
        full = np.zeros(shape, dtype=g.dtype)
        np.add.at(full, index, g)
        return full

    @staticmethod
    def backward(ctx: Any, gg: Any) -> Any:
        return (gg[ctx.index],)


class IndexPut(Function):
    """`a` with `a[index]` replaced by `value`: what `a[index] = value` computes."""

    @staticmethod
    def forward(ctx: Any, a: Any, value: Any, index: Any) -> Any:
        ctx.index = index
        out = a.copy()
        out[index] = value
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        # the replaced numbers no longer depend on `a`; `value` gets the gradient of its slots
        if is_array(g):
            g_a = g.copy()
            g_a[ctx.index] = 0
            return g_a, g[ctx.index]
        kept = np.ones(g.shape, dtype=bool)
        kept[ctx.index] = False
        return where(kept, g, 0.0), g[ctx.index]

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        a, value = arrays[0], arrays[1]
        return ShapeError(
            message(
                "setitem",
                f"cannot put a value of shape {np.shape(value)!r} into "
                f"t[{_show_index(kwargs['index'])}] of a tensor of shape {a.shape!r}: {err}",
                source.here(),
                "the value must broadcast to the shape of the part it replaces",
            )
        )


def _show_index(index: Any) -> str:
    parts = index if isinstance(index, tuple) else (index,)
    return ", ".join(_show_slice(p) if isinstance(p, slice) else str(p) for p in parts)


def _show_slice(s: slice) -> str:
    """`slice(0, 2, None)` as the learner wrote it: `0:2`."""
    text = f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}"
    return text + (f":{s.step}" if s.step is not None else "")


class Cat(Function):
    @staticmethod
    def forward(ctx: Any, *arrays: Any, axis: Any = 0) -> Any:
        ctx.axis = axis
        ctx.sizes = [a.shape[axis] for a in arrays]
        return np.concatenate(arrays, axis=axis)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        grads, start = [], 0
        lead = (slice(None),) * (ctx.axis % g.ndim)
        for n in ctx.sizes:
            grads.append(g[lead + (slice(start, start + n),)])
            start += n
        return tuple(grads)

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        shapes = ", ".join(str(np.shape(a)) for a in arrays)
        return ShapeError(
            message(
                "cat",
                f"cannot join shapes {shapes} along axis {kwargs.get('axis', 0)}",
                source.here(),
                "all sizes must match except along the joining axis",
            )
        )


class Stack(Function):
    @staticmethod
    def forward(ctx: Any, *arrays: Any, axis: Any = 0) -> Any:
        out = np.stack(arrays, axis=axis)
        ctx.axis = axis % out.ndim
        ctx.n = len(arrays)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        lead = (slice(None),) * ctx.axis
        return tuple(g[lead + (i,)] for i in range(ctx.n))

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        shapes = ", ".join(str(np.shape(a)) for a in arrays)
        return ShapeError(
            message(
                "stack",
                f"cannot stack shapes {shapes}: they must all be equal",
                source.here(),
                "reshape or pad the tensors to one shape first",
            )
        )
