"""`check_nodes(loss)`: a gradient check for every node of a graph, one node at a time.

`tg.gradcheck` says *whether* a function's gradient is wrong; this says *which node*.
For each Function node it rebuilds the node's inputs (from the leaves, the values ops
saved for backward, outputs still alive, or by re-running earlier nodes' forwards),
then compares the node's own backward rule with central differences of its own
forward, in float64:

    d(sum(w * f(x)))/dx_i ~ sum(w * (f(x + h e_i) - f(x - h e_i))) / (2 h)

with fixed random weights `w`, so one backward call checks the whole Jacobian in one
direction. Inputs that cannot be rebuilt get stand-in values (said in the report);
only nodes where that is impossible too (integer inputs) are reported as skipped.
Debug layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import engine
from ..core.engine import AccumulateGrad, Node
from ..core.function import Function
from ..core.grad_fit import fit_gradient
from ..core.tensor import Tensor
from .describe import array_of, built_at, label

_MISSING = object()


@dataclass(frozen=True, repr=False)
class NodeCheck:
    """One node's result: `status` is "ok", "WRONG" or "skipped"; `detail` says why."""

    node: Node
    name: str
    site: str
    status: str
    max_error: float | None
    detail: str


class NodeReport:
    """The per-node results, in the order the nodes were built; prints as a table."""

    def __init__(self, rows: list[NodeCheck]) -> None:
        self.rows = tuple(rows)

    @property
    def failed(self) -> list[Node]:
        """The nodes whose backward disagrees with finite differences."""
        return [r.node for r in self.rows if r.status == "WRONG"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        # the creation site comes last and unpadded, details on their own line: the layout
        # never depends on site text, which differs between a live run (`cell [4]`) and
        # nbval (`cell [1]`, sanitised to `cell [N]`)
        w0 = max([len("node")] + [len(r.name) for r in self.rows])
        w1 = max(len(s) for s in ("result", "ok", "WRONG", "skipped"))
        lines = [f"{'node':<{w0}}  {'result':<{w1}}  built at"]
        for r in self.rows:
            lines.append(f"{r.name:<{w0}}  {r.status:<{w1}}  {r.site}".rstrip())
            if r.detail:
                lines.append(" " * (w0 + 2) + r.detail)
        n_bad = len(self.failed)
        lines.append(
            f"{len(self.rows)} nodes checked, {n_bad} wrong"
            + (f": {', '.join(label(n) for n in self.failed)}" if n_bad else "")
        )
        return "\n".join(lines)

    __repr__ = __str__


def check_nodes(
    loss: Tensor, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, max_elements: int = 64
) -> NodeReport:
    r"""Check every node's backward against finite differences of its own forward.

    Rules: call it before `loss.backward()` (or after `backward(retain_graph=True)`),
    since backward frees the values nodes saved. Each Function node is checked on its
    recorded inputs (data that needs no grad included), in float64; an input kept
    nowhere gets fixed stand-in values, named in the row's detail; up to `max_elements` elements per input (a fixed
    random sample beyond that). A node passes when |analytic - numeric| <= atol +
    rtol * |numeric| everywhere. Failing nodes get `_mark = "gradcheck"` so the graph
    view colours them. Nothing is accumulated into any `.grad`.

    Args:
        loss: the output whose graph is checked.
        eps, atol, rtol: finite-difference step and tolerances, as in `tg.gradcheck`.
        max_elements: elements checked per input.

    Returns:
        A `NodeReport`: `.rows`, `.failed` (nodes), `.ok`; printing it shows a table.

    Example:
        >>> import tinygrad_edu as tg
        >>> class Square(tg.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return g * x  # wrong: d(x^2)/dx = 2x
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
        >>> report = tg.debug.check_nodes(Square.apply(x.exp()).sum())
        >>> [n.name for n in report.failed], report.ok
        (['SquareBackward'], False)
    """
    if not isinstance(loss, Tensor) or loss.grad_fn is None:
        return NodeReport([])
    nodes = [n for n in engine.toposort([loss.grad_fn]) if isinstance(n, Function)]
    nodes.sort(key=lambda n: n.creation_number)
    outputs: dict[int, Any] = {}
    rows = [_check(n, outputs, eps, atol, rtol, max_elements) for n in nodes]
    return NodeReport(rows)


def _check(
    node: Function, outputs: dict, eps: float, atol: float, rtol: float, max_elements: int
) -> NodeCheck:
    name, site = label(node), built_at(node)
    stand_ins: list[int] = []
    call = _call_of(node, outputs, stand_ins)
    if call is None:
        return NodeCheck(
            node,
            name,
            site,
            "skipped",
            None,
            "inputs not available (freed, or not kept by the op, and not floats)",
        )
    args, kwargs = call
    # C order: the finite differences nudge elements through a flat *view*
    args = [np.array(a, dtype=np.float64, order="C") if _is_float(a) else a for a in args]
    try:
        out = _forward(type(node), args, kwargs)[1]
        rng = np.random.default_rng(0)
        weights = rng.uniform(0.5, 1.5, size=out.shape)
        analytic = _backward(node, args, kwargs, weights)
    except Exception as e:  # a learner's rule that crashes is a finding, not a crash here
        return NodeCheck(node, name, site, "WRONG", None, f"{type(e).__name__}: {e}")
    worst, detail = _worst_disagreement(
        node, args, kwargs, weights, analytic, rng, eps, atol, rtol, max_elements
    )
    if detail:
        node.set_mark(
            "gradcheck", f"backward disagrees with finite differences (error {worst:.3g})"
        )
        return NodeCheck(node, name, site, "WRONG", worst, detail)
    note = ""
    if stand_ins:  # say so: the verdict holds for the rule, at values the graph never had
        which = " and ".join(str(i) for i in stand_ins)
        note = f"input {which} not kept: checked with stand-in values"
    return NodeCheck(node, name, site, "ok", worst, note)


def _worst_disagreement(
    node: Function,
    args: list,
    kwargs: dict,
    weights: np.ndarray,
    analytic: list[Any],
    rng: np.random.Generator,
    eps: float,
    atol: float,
    rtol: float,
    max_elements: int,
) -> tuple[float, str]:
    """The largest gap between backward and finite differences over the float inputs'
    elements (at most `max_elements` each, picked by `rng`), and a sentence naming it."""
    worst, detail = 0.0, ""
    for i, (a, (nxt, _)) in enumerate(zip(args, node.next_functions)):
        if nxt is None or not _is_float(a):
            continue
        g = analytic[i] if i < len(analytic) else None
        g = np.zeros_like(a) if g is None else g
        flat = a.reshape(-1)
        picks = np.arange(flat.size)
        if flat.size > max_elements:
            picks = np.sort(rng.choice(flat.size, max_elements, replace=False))
        for j in picks:
            # a relative step (x + 1e-6 == x once |x| > 1e10); near a domain edge
            # (log(1e-9 - 1e-6) is nan) retry with a step that stays inside
            diff = _central(node, args, kwargs, weights, flat, j, eps * max(1.0, abs(flat[j])))
            if not np.isfinite(diff) and flat[j] != 0:
                diff = _central(node, args, kwargs, weights, flat, j, 1e-3 * abs(flat[j]))
            if not np.isfinite(diff):
                continue  # outside the op's domain: no verdict for this element
            numeric, got = diff, float(g.reshape(-1)[j])
            err = abs(got - numeric)
            if err > atol + rtol * abs(numeric) and err > worst:
                idx = tuple(int(k) for k in np.unravel_index(j, a.shape))
                worst = err
                detail = (
                    f"input {i} at index {idx}: backward gives {got:.6g}, "
                    f"finite differences give {numeric:.6g}"
                )
    return worst, detail


def _central(
    node: Function,
    args: list,
    kwargs: dict,
    weights: np.ndarray,
    flat: np.ndarray,
    j: int,
    h: float,
) -> float:
    """sum(w * (f(x + h e_j) - f(x - h e_j))) / 2h, nudging `flat` (a view of an input)."""
    old = flat[j]
    with np.errstate(all="ignore"):
        flat[j] = old + h
        hi = _forward(type(node), args, kwargs)[1]
        flat[j] = old - h
        lo = _forward(type(node), args, kwargs)[1]
        flat[j] = old
        # subtract before summing: unrelated large outputs would swamp the difference
        return float((weights * (hi - lo)).sum()) / (2 * h)


def _is_float(a: Any) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _forward(
    cls: type[Function], args: list, kwargs: dict, needs: tuple | None = None
) -> tuple[Function, np.ndarray]:
    ctx = cls.__new__(cls)
    # like apply: only inputs on the graph want a gradient (Pow skips log(a) for a constant b)
    ctx.needs_input_grad = needs if needs is not None else tuple(_is_float(a) for a in args)
    # a copy: reshape/transpose return views that would follow the nudged input back
    return ctx, np.array(cls.forward(ctx, *args, **kwargs), dtype=np.float64, copy=True)


def _backward(node: Function, args: list, kwargs: dict, weights: np.ndarray) -> list:
    """Run the node's own backward rule on fresh saved values; gradients at input shapes."""
    needs = tuple(
        nxt is not None and _is_float(a) for (nxt, _), a in zip(node.next_functions, args)
    )
    ctx, _ = _forward(type(node), args, kwargs, needs)
    ctx.keep_saved_for_replay()
    grads = ctx.backward(ctx, weights)
    if not isinstance(grads, tuple):
        grads = (grads,)
    out: list[np.ndarray | None] = []
    for grad_in, a in zip(grads, args):
        if grad_in is None or not isinstance(a, np.ndarray):
            out.append(None)
            continue
        grad_in = np.array(array_of(grad_in), dtype=np.float64)
        if grad_in.shape != a.shape:
            grad_in = np.asarray(fit_gradient(grad_in, a.shape, ctx.name, ctx.site))
        out.append(grad_in)
    return out


# --- rebuilding a node's inputs -----------------------------------------------------------


def _call_of(
    node: Function, outputs: dict, stand_ins: list[int] | None = None
) -> tuple[list, dict] | None:
    """The positional inputs and keyword arguments `node` was called with, or None.

    An input that needed no grad (data such as `x` in `x * w`, or a constant) comes
    from ctx or from the op's saved arrays; one on the graph from its leaf, the op's
    saved arrays or the node that made it. When a value is kept nowhere (or was freed)
    and `stand_ins` is a list, fixed random values of its recorded shape stand in and its
    index is appended: the check re-runs forward on them, and backward sees only what
    forward keeps, so the rule is still checked, at another point. Rebuilding other
    nodes' values never uses stand-ins.
    """
    names = _param_names(node)
    kept = _kept_constants(node)
    args: list[Any] = []
    for i, (nxt, _) in enumerate(node.next_functions):
        if nxt is None:
            name = names[i] if i < len(names) else None
            value = node.__dict__[name] if name in node.__dict__ else kept.pop(i, None)
        else:
            value = _value_of(nxt, node.saved_values(), outputs)
        if value is None and stand_ins is not None:
            value = _stand_in(node.input_meta[i], i)
            if value is not None:
                stand_ins.append(i)
        if value is None:
            return None
        args.append(value)
    kwargs = _kwargs_of(node, names[len(args) :])
    if kwargs is None:
        return None
    return args, kwargs


def _kept_constants(node: Function) -> dict[int, np.ndarray]:
    """Input index -> the saved array of each no-grad input the op saved for backward.

    Saved entries carry the input Tensor they came from (data tensors such as `x`) or
    None (constants and arrays forward computed). Tensor entries are inputs for sure, so
    they are matched first; then the others, both in order and by shape and dtype.
    """
    saved = [s for s in node.saved_values() if not s.is_output and s.value is not None]
    grad_nodes = {id(nxt) for nxt, _ in node.next_functions if nxt is not None}
    tensors = [
        s.value
        for s in saved
        if isinstance(s.tensor, Tensor) and id(s.tensor.grad_node) not in grad_nodes
    ]
    others = [s.value for s in saved if s.tensor is None]
    free = [i for i, (nxt, _) in enumerate(node.next_functions) if nxt is None]
    found: dict[int, np.ndarray] = {}
    for pool in (tensors, others):
        for i in free:
            shape, dtype = node.input_meta[i]
            for k, arr in enumerate(pool):
                if i not in found and np.shape(arr) == shape and arr.dtype == dtype:
                    found[i] = pool.pop(k)
                    break
    return found


def _stand_in(meta: tuple, i: int) -> np.ndarray | None:
    """Values in [0.5, 1.5) (inside log/sqrt/div domains) or a random mask; None otherwise."""
    shape, dtype = meta
    if shape is None or dtype is None:
        return None
    rng = np.random.default_rng(1000 + i)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(0.5, 1.5, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.random(size=shape) < 0.5
    return None  # integers are often indices: a random one would be no check at all


def _value_of(nxt: Node, saved: tuple, outputs: dict) -> np.ndarray | None:
    if type(nxt) is AccumulateGrad:
        return np.asarray(nxt.variable)
    for s in saved:  # the op saved this input: the exact array
        if isinstance(s.tensor, Tensor) and s.tensor.grad_fn is nxt:
            return s.value
    return _output_of(nxt, outputs)


def _output_of(node: Node, outputs: dict) -> np.ndarray | None:
    """A node's output: alive, saved by itself, or recomputed from its own inputs."""
    key = id(node)
    if key in outputs:
        return outputs[key]
    out = node.output() if isinstance(node, Function) else None
    value = np.asarray(out) if out is not None else None
    if value is None:
        for s in node.saved_values():
            if s.is_output:
                value = s.value
    if value is None and isinstance(node, Function):
        call = _call_of(node, outputs)
        if call is not None:
            try:
                value = _forward(type(node), *call)[1]
            except Exception:  # noqa: BLE001 - a guess that did not fit: not rebuildable
                value = None
            if value is not None and value.shape != (node.output_meta or (None,))[0]:
                value = None
    outputs[key] = value
    return value


def _param_names(node: Function) -> list[str]:
    """Names of forward's parameters after `ctx` (empty for `*args` ops such as Cat)."""
    try:
        params = list(inspect.signature(type(node).forward).parameters.values())
    except (TypeError, ValueError):
        return []
    if params and params[0].name == "ctx":
        params = params[1:]
    return [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _kwargs_of(node: Function, names: list[str]) -> dict | None:
    """Keyword arguments of forward, read back from what the op stored on ctx."""
    params = inspect.signature(type(node).forward).parameters
    kwargs = {}
    for name in names:
        if name in node.__dict__:
            kwargs[name] = node.__dict__[name]
        elif name == "shape":  # reshape / broadcast_to: the output's shape
            kwargs[name] = (node.output_meta or (None,))[0]
        elif params[name].default is inspect.Parameter.empty:
            return None
    return kwargs
