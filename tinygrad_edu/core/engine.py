"""The backward engine: `backward()`, `tg.grad()` and the step generator behind both.

1. Topologically sort the nodes reachable from the output (an explicit stack, so a
   100,000-op chain needs no recursion).
2. Visit them output-first; each node turns the gradient of its output into gradients
   of its inputs (its `backward` rule), and those are *added* into the inputs' slots:
   `+=` is the chain rule's sum over paths, which is why `a + a` gives 2.
3. At a leaf (`AccumulateGrad`) the gradient is added into `.grad`.

Everything runs on numpy arrays unless `create_graph=True`, where the backward rules
run on Tensors with grad enabled, so the gradients have graphs of their own.
Core layer.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from . import source
from .errors import BackwardError, ShapeError, message
from .function import AccumulateGrad, Node, _grad_node
from .grad_fit import count_error, fit_gradient
from .grad_mode import _thread, _using_grad
from .tensor import Tensor, _to_array


def toposort(roots: Sequence[Node]) -> list[Node]:
    """Nodes reachable from `roots`, each before every node it sends gradients to."""
    order: list[Node] = []
    visited: set[Node] = set()  # nodes hash by identity
    stack: list[tuple[Node, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for nxt in reversed(node._next):
            if nxt is not None and nxt not in visited:
                stack.append((nxt, False))
    order.reverse()
    return order


def _root(t: Tensor, gradient: Any, create_graph: bool, op: str) -> tuple[Node, Any]:
    if not isinstance(t, Tensor):
        raise TypeError(message(op, f"expected a Tensor, got {type(t).__name__}", source.here()))
    if not t.requires_grad:
        raise BackwardError(
            message(
                op,
                f"{t._label()} does not require grad and has no grad_fn, so there is nothing "
                "to differentiate",
                source.here(),
                "create the inputs with requires_grad=True, outside any `with tg.no_grad():` block",
            )
        )
    if gradient is None:
        if t._data.size != 1:
            name = t.name or "y"
            raise BackwardError(
                message(
                    op,
                    f"{t._label(shape=False)} has shape {t.shape!r}, but backward() without `gradient` needs "
                    "a single number",
                    t.grad_fn.site if t.grad_fn is not None else source.here(),
                    f"call {name}.sum().backward(), or pass gradient= a tensor of shape {t.shape!r}",
                )
            )
        g = np.empty(t.shape, dtype=t.dtype)
        g.fill(1)  # np.ones is a slow Python wrapper
    else:
        g = _to_array(gradient, None, op)
        if g.shape != t.shape:
            raise ShapeError(
                message(
                    op,
                    f"gradient has shape {g.shape!r} but {t._label(shape=False)} has shape {t.shape!r}",
                    source.here(),
                    "pass a gradient of the same shape as the tensor",
                )
            )
        g = g.astype(t.dtype, copy=False)
    if create_graph:
        g = gradient if isinstance(gradient, Tensor) else Tensor._make(g)
    node = _grad_node(t)
    return node, g


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a whole backward pass runs.

    NOTE: backward frees the graph and creates no reference cycles, so the collector has
    nothing to find; its full-heap scans made a 100,000-op backward several times slower.
    (Not inside `steps`: a paused step generator must not leave the collector off.)
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def backward(
    tensor: Tensor,
    gradient: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
) -> None:
    """Accumulate d(tensor)/d(leaf) into every leaf's `.grad` (see `Tensor.backward`)."""
    root = _root(tensor, gradient, create_graph, "backward")
    with _gc_paused():
        for _ in steps(
            [root],
            retain_graph=create_graph if retain_graph is None else retain_graph,
            create_graph=create_graph,
        ):
            pass


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple:
    r"""Return d(outputs)/d(inputs) without touching any `.grad`.

    Rules: `outputs` and `inputs` are Tensors or sequences of them; `grad_outputs`
    plays the role of `gradient` in `backward()`, one per output. The result is a
    tuple with one Tensor per input (None for an unused input when `allow_unused`).

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor(3.0, requires_grad=True)
        >>> (dy,) = tg.grad(x ** 3, x, create_graph=True)
        >>> dy, tg.grad(dy, x)[0]
        (tensor(27., grad_fn=<MulBackward>), tensor(18.))
    """
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    gouts = (
        [grad_outputs] * len(outs)
        if grad_outputs is None or isinstance(grad_outputs, Tensor)
        else list(grad_outputs)
    )
    roots = [_root(o, g, create_graph, "grad") for o, g in zip(outs, gouts)]
    nodes = [_wanted_node(k, t) for k, t in enumerate(ins)]
    targets = dict.fromkeys(map(id, nodes))
    captured = {}
    retain = create_graph if retain_graph is None else retain_graph
    with _gc_paused():
        for node, g in steps(
            roots, retain_graph=retain, create_graph=create_graph, capture=targets
        ):
            captured[id(node)] = g
    return tuple(_gradient_of(t, node, captured, allow_unused) for t, node in zip(ins, nodes))


