"""Walk tensors into a `Graph`: the forward view (tensors and ops) or the backward view.

Two phases keep big graphs fast: a lean walk over the core objects (no text is made)
decides order, ids, modules and the `new` flag; summarisation (summarise.py) then
picks what to show, and only the shown nodes get their labels (value summaries,
creation sites). The walk is iterative and linear, so a 100,000-op chain is fine.
The default forward view (folding on, no collapsed module) goes faster still:
opwalk.py decides folds and the cap on ops and makes entries only for the nodes
shown; the full walk stays for the other views and is its reference in tests.

Ids: ops are numbered `op1, op2, ...` by their creation counter, tensors `t1, t2, ...`
in the order the forward pass made or first used them, AccumulateGrad nodes `acc1, ...`
and summary nodes `s1, ...`. Counters are relative to the graph, so the same code
gives the same ids (and byte-identical DOT) in any process.
Graph layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import gc
import importlib
import operator
import re
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ..core.function import AccumulateGrad, Node
from ..core.tensor import Tensor
from .model import MARKS, Graph, GraphEdge, GraphNode, Watermark
from .opwalk import summarise_forward
from .steps import STEP, call_numbers
from .summarise import DEFAULT_MAX_NODES, Summary, summarise
from .values import shape_text, summarise_array

VIEWS = ("forward", "backward")

# objects with a `_to_graph(**options)` method, or types registered here, draw themselves
# (e.g. a static StaticGraph): build_graph hands them over instead of walking tensors
_CONVERTERS: list[tuple[type, Callable[..., Graph]]] = []


def register_converter(cls: type, fn: Callable[..., Graph]) -> None:
    """Let `build_graph(obj, **options)` call `fn(obj, **options)` for objects of `cls`."""
    _CONVERTERS.append((cls, fn))


def _peek(counter: Any) -> int:
    # `itertools.count` has no public "current value"; its repr is `count(17)`
    return int(re.fullmatch(r"count\((\d+)\)", repr(counter)).group(1))


def watermark() -> Watermark:
    r"""The creation counters now: pass it as `since=` to flag everything made afterwards.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph, watermark
        >>> a = tg.tensor(1.0, requires_grad=True, name="a")
        >>> mark = watermark()
        >>> b = a * 2
        >>> [n.id for n in build_graph(b, since=mark).nodes if n.new]
        ['t2', 'op1', 't3']
    """
    # modules by name: `tinygrad_edu.core.tensor` the attribute is the function `tensor`
    tensor_mod = importlib.import_module("tinygrad_edu.core.tensor")
    function_mod = importlib.import_module("tinygrad_edu.core.function")
    return Watermark(_peek(tensor_mod._tensor_ids), _peek(function_mod._node_ids))


class RawGraph:
    """Phase 1 result: one entry per node in parallel lists (cheap for 100,000s of nodes).

    `kind[i]` is "tensor" | "op" | "accumulate"; `obj[i]` the Tensor or Node (None for
    a constant input or a freed intermediate); for tensors `op[i]` is the op that made
    it (`slot[i] == -1`) or the op it feeds (a constant, `slot[i]` its input slot);
    `attach[i]` is the index of that op (its output or constant goes with it when
    folded); `link` maps an op to the next op of a straight chain (data order).
    `sparse()` makes the op-level pass's version (opwalk.py): dicts keyed by raw
    position, holding only the nodes that are shown, and `total` nodes in all.
    """

    __slots__ = (
        "kind",
        "obj",
        "op",
        "slot",
        "module",
        "new",
        "num",
        "root",
        "attach",
        "edges",
        "link",
        "forward",
        "leaf_ops",
        "total",
    )

    @classmethod
    def sparse(cls) -> RawGraph:
        g = cls(forward=True)
        g.kind, g.obj, g.op, g.slot, g.module, g.new, g.num, g.root = (
            {},
            {},
            {},
            {},
            {},
            {},
            {},
            {},
        )
        return g

    def __init__(self, forward: bool) -> None:
        self.kind: list[str] = []
        self.obj: list[Any] = []
        self.op: list[Any] = []
        self.slot: list[int] = []
        self.module: list[tuple] = []
        self.new: list[bool] = []
        self.num: list[int] = []
        self.root: list[bool] = []
        self.attach: list[int] = []
        self.edges: list[tuple[int, int, int]] = []
        self.link: dict[int, int] = {}
        self.leaf_ops: dict[int, list[int]] = {}  # leaf (or AccumulateGrad) -> ops using it
        self.forward = forward
        self.total: int | None = None

    def add(
        self,
        kind: str,
        obj: Any,
        op: Any,
        slot: int,
        module: tuple,
        new: bool,
        num: int,
        attach: int = -1,
    ) -> int:
        self.kind.append(kind)
        self.obj.append(obj)
        self.op.append(op)
        self.slot.append(slot)
        self.module.append(module)
        self.new.append(new)
        self.num.append(num)
        self.root.append(False)
        self.attach.append(attach)
        return len(self.kind) - 1

    def __len__(self) -> int:
        return len(self.kind) if self.total is None else self.total


def _roots(tensors: tuple) -> list[tuple[Tensor, str]]:
    """Flatten tensors, lists/tuples and dicts (name -> tensor) into (tensor, name)."""
    out: list[tuple[Tensor, str]] = []
    stack: list[tuple[Any, str]] = [(t, "") for t in reversed(tensors)]
    while stack:
        item, name = stack.pop()
        if isinstance(item, Tensor):
            out.append((item, name))
        elif isinstance(item, Mapping):
            stack.extend((v, str(k)) for k, v in reversed(list(item.items())))
        elif isinstance(item, Iterable) and not isinstance(item, (str, bytes)):
            stack.extend((v, "") for v in reversed(list(item)))
        else:
            from ..core.errors import message

            raise TypeError(
                message(
                    "build_graph",
                    f"expected Tensors (or a list or dict of them), got {type(item).__name__}",
                    None,
                    "pass the tensors whose graph you want to see",
                )
            )
    return out


def build_graph(
    *tensors: Any,
    view: str = "forward",
    since: Watermark | tuple | None = None,
    collapse: Any = (),
    max_nodes: int | None = DEFAULT_MAX_NODES,
    fold: bool = True,
    expand: Any = (),
    marks: Mapping[Any, str] | None = None,
    names: Mapping[str, Any] | None = None,
) -> Graph:
    r"""Build the Graph of everything that produced `tensors`.

    Rules: the forward view has tensor nodes and op nodes with data-flow edges
    (inputs -> op -> output), as learners draw it; the backward view has the
    `grad_fn` nodes PyTorch stores, with edges from each node to its
    `next_functions` and an AccumulateGrad node at every leaf that needs a gradient.
    Tensors may be given as arguments, lists, or a dict name -> tensor (the key names
    an unnamed tensor). Nodes made after the `since` watermark get `new=True`.
    Nodes built inside an `nn.Module` carry its path (`module="net.0"`); modules
    named in `collapse` (or every top-level module with `collapse=True`) become one
    summary node each. Runs of repeated identical blocks are folded (`fold`), and
    beyond `max_nodes` the nodes farthest from the outputs give way to "N more
    nodes" markers. Objects with a `_to_graph(**options)` method (a StaticGraph) or a
    registered converter draw themselves.

    Args:
        *tensors: Tensors, lists/tuples of them, or dicts name -> Tensor.
        view: "forward" or "backward".
        since: a `watermark()`; nodes created after it are flagged new.
        collapse: module paths to collapse, or True for all top-level modules.
        max_nodes: the most nodes to show (None for no limit).
        fold: fold runs of repeated identical blocks into one node with a count.
        expand: time steps of a module called in a loop to draw in full even when the
            steps between the first and the last are folded (`"rnncell.t=5"`), or True
            to fold nothing (as `fold=False`).
        marks: extra marks, core object (Tensor or grad_fn node) -> mark kind
            ("current", "breakpoint", ...), added to the nodes' own `_mark`.
        names: name -> Tensor, used to name unnamed tensors (e.g. a namespace).

    Returns:
        A Graph.

    Raises:
        ValueError: unknown view or mark kind. TypeError: something that is not a Tensor.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor(3.0, requires_grad=True, name="x")
        >>> g = build_graph({"y": x * x})
        >>> [(n.id, n.name or n.op) for n in g.nodes]
        [('t1', 'x'), ('op1', 'Mul'), ('t2', 'y')]
        >>> [(e.src, e.dst, e.slot) for e in g.edges]
        [('t1', 'op1', 0), ('t1', 'op1', 1), ('op1', 't2', 0)]
        >>> [n.id for n in build_graph(x * x, view="backward").nodes]
        ['acc1', 'op1', 't1']
    """
    from ..core.errors import message

    if len(tensors) == 1 and not isinstance(tensors[0], (Tensor, Mapping, list, tuple)):
        obj = tensors[0]
        options = dict(view=view, since=since, collapse=collapse, max_nodes=max_nodes)
        for cls, fn in _CONVERTERS:
            if isinstance(obj, cls):
                return fn(obj, **options)
        if hasattr(obj, "_to_graph"):
            return obj._to_graph(**options)
    if view not in VIEWS:
        raise ValueError(
            message(
                "build_graph",
                f"unknown view {view!r}",
                None,
                'use view="forward" (tensors and ops) or view="backward" (grad_fn nodes)',
            )
        )
    roots = _roots(tensors)
    extra = _extra_marks(marks)
    wm = Watermark(*since) if since is not None else None
    walk = _walk_forward if view == "forward" else _walk_backward
    if view == "forward" and fold and not collapse:
        walk = _OP_LEVEL  # decided on ops: hidden tensors never get an entry
    # the walk makes many small objects but no cycles: the cyclic GC would only rescan
    # the (possibly huge) autograd graph again and again
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        return _build(walk, roots, wm, view, names, extra, collapse, max_nodes, fold, expand)
    finally:
        if gc_was_on:
            gc.enable()


def _build(
    walk: Callable,
    roots: list,
    wm: Watermark | None,
    view: str,
    names: Any,
    extra: dict[int, str],
    collapse: Any,
    max_nodes: int | None,
    fold: bool,
    expand: Any,
) -> Graph:
    picked = None
    if walk is _OP_LEVEL:
        rg = RawGraph.sparse()
        picked = summarise_forward(roots, wm, max_nodes, rg)
        walk = _walk_forward  # if the op-level pass cannot decide (two folds, one op)
    if picked is not None:
        kept, kept_edges, hidden = picked
    else:
        rg = walk(roots, wm)
        if view == "forward":
            _number_steps(rg)
        kept, kept_edges, hidden = summarise(
            rg, collapse=collapse, max_nodes=max_nodes, fold=fold, expand=expand
        )
    name_of = {id(t): n for n, t in (names or {}).items() if isinstance(t, Tensor)}
    for t, n in roots:
        if n:
            name_of[id(t)] = n
    nodes = [
        (_summary_node(k) if isinstance(k, Summary) else _label(rg, k, view, name_of, extra))
        for k in kept
    ]
    ids = [n.id for n in nodes]
    graph_edges = [GraphEdge(ids[s], ids[d], slot) for s, d, slot in kept_edges]
    root_ids = [ids[j] for j, k in enumerate(kept) if not isinstance(k, Summary) and rg.root[k]]
    attrs = {"view": view, "roots": root_ids, "hidden": hidden, "total": len(rg)}
    graph = Graph(nodes, graph_edges, attrs)
    # private, never drawn: lets a view (the backward stepper) find a core object's box
    graph._ids_by_object = {
        id(rg.obj[k]): ids[j]
        for j, k in enumerate(kept)
        if not isinstance(k, Summary) and rg.obj[k] is not None
    }
    return graph


def _number_steps(rg: RawGraph) -> None:
    """Move each call of a module called in a loop to its own step path (steps.py).

    An op, its output and its constants go to `(<module>, "t=<call>", ...)`; the module's
    parameters (leaves) keep the module's own path, shared by every step.
    """
    ops = [i for i, k in enumerate(rg.kind) if k == "op"]
    runs, repeated = call_numbers([rg.obj[i] for i in ops])
    if not repeated:
        return
    run_of = dict(zip(ops, runs))
    module, attach = rg.module, rg.attach
    for i, m in enumerate(module):
        if not m or m[0] not in repeated:
            continue
        # an output's and a constant's `attach` is their op; a leaf's is -1
        run = run_of.get(i if rg.kind[i] == "op" else attach[i])
        if run is not None:
            module[i] = (m[0], f"{STEP}{run}", *m[1:])


_OP_LEVEL = object()  # build_graph's walk for the summarised forward view (opwalk.py)


def _extra_marks(marks: Mapping[Any, str] | None) -> dict[int, str]:
    out: dict[int, str] = {}
    for obj, kind in (marks or {}).items() if not isinstance(marks, list) else marks:
        if kind not in MARKS:
            from ..core.errors import message

            raise ValueError(
                message("build_graph", f"unknown mark {kind!r}", None, f"use one of {MARKS!r}")
            )
        out[id(obj)] = kind
    return out


# --- phase 1: lean walks -------------------------------------------------------------------


def _collect(starts: list[Node]) -> list[Node]:
    """Every node reachable through `next_functions`, in creation order (iterative)."""
    seen: set[int] = set()
    out: list[Node] = []
    stack = list(starts)
    while stack:
        node = stack.pop()
        nid = id(node)
        if nid in seen:
            continue
        seen.add(nid)
        out.append(node)
        for nxt, _ in node._next:
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    out.sort(key=_by_creation)
    return out


_by_creation = operator.attrgetter("_id")


def _walk_forward(roots: list[tuple[Tensor, str]], wm: Watermark | None) -> RawGraph:
    """Tensors and ops behind `roots`: op k's new inputs, op k, its output, in op order."""
    g = RawGraph(forward=True)
    ops = [
        op
        for op in _collect([t.grad_fn for t, _ in roots if t.grad_fn is not None])
        if type(op) is not AccumulateGrad
    ]
    wn = wm.node if wm is not None else 1 << 62  # nothing is new without a watermark
    wt = wm.tensor if wm is not None else 1 << 62
    out_of: dict[int, int] = {}  # id(op) -> index of its output tensor
    leaf_of: dict[int, int] = {}  # id(tensor) -> index
    uses: dict[int, int] = {}  # tensor index -> number of uses
    user: dict[int, int] = {}  # tensor index -> last op using it
    leaf_users: dict[int, list[tuple]] = {}
    # the hot loop appends to local bound methods: 100,000 ops must walk in ~0.1 s
    kind, obj, opl, slotl = g.kind.append, g.obj.append, g.op.append, g.slot.append
    module, newl, num, attach = g.module.append, g.new.append, g.num.append, g.attach.append
    edge = g.edges.append
    leaf_ops = g.leaf_ops
    acc = AccumulateGrad
    i = -1  # index of the last node added
    n_t = 0
    for rank, op in enumerate(ops, 1):
        m = getattr(op, "_scope", None) or ()
        new = op._id >= wn
        ins = []
        leaf_in = []
        n_const = 0
        for slot, (nxt, _) in enumerate(op._next):
            if nxt is None:  # an input that needs no grad: a constant of this op
                n_t += 1
                i += 1
                kind("tensor"), obj(None), opl(op), slotl(slot), module(m), newl(new)
                num(n_t), attach(-2)
                n_const += 1
                ins.append((i, slot))
                continue
            if type(nxt) is acc:
                v = nxt.variable
                j = leaf_of.get(id(v))
                if j is None:
                    n_t += 1
                    i += 1
                    j = leaf_of[id(v)] = i
                    kind("tensor"), obj(v), opl(None), slotl(0), module(m)
                    newl(v._id >= wt), num(n_t), attach(-1)
                if m:
                    leaf_users.setdefault(j, []).append(m)
                leaf_in.append(j)
            else:
                j = out_of[id(nxt)]
            uses[j] = uses.get(j, 0) + 1
            ins.append((j, slot))
        i += 1
        k = i
        kind("op"), obj(op), opl(None), slotl(0), module(m), newl(new), num(rank), attach(-1)
        for j, slot in ins:
            edge((j, k, slot))
            user[j] = k
        for j in leaf_in:
            leaf_ops.setdefault(j, []).append(k)
        if n_const:
            at = g.attach
            for j in range(k - 1, -1, -1):
                if at[j] == -2:
                    at[j] = k
                    n_const -= 1
                    if not n_const:
                        break
        n_t += 1
        i += 1
        out_of[id(op)] = i
        out = getattr(op, "_out_ref", None)  # inlined `op.output()`, hot
        if type(out) is weakref.ReferenceType:
            out = out()
        kind("tensor"), obj(out), opl(op), slotl(-1), module(m), newl(new), num(n_t)
        attach(k)
        edge((k, i, 0))
    g.root = [False] * len(g.kind)
    for j in leaf_of.values():
        # a leaf (a parameter) sits in the module all its users share; used outside any: none
        modules = leaf_users.get(j, ())
        g.module[j] = _common(modules) if len(modules) == uses.get(j, 0) else ()
    for t, _ in roots:
        if t.grad_fn is not None:
            j = out_of[id(t.grad_fn)]
            g.obj[j] = t
        else:
            j = leaf_of.get(id(t))
            if j is None:
                n_t += 1
                j = leaf_of[id(t)] = g.add("tensor", t, None, 0, (), t._id >= wt, n_t)
        g.root[j] = True
    root = g.root
    joined: set[int] = set()
    for o in out_of.values():  # in op order
        # chains must not merge (`h @ w.T`: h's op and the transpose both feed one matmul,
        # and folding both chains would count the matmul twice): the earliest input's op,
        # the data path, keeps the link
        if uses.get(o, 0) == 1 and not root[o] and user[o] not in joined:
            g.link[o - 1] = user[o]  # the op is right before its output
            joined.add(user[o])
    return g


