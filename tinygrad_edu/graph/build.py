"""Walk tensors into a `GraphModel`: the forward view (tensors and ops) or the backward view.

Two phases keep big graphs fast. Phase 1 is lean (no text is made): for the forward
view, one walk over the core objects (walk.py) reads each op once and decides order,
positions, modules and time steps; the summary (summarise.py) then collapses, folds
and caps on the walk's per-op lists and makes entries only for the nodes kept. The
backward view reads the same walk's nodes in creation order (`walk.BackwardWalk`,
laid out by `backward_raw_graph`) and summarises that list. Phase 2: only the shown
nodes get their labels (value summaries, creation sites). Everything is iterative and
linear: 100,000 ops are fine.

Ids: ops are numbered `op1, op2, ...` by their creation counter, tensors `t1, t2, ...`
in the order the forward pass made or first used them, AccumulateGrad nodes `acc1, ...`
and summary nodes `s1, ...`. Counters are relative to the graph, so the same code
gives the same ids (and byte-identical DOT) in any process.
Graph layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..core.engine import AccumulateGrad, Node
from ..core.errors import message
from ..core.function import next_node_number
from ..core.tensor import Tensor, next_tensor_number
from .model import MARKS, GraphEdge, GraphModel, GraphNode, Watermark
from .options import DrawOptions
from .summarise import Summary, chain_links, summarise_backward, summarise_forward
from .values import dtype_text, shape_text, summarise_array
from .walk import BackwardWalk, ForwardWalk

# types registered here draw themselves (a StaticGraph, lesson 12a's `Value`): build_graph
# hands such an object to its converter instead of walking tensors
_CONVERTERS: dict[type, Callable[..., GraphModel]] = {}


def register_converter(cls: type, fn: Callable[..., GraphModel]) -> None:
    r"""Let `build_graph(obj, **options)` (and so `tg.draw(obj)`) call `fn(obj, **options)`.

    Rules: the one way an object that is not a Tensor draws itself. The converter of the
    nearest class in `type(obj).__mro__` wins, so a subclass may register its own;
    registering a class again replaces its converter (a notebook cell run twice). `fn`
    gets `view`, `since`, `collapse` and `max_nodes` as keywords and returns a GraphModel.

    Example:
        >>> from tinygrad_edu.graph import GraphModel, GraphNode, build_graph
        >>> class Value:
        ...     def __init__(self, data):
        ...         self.data = data
        >>> def value_graph(v, **options):
        ...     return GraphModel([GraphNode("v1", "tensor", name=f"data {v.data}")], [], {})
        >>> register_converter(Value, value_graph)
        >>> [n.name for n in build_graph(Value(2.0)).nodes]
        ['data 2.0']
    """
    _CONVERTERS[cls] = fn


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
    return Watermark(next_tensor_number(), next_node_number())


class RawGraph:
    """Phase 1 result: one entry per node in parallel lists (cheap for 100,000s of nodes).

    `kind[i]` is "tensor" | "op" | "accumulate"; `obj[i]` the Tensor or Node (None for
    a constant input or a freed intermediate); for tensors `op[i]` is the op that made
    it (`slot[i] == -1`) or the op it feeds (a constant, `slot[i]` its input slot).
    The backward view's has every node; `link` maps an op to the next op of a straight
    chain (data order), `leaf_ops` an AccumulateGrad node to the ops using it.
    `sparse()` makes the forward view's (summarise.py): dicts keyed by raw position,
    holding only the nodes that are shown, and `total` nodes in all.
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
        "edges",
        "link",
        "leaf_ops",
        "total",
    )

    @classmethod
    def sparse(cls) -> RawGraph:
        g = cls()
        # dicts keyed by raw position where the full graph has lists (the same reads)
        for field in ("kind", "obj", "op", "slot", "module", "new", "num", "root"):
            setattr(g, field, {})
        return g

    def __init__(self) -> None:
        self.kind: list[str] = []
        self.obj: list[Any] = []
        self.op: list[Any] = []
        self.slot: list[int] = []
        self.module: list[tuple] = []
        self.new: list[bool] = []
        self.num: list[int] = []
        self.root: list[bool] = []
        self.edges: list[tuple[int, int, int]] = []
        self.link: dict[int, int] = {}
        self.leaf_ops: dict[int, list[int]] = {}  # AccumulateGrad node -> ops using it
        self.total: int | None = None

    def add(
        self, kind: str, obj: Any, op: Any, slot: int, module: tuple, new: bool, num: int
    ) -> int:
        self.kind.append(kind)
        self.obj.append(obj)
        self.op.append(op)
        self.slot.append(slot)
        self.module.append(module)
        self.new.append(new)
        self.num.append(num)
        self.root.append(False)
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
            raise TypeError(
                message(
                    "build_graph",
                    f"expected Tensors (or a list or dict of them), got {type(item).__name__}",
                    None,
                    "pass the tensors whose graph you want to see; an object of your own "
                    "draws once its type is given to tinygrad_edu.graph.register_converter",
                )
            )
    return out


