"""`tg.autograd`: PyTorch's `torch.autograd` names (`Function`, `grad`, `backward`, `gradcheck`).

`tg.autograd.Function` is the PyTorch flavour of `tg.Function`: its `forward` and
`backward` receive and return Tensors (the core's receive numpy arrays), so a custom
op written for PyTorch runs as it is. It adapts the two methods and nothing else: the
node, saving for backward and the version checks are the core's.
Sits beside nn/optim/data: imports `tinygrad_edu.core` only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import core
from .core.grad_mode import enable_grad, no_grad, set_grad_enabled
from .core.saved import saved_tensors_hooks
from .core.tensor import Tensor

__all__ = [
    "Function",
    "grad",
    "backward",
    "gradcheck",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "functional",
    "graph",
]

grad = core.grad
gradcheck = core.gradcheck


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
) -> None:
    """`torch.autograd.backward`: `t.backward(g)` for each tensor (and its gradient)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors] * len(tensors)
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        last = i == len(tensors) - 1
        t.backward(g, retain_graph=retain_graph if last else True, create_graph=create_graph)


def _wrap(x: Any) -> Any:
    return Tensor.wrap(x) if isinstance(x, np.ndarray) else x


def _unwrap(x: Any, keep_tensors: bool) -> Any:
    return np.asarray(x) if isinstance(x, Tensor) and not keep_tensors else x


def _tensor_forward(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with no_grad():  # as in PyTorch: forward's own ops are not recorded
            out = fn(ctx, *[_wrap(a) for a in args], **kwargs)
        return (
            tuple(_unwrap(o, False) for o in out) if isinstance(out, tuple) else _unwrap(out, False)
        )

    return forward


def _tensor_backward(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def backward(ctx: Any, *grads: Any) -> Any:
        graph = any(isinstance(g, Tensor) for g in grads)  # create_graph=True: keep recording
        with set_grad_enabled(graph):
            out = fn(ctx, *[_wrap(g) for g in grads])
        if isinstance(out, tuple):
            return tuple(_unwrap(o, graph) for o in out)
        return _unwrap(out, graph)

    return backward


class Function(core.Function):
    r"""A custom op written as in PyTorch: `forward(ctx, *tensors)`, `backward(ctx, grad)`.

    Rules: call it with `MyOp.apply(...)`. `forward` gets Tensors and returns one;
    nothing it computes is recorded. `ctx.save_for_backward(t)` keeps tensors that
    `ctx.saved_tensors` gives back in `backward`, which gets the upstream gradient as
    a Tensor and returns one gradient per input (None for inputs that need none).

    Example:
        >>> import tinygrad_edu as tg
        >>> class Square(tg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x.pow(2)
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (x,) = ctx.saved_tensors
        ...         return grad_output * 2 * x
        >>> x = tg.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).sum().backward()
        >>> x.grad
        tensor([6.])
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, adapt in (("forward", _tensor_forward), ("backward", _tensor_backward)):
            method = cls.__dict__.get(name)
            if method is not None:
                fn = method.__func__ if isinstance(method, (staticmethod, classmethod)) else method
                setattr(cls, name, staticmethod(adapt(fn)))

    def save_for_backward(self, *tensors: Any) -> None:
        # the arrays themselves, so that the core tracks their versions as for its own ops
        super().save_for_backward(*[np.asarray(t) if isinstance(t, Tensor) else t for t in tensors])

    @property
    def saved_tensors(self) -> tuple:
        return tuple(_wrap(x) for x in super().saved_tensors)

    def mark_non_differentiable(self, *tensors: Any) -> None:
        pass  # integer outputs never require grad here anyway

    def set_materialize_grads(self, value: bool) -> None:
        pass  # gradients reaching backward are always materialised


# a base class for learners' ops, not an op of the package: static export must not find it
core.function.OPS.pop("Function", None)


class _Graph:
    """`tg.autograd.graph`: hooks on what the graph saves for backward."""

    saved_tensors_hooks = saved_tensors_hooks


graph = _Graph()


class _Functional:
    """`tg.autograd.functional.jacobian` / `hessian`, built on `tg.grad`."""

    @staticmethod
    def jacobian(func: Callable, inputs: Any, create_graph: bool = False) -> Any:
        """d func(inputs) / d inputs, shape output.shape + input.shape (one tensor input)."""
        single = isinstance(inputs, Tensor)
        xs = [inputs] if single else list(inputs)
        xs = [x.detach().requires_grad_() for x in xs]
        with enable_grad():
            out = func(*xs)
            flat = out.reshape(-1)
            rows: list[list[Any]] = [[] for _ in xs]
            for i in range(flat.shape[0]):
                gs = grad(
                    flat[i], xs, retain_graph=True, create_graph=create_graph, allow_unused=True
                )
                for r, g, x in zip(rows, gs, xs):
                    r.append(g if g is not None else core.zeros_like(x))
        jac = [core.stack(r).reshape(out.shape + x.shape) for r, x in zip(rows, xs)]
        return jac[0] if single else tuple(jac)

    @staticmethod
    def hessian(func: Callable, inputs: Tensor) -> Tensor:
        """The matrix of second derivatives of a scalar `func` at `inputs` (one tensor)."""

        def first(x: Tensor) -> Tensor:
            (g,) = grad(func(x), x, create_graph=True)
            return g

        return _Functional.jacobian(first, inputs)


functional = _Functional()
