"""Optimizers: `SGD` (with momentum and weight decay) and `Adam`, following PyTorch's algorithms.

An optimizer holds a list of parameters and, per parameter, a `state` dict (momentum
buffers, Adam's moments). `step()` updates each parameter *in place* under
`tg.no_grad()`, the way `torch.optim` does: the tensors stay the same objects, and their
version counters move, so calling `step()` between a forward pass and its
`backward()` raises the in-place error instead of silently using new weights.
Core layer: numpy, the standard library and `tinygrad_edu.core` only (no `tg.nn`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .core import source
from .core.errors import message
from .core.grad_mode import no_grad
from .core.tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam"]


class Optimizer:
    r"""Base class: keeps `params`, per-parameter `state`, and the hyper-parameters.

    Rules: `params` is any iterable of leaf tensors (usually `model.parameters()`),
    kept once each in the given order. Parameters whose `.grad` is None are skipped by
    `step()`. Subclasses implement `_update(p, grad, state)`, which `step()` calls for
    each parameter inside `tg.no_grad()`.

    Raises:
        ValueError: an empty parameter list, or a non-leaf / non-tensor in it.
    """

    def __init__(self, params: Iterable[Tensor], defaults: dict[str, Any]) -> None:
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(message(name, "params must be an iterable of tensors, got one Tensor",
                                    source.here(), f"wrap it in a list: {name}([w], ...)"))
        self.params: list[Tensor] = []
        seen: set[int] = set()
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(message(name, f"params[{i}] is a {type(p).__name__}, not a Tensor",
                                        source.here(), "pass model.parameters()"))
            if p.grad_fn is not None:
                raise ValueError(message(
                    name, f"params[{i}] is not a leaf (it was computed by "
                    f"{p.grad_fn.name}), so it can not be optimized", source.here(),
                    "optimize the tensors you created with requires_grad=True"))
            if id(p) not in seen:  # a shared parameter is updated once per step
                seen.add(id(p))
                self.params.append(p)
        if not self.params:
            raise ValueError(message(name, "got an empty parameter list", source.here(),
                                     "did the model register its layers? list(model.parameters()) "
                                     "should not be empty (a generator can be used only once)"))
        self.defaults = dict(defaults)
        self.state: dict[Tensor, dict[str, Any]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's `.grad`: None (default, as PyTorch) or zeros."""
        for p in self.params:
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = np.zeros_like(p.data)

    def step(self) -> None:
        """Update every parameter that has a `.grad`, in place and without recording a graph."""
        with no_grad():
            for p in self.params:
                g = p.grad
                if g is None:
                    continue
                state = self.state.setdefault(p, {})
                p.sub_(self._update(p.data, np.asarray(g.data, dtype=p.dtype), state))

    def _update(self, p: np.ndarray, g: np.ndarray, state: dict[str, Any]) -> np.ndarray:
        """Return the amount to subtract from `p` (and update `state`)."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """`{"state": {index: {name: array copy}}, "defaults": {...}}`, indexed like `params`."""
        index = {id(p): i for i, p in enumerate(self.params)}
        state = {index[id(p)]: {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                for k, v in s.items()} for p, s in self.state.items()}
        return {"state": dict(sorted(state.items())), "defaults": dict(self.defaults)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` returned (for the same parameters, in the same order)."""
        self.defaults.update(state_dict["defaults"])
        for k, v in self.defaults.items():
            setattr(self, k, v)
        self.state = {self.params[i]: {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                       for k, v in s.items()}
                      for i, s in state_dict["state"].items()}

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.defaults.items())
        return f"{type(self).__name__}({len(self.params)} tensors, {opts})"


def _check(name: str, what: str, value: float, ok: bool) -> None:
    if not ok:
        raise ValueError(message(name, f"invalid {what}: {value!r}", source.here()))


class SGD(Optimizer):
    r"""Stochastic gradient descent with optional momentum and weight decay (PyTorch's rule).

        g = grad + weight_decay * p
        buf = g (first step), then buf = momentum * buf + g
        p -= lr * buf          (p -= lr * g when momentum == 0)

    Args:
        params: the tensors to train, e.g. `model.parameters()`.
        lr: the learning rate.
        momentum: momentum factor (default 0).
        weight_decay: L2 penalty added to the gradient (default 0).

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = tg.optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward()     # dL/dw = 2w = [2, 4]
        >>> opt.step()
        >>> w
        tensor([0.8, 1.6], requires_grad=True)
    """

    def __init__(self, params: Iterable[Tensor], lr: float, momentum: float = 0.0,
                 weight_decay: float = 0.0) -> None:
        _check("SGD", "learning rate", lr, lr >= 0.0)
        _check("SGD", "momentum", momentum, momentum >= 0.0)
        _check("SGD", "weight_decay", weight_decay, weight_decay >= 0.0)
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay})
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay

    def _update(self, p: np.ndarray, g: np.ndarray, state: dict[str, Any]) -> np.ndarray:
        if self.weight_decay:
            g = g + self.weight_decay * p
        if self.momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = g.copy()
            else:
                buf *= self.momentum
                buf += g
            g = buf
        return self.lr * g


class Adam(Optimizer):
    r"""Adam (Kingma & Ba), step for step as `torch.optim.Adam`.

        g = grad + weight_decay * p
        m = beta1 * m + (1 - beta1) * g;      v = beta2 * v + (1 - beta2) * g**2
        p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params: the tensors to train.
        lr: the learning rate (default 1e-3).
        betas: decay rates of the first and second moment estimates (default (0.9, 0.999)).
        eps: added to the denominator for stability (default 1e-8).
        weight_decay: L2 penalty added to the gradient (default 0; not AdamW).

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tg.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()                   # the first step moves each weight by about lr
        >>> w
        tensor([ 0.9, -1.9], requires_grad=True)
    """

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        _check("Adam", "learning rate", lr, lr >= 0.0)
        _check("Adam", "beta1", betas[0], 0.0 <= betas[0] < 1.0)
        _check("Adam", "beta2", betas[1], 0.0 <= betas[1] < 1.0)
        _check("Adam", "eps", eps, eps >= 0.0)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay})
        self.lr, self.betas, self.eps, self.weight_decay = lr, tuple(betas), eps, weight_decay

    def _update(self, p: np.ndarray, g: np.ndarray, state: dict[str, Any]) -> np.ndarray:
        b1, b2 = self.betas
        if self.weight_decay:
            g = g + self.weight_decay * p
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p)
            state["exp_avg_sq"] = np.zeros_like(p)
        state["step"] += 1
        t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        step_size = self.lr / (1 - b1 ** t)
        denom = np.sqrt(v) / np.sqrt(1 - b2 ** t) + self.eps
        return step_size * (m / denom)
