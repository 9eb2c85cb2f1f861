"""Movement ops: reshape, transpose, broadcast, indexing, cat and stack.

They move numbers around without changing them, so each backward moves the
gradient back the same way. Core layer.
"""

from __future__ import annotations

import numpy as np

from .. import source
from ..errors import ShapeError, message
from ..function import Function
from .common import is_array, sum_to


class Reshape(Function):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.a_shape = a.shape
        return a.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return (g.reshape(ctx.a_shape),)

    @classmethod
    def _explain(cls, err, arrays, kwargs):
        a, shape = arrays[0], kwargs["shape"]
        return ShapeError(message(
            "reshape", f"cannot reshape {a.shape!r} ({a.size} elements) into {shape!r}", source.here(),
            "the new shape must hold the same number of elements; one size may be -1 to infer it"))


class Transpose(Function):
    @staticmethod
    def forward(ctx, a, axes=None):
        ctx.axes = axes
        return np.transpose(a, axes)

    @staticmethod
    def backward(ctx, g):
        inverse = None if ctx.axes is None else tuple(np.argsort(ctx.axes))
        return (g.transpose(inverse) if inverse is not None else g.transpose(),)


class BroadcastTo(Function):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.a_shape = a.shape
        return np.broadcast_to(a, shape)

    @staticmethod
    def backward(ctx, g):
        return (sum_to(g, ctx.a_shape),)  # copies of one value: their gradients add up


class Index(Function):
    @staticmethod
    def forward(ctx, a, index):
        ctx.a_shape, ctx.a_dtype, ctx.index = a.shape, a.dtype, index
        out = np.asarray(a[index])
        # a view would let an in-place change to the result alter `a` behind autograd's back
        return out.copy() if np.may_share_memory(out, a) else out

    @staticmethod
    def backward(ctx, g):
        if is_array(g):
            full = np.zeros(ctx.a_shape, dtype=g.dtype)
            np.add.at(full, ctx.index, g)  # repeated indices add up, like in `a[i] + a[i]`
            return (full,)
        return (IndexAdd.apply(g, shape=ctx.a_shape, index=ctx.index),)

    @classmethod
    def _explain(cls, err, arrays, kwargs):
        return ShapeError(message("index", f"{err} (tensor shape {arrays[0].shape!r})", source.here(),
                                  "valid positions along an axis of size n are 0 .. n-1 (or -n .. -1)"))


class IndexAdd(Function):
    """Scatter-add `g` into zeros: the backward of indexing, differentiable itself."""

    @staticmethod
    def forward(ctx, g, shape, index):
        ctx.index = index
        full = np.zeros(shape, dtype=g.dtype)
        np.add.at(full, index, g)
        return full

    @staticmethod
    def backward(ctx, gg):
        return (gg[ctx.index],)


class Cat(Function):
    @staticmethod
    def forward(ctx, *arrays, axis=0):
        ctx.axis = axis
        ctx.sizes = [a.shape[axis] for a in arrays]
        return np.concatenate(arrays, axis=axis)

    @staticmethod
    def backward(ctx, g):
        grads, start = [], 0
        lead = (slice(None),) * (ctx.axis % g.ndim)
        for n in ctx.sizes:
            grads.append(g[lead + (slice(start, start + n),)])
            start += n
        return tuple(grads)

    @classmethod
    def _explain(cls, err, arrays, kwargs):
        shapes = ", ".join(str(np.shape(a)) for a in arrays)
        return ShapeError(message("cat", f"cannot join shapes {shapes} along axis {kwargs.get('axis', 0)}",
                                  source.here(), "all sizes must match except along the joining axis"))


class Stack(Function):
    @staticmethod
    def forward(ctx, *arrays, axis=0):
        out = np.stack(arrays, axis=axis)
        ctx.axis = axis % out.ndim
        ctx.n = len(arrays)
        return out

    @staticmethod
    def backward(ctx, g):
        lead = (slice(None),) * ctx.axis
        return tuple(g[lead + (i,)] for i in range(ctx.n))

    @classmethod
    def _explain(cls, err, arrays, kwargs):
        shapes = ", ".join(str(np.shape(a)) for a in arrays)
        return ShapeError(message("stack", f"cannot stack shapes {shapes}: they must all be equal",
                                  source.here(), "reshape or pad the tensors to one shape first"))
