"""The dtype PyTorch computes `a <op> b` in, for the arithmetic family (issue 30).

`result_dtype` ranks bool < int < float and lets tensors with axes decide before 0-d
tensors and those before Python numbers; `promote` casts the two operands of the core's
`+ - * / **` to it. Core layer.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from ... import source
from ...dtypes import _default as _default_dtype
from ...errors import DataError, message

if TYPE_CHECKING:
    from ...tensor import Tensor


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def _t() -> Any:
    from ...tensor import Tensor  # here, not at the top: tensor.py imports this module

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
    try:
        return np.asarray(x, dtype=dt)
    except OverflowError:  # an int the dtype cannot hold: stored as PyTorch stores it
        return wrapped(x, dt, "arithmetic")


def wrapped(number: int, dt: np.dtype, op: str) -> np.ndarray:
    """A Python int that the whole-number dtype `dt` cannot hold, as PyTorch stores it: wrapped
    around, as a C cast does (uint8 takes -1 as 255, int8 takes 200 as -56), so `x + -1`
    counts down modulo 256 as `x + 255` does. PyTorch refuses ints past 64 bits; so does this."""
    if not -(2**63) <= number < 2**64:
        raise OverflowError(
            message(
                op,
                f"the number {number} does not fit in 64 bits, so no {dt} tensor can take it, "
                "as in PyTorch",
                source.here(),
                "convert the tensor with .double() first, or use a smaller number",
            )
        )
    return np.asarray(number % 2**64, dtype=np.uint64).astype(dt)


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
    # where numpy's own promotion already gives `dt` (float32 with float64), no cast: the
    # graph keeps one node, as PyTorch's (its AddBackward0 casts the gradients itself)
    # (`/` casts whole numbers all the same: `2.5 / t` takes the reciprocal of `t` alone)
    if np.result_type(a.dtype, b.dtype) == dt and (op != "/" or a.dtype.kind == b.dtype.kind):
        return a, b
    return as_dtype(a, dt), as_dtype(b, dt)
