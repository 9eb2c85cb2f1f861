"""Optimizers: `SGD`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`, following PyTorch's algorithms;
learning-rate schedules in `tg.optim.lr_scheduler`.

An optimizer holds `param_groups` (each a dict: its parameters and hyper-parameters,
so one model can train its parts at different rates) and, per parameter, a `state`
dict (momentum buffers, Adam's moments). `step()` updates each parameter *in place*
under `tg.no_grad()`, the way `torch.optim` does: the tensors stay the same objects,
and their version counters move, so calling `step()` between a forward pass and its
`backward()` raises the in-place error instead of silently using new weights.
Core layer: numpy, the standard library and `tinygrad_edu.core` only (no `tg.nn`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import message
from ..core.grad_mode import enable_grad, no_grad
from ..core.tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]


class Optimizer:
    r"""Base class: keeps `param_groups`, per-parameter `state`, and the `defaults`.

    Rules: `params` is an iterable of leaf tensors (usually `model.parameters()`), or
    of dicts `{"params": [...], "lr": ...}` (parameter groups: what a dict leaves out
    comes from the defaults). Each tensor is kept once, in the given order; `params`
    lists them all. Parameters whose `.grad` is None are skipped by `step()`.
    Subclasses implement `_update(p, grad, state, group)`, which `step()` calls for each
    parameter inside `tg.no_grad()` and which returns the amount to subtract.

    Raises:
        ValueError: an empty parameter list, or a non-leaf / non-tensor in it.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(
                message(
                    name,
                    "params must be an iterable of tensors, got one Tensor",
                    source.here(),
                    f"wrap it in a list: {name}([w], ...)",
                )
            )
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, dict[str, Any]] = {}
        params = list(params)
        groups = params if params and isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)
        if not self.params:
            raise ValueError(
                message(
                    name,
                    "got an empty parameter list",
                    source.here(),
                    "did the model register its layers? list(model.parameters()) "
                    "should not be empty (a generator can be used only once)",
                )
            )

    @property
    def params(self) -> list[Tensor]:
        """Every parameter of every group, in order."""
        return [p for group in self.param_groups for p in group["params"]]

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add `{"params": [...], **hyper-parameters}`; missing hyper-parameters are the defaults."""
        name = type(self).__name__
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for p in self.params}
        kept = []
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(
                    message(
                        name,
                        f"params[{i}] is a {type(p).__name__}, not a Tensor",
                        source.here(),
                        "pass model.parameters()",
                    )
                )
            if p.grad_fn is not None:
                raise ValueError(
                    message(
                        name,
                        f"params[{i}] is not a leaf (it was computed by "
                        f"{p.grad_fn.name}), so it can not be optimized",
                        source.here(),
                        "optimize the tensors you created with requires_grad=True",
                    )
                )
            if id(p) not in seen:  # a shared parameter is updated once per step
                seen.add(id(p))
                kept.append(p)
        self.param_groups.append({**self.defaults, **group, "params": kept})

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's `.grad`: None (default, as PyTorch) or zeros."""
        for p in self.params:
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = np.zeros_like(p)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a `.grad`, in place and without recording a graph.

        `closure` (optional) re-computes the loss with gradients and returns it, as in PyTorch.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    g = np.asarray(g, dtype=p.dtype)
                    if group.get("maximize"):
                        g = -g
                    state = self.state.setdefault(p, {})
                    p.sub_(self._update(np.asarray(p), g, state, group))
        return loss

    def _update(
        self, p: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]
    ) -> np.ndarray:
        """Return the amount to subtract from `p` (and update `state`)."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """`{"state": {index: {name: copy}}, "param_groups": [...]}`, indexed like `params`."""
        index = {id(p): i for i, p in enumerate(self.params)}
        state = {
            index[id(p)]: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
            for p, s in self.state.items()
        }
        groups = [
            {
                **{k: v for k, v in g.items() if k != "params"},
                "params": [index[id(p)] for p in g["params"]],
            }
            for g in self.param_groups
        ]
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` returned (for the same parameters, in the same order)."""
        params = self.params
        for group, saved in zip(self.param_groups, state_dict["param_groups"]):
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {
            params[int(i)]: {
                k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in s.items()
            }
            for i, s in state_dict["state"].items()
        }

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.defaults.items())
        return f"{type(self).__name__}({len(self.params)} tensors, {opts})"


def _check(name: str, what: str, value: float, ok: bool) -> None:
    if not ok:
        raise ValueError(message(name, f"invalid {what}: {value!r}", source.here()))