def _common(modules: Iterable[tuple]) -> tuple:
    it = iter(modules)
    first = next(it, ())
    for m in it:
        n = 0
        while n < len(first) and n < len(m) and first[n] == m[n]:
            n += 1
        first = first[:n]
    return first


def _walk_backward(roots: list[tuple[Tensor, str]], wm: Watermark | None) -> RawGraph:
    """All grad_fn nodes behind `roots` in creation order, then the root tensors."""
    g = RawGraph(forward=False)
    starts = [t.grad_fn if t.grad_fn is not None else t._accumulator for t, _ in roots]
    nodes = _collect([s for s in starts if s is not None])
    wn = wm.node if wm is not None else None
    wt = wm.tensor if wm is not None else None
    index: dict[int, int] = {}
    counts = {"op": 0, "accumulate": 0}
    for node in nodes:
        kind = "accumulate" if type(node) is AccumulateGrad else "op"
        counts[kind] += 1
        index[id(node)] = g.add(
            kind,
            node,
            None,
            0,
            getattr(node, "_scope", None) or (),
            wn is not None and node._id >= wn,
            counts[kind],
        )
    incoming: dict[int, list[int]] = {}
    for node in nodes:
        a = index[id(node)]
        for slot, (nxt, _) in enumerate(node._next):
            if nxt is not None:
                b = index[id(nxt)]
                g.edges.append((a, b, slot))
                incoming.setdefault(b, []).append(a)
    for n, ((t, _), start) in enumerate(zip(roots, starts), 1):
        i = g.add("tensor", t, None, -1, (), wt is not None and t._id >= wt, n)
        g.root[i] = True
        if start is not None:
            b = index[id(start)]
            g.edges.append((i, b, 0))
            incoming.setdefault(b, []).append(i)
    kinds = g.kind
    for b, srcs in incoming.items():
        if kinds[b] == "accumulate":
            g.leaf_ops[b] = srcs
        if len(srcs) == 1 and kinds[b] == "op" and kinds[srcs[0]] == "op":
            g.link[b] = srcs[0]  # b made a's only input: b comes first in data order
    return g


