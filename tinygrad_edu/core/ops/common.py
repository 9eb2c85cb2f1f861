"""Helpers that let one backward rule run on numpy arrays *and* on Tensors.

Backward rules mostly use operators (`*`, `/`, `@`, `.T`, `.sum`), which arrays and
Tensors share. The few numpy functions they need go through these helpers: on an
ndarray they call numpy (fast path); on a Tensor they call a differentiable op, so
`backward(create_graph=True)` builds a graph of the backward pass. Core layer.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

import numpy as np

from .. import source
from ..dtypes import _default as _default_dtype
from ..errors import DataError, message


def is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray)  # NOTE: the hot helpers below inline this check


def sum_to(x: Any, shape: tuple[Any, ...]) -> Any:
    """Sum `x` down to `shape`: the backward of numpy broadcasting ("unbroadcast")."""
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    if lead > 0 and x.shape[lead:] == shape:  # a bias's gradient: only leading axes to add
        return x.sum(axis=tuple(range(lead)))
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and x.shape[i + lead] != 1
    )
    out = x.sum(axis=axes, keepdims=True) if axes else x
    if lead:
        out = out.reshape(shape)
    return out


_COPY_LIMIT = 1 << 16


def broadcast_to(x: Any, shape: tuple[Any, ...]) -> Any:
    """Repeat `x` along broadcast axes (the backward of a sum)."""
    if isinstance(x, np.ndarray):
        if math.prod(shape) > _COPY_LIMIT:
            return np.broadcast_to(x, shape)  # a read-only view: no copy of a big gradient
        # PERF: for small arrays a filled copy costs ~0.6 us, np.broadcast_to ~3.5 us
        out = np.empty(shape, x.dtype)
        out[...] = x
        return out
    return x.broadcast_to(shape)


def where(cond: np.ndarray, a: Any, b: Any) -> Any:
    """`a` where `cond` holds, else `b`; `cond` is always a plain boolean array.

    Masks select rather than multiply: `g * mask` turns an infinite gradient into nan
    where the mask is 0 (`sqrt(relu(x))` at x <= 0), `where` gives 0 as PyTorch does.
    """
    if (is_array(a) or np.isscalar(a)) and (is_array(b) or np.isscalar(b)):
        return np.where(cond, a, b)
    from .elementwise import Where

    return Where.apply(cond, a, b)


# `np.where` on a random mask (relu's, on a layer's activations) mispredicts a branch per
# element: on a (256, 128) float32 array it takes 5x as long as a multiply. Above this many
# elements `zero_where` clears bits instead; below it, np.where's single call is cheaper.
BRANCH_FREE_FROM = 8192


def zero_where(dead: np.ndarray, g: np.ndarray) -> np.ndarray:
    """`np.where(dead, 0.0, g)` for a float array `g` and a mask of its shape, bit for bit.

    Selected, not multiplied by the mask: `g * ~dead` would turn an infinite gradient into
    nan where the mask is set. A big array is done without branches: the mask becomes
    integers that are all ones where `g` is kept and all zeros where it is cleared, and-ed
    with `g`'s bits (so nan, inf and -0.0 in `g` come through untouched, and a cleared
    element is +0.0, as np.where gives).
    """
    itemsize = g.dtype.itemsize
    if g.size < BRANCH_FREE_FROM or dead.shape != g.shape or itemsize not in (2, 4, 8):
        return np.where(dead, 0.0, g)
    if not g.flags.c_contiguous or not dead.flags.c_contiguous or g.dtype.kind != "f":
        return np.where(dead, 0.0, g)
    bits = np.dtype(f"u{itemsize}")
    keep = dead.view(np.uint8).astype(bits)  # 1 where cleared, 0 where kept
    keep -= 1  # 0 where cleared, all ones where kept (unsigned integers wrap around)
    keep &= g.view(bits)
    return keep.view(g.dtype)


def zero_slope(g: Any, x: Any) -> Any:
    """`g`, recorded (under create_graph) as depending on the saved `x` with slope 0.

    PyTorch's backward of relu (threshold_backward of its output) and abs (times sgn of its
    input) are differentiable functions of a saved tensor, so a second backward reaches
    that tensor (with zeros) and runs its hooks; with this, so does ours. (Clip and max
    compare, and a comparison cuts the graph in PyTorch too.) On plain arrays (the usual
    backward) it is `g` itself.
    """
    if is_array(g) or is_array(x) or x is None or not x.requires_grad:
        return g
    from .elementwise import Where

    return Where.apply(np.zeros((), dtype=bool), x, g)  # picks g; sends x exact zeros


def compute_into(ufunc: Any, out: np.ndarray, operand: Any) -> None:
    """`out = ufunc(out, operand)` in out's own memory (an in-place op that records no graph).
    Here, among the ops, so numpy's warnings about nan and inf are silenced as for every op."""
    # `out` positional, as numpy's own `a -= b` passes it: no keywords to parse
    ufunc(out, operand, out)


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}  # PyTorch's bool < integer < float