class SGD(Optimizer):
    r"""Stochastic gradient descent with momentum, Nesterov and weight decay (PyTorch's rule).

        g = grad + weight_decay * p
        buf = g (first step), then buf = momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov) or buf;   p -= lr * g

    Args:
        params: the tensors to train, e.g. `model.parameters()` (or parameter groups).
        lr: the learning rate (default 1e-3, as PyTorch).
        momentum: momentum factor (default 0).
        dampening: scales the new gradient in the momentum buffer (default 0).
        weight_decay: L2 penalty added to the gradient (default 0).
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: climb the objective instead of descending.

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = tg.optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward()     # dL/dw = 2w = [2, 4]
        >>> opt.step()
        >>> w
        tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check("SGD", "learning rate", lr, lr >= 0.0)
        _check("SGD", "momentum", momentum, momentum >= 0.0)
        _check("SGD", "weight_decay", weight_decay, weight_decay >= 0.0)
        _check(
            "SGD",
            "nesterov (it needs momentum > 0 and dampening = 0)",
            nesterov,
            not nesterov or (momentum > 0 and dampening == 0),
        )
        super().__init__(
            params,
            {
                "lr": lr,
                "momentum": momentum,
                "dampening": dampening,
                "weight_decay": weight_decay,
                "nesterov": nesterov,
                "maximize": maximize,
            },
        )

    def _update(self, p, g, state, group):
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = g.copy()
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * g
            g = g + momentum * buf if group["nesterov"] else buf
        return group["lr"] * g


class Adam(Optimizer):
    r"""Adam (Kingma & Ba), step for step as `torch.optim.Adam`.

        g = grad + weight_decay * p
        m = beta1 * m + (1 - beta1) * g;      v = beta2 * v + (1 - beta2) * g**2
        p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params: the tensors to train (or parameter groups).
        lr: the learning rate (default 1e-3).
        betas: decay rates of the first and second moment estimates (default (0.9, 0.999)).
        eps: added to the denominator for stability (default 1e-8).
        weight_decay: L2 penalty added to the gradient (default 0; see AdamW).
        amsgrad: use the largest v seen so far (Reddi et al.).
        maximize: climb the objective instead of descending.

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = tg.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()                   # the first step moves each weight by about lr
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _decoupled = False  # AdamW: weight decay shrinks p directly instead of joining the gradient

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        name = type(self).__name__
        _check(name, "learning rate", lr, lr >= 0.0)
        _check(name, "beta1", betas[0], 0.0 <= betas[0] < 1.0)
        _check(name, "beta2", betas[1], 0.0 <= betas[1] < 1.0)
        _check(name, "eps", eps, eps >= 0.0)
        super().__init__(
            params,
            {
                "lr": lr,
                "betas": tuple(betas),
                "eps": eps,
                "weight_decay": weight_decay,
                "amsgrad": amsgrad,
                "maximize": maximize,
            },
        )

    def _update(self, p, g, state, group):
        (b1, b2), lr, wd = group["betas"], group["lr"], group["weight_decay"]
        decay = 0.0
        if wd and self._decoupled:
            decay = lr * wd * p  # AdamW: p *= 1 - lr * wd, before the Adam step
        elif wd:
            g = g + wd * p
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p)
            state["exp_avg_sq"] = np.zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(p)
        state["step"] += 1
        t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            v = state["max_exp_avg_sq"]
        step_size = lr / (1 - b1**t)
        denom = np.sqrt(v) / np.sqrt(1 - b2**t) + group["eps"]
        return decay + step_size * (m / denom)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay,
    then the Adam step on the plain gradient. Default weight_decay 0.01, as in PyTorch.

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([1.0], requires_grad=True)
        >>> opt = tg.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> (w * 0).sum().backward()     # no gradient: only the decay acts
        >>> opt.step()
        >>> w
        tensor([0.9500], requires_grad=True)
    """

    _decoupled = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class RMSprop(Optimizer):
    r"""RMSprop (Hinton), as `torch.optim.RMSprop`.

    v = alpha * v + (1 - alpha) * g**2
    avg = sqrt(v - mean_g**2) (centered) or sqrt(v), plus eps
    buf = momentum * buf + g / avg;  p -= lr * buf   (p -= lr * g / avg without momentum)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check("RMSprop", "learning rate", lr, lr >= 0.0)
        _check("RMSprop", "alpha", alpha, alpha >= 0.0)
        _check("RMSprop", "momentum", momentum, momentum >= 0.0)
        super().__init__(
            params,
            {
                "lr": lr,
                "alpha": alpha,
                "eps": eps,
                "weight_decay": weight_decay,
                "momentum": momentum,
                "centered": centered,
                "maximize": maximize,
            },
        )

    def _update(self, p, g, state, group):
        alpha = group["alpha"]
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p)
            if group["momentum"]:
                state["momentum_buffer"] = np.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(p)
        state["step"] += 1
        sq = state["square_avg"]
        sq *= alpha
        sq += (1 - alpha) * g * g
        if group["centered"]:
            ga = state["grad_avg"]
            ga *= alpha
            ga += (1 - alpha) * g
            avg = np.sqrt(sq - ga * ga) + group["eps"]
        else:
            avg = np.sqrt(sq) + group["eps"]
        if group["momentum"]:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += g / avg
            return group["lr"] * buf
        return group["lr"] * (g / avg)


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al.): p -= lr * g / (sqrt(sum of g**2 so far) + eps)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        _check("Adagrad", "learning rate", lr, lr >= 0.0)
        super().__init__(
            params,
            {
                "lr": lr,
                "lr_decay": lr_decay,
                "weight_decay": weight_decay,
                "initial_accumulator_value": initial_accumulator_value,
                "eps": eps,
                "maximize": maximize,
            },
        )

    def _update(self, p, g, state, group):
        if not state:
            state["step"] = 0
            state["sum"] = np.full_like(p, group["initial_accumulator_value"])
        state["step"] += 1
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += g * g
        return clr * (g / (np.sqrt(state["sum"]) + group["eps"]))


from . import lr_scheduler  # noqa: E402 - schedules import Optimizer from here
