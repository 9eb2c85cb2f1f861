"""`tg.nn.utils`: `clip_grad_norm_` and `clip_grad_value_`, as in `torch.nn.utils`.

Core layer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector"]


def _with_grads(parameters: Any) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p for p in params if p.grad is not None]


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
) -> Tensor:
    r"""Scale all gradients together so their joint norm is at most `max_norm`.

    Returns the norm before clipping (a tensor), as PyTorch; the gradients are scaled
    by max_norm / (norm + 1e-6) when that is below 1.

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([3.0, 4.0], requires_grad=True)
        >>> (w * w).sum().backward()            # grad [6, 8], norm 10
        >>> tg.nn.utils.clip_grad_norm_([w], 1.0)
        tensor(10.)
        >>> round(float(w.grad.norm()), 4)
        1.0
    """
    grads = [np.asarray(p.grad) for p in _with_grads(parameters)]
    if not grads:
        return Tensor(0.0)
    if norm_type in (math.inf, float("inf")):
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = sum(float((np.abs(g) ** norm_type).sum()) for g in grads) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of the gradients is {total}")
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for g in grads:
            g *= coef  # in place, as PyTorch scales p.grad itself
    return Tensor(total, dtype=grads[0].dtype)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clip every gradient element into [-clip_value, clip_value], in place."""
    for p in _with_grads(parameters):
        g = np.asarray(p.grad)
        np.clip(g, -clip_value, clip_value, out=g)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened into one vector (in the graph)."""
    from ..core.creation import cat

    return cat([p.reshape(-1) for p in parameters])
