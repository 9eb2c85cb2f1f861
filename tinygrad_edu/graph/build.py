"""Walk tensors into a `Graph`: the forward view (tensors and ops) or the backward view.

Two phases keep big graphs fast: a lean walk over the core objects (no text is made)
decides order, ids, modules and the `new` flag; summarisation (summarise.py) then
picks what to show, and only the shown nodes get their labels (value summaries,
creation sites). The walk is iterative and linear, so a 100,000-op chain is fine.

Ids: ops are numbered `op1, op2, ...` by their creation counter, tensors `t1, t2, ...`
in the order the forward pass made or first used them, AccumulateGrad nodes `acc1, ...`
and summary nodes `s1, ...`. Counters are relative to the graph, so the same code
gives the same ids (and byte-identical DOT) in any process.
Graph layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..core.function import AccumulateGrad, Node
from ..core.tensor import Tensor
from .model import MARKS, Graph, GraphEdge, GraphNode, Watermark
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


class _Raw:
    """One node before labelling: what it is, the core object, order key and module."""

    __slots__ = ("kind", "obj", "op", "slot", "key", "module", "new", "num", "name", "root")

    def __init__(self, kind: str, obj: Any, op: Any = None, slot: int = 0) -> None:
        self.kind = kind  # "tensor" | "op" | "accumulate"
        self.obj = obj  # Tensor, Node, or None (a dead intermediate, a constant)
        self.op = op  # tensors: the op that made it (outputs) or first used it (inputs)
        self.slot = slot
        self.key: tuple = ()
        self.module: tuple = ()
        self.new = False
        self.num = 0
        self.name = ""
        self.root = False


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

            raise TypeError(message(
                "build_graph", f"expected Tensors (or a list or dict of them), got "
                f"{type(item).__name__}", None, "pass the tensors whose graph you want to see"))
    return out


def build_graph(*tensors: Any, view: str = "forward", since: Watermark | tuple | None = None,
                collapse: Any = (), max_nodes: int | None = DEFAULT_MAX_NODES,
                fold: bool = True, marks: Mapping[Any, str] | None = None,
                names: Mapping[str, Any] | None = None) -> Graph:
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
        raise ValueError(message("build_graph", f"unknown view {view!r}", None,
                                 'use view="forward" (tensors and ops) or view="backward" '
                                 "(grad_fn nodes)"))
    roots = _roots(tensors)
    extra = _extra_marks(marks)
    wm = Watermark(*since) if since is not None else None
    walk = _walk_forward if view == "forward" else _walk_backward
    raws, edges = walk(roots, wm)
    name_of = {id(t): n for n, t in (names or {}).items() if isinstance(t, Tensor)}
    for t, n in roots:
        if n:
            name_of[id(t)] = n
    kept, kept_edges, hidden = summarise(raws, edges, collapse=collapse, max_nodes=max_nodes,
                                         fold=fold)
    nodes = [(_summary_node(k) if isinstance(k, Summary) else _label(k, view, name_of, extra))
             for k in kept]
    ids = [n.id for n in nodes]
    graph_edges = [GraphEdge(ids[s], ids[d], slot) for s, d, slot in kept_edges]
    root_ids = [ids[i] for i, k in enumerate(kept) if isinstance(k, _Raw) and k.root]
    attrs = {"view": view, "roots": root_ids, "hidden": hidden, "total": len(raws)}
    return Graph(nodes, graph_edges, attrs)


def _extra_marks(marks: Mapping[Any, str] | None) -> dict[int, str]:
    out: dict[int, str] = {}
    for obj, kind in (marks or {}).items() if not isinstance(marks, list) else marks:
        if kind not in MARKS:
            from ..core.errors import message

            raise ValueError(message("build_graph", f"unknown mark {kind!r}", None,
                                     f"use one of {MARKS!r}"))
        out[id(obj)] = kind
    return out


# --- phase 1: lean walks -------------------------------------------------------------------


def _walk_forward(roots: list[tuple[Tensor, str]], wm: Watermark | None) -> tuple[list, list]:
    """All tensors and ops behind `roots`, sorted in creation order, and their edges."""
    raws: dict[tuple, _Raw] = {}
    ops: dict[int, _Raw] = {}
    edges: list[tuple[tuple, tuple, int]] = []
    stack: list[Node] = []
    for t, _ in roots:
        if t.grad_fn is not None:
            key = ("o", id(t.grad_fn))
            if key not in raws:
                raws[key] = _Raw("tensor", t, t.grad_fn)
            raws[key].obj = t
            stack.append(t.grad_fn)
        else:
            key = ("l", id(t))
            raws.setdefault(key, _Raw("tensor", t))
        raws[key].root = True
    while stack:
        op = stack.pop()
        oid = id(op)
        if oid in ops:
            continue
        r = ops[oid] = _Raw("op", op)
        okey = ("o", oid)
        if okey not in raws:
            raws[okey] = _Raw("tensor", op.output(), op)
        edges.append((("n", oid), okey, 0))
        for slot, (nxt, _) in enumerate(op._next):
            if nxt is None:
                key = ("c", oid, slot)
                raws[key] = _Raw("tensor", None, op, slot)
            elif type(nxt) is AccumulateGrad:
                key = ("l", id(nxt.variable))
                if key not in raws:
                    raws[key] = _Raw("tensor", nxt.variable)
            else:
                key = ("o", id(nxt))
                if key not in raws:
                    raws[key] = _Raw("tensor", nxt.output(), nxt)
                stack.append(nxt)
            edges.append((key, ("n", oid), slot))
    # order: op k's new inputs, op k, op k's output, for ops in creation order
    order = sorted(ops.values(), key=lambda r: r.obj._id)
    big = len(order) + 1
    for rank, r in enumerate(order, 1):
        r.key = (rank, 1, 0)
        r.num = rank
        sc = getattr(r.obj, "_scope", None)
        r.module = sc or ()
        r.new = wm is not None and r.obj._id >= wm.node
    for key, r in raws.items():
        kind = key[0]
        if kind == "o":
            op = ops.get(key[1])
            if op is not None:
                r.key, r.module, r.new = (op.key[0], 2, 0), op.module, op.new
            else:  # an intermediate root whose op was not walked cannot happen; be safe
                r.key = (big, 0, 0)
        elif kind == "c":
            op = ops[key[1]]
            r.key, r.module, r.new = (op.key[0], 0, key[2]), op.module, op.new
        else:
            r.key = (big, 0, 0)
            r.new = wm is not None and r.obj._id >= wm.tensor
    # a leaf sits just before its first consumer, inside the module all consumers share
    consumers: dict[tuple, list[_Raw]] = {}
    for src, dst, slot in edges:
        if src[0] == "l":
            op = ops[dst[1]]
            consumers.setdefault(src, []).append(op)
            r = raws[src]
            if (op.key[0], 0, slot) < r.key:
                r.key = (op.key[0], 0, slot)
    for key, users in consumers.items():
        raws[key].module = _common(u.module for u in users)
    all_raws = list(raws.values()) + list(ops.values())
    all_raws.sort(key=lambda r: (r.key, r.kind == "op"))
    n_tensor = 0
    for r in all_raws:
        if r.kind == "tensor":
            n_tensor += 1
            r.num = n_tensor
    pos = {id(r): i for i, r in enumerate(all_raws)}
    out_edges = []
    for src, dst, slot in edges:
        s = raws[src] if src[0] != "n" else ops[src[1]]
        d = raws[dst] if dst[0] != "n" else ops[dst[1]]
        out_edges.append((pos[id(s)], pos[id(d)], slot))
    out_edges.sort()
    return all_raws, out_edges


def _common(modules: Iterable[tuple]) -> tuple:
    it = iter(modules)
    first = next(it, ())
    for m in it:
        n = 0
        while n < len(first) and n < len(m) and first[n] == m[n]:
            n += 1
        first = first[:n]
    return first


def _walk_backward(roots: list[tuple[Tensor, str]], wm: Watermark | None) -> tuple[list, list]:
    """All grad_fn nodes behind `roots` (plus the root tensors), with next_functions edges."""
    nodes: dict[int, _Raw] = {}
    edges: list[tuple[int, int, int]] = []
    stack: list[Node] = []
    root_raws = []
    for t, _ in roots:
        r = _Raw("tensor", t)
        r.root = True
        root_raws.append(r)
        start = t.grad_fn if t.grad_fn is not None else t._accumulator
        if start is not None:
            stack.append(start)
            edges.append((id(r), id(start), 0))
    while stack:
        node = stack.pop()
        nid = id(node)
        if nid in nodes:
            continue
        nodes[nid] = _Raw("accumulate" if type(node) is AccumulateGrad else "op", node)
        for slot, (nxt, _) in enumerate(node._next):
            if nxt is not None:
                edges.append((nid, id(nxt), slot))
                if id(nxt) not in nodes:
                    stack.append(nxt)
    order = sorted(nodes.values(), key=lambda r: r.obj._id)
    counts = {"op": 0, "accumulate": 0}
    for r in order:
        counts[r.kind] += 1
        r.num = counts[r.kind]
        r.module = getattr(r.obj, "_scope", None) or ()
        r.new = wm is not None and r.obj._id >= wm.node
    for i, r in enumerate(root_raws, 1):
        r.num = i
        r.new = wm is not None and r.obj._id >= wm.tensor
        r.module = ()
    all_raws = order + root_raws
    pos = {id(r): i for i, r in enumerate(all_raws)}
    for nid, r in nodes.items():
        pos[nid] = pos[id(r)]
    out_edges = sorted((pos[s], pos[d], slot) for s, d, slot in edges)
    return all_raws, out_edges


# --- phase 2: labels for the nodes that are shown --------------------------------------------

_PREFIX = {"tensor": "t", "op": "op", "accumulate": "acc"}


def _label(r: _Raw, view: str, name_of: dict[int, str], extra: dict[int, str]) -> GraphNode:
    node = GraphNode(id=f"{_PREFIX[r.kind]}{r.num}", kind=r.kind, module=".".join(r.module),
                     new=r.new)
    obj = r.obj
    marks: list[str] = []
    mark_text = ""
    if r.kind == "tensor":
        _tensor_fields(node, r, name_of)
        if obj is not None and id(obj) in extra:
            marks.append(extra[id(obj)])
    else:
        core = obj
        node.op = type(core).__name__
        node.name = core.name if view == "backward" else node.op
        if r.kind == "accumulate":
            var = core.variable
            node.shape, node.dtype = var.shape, str(var.dtype)
            node.name = "AccumulateGrad"
            node.detail = var.name or name_of.get(id(var), "")
            if var._grad is not None:
                node.grad = summarise_array(var._grad.data)
            node.value = summarise_array(var.data)
        else:
            meta = getattr(core, "_out_meta", None)
            if meta is not None:
                node.shape, node.dtype = meta[0], str(meta[1])
            node.saved, node.freed = _saved(core)
        site = core.site if r.kind == "op" else None
        if site is not None:
            node.site, node.cell, node.line = str(site), site.cell, site.lineno
        m = getattr(core, "_mark", None)
        if m:
            marks.append(m)
            mark_text = getattr(core, "_mark_text", "") or ""
        if id(core) in extra:
            marks.append(extra[id(core)])
    node.marks = tuple(m for m in MARKS if m in marks)
    node.mark_text = mark_text
    return node


def _tensor_fields(node: GraphNode, r: _Raw, name_of: dict[int, str]) -> None:
    t = r.obj
    op = r.op
    if t is not None:
        node.name = t.name or name_of.get(id(t), "")
        node.shape, node.dtype = t.shape, str(t.dtype)
        node.requires_grad = t.requires_grad
        node.value = summarise_array(t.data)
        if t._grad is not None:
            node.grad = summarise_array(t._grad.data)
        if t.grad_fn is not None:
            node.role = "output" if r.root else "intermediate"
        else:
            node.role = "leaf" if t.requires_grad else "constant"
    elif op is not None and r.kind == "tensor" and r.slot == 0 and _is_output(r):
        meta = getattr(op, "_out_meta", None)
        if meta is not None:
            node.shape, node.dtype = meta[0], str(meta[1])
        node.requires_grad = True
        node.role = "intermediate"
    else:  # a constant input: only its shape was recorded
        meta = op._inputs_meta[r.slot] if op is not None else (None, None)
        node.shape = meta[0]
        node.dtype = str(meta[1]) if meta[1] is not None else ""
        node.role = "constant"


def _is_output(r: _Raw) -> bool:
    # outputs are keyed after their op (phase 2); constants before it
    return len(r.key) == 3 and r.key[1] == 2


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
    return GraphNode(id=s.id, kind="summary", name=s.name, count=s.count, detail=s.detail,
                     module=s.module, new=s.new)