# --- phase 2: labels for the nodes that are shown --------------------------------------------

_PREFIX = {"tensor": "t", "op": "op", "accumulate": "acc"}


def _label(
    rg: RawGraph, i: int, view: str, name_of: dict[int, str], extra: dict[int, str]
) -> GraphNode:
    kind = rg.kind[i]
    node = GraphNode(
        id=f"{_PREFIX[kind]}{rg.num[i]}", kind=kind, module=".".join(rg.module[i]), new=rg.new[i]
    )
    obj = rg.obj[i]
    marks: list[str] = []
    mark_text = ""
    if kind == "tensor":
        _tensor_fields(node, rg, i, name_of)
        if obj is not None and id(obj) in extra:
            marks.append(extra[id(obj)])
    else:
        node.op = type(obj).__name__
        node.name = obj.name if view == "backward" else node.op
        if kind == "accumulate":
            var = obj.variable
            node.shape, node.dtype = var.shape, str(var.dtype)
            node.name = "AccumulateGrad"
            node.detail = var.name or name_of.get(id(var), "")
            node.value = summarise_array(np.asarray(var))
            if var._grad is not None:
                node.grad = summarise_array(np.asarray(var._grad))
        else:
            meta = getattr(obj, "_out_meta", None)
            if meta is not None:
                node.shape, node.dtype = meta[0], str(meta[1])
            node.saved, node.freed = _saved(obj)
            site = obj.site
            if site is not None:
                node.site, node.cell, node.line = str(site), site.cell, site.lineno
        m = getattr(obj, "_mark", None)
        if m:
            marks.append(m)
            mark_text = getattr(obj, "_mark_text", "") or ""
        if id(obj) in extra:
            marks.append(extra[id(obj)])
    node.marks = tuple(m for m in MARKS if m in marks)
    node.mark_text = mark_text
    return node