def build_graph(*tensors: Any, options: DrawOptions | None = None, **settings: Any) -> GraphModel:
    r"""Build the GraphModel of everything that produced `tensors`.

    Rules: the forward view has tensor nodes and op nodes with data-flow edges
    (inputs -> op -> output), as learners draw it; the backward view has the
    `grad_fn` nodes PyTorch stores, with edges from each node to its
    `next_functions` and an AccumulateGrad node at every leaf that needs a gradient.
    Tensors may be given as arguments, lists, or a dict name -> tensor (the key names
    an unnamed tensor). Nodes made after the `since` watermark get `new=True`.
    Nodes built inside an `nn.Module` carry its path (`module="net.0"`); modules
    named in `collapse` (or every top-level module with `collapse=True`) become one
    summary node each. Runs of repeated identical blocks are folded (`fold`), and
    beyond `max_nodes` boxes (markers included) the nodes farthest from the outputs
    give way to "N more nodes" markers; the tensors asked for are always drawn. An
    object of a type given to `register_converter` (a StaticGraph) draws itself.

    Args:
        *tensors: Tensors, lists/tuples of them, or dicts name -> Tensor.
        options: a `DrawOptions` value (the defaults when left out).
        **settings: options to set or change, by name (see `DrawOptions`): view
            ("forward" or "backward"), since (a `watermark()`), collapse, max_nodes,
            fold, expand (time steps drawn whole, `"rnncell.t=5"`, or True), marks
            (core object -> mark kind), names (name -> Tensor), keep_ends (False folds
            a loop's first and last steps too, around the steps in `expand`).

    Returns:
        A GraphModel.

    Raises:
        ValueError: unknown view or mark kind. TypeError: something that is not a
        Tensor, or an unknown option.

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
    options = DrawOptions.given(options, settings, "build_graph")
    if len(tensors) == 1 and not isinstance(tensors[0], (Tensor, Mapping, list, tuple)):
        o = options
        asked = dict(view=o.view, since=o.since, collapse=o.collapse, max_nodes=o.max_nodes)
        drawn = _drawn_by_itself(tensors[0], asked)
        if drawn is not None:
            return drawn
    roots = _roots(tensors)
    with _cyclic_gc_paused():
        return _build(roots, options)


def _drawn_by_itself(obj: Any, options: dict) -> GraphModel | None:
    """The GraphModel of an object whose type (or a base of it) has a registered converter."""
    for cls in type(obj).__mro__:
        fn = _CONVERTERS.get(cls)
        if fn is not None:
            return fn(obj, **options)
    return None


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    # the walk makes many small objects but no cycles: the cyclic GC would only rescan
    # the (possibly huge) autograd graph again and again
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_on:
            gc.enable()


def _build(roots: list, options: DrawOptions) -> GraphModel:
    """Phase 1 picks the nodes to show (no text made); phase 2 labels only those."""
    raw, (kept, kept_edges, hidden) = _pick_nodes(roots, options)
    view = options.view
    name_of = _names_of(options.names, roots)
    extra = {id(obj): kind for obj, kind in options.marks}
    nodes = [
        (_summary_node(k) if isinstance(k, Summary) else _label(raw, k, view, name_of, extra))
        for k in kept
    ]
    ids = [n.id for n in nodes]
    graph_edges = [GraphEdge(ids[s], ids[d], slot) for s, d, slot in kept_edges]
    root_ids = [ids[j] for j, k in enumerate(kept) if not isinstance(k, Summary) and raw.root[k]]
    attrs = {"view": view, "roots": root_ids, "hidden": hidden, "total": len(raw)}
    opened = options.expand
    if opened and opened is not True:  # steps the learner opened: no later fold hides them
        attrs["opened"] = sorted(opened)
    graph = GraphModel(nodes, graph_edges, attrs)
    # private, never drawn: lets a view (the backward stepper) find a core object's box
    graph._ids_by_object = {
        id(raw.obj[k]): ids[j]
        for j, k in enumerate(kept)
        if not isinstance(k, Summary) and raw.obj[k] is not None
    }
    return graph


def _pick_nodes(
    roots: list, options: DrawOptions
) -> tuple[RawGraph, tuple[list, list[tuple[int, int, int]], int]]:
    """The RawGraph and `(kept, edges between them, hidden count)` (see summarise.py)."""
    if options.view == "backward":
        raw = backward_raw_graph(BackwardWalk(roots, options.since), roots)
        return raw, summarise_backward(raw, options)
    # the forward summary is decided on the walk; only the kept nodes get entries
    raw = RawGraph.sparse()
    return raw, summarise_forward(ForwardWalk(roots, options.since), options, raw)


def _names_of(names: Mapping[str, Any] | None, roots: list) -> dict[int, str]:
    """id(tensor) -> the name it is drawn with when it has none of its own."""
    name_of = {id(t): n for n, t in (names or {}).items() if isinstance(t, Tensor)}
    for t, n in roots:
        if n:  # a dict key the learner gave it wins over a namespace's name
            name_of[id(t)] = n
    return name_of


# --- phase 1: lean walks -------------------------------------------------------------------


def backward_raw_graph(walk: BackwardWalk, roots: list[tuple[Tensor, str]]) -> RawGraph:
    """The backward RawGraph: the walk's grad_fn nodes in creation order, then the root tensors."""
    raw = RawGraph()
    first_new_node = walk.first_new_node
    index: dict[Node, int] = {}  # node -> raw position
    counts = {"op": 0, "accumulate": 0}
    for node, scope, number in zip(walk.nodes, walk.scope, walk.number):
        kind = "accumulate" if type(node) is AccumulateGrad else "op"
        counts[kind] += 1
        index[node] = raw.add(kind, node, None, 0, scope, number >= first_new_node, counts[kind])
    incoming: dict[int, list[int]] = {}  # raw position -> the positions sending to it
    for a, edges in enumerate(walk.edges):
        for slot, nxt in enumerate(edges):
            if nxt is not None:
                b = index[nxt]
                raw.edges.append((a, b, slot))
                incoming.setdefault(b, []).append(a)
    for n, ((t, _), start) in enumerate(zip(roots, walk.starts), 1):
        new = t.creation_number >= walk.first_new_tensor
        i = raw.add("tensor", t, None, -1, (), new, n)
        raw.root[i] = True
        if start is not None:
            b = index[start]
            raw.edges.append((i, b, 0))
            incoming.setdefault(b, []).append(i)
    _link_backward(raw, incoming)
    return raw