def _wanted_node(k: int, t: Any) -> Node:
    """The node whose gradient `tg.grad` returns for input `k`; a clear error if none can be."""
    if not isinstance(t, Tensor):
        raise TypeError(
            message(
                "grad",
                f"input {k} is a {type(t).__name__}, not a Tensor",
                source.here(),
                "pass the tensors to differentiate by",
            )
        )
    if not t.requires_grad:
        raise BackwardError(
            message(
                "grad",
                f"input {k}, {t._label()}, does not require grad, so nothing was "
                "recorded for it and it has no gradient",
                source.here(),
                "create it with requires_grad=True, outside any `with tg.no_grad():` block",
            )
        )
    return _grad_node(t)


def _gradient_of(t: Tensor, node: Node, captured: dict, allow_unused: bool) -> Tensor | None:
    """The gradient backward captured at `node` for input `t`, as a Tensor (None if unused
    and allowed)."""
    g = captured.get(id(node))
    if g is None:
        if allow_unused:
            return None
        raise BackwardError(
            message(
                "grad",
                f"{t._label()} was not used to compute the outputs, so it has no gradient",
                source.here(),
                "pass allow_unused=True to get None for it instead",
            )
        )
    return g if isinstance(g, Tensor) else Tensor._make(g)


def steps(
    roots: list[tuple[Node, Any]],
    retain_graph: bool = False,
    create_graph: bool = False,
    capture: dict | None = None,
) -> Iterator[tuple[Node, Any]]:
    """Run backward node by node, yielding `(node, grad_of_its_output)` after each one.

    With `capture` (ids of nodes), the gradients reaching those nodes are yielded only
    and leaves' `.grad` is left alone (this is `tg.grad`); otherwise every node is
    yielded after it ran (this is what `tg.debug.backward_steps` shows).
    """
    grads: dict[Node, Any] = {}  # node -> d(root)/d(its output), summed over paths so far
    here = _thread.state  # this thread's observers: a thread-local read costs as much as an op
    for node, g in roots:
        grads[node] = g if node not in grads else grads[node] + g
    with _using_grad(create_graph):  # create_graph: the backward pass is recorded too
        # topological order: a node runs only after every node that sends it a gradient,
        # so the gradient it passes on is complete
        for node in toposort(list(grads)):
            g = grads.pop(node, None)
            if g is None:
                continue  # no gradient reaches it (it only fed a branch that needs none)
            if node._pre_hooks or node._retained or type(node) is AccumulateGrad:
                g = _received(node, g, create_graph)  # hooks and retain_grad see it first
            if capture is not None and id(node) in capture:
                yield node, g  # tg.grad asked for this one
            if type(node) is AccumulateGrad:  # a leaf: the end of every path to it
                alone = node._unshared is g  # no one else holds g: .grad may be g itself
                node._unshared = None
                if capture is None:
                    _accumulate(node.variable, g, create_graph, alone)  # leaf.grad += g
                    yield node, g
                continue
            # the chain rule, one step: the op's backward rule turns d(root)/d(its output)
            # into d(root)/d(each input) ...
            for nxt, gi in zip(node._next, _backward_of(node, g, create_graph, here)):
                if gi is not None:
                    # ... and where paths meet, the gradients add up: why `a + a` gives 2
                    grads[nxt] = gi if nxt not in grads else grads[nxt] + gi
            if not retain_graph:
                node._saved = None  # what forward saved is used up (a second backward explains)
            if capture is None:
                yield node, g


def _received(node: Node, g: Any, create_graph: bool) -> Any:
    """The gradient as the node sees it: after hooks, and kept where `retain_grad` asked."""
    if type(g) is not np.ndarray and not isinstance(g, Tensor):
        g = np.asarray(g)  # numpy turns 0-d sums (`g + g`) into scalars
    hooks = node.variable._hooks if type(node) is AccumulateGrad else node._pre_hooks
    if hooks:
        g = _run_hooks(hooks, g, create_graph)
    if node._retained is not None:
        kept = node._retained()
        if kept is not None:
            _accumulate(kept, g, create_graph)
    return g