def _tensor_fields(node: GraphNode, rg: RawGraph, i: int, name_of: dict[int, str]) -> None:
    t = rg.obj[i]
    op = rg.op[i]
    if t is not None:
        node.name = t.name or name_of.get(id(t), "")
        node.shape, node.dtype = t.shape, str(t.dtype)
        node.requires_grad = t.requires_grad
        node.value = summarise_array(np.asarray(t))
        if t._grad is not None:
            node.grad = summarise_array(np.asarray(t._grad))
        if t.grad_fn is not None:
            node.role = "output" if rg.root[i] else "intermediate"
        else:
            node.role = "leaf" if t.requires_grad else "constant"
    elif rg.slot[i] == -1:  # an intermediate nobody keeps: only its shape was recorded
        meta = getattr(op, "_out_meta", None)
        if meta is not None:
            node.shape, node.dtype = meta[0], str(meta[1])
        node.requires_grad = True
        node.role = "intermediate"
    else:  # an input that needs no grad (data, a number): only its shape was recorded
        shape, dtype = op._inputs_meta[rg.slot[i]]
        node.shape = tuple(shape) if shape is not None else None
        node.dtype = str(dtype) if dtype is not None else ""
        node.role = "constant"
        t = _saved_constant(op, rg.slot[i])
        if t is not None:  # the op kept it for backward: show its name and value too
            node.name = t.name or name_of.get(id(t), "")
            node.value = summarise_array(np.asarray(t))