def _link_backward(raw: RawGraph, incoming: dict[int, list[int]]) -> None:
    """The users of each leaf, and the straight chains folding follows, in data order."""
    kinds = raw.kind
    single: list[tuple[int, int]] = []  # (op b, the op a that alone reads b's output)
    for b, srcs in incoming.items():
        if kinds[b] == "accumulate":
            raw.leaf_ops[b] = srcs
        if len(srcs) == 1 and kinds[b] == "op" and kinds[srcs[0]] == "op":
            single.append((b, srcs[0]))  # a sends b its whole gradient: b comes first in data order
    if not single:
        return
    single.sort()  # raw positions are creation order: the earliest b first
    ops, readers = chain_links(*np.array(single).T)  # one link into each op, as forward
    raw.link = dict(zip(ops.tolist(), readers.tolist()))


# --- phase 2: labels for the nodes that are shown --------------------------------------------

_PREFIX = {"tensor": "t", "op": "op", "accumulate": "acc"}


def _label(
    raw: RawGraph, i: int, view: str, name_of: dict[int, str], extra: dict[int, str]
) -> GraphNode:
    kind = raw.kind[i]
    node = GraphNode(
        id=f"{_PREFIX[kind]}{raw.num[i]}", kind=kind, module=".".join(raw.module[i]), new=raw.new[i]
    )
    obj = raw.obj[i]
    marks: list[str] = []
    mark_text = ""
    if kind == "tensor":
        _tensor_fields(node, raw, i, name_of)
        if obj is not None and id(obj) in extra:
            marks.append(extra[id(obj)])
    else:
        node.op = obj.op
        node.name = obj.name if view == "backward" else node.op
        if kind == "accumulate":
            var = obj.variable
            node.shape, node.dtype = var.shape, dtype_text(var.dtype)
            node.name = "AccumulateGrad"
            node.detail = var.name or name_of.get(id(var), "")
            node.value = summarise_array(np.asarray(var))
            if var.grad_held is not None:
                node.grad = summarise_array(np.asarray(var.grad_held))
        else:
            meta = obj.output_meta
            if meta is not None:
                node.shape, node.dtype = meta[0], dtype_text(meta[1])
            node.saved, node.freed = _saved(obj)
            site = obj.site
            if site is not None:
                node.site, node.cell, node.line = str(site), site.cell, site.lineno
        if obj.mark:
            marks.append(obj.mark)
            mark_text = obj.mark_text or ""
        if id(obj) in extra:
            marks.append(extra[id(obj)])
    if marks:  # (most nodes have none: no generator for them)
        node.marks = tuple(m for m in MARKS if m in marks)
        node.mark_text = mark_text
    return node


