"""Matplotlib helpers for lessons (`tg.plot`): loss curves, decision boundaries, gradient flow.

Each function returns the matplotlib Figure (Jupyter shows it) and draws nothing
random, so the same inputs give the same picture. matplotlib is imported inside the
functions: `import tinygrad_edu` never loads it.
Render layer: numpy, matplotlib (lazily) and the standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core.errors import MissingDependencyError, message
from . import wasm


def _pyplot() -> Any:
    wasm.need_package("matplotlib")  # in the browser: Pyodide loads it only when asked
    try:
        import matplotlib
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError(
            message(
                "tg.plot",
                "matplotlib is not installed",
                None,
                "pip install matplotlib (it comes with `pip install tinygrad_edu`)",
            )
        ) from None
    del matplotlib
    return plt


def _values(xs: Iterable[Any]) -> np.ndarray:
    return np.array([float(np.asarray(x)) for x in xs], dtype=np.float64)


def loss_curve(losses: Iterable[Any], title: str = "training loss", log: bool = False) -> Any:
    r"""Plot a loss per step (numbers or one-element tensors).

    Example:
        >>> fig = loss_curve([1.0, 0.5, 0.25])
        >>> fig.axes[0].get_ylabel()
        'loss'
    """
    plt = _pyplot()
    y = _values(losses)
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(np.arange(len(y)), y, color="#1565c0", linewidth=1.5)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title)
    if log:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    plt.close(fig)  # returned, not shown twice by pyplot's own display
    return fig


def decision_boundary(
    model_fn: Callable[[Any], Any],
    X: Any,  # noqa: N803 - ML habit
    y: Any,
    resolution: int = 200,
    title: str = "decision boundary",
) -> Any:
    r"""Colour the plane by a 2-D classifier's prediction and scatter the data on top.

    Rules: `model_fn` takes an (n, 2) Tensor and returns scores: shape (n,) or (n, 1)
    (a score > 0 means class 1) or (n, k) (the class is the argmax).

    Example:
        >>> import numpy as np, tinygrad_edu as tg
        >>> X = np.array([[0.0, 0.0], [1.0, 1.0]]); y = np.array([0, 1])
        >>> fig = decision_boundary(lambda t: t.sum(axis=1) - 1.0, X, y, resolution=20)
        >>> len(fig.axes)
        1
    """
    from ..core.grad_mode import no_grad
    from ..core.tensor import Tensor

    plt = _pyplot()
    pts = np.asarray(X, dtype=np.float64)
    y = np.asarray(y).reshape(-1)
    pad = 0.5
    x0 = np.linspace(pts[:, 0].min() - pad, pts[:, 0].max() + pad, resolution)
    x1 = np.linspace(pts[:, 1].min() - pad, pts[:, 1].max() + pad, resolution)
    g0, g1 = np.meshgrid(x0, x1)
    grid = np.stack([g0.ravel(), g1.ravel()], axis=1)
    with no_grad():
        scores = np.asarray(model_fn(Tensor(grid)))
    if scores.ndim == 2 and scores.shape[1] > 1:
        pred = scores.argmax(axis=1)
    else:
        pred = (scores.reshape(-1) > 0).astype(np.int64)
    fig, ax = plt.subplots(figsize=(4.5, 4))
    ax.contourf(g0, g1, pred.reshape(g0.shape), alpha=0.3, cmap="coolwarm", antialiased=False)
    ax.scatter(pts[:, 0], pts[:, 1], c=y, cmap="coolwarm", s=14, edgecolors="k", linewidths=0.3)
    ax.set_title(title)
    ax.set_xlabel("x[0]")
    ax.set_ylabel("x[1]")
    fig.tight_layout()
    plt.close(fig)
    return fig


def gradient_flow(
    named_parameters: Iterable[tuple[str, Any]],
    title: str = "gradient flow (mean |grad| per parameter)",
) -> Any:
    r"""Bar chart of mean |grad| per parameter, in order: vanishing gradients show up.

    Rules: parameters with no grad yet are drawn as 0 and their label gets "(no grad)".

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([1.0, -2.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> fig = gradient_flow([("w", w)])
        >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
        ['w']
    """
    plt = _pyplot()
    names, means = [], []
    for name, p in named_parameters:
        g = getattr(p, "grad_held", None)
        if g is None:
            names.append(f"{name} (no grad)")
            means.append(0.0)
        else:
            names.append(name)
            means.append(float(np.abs(np.asarray(g)).mean()))
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(names) + 1.5), 3))
    ax.bar(np.arange(len(means)), means, color="#1565c0")
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels(
        names, rotation=45 if len(names) > 4 else 0, ha="right" if len(names) > 4 else "center"
    )
    ax.set_ylabel("mean |grad|")
    ax.set_title(title)
    fig.tight_layout()
    plt.close(fig)
    return fig
