"""What the benchmark scripts share: the W1 data, its weights and its numpy floor.

One definition, so `bench_core.py` (eager vs numpy vs PyTorch) and `bench_static.py`
(traced replay vs numpy) time exactly the same work. numpy only: importing this
module never pulls in PyTorch.
"""

from __future__ import annotations

import numpy as np


def moons(n: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved half circles, labels -1 / +1 (inline: no tg.data dependency)."""
    rng = np.random.default_rng(seed)
    half = n // 2
    t = np.linspace(0, np.pi, half)
    upper = np.stack([np.cos(t), np.sin(t)], axis=1)
    lower = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], axis=1)
    x = np.concatenate([upper, lower]) + rng.normal(0, noise, (2 * half, 2))
    y = np.concatenate([-np.ones(half), np.ones(half)]).reshape(-1, 1)
    return x, y


def init_mlp(sizes: list[int], dtype: type = np.float64, seed: int = 0) -> list[np.ndarray]:
    """He-initialised weights and zero biases: `[w1, b1, w2, b2, ...]`."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(dtype))
        params.append(np.zeros(fan_out, dtype=dtype))
    return params


def w1_numpy_step(x, y, lr, w1, b1, w2, b2, w3, b3):
    """One W1 SGD step with a hand-written backward: `(loss, *new_params)`."""
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    score = h2 @ w3 + b3
    margin = 1 - y * score
    loss = np.maximum(margin, 0).mean()
    g = (margin > 0) * (-y) / margin.size  # d mean(relu(1 - y s)) / ds
    gw3, gb3 = h2.T @ g, g.sum(0)
    g = (g @ w3.T) * (z2 > 0)
    gw2, gb2 = h1.T @ g, g.sum(0)
    g = (g @ w2.T) * (z1 > 0)
    gw1, gb1 = x.T @ g, g.sum(0)
    return (
        loss,
        w1 - lr * gw1,
        b1 - lr * gb1,
        w2 - lr * gw2,
        b2 - lr * gb2,
        w3 - lr * gw3,
        b3 - lr * gb3,
    )
