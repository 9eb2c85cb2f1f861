"""Small data sets made on the spot: moons, spirals, variable-length sequences; and `batches`.

Nothing is downloaded. Every generator takes a `seed` and draws from its own
`np.random.default_rng(seed)`, so the same call gives the same data on every machine
and does not disturb numpy's global generator (which model initialisation uses).
Everything returned is plain numpy: features float64; class labels and lengths numpy's
own integer, `np.intp` (int64 on a 64-bit machine; int32 in the browser, whose numpy is
32-bit), so numpy's index functions such as `np.bincount` take them everywhere.
Core layer: numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .core import source
from .core.errors import message

__all__ = ["make_moons", "make_spirals", "make_sequences", "pad_sequences", "batches"]

TASKS = ("sum", "parity", "count")


def _positive(op: str, what: str, value: int) -> None:
    if int(value) < 1:
        raise ValueError(message(op, f"{what} must be at least 1, got {value!r}", source.here()))


def make_moons(n: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r"""Two interleaving half circles: a binary task no straight line can separate.

    Rules: n // 2 points on the upper moon (label 0), the rest on the lower moon
    (label 1), plus Gaussian noise of standard deviation `noise`, then shuffled.
    Same points as scikit-learn's `make_moons` before noise and shuffling.

    Args:
        n: number of points.
        noise: standard deviation of the noise added to each coordinate.
        seed: seed of the generator (same seed, same data).

    Returns:
        `(x, y)`: x float64 of shape (n, 2), y np.intp of shape (n,) with values 0 and 1.

    Example:
        >>> import tinygrad_edu as tg
        >>> x, y = tg.data.make_moons(100, noise=0.1, seed=0)
        >>> x.shape, x.dtype, y.shape, y.dtype == np.intp, int(y.sum())
        ((100, 2), dtype('float64'), (100,), True, 50)
    """
    _positive("make_moons", "n", n)
    rng = np.random.default_rng(seed)
    n_out = n // 2
    n_in = n - n_out
    t_out = np.linspace(0, np.pi, n_out)
    t_in = np.linspace(0, np.pi, n_in)
    x = np.concatenate(
        [
            np.stack([np.cos(t_out), np.sin(t_out)], axis=1),
            np.stack([1 - np.cos(t_in), 0.5 - np.sin(t_in)], axis=1),
        ]
    )
    y = np.concatenate([np.zeros(n_out, np.intp), np.ones(n_in, np.intp)])
    x = x + rng.normal(0.0, noise, size=x.shape)
    order = rng.permutation(n)
    return x[order], y[order]


def make_spirals(
    n_per_class: int = 100, classes: int = 3, noise: float = 0.2, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    r"""Interleaved spiral arms, one per class (the CS231n toy problem).

    Rules: arm c has `n_per_class` points at radius r = 0 .. 1 and angle
    4c .. 4(c + 1) (radians) plus Gaussian angle noise of std `noise`. Points come
    class by class (not shuffled); use `batches(..., shuffle=True)` to mix them.

    Args:
        n_per_class: points per arm.
        classes: number of arms (classes).
        noise: standard deviation of the angle noise.
        seed: seed of the generator.

    Returns:
        `(x, y)`: x float64 of shape (n_per_class * classes, 2), y np.intp in 0 .. classes - 1.

    Example:
        >>> import tinygrad_edu as tg
        >>> x, y = tg.data.make_spirals(50, classes=3, seed=0)
        >>> x.shape, sorted(set(y.tolist()))
        ((150, 2), [0, 1, 2])
    """
    _positive("make_spirals", "n_per_class", n_per_class)
    _positive("make_spirals", "classes", classes)
    rng = np.random.default_rng(seed)
    x = np.zeros((n_per_class * classes, 2))
    y = np.zeros(n_per_class * classes, dtype=np.intp)
    r = np.linspace(0.0, 1.0, n_per_class)
    for c in range(classes):
        t = np.linspace(4.0 * c, 4.0 * (c + 1), n_per_class) + rng.normal(0.0, noise, n_per_class)
        rows = slice(c * n_per_class, (c + 1) * n_per_class)
        x[rows] = np.stack([r * np.sin(t), r * np.cos(t)], axis=1)
        y[rows] = c
    return x, y


def make_sequences(
    n: int = 100, min_len: int = 2, max_len: int = 10, seed: int = 0, task: str = "sum"
) -> tuple[list[np.ndarray], np.ndarray]:
    r"""Sequences of different lengths with one target each, for an RNN lesson.

    Rules: each sequence has a length drawn uniformly from min_len .. max_len
    (inclusive) and one feature per step, so sequence i has shape (length_i, 1).
    - task="sum": steps uniform in [-1, 1); target the sum (float64, regression).
    - task="parity": steps 0.0 or 1.0; target 1 if the count of ones is odd (np.intp).
    - task="count": steps 0.0 or 1.0; target the number of ones (float64, regression).

    Args:
        n: number of sequences.
        min_len, max_len: shortest and longest length (inclusive).
        seed: seed of the generator.
        task: "sum", "parity" or "count".

    Returns:
        `(xs, y)`: xs a list of n float64 arrays of shape (length_i, 1); y of shape (n,).
        `pad_sequences(xs)` turns xs into one zero-padded array plus the lengths.

    Raises:
        ValueError: an unknown task or min_len > max_len.

    Example:
        >>> import tinygrad_edu as tg
        >>> xs, y = tg.data.make_sequences(3, min_len=2, max_len=5, seed=0, task="parity")
        >>> [x.shape for x in xs], y.dtype == np.intp
        ([(5, 1), (4, 1), (4, 1)], True)
        >>> [int(x.sum()) % 2 for x in xs] == y.tolist()
        True
    """
    if task not in TASKS:
        raise ValueError(
            message("make_sequences", f"task must be one of {TASKS}, got {task!r}", source.here())
        )
    _positive("make_sequences", "min_len", min_len)
    if min_len > max_len:
        raise ValueError(
            message(
                "make_sequences",
                f"min_len ({min_len}) is larger than max_len ({max_len})",
                source.here(),
                "swap them",
            )
        )
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_len, max_len + 1, size=n)
    xs: list[np.ndarray] = []
    for length in lengths:
        if task == "sum":
            xs.append(rng.uniform(-1.0, 1.0, size=(int(length), 1)))
        else:
            xs.append(rng.integers(0, 2, size=(int(length), 1)).astype(np.float64))
    sums = np.array([x.sum() for x in xs], dtype=np.float64)
    y: np.ndarray
    if task == "parity":
        y = np.round(sums).astype(np.intp) % 2
    else:
        y = sums
    return xs, y


def pad_sequences(xs: list[np.ndarray], value: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Stack variable-length sequences into one array, padding the ends with `value`.

    Returns:
        `(x, lengths)`: x of shape (n, max_length, features), lengths np.intp of shape (n,).

    Example:
        >>> import numpy as np, tinygrad_edu as tg
        >>> x, lengths = tg.data.pad_sequences([np.ones((2, 1)), np.ones((3, 1))])
        >>> x.shape, lengths.tolist(), x[0, :, 0].tolist()
        ((2, 3, 1), [2, 3], [1.0, 1.0, 0.0])
    """
    if not len(xs):
        raise ValueError(message("pad_sequences", "got no sequences", source.here()))
    arrs = [np.asarray(x, dtype=np.float64).reshape(len(x), -1) for x in xs]
    lengths = np.array([len(a) for a in arrs], dtype=np.intp)
    x = np.full((len(arrs), int(lengths.max()), arrs[0].shape[1]), value, dtype=np.float64)
    for i, a in enumerate(arrs):
        x[i, : len(a)] = a
    return x, lengths