def _backward_of(node: Node, g: Any, create_graph: bool, here: Any) -> list:
    """Run the node's backward rule: one gradient per input, each in its input's shape and
    dtype (None where the input needs none); observers are told what it sent."""
    if type(g) is not np.ndarray and not (create_graph and isinstance(g, Tensor)):
        g = np.asarray(g)  # numpy turns 0-d sums (`g + g`) into scalars
    if create_graph:
        node._as_tensors = True  # saved values come back as Tensors, so backward records
        try:
            grads_in = node.backward(node, g)
        finally:
            node._as_tensors = False
    else:
        grads_in = node.backward(node, g)
    if type(grads_in) is not tuple:
        grads_in = tuple(grads_in) if isinstance(grads_in, list) else (grads_in,)
    if len(grads_in) != len(node._next):
        raise count_error(node.name, node.site, len(grads_in), len(node._next))
    fitted = []
    for nxt, gi, (shape, dtype) in zip(node._next, grads_in, node._inputs_meta):
        if nxt is None or gi is None:
            gi = None
        elif type(gi) is not np.ndarray or gi.shape != shape or gi.dtype is not dtype:
            gi = _fit(gi, shape, dtype, node, create_graph)  # broadcast, a number, a Tensor
        fitted.append(gi)
    if node._own_rule and not create_graph and not here.observers:
        _mark_unshared(node, g, fitted)
    if here.observers:  # anomaly mode, breakpoints, the stepper, tracing
        for obs in tuple(here.observers):
            hook = getattr(obs, "on_backward", None)
            if hook is not None:
                hook(node, g, fitted)
    return fitted


def _mark_unshared(node: Node, g: Any, fitted: list) -> None:
    """Tell each leaf which gradient on its way to it no one else holds: one this rule made
    new (not its `g` itself, not a view, not sent to two inputs). The leaf keeps that one as
    its `.grad` without a copy, as PyTorch's AccumulateGrad does with a gradient no one else
    refers to: copying a big weight's gradient into fresh memory costs as much as a matmul's
    share of a step (150 us for a 784x128 float32 gradient)."""
    for nxt, gi in zip(node._next, fitted):
        if type(nxt) is AccumulateGrad and gi is not None and gi is not g and gi.base is None:
            if sum(other is gi for other in fitted) == 1:
                nxt._unshared = gi


def _fit(gi: Any, shape: tuple, dtype: Any, node: Node, create_graph: bool) -> Any:
    """A gradient a rule returned, made an array (a Tensor under create_graph) of its
    input's shape and dtype: summed over the axes forward broadcast."""
    if create_graph:
        if not isinstance(gi, Tensor):
            gi = Tensor._make(np.asarray(gi))
    elif type(gi) is not np.ndarray:
        # a learner's backward may compute with Tensors or return numbers
        gi = gi._data if isinstance(gi, Tensor) else np.asarray(gi)
    if gi.shape != shape or gi.dtype is not dtype:
        gi = fit_gradient(gi, shape, node.name, lambda: node.site, dtype)
    return gi


def _run_hooks(hooks: list | None, g: Any, create_graph: bool) -> Any:
    if not hooks:
        return g
    for hook in list(hooks):
        out = hook(g if isinstance(g, Tensor) else Tensor._make(g))
        if out is None:
            continue
        if not isinstance(out, (Tensor, np.ndarray)):
            name = getattr(hook, "__name__", type(hook).__name__)
            raise TypeError(
                message(
                    "hook",
                    f"hook {name!r} returned a {type(out).__name__}, not a Tensor",
                    source.here(),
                    "return the new gradient as a Tensor (g * 2, say), or None to keep it",
                )
            )
        arr = out._data if isinstance(out, Tensor) else np.asarray(out)
        if arr.shape != g.shape:
            name = getattr(hook, "__name__", type(hook).__name__)
            raise ShapeError(
                message(
                    "hook",
                    f"hook {name!r} returned a gradient of shape {arr.shape!r} for a "
                    f"gradient of shape {g.shape!r}",
                    source.here(),
                    "a hook may change the gradient's values, not its shape; return None to keep it",
                )
            )
        g = out if create_graph else arr
    return g


def _accumulate(t: Tensor, g: Any, create_graph: bool, unshared: bool = False) -> None:
    """`t.grad += g`, keeping t's dtype. The first gradient is copied (never aliased) unless
    nothing else holds it (`unshared`) and no hook on `t` has seen it."""
    if create_graph:
        gt = g if isinstance(g, Tensor) else Tensor._make(g)
        t._grad = gt if t._grad is None else t._grad + gt
        return
    if g.dtype != t._data.dtype:
        g, unshared = g.astype(t._data.dtype), True
    if t._grad is None:
        t._grad = Tensor._make(g if unshared and not t._hooks else np.array(g, copy=True))
    else:
        t._grad._data = np.asarray(t._grad._data + g)  # 0-d + 0-d is a numpy scalar