def _tensor_fields(node: GraphNode, raw: RawGraph, i: int, name_of: dict[int, str]) -> None:
    t = raw.obj[i]
    op = raw.op[i]
    if t is not None:
        node.name = t.name or name_of.get(id(t), "")
        node.shape, node.dtype = t.shape, dtype_text(t.dtype)
        node.requires_grad = t.requires_grad
        node.value = summarise_array(np.asarray(t))
        if t.grad_held is not None:
            node.grad = summarise_array(np.asarray(t.grad_held))
        if t.grad_fn is not None:
            node.role = "output" if raw.root[i] else "intermediate"
        else:
            node.role = "leaf" if t.requires_grad else "constant"
    elif raw.slot[i] == -1:  # an intermediate nobody keeps: only its shape was recorded
        meta = op.output_meta
        if meta is not None:
            node.shape, node.dtype = meta[0], dtype_text(meta[1])
        node.requires_grad = True
        node.role = "intermediate"
    else:  # an input that needs no grad (data, a number): only its shape was recorded
        shape, dtype = op.input_meta[raw.slot[i]]
        node.shape = tuple(shape) if shape is not None else None
        node.dtype = dtype_text(dtype) if dtype is not None else ""
        node.role = "constant"
        t = _saved_constant(op, raw.slot[i])
        if t is not None:  # the op kept it for backward: show its name and value too
            node.name = t.name or name_of.get(id(t), "")
            node.value = summarise_array(np.asarray(t))


def _saved_constant(op: Any, slot: int) -> Tensor | None:
    """The Tensor at input `slot` if the op saved it (a Tensor that needs no grad)."""
    saved = op.saved_values()
    if not saved:
        return None
    meta = op.input_meta
    # constants in slot order, matched to saved no-grad Tensors in order, by shape and dtype
    slots = [k for k, nxt in enumerate(op.input_nodes) if nxt is None]
    found = [s.tensor for s in saved if isinstance(s.tensor, Tensor) and not s.tensor.requires_grad]
    j = 0
    for k in slots:
        if j < len(found) and found[j].shape == meta[k][0] and found[j].dtype == meta[k][1]:
            if k == slot:
                return found[j]
            j += 1
    return None


def _saved(core: Any) -> tuple[tuple[str, ...], bool]:
    if core.freed:
        return (), True
    out = []
    for arr, tensor, is_output in core.saved_values():
        if arr is None:
            continue
        name = ""
        if isinstance(tensor, Tensor):
            name = tensor.name or ""
        elif is_output:
            name = "output"
        text = f"{shape_text(arr.shape)} {dtype_text(arr.dtype)}"
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
