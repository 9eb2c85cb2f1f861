"""`GraphModel`, the plain model of a drawing: nodes, edges and attributes, with no drawing code.

`build_graph` (build.py) turns tensors into a `GraphModel`; `render` turns a `GraphModel` into
DOT and SVG; widgets read node fields to show details. Every field is plain data
(str, int, tuple), ids come from creation order (`t1`, `op3`), never from `id()`, so
the same code gives the same GraphModel in any process. Graph layer: standard library
only (no numpy arrays are kept here, only their summaries).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

KINDS = ("tensor", "op", "accumulate", "summary")
MARKS = ("anomaly", "breakpoint", "current", "gradcheck")


class Watermark(NamedTuple):
    """Next tensor and node creation counters at one moment (see `watermark()`)."""

    tensor: int
    node: int


@dataclass
class GraphNode:
    r"""One box of the drawing: a tensor, an op (`grad_fn`), an AccumulateGrad or a summary.

    Rules: `id` is unique within its GraphModel and stable for the same code. Text fields
    are empty strings when unknown; `shape` is None when unknown. `marks` holds
    kinds from MARKS ("anomaly", "breakpoint", "current", "gradcheck") and
    `mark_text` explains them. Summary nodes (`kind="summary"`) stand for `count`
    hidden nodes: a collapsed module, a folded repeated block, or "N more nodes".
    """

    id: str
    kind: str
    name: str = ""  # tensor name, op display name ("Mul" / "MulBackward"), or summary title
    op: str = ""  # op class name for op nodes, e.g. "MatMul"
    shape: tuple | None = None
    dtype: str = ""
    value: str = ""  # value summary, e.g. "2.0000" or "mean 0.1, std 1"
    grad: str = ""  # grad summary, "" before backward
    role: str = ""  # tensors: "leaf" | "constant" | "output" | "intermediate";
    # summaries: "module" (collapsed) | "repeat" (folded blocks) | "more" (node cap)
    requires_grad: bool = False
    saved: tuple[str, ...] = ()  # what an op saved for backward, e.g. ("x (3,) float64",)
    freed: bool = False  # saved tensors were freed by a backward without retain_graph
    site: str = ""  # "cell [4], line 2: y = x @ w"
    cell: int | None = None
    line: int | None = None
    module: str = ""  # module path, e.g. "net.0" ("" outside any module)
    new: bool = False  # created after the `since` watermark
    earlier: bool = False  # an input from an earlier cell, kept by `scope.this_cell`
    marks: tuple[str, ...] = ()
    mark_text: str = ""
    count: int = 0  # summary nodes: how many nodes this one stands for
    blocks: int = 0  # "repeat" summaries: how many identical blocks were folded
    detail: str = ""  # summary nodes: what is folded, e.g. "Mul -> Add"

    def display_name(self) -> str:
        """How texts name this node: a tensor's name (or id), an op's name, a summary's title."""
        if self.kind == "tensor":
            return self.name or ("const" if self.role == "constant" else self.id)
        if self.kind == "accumulate":
            return f"AccumulateGrad({self.detail})" if self.detail else "AccumulateGrad"
        return self.name or self.op or self.id


@dataclass
class GraphEdge:
    """An arrow. Forward view: data flow (tensor -> op -> tensor). Backward view:
    gradient flow as PyTorch stores it (`grad_fn` -> each of its `next_functions`)."""

    src: str
    dst: str
    slot: int = 0  # which input of the op (forward) / which next_functions entry (backward)
    label: str = ""


@dataclass
class GraphModel:
    r"""A drawable graph: ordered nodes, ordered edges and graph-level attributes.

    Rules: nodes and edges are in a deterministic order (creation order); `attrs`
    holds `view` ("forward" | "backward"), `roots` (ids of the tensors asked for),
    `hidden` (nodes left out by summarisation), `total` (nodes before summarising)
    and, when the learner opened time steps with `expand=`, `opened` (their paths).

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph
        >>> a = tg.tensor(2.0, requires_grad=True, name="a")
        >>> g = build_graph(a * 3)
        >>> [n.id for n in g.nodes]
        ['t1', 't2', 'op1', 't3']
        >>> g.summary()
        'forward graph, 4 nodes (3 tensors, 1 op)'
    """

    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index: dict[str, GraphNode] | None = None
        self._ids_by_object: dict[int, str] = {}  # id(core object) -> node id, set by build

    def id_of(self, obj: Any) -> str | None:
        """The id of the box drawn for a core Tensor or grad_fn node (None if not shown)."""
        return self._ids_by_object.get(id(obj))

    def node(self, node_id: str) -> GraphNode:
        """The node with this id (KeyError if there is none)."""
        if self._index is None or len(self._index) != len(self.nodes):
            self._index = {n.id: n for n in self.nodes}
        return self._index[node_id]

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node_id: object) -> bool:
        try:
            self.node(node_id)  # type: ignore[arg-type]
        except (KeyError, TypeError):
            return False
        return True

    def counts(self) -> dict[str, int]:
        """Number of nodes of each kind, in KINDS order, kinds with none left out."""
        out = {k: 0 for k in KINDS}
        for n in self.nodes:
            out[n.kind] = out.get(n.kind, 0) + 1
        return {k: v for k, v in out.items() if v}

    def new_ids(self) -> list[str]:
        """Ids of the nodes created after the `since` watermark, in order."""
        return [n.id for n in self.nodes if n.new]

    def marked(self) -> dict[str, list[str]]:
        """Mark kind -> ids of the nodes carrying it."""
        out: dict[str, list[str]] = {}
        for n in self.nodes:
            for m in n.marks:
                out.setdefault(m, []).append(n.id)
        return out

    def modules(self) -> list[str]:
        """Module paths that own nodes, in first-seen order (parents before children)."""
        seen: dict[str, None] = {}
        for n in self.nodes:
            if n.module:
                parts = n.module.split(".")
                for i in range(1, len(parts) + 1):
                    seen.setdefault(".".join(parts[:i]), None)
        return list(seen)

    def summary(self) -> str:
        """One deterministic line, e.g. `forward graph, 7 nodes (3 tensors, 4 ops)`."""
        words = {
            "tensor": ("tensor", "tensors"),
            "op": ("op", "ops"),
            "accumulate": ("AccumulateGrad", "AccumulateGrad"),
            "summary": ("summary", "summaries"),
        }
        parts = []
        for kind, k in self.counts().items():
            one, many = words[kind]
            parts.append(f"{k} {one if k == 1 else many}")
        n = len(self.nodes)
        text = f"{self.attrs.get('view', 'forward')} graph, {n} node{'' if n == 1 else 's'}"
        if parts:
            text += f" ({', '.join(parts)})"
        hidden = self.attrs.get("hidden", 0)
        if hidden:
            text += f", {hidden} more summarised"
        return text

    def fingerprint(self) -> str:
        """A short hash of everything drawn: equal fingerprints draw the same picture."""
        h = hashlib.sha1()
        for n in self.nodes:
            h.update(repr(tuple(vars(n).values())).encode())
        for e in self.edges:
            h.update(repr((e.src, e.dst, e.slot, e.label)).encode())
        h.update(repr(sorted((k, repr(v)) for k, v in self.attrs.items())).encode())
        return h.hexdigest()[:16]
