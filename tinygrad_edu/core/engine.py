"""The backward engine: the graph's nodes, and the loop that runs them.

1. Topologically sort the nodes reachable from the output (an explicit stack, so a
   100,000-op chain needs no recursion).
2. Visit them output-first; each node runs its own backward step (`Node.run`): it turns
   the gradient of its output into gradients of its inputs, and those are *added* into
   the inputs' slots: `+=` is the chain rule's sum over paths, which is why `a + a` gives 2.
3. At a leaf the step is `AccumulateGrad.run`: the gradient is added into `.grad`.

`backward()` and `tg.grad()` are the same loop (`steps`) in two modes: `tg.grad` collects
the gradients of the inputs it was asked about and leaves every `.grad` alone.
Everything runs on numpy arrays unless `create_graph=True`, where the backward rules
run on Tensors with grad enabled, so the gradients have graphs of their own.
Core layer.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import operator
from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

import tinygrad_edu.core.tensor as _tensor  # imported before Tensor exists: read `.Tensor` when used

from . import saved, source
from .errors import BackwardError, ShapeError, message
from .grad_fit import count_error, fit_gradient
from .grad_mode import ThreadState, _thread

if TYPE_CHECKING:
    from .tensor import Tensor


def backward(
    tensor: Any, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False
) -> None:
    """Accumulate d(tensor)/d(leaf) into every leaf's `.grad` (see `Tensor.backward`)."""
    root = _root(tensor, gradient, create_graph, "backward")
    retain = create_graph if retain_graph is None else retain_graph
    with _gc_paused():
        for _ in steps([root], retain_graph=retain, create_graph=create_graph):
            pass


def _root(t: Any, gradient: Any, create_graph: bool, op: str) -> tuple[Node, Any]:
    """Where backward starts: `t`'s node, and d(t)/d(t), ones of t's shape (or `gradient`)."""
    if not isinstance(t, _tensor.Tensor) or not t._requires_grad:
        raise _root_error(t, op)
    if gradient is None and t._data.size != 1:
        raise _root_error(t, op)
    g: Any = np.ones_like(t._data) if gradient is None else _given_gradient(t, gradient, op)
    if create_graph:
        g = gradient if isinstance(gradient, _tensor.Tensor) else _tensor.Tensor._make(g)
    return grad_node(t), g


def toposort(roots: Sequence[Node]) -> list[Node]:
    """Nodes reachable from `roots`, each before every node it sends gradients to."""
    return [node for node, _ in _toposort_with_edges(roots)]


def _toposort_with_edges(roots: Sequence[Node]) -> list[tuple[Node, tuple[Node | None, ...]]]:
    """`toposort`'s order, each node with its edges (`edges_of`): read once, for the sort
    and for the node's step."""
    order = []
    visited: set[Node] = set()  # nodes hash by identity
    # (node, None): to visit; (node, edges): every node it sends gradients to is placed
    stack: list[tuple[Node, Any]] = [(r, None) for r in reversed(roots)]
    while stack:
        entry = stack.pop()
        node, edges = entry
        if edges is not None:
            order.append(entry)
            continue
        if node in visited:
            continue
        visited.add(node)
        edges = edges_of(node)
        stack.append((node, edges))
        for nxt in reversed(edges):
            if nxt is not None and nxt not in visited:
                stack.append((nxt, None))
    order.reverse()
    return order


class Pass(NamedTuple):
    """What every node's step needs to know about the backward pass it is part of."""

    create_graph: bool  # the rules run on Tensors, so the gradients have graphs too
    accumulate: bool  # leaves add into `.grad` (False for `tg.grad`, which only reads)
    here: ThreadState  # this thread's observers (a thread-local read costs as much as an op)
    grads: dict[Node, Any]  # node -> d(root)/d(its output), summed over paths so far