def _saved_constant(op: Any, slot: int) -> Tensor | None:
    """The Tensor at input `slot` if the op saved it (a Tensor that needs no grad)."""
    saved = getattr(op, "_saved", None)
    if not saved:
        return None
    meta = op._inputs_meta
    # constants in slot order, matched to saved no-grad Tensors in order, by shape and dtype
    slots = [k for k, (nxt, _) in enumerate(op._next) if nxt is None]
    found = [t for _arr, t, _vc, _v in saved if isinstance(t, Tensor) and not t.requires_grad]
    j = 0
    for k in slots:
        if j < len(found) and found[j].shape == meta[k][0] and found[j].dtype == meta[k][1]:
            if k == slot:
                return found[j]
            j += 1
    return None


def _saved(core: Any) -> tuple[tuple[str, ...], bool]:
    saved = getattr(core, "_saved", ())
    if saved is None:
        return (), True
    out = []
    for arr, tensor, _vc, _version in saved:
        if arr is None:
            continue
        name = ""
        if tensor is not None and isinstance(tensor, Tensor):
            name = tensor.name or ""
        elif tensor is not None:
            name = "output"
        text = f"{shape_text(arr.shape)} {arr.dtype}"
        out.append(f"{name} {text}" if name else text)
    return tuple(out), False


def _summary_node(s: Summary) -> GraphNode:
    return GraphNode(
        id=s.id,
        kind="summary",
        name=s.name,
        role=s.role,
        count=s.count,
        blocks=s.blocks,
        detail=s.detail,
        module=s.module,
        new=s.new,
    )
