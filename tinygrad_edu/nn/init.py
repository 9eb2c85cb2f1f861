"""`tg.nn.init`: fill a parameter in place with PyTorch's initialisation schemes.

Each function writes new numbers into the tensor's storage without recording a
graph (as `torch.nn.init` does under `no_grad`) and moves its version counter, so a
graph built before the change refuses to backpropagate through stale values. The
numbers come from numpy's global generator: same distributions as PyTorch, different
draws. Core layer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import source, views
from ..core.errors import ShapeError, message
from ..core.tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "zeros_",
    "ones_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "trunc_normal_",
]

_GAINS = {
    "linear": 1.0,
    "conv1d": 1.0,
    "conv2d": 1.0,
    "conv3d": 1.0,
    "sigmoid": 1.0,
    "tanh": 5.0 / 3,
    "relu": math.sqrt(2.0),
    "selu": 0.75,
}


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended scale for weights followed by `nonlinearity` (PyTorch's table)."""
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in _GAINS:
        raise ValueError(
            message(
                "calculate_gain",
                f"unknown nonlinearity {nonlinearity!r}",
                source.here(),
                f"use one of {sorted(_GAINS) + ['leaky_relu']}",
            )
        )
    return _GAINS[nonlinearity]


def _fill(t: Tensor, values: Any) -> Tensor:
    np.asarray(t)[...] = values
    views.bump(t)  # an in-place change: graphs that saved the old values must notice
    return t


def _fans(t: Tensor) -> tuple[int, int]:
    if t.ndim < 2:
        raise ShapeError(
            message(
                "init",
                f"fan in and fan out need a tensor with at least 2 axes, got shape {t.shape!r}",
                source.here(),
                "initialise biases with uniform_, normal_ or zeros_",
            )
        )
    receptive = math.prod(t.shape[2:])  # kernel size, for conv weights
    return t.shape[1] * receptive, t.shape[0] * receptive


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    return _fill(t, np.random.uniform(a, b, t.shape))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    return _fill(t, np.random.normal(mean, std, t.shape))


def trunc_normal_(
    t: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Normal samples redrawn until they fall in [a, b]."""
    out = np.random.normal(mean, std, t.shape)
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = np.random.normal(mean, std, int(bad.sum()))
        bad = (out < a) | (out > b)
    return _fill(t, out)


def constant_(t: Tensor, val: float) -> Tensor:
    return _fill(t, val)


def zeros_(t: Tensor) -> Tensor:
    return _fill(t, 0.0)


def ones_(t: Tensor) -> Tensor:
    return _fill(t, 1.0)


def eye_(t: Tensor) -> Tensor:
    return _fill(t, np.eye(*t.shape))  # type: ignore[call-overload]  # 2-D, as in PyTorch


def xavier_uniform_(t: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Uniform in +-gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio)."""
    fan_in, fan_out = _fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


def xavier_normal_(t: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Normal with std gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(t)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(t: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan_in, fan_out = _fans(t)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(
            message("kaiming", f"mode must be 'fan_in' or 'fan_out', got {mode!r}", source.here())
        )
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    t: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """Uniform in +-sqrt(3) * gain / sqrt(fan) (He et al.)."""
    bound = math.sqrt(3.0) * _kaiming_std(t, a, mode, nonlinearity)
    return uniform_(t, -bound, bound)


def kaiming_normal_(
    t: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """Normal with std gain / sqrt(fan) (He et al.)."""
    return normal_(t, 0.0, _kaiming_std(t, a, mode, nonlinearity))