def steps(
    roots: list[tuple[Node, Any]],
    retain_graph: bool = False,
    create_graph: bool = False,
    capture: dict[int, Any] | None = None,
) -> Generator[tuple[Node, Any], None, None]:
    """Run backward node by node, yielding `(node, grad_of_its_output)` after each one.

    With `capture` (a dict whose keys are ids of nodes), the gradient reaching each of
    those nodes is stored under its id and no leaf's `.grad` is touched (this is
    `tg.grad`); `tg.debug.backward_steps` shows the steps one by one.
    """
    p = Pass(create_graph, capture is None, _thread.state, {})
    grads = p.grads  # node -> d(root)/d(its output), summed over paths so far
    for node, g in roots:
        grads[node] = grads[node] + g if node in grads else g
    here = p.here
    grad_mode, here.enabled = here.enabled, create_graph  # create_graph: backward records too
    try:
        # topological order: a node runs only after every node that sends it a gradient,
        # so the gradient it passes on is complete
        for node, edges in _toposort_with_edges(list(grads)):
            g = grads.pop(node, None)
            if g is None:
                continue  # no gradient reaches it (it only fed a branch that needs none)
            if node._pre_hooks or node._retained is not None:
                g = _received(node, g, create_graph)  # hooks and retain_grad see it first
            if capture is not None and id(node) in capture:
                capture[id(node)] = g  # tg.grad asked for this one
            # the chain rule, one step: the node's rule turns d(root)/d(its output) into
            # d(root)/d(each input), added into each input's slot in `grads`
            node.run(g, p, edges)
            if not retain_graph:
                node._saved = None  # what forward saved is used up (a second backward explains)
            yield node, g
    finally:
        here.enabled = grad_mode


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


# --- the nodes: what `grad_fn` points at, each running its own backward step --------


def edges_of(node: Node) -> tuple[Node | None, ...]:
    """Per input of `node`, the node its gradient goes to (None: it needs none): `node._next`.
    (The engine calls it straight: a property read costs a call through C on Python 3.11.)"""
    n = node._arity
    if n == 1:
        return (node._edge0,)
    if n == 2:
        return (node._edge0, node._edge1)
    return (node._edge0, node._edge1, *node._edges_more)[:n]