def storable(result: np.dtype, into: np.dtype) -> bool:
    """PyTorch's in-place rule: a result is stored in a tensor of its category or above (an
    int64 result into uint8 wraps around as PyTorch's does; a float into an int is refused)."""
    return _CATEGORY[result.kind] <= _CATEGORY[into.kind]


def store_into(out: np.ndarray, values: np.ndarray) -> None:
    """`out[...] = values`, cast to out's dtype (a float64 result into a float16 tensor, an
    int64 one into uint8); TypeError where PyTorch refuses the cast (`storable`). numpy's
    warning when a number overflows the cast is silenced here, as for every op (the number
    becomes inf, as in PyTorch, which prints nothing)."""
    if not storable(values.dtype, out.dtype):
        raise TypeError(f"cannot store {values.dtype} in {out.dtype}")
    np.copyto(out, values, casting="unsafe")


def needs(ctx: Any, n: int) -> tuple[Any, ...]:
    """Which of the `n` inputs want a gradient, read in `forward` to save only what backward
    will use (as PyTorch does). A static replay's forward does not know yet: all of them."""
    return getattr(ctx, "needs_input_grad", None) or (True,) * n


def floating(a: np.ndarray) -> np.ndarray:
    """`a` as floats: an int or bool array in the default float dtype, where PyTorch computes
    exp, log, sqrt, tanh, ... of whole numbers (numpy would pick float64, and float16 for uint8
    and bool). Such inputs never need a gradient, so the cast is not recorded."""
    return a if a.dtype.kind in "fc" else a.astype(_default_dtype[0])


def log(x: Any) -> Any:
    return np.log(x) if isinstance(x, np.ndarray) else x.log()


def exp(x: Any) -> Any:
    return np.exp(x) if isinstance(x, np.ndarray) else x.exp()


def data(x: Any) -> np.ndarray:
    """The raw array behind `x` (masks are computed from values, never differentiated)."""
    return x if isinstance(x, np.ndarray) else x._data


def values_read(t: Any, op: str) -> None:
    """`op` computes its result from `t`'s values in numpy, and no node records it: tell the
    tracer, which freezes and warns (trace), breaks the graph (compile) or refuses (export),
    where it would otherwise keep the result as a constant for every input, silently."""
    from ..tensor import _notify_concrete  # here: tensor.py imports the ops

    _notify_concrete(t, op)


def refuse_dtype(op: str, x: Any, needs: str) -> NoReturn:
    """The error for an op PyTorch has no kernel for in `x`'s dtype (abs of bools, softmax of
    ints): refused as there, not answered in numpy's own way."""
    shape = tuple(x.shape)
    raise DataError(
        message(
            op,
            f"needs {needs}, got a tensor of dtype {x.dtype} and shape {shape!r}, as in PyTorch",
            source.here(),
            "convert it first with .float() (or .long() for whole numbers)",
        )
    )
