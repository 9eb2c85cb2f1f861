"""Matrix multiplication, `a @ b`, with numpy's rules for 1-D and batched operands.

Core layer.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .. import source
from ..errors import ShapeError, message
from ..function import Function
from ..saved import InputCopy
from .common import needs


def _swap(x: Any) -> Any:
    return x.swapaxes(-1, -2)


class MatMul(Function):
    saved_names = ("self", "mat2")

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, saves_copies: bool = True) -> Any:
        na, nb = needs(ctx, 2)
        saved_a, saved_b = a if nb else None, b if na else None  # d/da needs b, d/db a
        ndims = np.ndim(a), np.ndim(b)  # (once: `np.ndim` is a dispatched numpy call)
        if saves_copies and (ndims[0] > 2 or ndims[1] > 2):  # PyTorch may keep a copy
            a_copied, b_copied = _saved_as_copies(a, b, na, nb)
            if a_copied and nb:
                saved_a = InputCopy(a.copy(), 0)
            if b_copied and na:
                saved_b = InputCopy(b.copy(), 1)
        ctx.save_for_backward(saved_a, saved_b)
        ctx.ndims = ndims
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        a_ndim, b_ndim = ctx.ndims
        # For matrices: dL/da = g @ b^T and dL/db = a^T @ g. A 1-D operand is a
        # row (left) or column (right) vector that numpy squeezed away: put the axis back.
        if a_ndim > 1 and b_ndim > 1:  # the usual case first, without helper calls
            ga = g @ b.swapaxes(-1, -2) if na else None
            return ga, (a.swapaxes(-1, -2) @ g if nb else None)
        if a_ndim == 1 and b_ndim == 1:
            return (g * b if na else None), (g * a if nb else None)
        if a_ndim == 1:  # (k,) @ (..., k, m) -> (..., m)
            ga = (g[..., None, :] @ _swap(b))[..., 0, :] if na else None
            gb = a[:, None] * g[..., None, :] if nb else None
            return ga, gb
        # (..., n, k) @ (k,) -> (..., n)
        ga = g[..., :, None] * b if na else None
        gb = (_swap(a) @ g[..., :, None])[..., :, 0] if nb else None
        return ga, gb

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[str, Any]) -> Exception:
        a_shape, b_shape = np.shape(arrays[0]), np.shape(arrays[1])
        site = source.here()
        if not a_shape or not b_shape:
            return ShapeError(
                message(
                    "matmul",
                    f"cannot multiply {a_shape!r} @ {b_shape!r}: @ needs at least one axis "
                    "on each side",
                    site,
                    "use * to scale by a single number",
                )
            )
        k_a = a_shape[-1]
        k_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
        what = f"cannot multiply {a_shape!r} @ {b_shape!r}: inner sizes {k_a} and {k_b} differ"
        if k_a != k_b:
            return ShapeError(message("matmul", what, site, _hint(a_shape, b_shape, site)))
        return ShapeError(
            message(
                "matmul",
                f"cannot multiply {a_shape!r} @ {b_shape!r}: the batch axes do not broadcast",
                site,
            )
        )


def _saved_as_copies(
    a: np.ndarray, b: np.ndarray, a_needs: bool, b_needs: bool
) -> tuple[bool, bool]:
    """Whether PyTorch's matmul keeps a reshaped *copy* of `a` (of `b`) for backward.

    PyTorch turns a batched product into one `mm` on the batch folded into rows, or into
    `bmm` on both operands broadcast to one batch axis. Either way it reshapes an operand,
    which copies when its numbers are not laid out for the new shape (after a transpose,
    say), and then it saves the copy: a later in-place change of the operand does not touch
    what backward reads, and PyTorch computes where a saved view would be refused. We save
    a copy in the same cases, so both answer alike.
    """
    if a.ndim == 3 and b.ndim == 3 and (len(a) == 1) != (len(b) == 1):
        a, b = (a[0], b) if len(a) == 1 else (a, b[0])  # PyTorch first drops a batch of one
    if a.ndim >= b.ndim and _folds(a, b.ndim, b_needs):  # (..., n, k) @ (k, m) or (k,)
        return _reshape_copies(a, (-1, a.shape[-1])), False
    # (n, k) @ (..., k, m): the batch folded into rows of b^T (not for a constant matrix a)
    if b.ndim > a.ndim and (a.ndim != 2 or a_needs) and _folds(_swap(b), a.ndim, a_needs):
        return False, _reshape_copies(_swap(b), (-1, b.shape[-2]))
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])  # bmm on one batch axis
    a_rows = a.shape[-2:] if a.ndim > 1 else (1, a.shape[0])
    b_rows = b.shape[-2:] if b.ndim > 1 else b.shape
    return (
        _reshape_copies(np.broadcast_to(a, batch + a_rows), (-1, *a_rows)),
        _reshape_copies(np.broadcast_to(b, batch + b_rows), (-1, *b_rows)),
    )


def _folds(big: np.ndarray, small_ndim: int, small_needs_grad: bool) -> bool:
    """PyTorch's test for folding the batch of `big` into the rows of one `mm` / `mv`."""
    if big.ndim < 3 or small_ndim > 2:
        return False
    if small_needs_grad or big.size == 0:  # a gradient of `small` per batch would be bigger
        return True
    # otherwise only when the batch axes merge without a copy
    strides, shape = big.strides, big.shape
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _reshape_copies(x: np.ndarray, shape: tuple[Any, ...]) -> bool:
    """Whether reshaping `x` to `shape` must copy its numbers (numpy and PyTorch agree)."""
    return x.size > 0 and not np.may_share_memory(x.reshape(shape), x)


def _product_shape(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """The shape of `a @ b` for shapes whose inner sizes agree (numpy's rules)."""
    if len(a) == 1:
        return b[:-2] + b[-1:]
    if len(b) == 1:
        return a[:-1]
    return np.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])


def _hint(a_shape: tuple[Any, ...], b_shape: tuple[Any, ...], site: Any) -> str:
    left, right = "a", "b"
    m = re.search(r"([\w.]+)\s*@\s*([\w.]+)", site.text if site is not None else "")
    if m:
        left, right = m.group(1), m.group(2)
    if len(b_shape) >= 2 and a_shape[-1] == b_shape[-1]:
        bt = b_shape[:-2] + (b_shape[-1], b_shape[-2])
        product = _product_shape(a_shape, bt)
        return (
            f"did you mean {left} @ {right}.T? {right}.T has shape {bt!r}, and the "
            f"product shape {product!r}"
        )
    if len(a_shape) >= 2 and a_shape[-2] == (b_shape[-2] if len(b_shape) > 1 else b_shape[0]):
        at = a_shape[:-2] + (a_shape[-1], a_shape[-2])
        product = _product_shape(at, b_shape)
        return (
            f"did you mean {left}.T @ {right}? {left}.T has shape {at!r}, and the "
            f"product shape {product!r}"
        )
    return "the last axis of the left operand must equal the second-to-last axis of the right one"