class Node:
    """What `grad_fn` points at: a backward step with edges toward the inputs.

    The node view: the graph, debug and widget layers read a node only through the
    read-only attributes below (`op`, `name`, `next_functions`, `creation_number`,
    `module_path`, `input_meta`, `output_meta`, `saved_values()`, `freed`, `site`,
    `output()`, `mark`, `mark_text`), never through the private fields `apply` fills
    in; docs/architecture.md ("The node view") lists them.
    """

    # per input, the node its gradient goes to (None: it needs none), read as `_next`.
    # NOTE: fields of the node, not a tuple it holds: Python's cyclic collector walks every
    # object that holds others, a tuple of nodes was one more per op, and in a 100,000-op
    # graph the collector's walks took a third of the time (benchmarks/README.md, W3)
    _arity = 0  # how many inputs
    _edge0: Node | None = None
    _edge1: Node | None = None
    _edges_more: tuple[Node | None, ...] = ()  # the third input's onwards (where, cat)
    _code: Any = None  # where the learner built it: code object and bytecode offset
    _offset = 0
    _scope: tuple[Any, ...] = ()  # module path while an nn.Module ran, e.g. ("net", "0")
    _id = 0  # creation counter (set by `apply` and `AccumulateGrad`)
    _inputs_meta: tuple[Any, ...] = ()
    _out_meta: tuple[Any, ...] | None = None
    _saved: tuple[Any, ...] | None = ()
    _mark: str | None = None
    _mark_text = ""
    _pre_hooks: list[Any] | None = None  # hooks on a non-leaf's gradient (`register_hook`)
    _retained: Any = None  # weakref to the output that called `retain_grad()`
    _own_rule = False  # the package's own ops (Function sets it): see `_mark_unshared`
    _to_leaf = False  # True when an input is a leaf (`apply` sets it)
    _as_tensors = False  # saved values come back as Tensors (create_graph)
    # the op's display name, "Mul": a class attribute (set per subclass below), so the graph
    # walks over 100,000s of nodes read it as cheaply as a field; `name` derives from it
    op = "Node"

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        """The rule: d(root)/d(output) in, one d(root)/d(input) per input out (`Function`)."""
        raise NotImplementedError

    _next = property(
        edges_of,
        doc="Per input, the node its gradient goes to (None: it needs none).",
    )

    def run(self, g: Any, p: Pass, edges: tuple[Node | None, ...]) -> None:
        """One step of backward: the gradient of this node's output in; each input's
        gradient, in its input's shape and dtype, added into the slot (`p.grads`) of the
        node its input's edge goes to (`edges`, this node's `_next`)."""
        if type(g) is not _ndarray and not (p.create_graph and isinstance(g, _tensor.Tensor)):
            g = np.asarray(g)  # numpy turns 0-d sums (`g + g`) into scalars
        grads_in = _on_tensors(self, g) if p.create_graph else self.backward(self, g)
        if type(grads_in) is not tuple:
            grads_in = tuple(grads_in) if isinstance(grads_in, list) else (grads_in,)
        if len(grads_in) != len(edges):
            raise count_error(self.name, self.site, len(grads_in), len(edges))
        if p.here.observers:
            grads_in = _shown(self, g, grads_in, p, edges)  # observers look at them first
        # a leaf may keep a gradient no one else holds as its `.grad`, without a copy
        to_leaf = self._to_leaf and _unshared_ok(self, g, grads_in, p)
        # under create_graph every gradient is a Tensor, even an array a rule made (zeros)
        grads, tensors = p.grads, p.create_graph
        for nxt, gi, (shape, dtype) in zip(edges, grads_in, self._inputs_meta):
            if nxt is None or gi is None:
                continue  # this input needs no gradient
            if tensors or type(gi) is not _ndarray or gi.shape != shape or gi.dtype is not dtype:
                gi = _fit(gi, shape, dtype, self, tensors)  # broadcast, a number, a Tensor
            # where paths meet, the gradients add up: why `a + a` gives 2
            grads[nxt] = grads[nxt] + gi if nxt in grads else gi
            if to_leaf and type(nxt) is AccumulateGrad and gi is not g and gi.base is None:
                nxt._unshared = gi  # new, not a view, and sent nowhere else

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.op = cls.__name__

    @property
    def name(self) -> str:
        """The grad_fn's name, as PyTorch prints it (`MulBackward`)."""
        return f"{self.op}Backward"

    @property
    def next_functions(self) -> tuple[Any, ...]:
        """`((node, 0), ...)`, one pair per input; `(None, 0)` where no grad is needed."""
        return tuple(zip(self._next, itertools.repeat(0)))

    input_nodes = property(
        edges_of,
        doc="`(node, ...)`, one per input, None where no grad is needed: `next_functions` "
        "without PyTorch's pairs (a graph walk's cheaper read).",
    )

    # NOTE: the attributes every graph walk reads from each of 100,000s of nodes are
    # properties made of `attrgetter`: read-only like the others, but with no Python call
    creation_number = property(
        operator.attrgetter("_id"),
        doc="Nodes are numbered in the order they were made (one counter per process).",
    )
    module_path = property(
        operator.attrgetter("_scope"),
        doc='The `nn.Module` path that built this node, `("net", "0")`, or `()` outside any.',
    )

    @property
    def input_meta(self) -> tuple[Any, ...]:
        """`((shape, dtype), ...)`, one per positional input (None, None for a non-array)."""
        return self._inputs_meta

    @property
    def output_meta(self) -> tuple[Any, ...] | None:
        """`(shape, dtype)` of the output, kept even when the output tensor is gone."""
        return self._out_meta

    @property
    def freed(self) -> bool:
        """True once a backward without `retain_graph=True` freed the saved values."""
        return self._saved is None

    def saved_values(self) -> tuple[saved.SavedValue, ...]:
        """What `save_for_backward` kept, for looking at (no version check; `()` if freed).

        Backward rules read `saved_tensors` instead, which checks in-place changes.
        """
        return saved.values(self)

    @property
    def site(self) -> source.Site | None:
        """Where the learner's code built this node (cell or file, line, source)."""
        return None if self._code is None else source.resolve((self._code, self._offset))

    @property
    def mark(self) -> str | None:
        """A debug layer's mark ("anomaly", "breakpoint", "gradcheck"); drawings colour it."""
        return self._mark

    @property
    def mark_text(self) -> str:
        """A short explanation of `mark`."""
        return self._mark_text

    def set_mark(self, kind: str, text: str) -> None:
        """Mark this node for drawings (debug layers: anomaly mode, breakpoints, checks)."""
        self._mark, self._mark_text = kind, text

    def output(self) -> Any:
        """The tensor this node produced, if it is still alive (for drawing)."""
        return None

    def __repr__(self) -> str:
        return f"<{self.name}>"


class AccumulateGrad(Node):
    """The end of every path to a leaf: adds the arriving gradient into `leaf.grad`."""

    # the gradient on its way here that nothing else holds (set by the engine): the leaf may
    # keep it as its `.grad` without a copy
    _unshared: Any = None

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self._id = next(node_numbers)

    @property
    def name(self) -> str:
        return "AccumulateGrad"

    @property
    def _pre_hooks(self) -> list[Any] | None:  # type: ignore[override]
        return self.variable._hooks  # a leaf's hooks see its gradient before `.grad` does

    def run(self, g: Any, p: Pass, edges: tuple[Node | None, ...]) -> None:
        """The end of a path: `leaf.grad += g`, unless `tg.grad` only reads the gradient."""
        if p.accumulate:
            _accumulate(self.variable, g, p.create_graph, unshared=self._unshared is g)
        self._unshared = None


