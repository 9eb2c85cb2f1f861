"""Helpers that let one backward rule run on numpy arrays *and* on Tensors.

Backward rules mostly use operators (`*`, `/`, `@`, `.T`, `.sum`), which arrays and
Tensors share. The few numpy functions they need go through these helpers: on an
ndarray they call numpy (fast path); on a Tensor they call a differentiable op, so
`backward(create_graph=True)` builds a graph of the backward pass. Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray)


def sum_to(x: Any, shape: tuple) -> Any:
    """Sum `x` down to `shape`: the backward of numpy broadcasting ("unbroadcast")."""
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and x.shape[i + lead] != 1
    )
    out = x.sum(axis=axes, keepdims=True) if axes else x
    if lead:
        out = out.reshape(shape)
    return out


def broadcast_to(x: Any, shape: tuple) -> Any:
    """Repeat `x` along broadcast axes (the backward of a sum)."""
    if is_array(x):
        return np.broadcast_to(x, shape)
    return x.broadcast_to(shape)


def where(cond: np.ndarray, a: Any, b: Any) -> Any:
    """`a` where `cond` holds, else `b`; `cond` is always a plain boolean array."""
    if is_array(a) and (is_array(b) or np.isscalar(b)):
        return np.where(cond, a, b)
    from .elementwise import Where

    return Where.apply(cond, a, b)


def log(x: Any) -> Any:
    return np.log(x) if is_array(x) else x.log()


def exp(x: Any) -> Any:
    return np.exp(x) if is_array(x) else x.exp()


def data(x: Any) -> np.ndarray:
    """The raw array behind `x` (masks are computed from values, never differentiated)."""
    return x if is_array(x) else x.data