def batches(
    x: Any, y: Any, batch_size: int, shuffle: bool = True, seed: int | None = 0
) -> Iterator[tuple[Any, Any]]:
    r"""Yield `(x_batch, y_batch)` pairs covering the data once (one epoch).

    Rules: the last batch may be smaller. With `shuffle=True` the order comes from
    `np.random.default_rng(seed)` (pass a different seed per epoch for a new order).
    `x` may be an array (sliced) or a list such as `make_sequences`' (a list comes back).

    Example:
        >>> import numpy as np, tinygrad_edu as tg
        >>> x, y = np.arange(10).reshape(5, 2), np.arange(5)
        >>> [yb.tolist() for _, yb in tg.data.batches(x, y, 2, shuffle=False)]
        [[0, 1], [2, 3], [4]]
    """
    _positive("batches", "batch_size", batch_size)
    n = len(x)
    if len(y) != n:
        raise ValueError(
            message(
                "batches",
                f"x has {n} examples but y has {len(y)}",
                source.here(),
                "pass features and labels of the same data set",
            )
        )
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    y_arr = np.asarray(y)
    for start in range(0, n, batch_size):
        idx = order[start : start + batch_size]
        xb = [x[i] for i in idx] if isinstance(x, list) else np.asarray(x)[idx]
        yield xb, y_arr[idx]