def grad_node(t: Tensor) -> Node:
    """The node a gradient for tensor `t` goes to: its grad_fn, or a leaf's AccumulateGrad
    (made once per leaf, so every path to it meets there)."""
    if t._grad_fn is not None:
        return t._grad_fn
    if t._accumulator is None:
        t._accumulator = AccumulateGrad(t)
    return t._accumulator


def _fit(gi: Any, shape: tuple[Any, ...], dtype: Any, node: Node, create_graph: bool) -> Any:
    """A gradient a rule returned, made an array (a Tensor under create_graph) of its
    input's shape and dtype: summed over the axes forward broadcast."""
    if create_graph:
        if not isinstance(gi, _tensor.Tensor):
            gi = _tensor.Tensor._make(np.asarray(gi))
    elif type(gi) is not _ndarray:
        # a learner's backward may compute with Tensors or return numbers
        gi = gi._data if isinstance(gi, _tensor.Tensor) else np.asarray(gi)
    if gi.shape != shape or gi.dtype is not dtype:
        gi = fit_gradient(gi, shape, node.name, lambda: node.site, dtype)
    return gi


def _shown(
    node: Node, g: Any, grads_in: tuple[Any, ...], p: Pass, edges: tuple[Node | None, ...]
) -> list[Any]:
    """The gradients a node sends, each fitted to its input (None where none is needed),
    for the observers who look at them before they are added up (anomaly mode,
    breakpoints, the stepper, tracing)."""
    fitted = []
    for nxt, gi, (shape, dtype) in zip(edges, grads_in, node._inputs_meta):
        if nxt is None or gi is None:
            gi = None
        elif type(gi) is not np.ndarray or gi.shape != shape or gi.dtype is not dtype:
            gi = _fit(gi, shape, dtype, node, p.create_graph)
        fitted.append(gi)
    _tell(p.here.observers, node, g, fitted)
    return fitted


def _unshared_ok(node: Node, g: Any, grads_in: tuple[Any, ...], p: Pass) -> bool:
    """May a leaf keep what this node sends it as its `.grad` without a copy? `Node.run`
    checks each gradient is new (not `g`, which others may hold) and no view; here: from
    the package's own rules (a learner's may return an array it keeps), without observers
    or create_graph, and no array but `g` sent to two inputs. As PyTorch's AccumulateGrad
    keeps a gradient no one else refers to: copying a big weight's gradient into fresh
    memory costs as much as a matmul's share of a step (150 us for 784x128 float32)."""
    if not node._own_rule or p.create_graph or p.here.observers:
        return False
    ids = [id(gi) for gi in grads_in if gi is not None and gi is not g]
    return len(ids) < 2 or len(set(ids)) == len(ids)


def _accumulate(t: Any, g: Any, create_graph: bool, unshared: bool = False) -> None:
    """`t.grad += g`, keeping t's dtype. The first gradient is copied (never aliased) unless
    nothing else holds it (`unshared`) and no hook on `t` has seen it."""
    if create_graph:
        gt = g if isinstance(g, _tensor.Tensor) else _tensor.Tensor._make(g)
        t._grad = gt if t._grad is None else t._grad + gt
        return
    if g.dtype != t._data.dtype:
        g, unshared = g.astype(t._data.dtype), True
    if t._grad is None:
        t._grad = _tensor.Tensor._make(g if unshared and not t._hooks else np.array(g, copy=True))
    else:
        t._grad._data = np.asarray(t._grad._data + g)  # 0-d + 0-d is a numpy scalar


def _on_tensors(node: Node, g: Any) -> Any:
    """Run the node's rule under `create_graph`: its saved values come back as Tensors, so
    the rule's arithmetic records a graph of its own."""
    node._as_tensors = True
    try:
        return node.backward(node, g)
    finally:
        node._as_tensors = False


def _tell(observers: list[Any], node: Node, g: Any, fitted: list[Any]) -> None:
    """Observers (anomaly mode, breakpoints, the stepper, tracing) see what a node sent."""
    for obs in tuple(observers):
        hook = getattr(obs, "on_backward", None)
        if hook is not None:
            hook(node, g, fitted)


def _received(node: Node, g: Any, create_graph: bool) -> Any:
    """The gradient as the node sees it: after hooks, and kept where `retain_grad` asked."""
    if type(g) is not np.ndarray and not isinstance(g, _tensor.Tensor):
        g = np.asarray(g)  # numpy turns 0-d sums (`g + g`) into scalars
    if node._pre_hooks:
        g = _run_hooks(node._pre_hooks, g, create_graph)
    if node._retained is not None:
        kept = node._retained()
        if kept is not None:
            _accumulate(kept, g, create_graph)
    return g


def _run_hooks(hooks: list[Any], g: Any, create_graph: bool) -> Any:
    for hook in list(hooks):
        out = hook(g if isinstance(g, _tensor.Tensor) else _tensor.Tensor._make(g))
        if out is None:
            continue
        if not isinstance(out, (_tensor.Tensor, np.ndarray)):
            name = getattr(hook, "__name__", type(hook).__name__)
            raise TypeError(
                message(
                    "hook",
                    f"hook {name!r} returned a {type(out).__name__}, not a Tensor",
                    source.here(),
                    "return the new gradient as a Tensor (g * 2, say), or None to keep it",
                )
            )
        arr = out._data if isinstance(out, _tensor.Tensor) else np.asarray(out)
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


# every node's `creation_number`, in the order they were made
node_numbers = itertools.count(1)


def next_node_number() -> int:
    """The creation number the next node gets, without using it up (`graph.watermark()`)."""
    global node_numbers
    n = next(node_numbers)
    # NOTE: a count cannot be read without taking a number, so the number is put back: a
    # new count starts at it (a count's `next` runs in C, cheaper than any counter class)
    node_numbers = itertools.count(n)
    return n


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Any, ...]:
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
    tensor_type = _tensor.Tensor
    outs = [outputs] if isinstance(outputs, tensor_type) else list(outputs)
    ins = [inputs] if isinstance(inputs, tensor_type) else list(inputs)
    gouts = (
        [grad_outputs] * len(outs)
        if grad_outputs is None or isinstance(grad_outputs, tensor_type)
        else list(grad_outputs)
    )
    roots = [_root(o, g, create_graph, "grad") for o, g in zip(outs, gouts)]
    nodes = [_wanted_node(k, t) for k, t in enumerate(ins)]
    captured: dict[int, Any] = dict.fromkeys(map(id, nodes))
    retain = create_graph if retain_graph is None else retain_graph
    with _gc_paused():
        for _ in steps(roots, retain_graph=retain, create_graph=create_graph, capture=captured):
            pass
    return tuple(_gradient_of(t, node, captured, allow_unused) for t, node in zip(ins, nodes))


def _wanted_node(k: int, t: Any) -> Node:
    """The node whose gradient `tg.grad` returns for input `k`; a clear error if none can be."""
    if not isinstance(t, _tensor.Tensor):
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
    return grad_node(t)


def _gradient_of(t: Any, node: Node, captured: dict[Any, Any], allow_unused: bool) -> Any:
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
    return g if isinstance(g, _tensor.Tensor) else _tensor.Tensor._make(g)


def _root_error(t: Any, op: str) -> Exception:
    """Why backward cannot start at `t`: not a Tensor, nothing to differentiate, or more
    than one number and no `gradient`."""
    if not isinstance(t, _tensor.Tensor):
        return TypeError(message(op, f"expected a Tensor, got {type(t).__name__}", source.here()))
    if not t.requires_grad:
        return BackwardError(
            message(
                op,
                f"{t._label()} does not require grad and has no grad_fn, so there is nothing "
                "to differentiate",
                source.here(),
                "create the inputs with requires_grad=True, outside any `with tg.no_grad():` block",
            )
        )
    name = t.name or "y"
    return BackwardError(
        message(
            op,
            f"{t._label(shape=False)} has shape {t.shape!r}, but backward() without `gradient` needs "
            "a single number",
            t.grad_fn.site if t.grad_fn is not None else source.here(),
            f"call {name}.sum().backward(), or pass gradient= a tensor of shape {t.shape!r}",
        )
    )


def _given_gradient(t: Any, gradient: Any, op: str) -> np.ndarray:
    """The `gradient=` a learner passed, as an array of t's shape and dtype."""
    g = _tensor._to_array(gradient, None, op)
    if g.shape != t.shape:
        raise ShapeError(
            message(
                op,
                f"gradient has shape {g.shape!r} but {t._label(shape=False)} has shape {t.shape!r}",
                source.here(),
                "pass a gradient of the same shape as the tensor",
            )
        )
    return g.astype(t.dtype, copy=False)


# numpy's module has a `__getattr__`, so Python cannot cache `np.ndarray` in a line that runs
# for every op or node: each read is a call (~200 instructions). A global is a cached lookup;
# the core's hot lines (here, function.py, tensor.py, views.py) read this one
_ndarray = np.ndarray
