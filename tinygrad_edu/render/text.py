"""A text picture of a GraphModel: an indented tree from the outputs back to the inputs.

Used when Graphviz is missing (and as the `text/plain` of small drawings in tests):
every node once, shared nodes referred to by id the second time.
Render layer: standard library only.
"""

from __future__ import annotations

from ..graph.model import GraphModel, GraphNode
from ..graph.values import shape_text
from .dot import _summary_text, op_symbol


def node_text(n: GraphNode, show_values: bool = True, show_grads: bool = True) -> str:
    """One line for one node, e.g. `t3 e () data -6.0000 grad 2.0000`."""
    if n.kind == "op":
        what = n.name if n.name.endswith("Backward") else f"{op_symbol(n.op)} ({n.op})"
    elif n.kind == "accumulate":
        what = " ".join(x for x in ("AccumulateGrad", n.detail, shape_text(n.shape)) if x)
    elif n.kind == "summary":
        what = _summary_text(n).replace("\n", " ")
    else:
        what = " ".join(x for x in (n.name, shape_text(n.shape)) if x) or "tensor"
        if show_values and n.value:
            what += f" data {n.value}"
    if show_grads and n.grad and n.kind in ("tensor", "accumulate"):
        what += f" grad {n.grad}"
    flags = (["new"] if n.new else []) + list(n.marks)
    if flags:
        what += f"  <{', '.join(flags)}>"
    return f"{n.id} {what}"


def to_text(graph: GraphModel, show_values: bool = True, show_grads: bool = True) -> str:
    r"""Draw a GraphModel as an indented tree, outputs first, each node's inputs below it.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph
        >>> a = tg.tensor(2.0, requires_grad=True, name="a")
        >>> print(to_text(build_graph({"y": a * a})))
        t2 y () data 4.0000
        └── op1 * (Mul)
            ├── t1 a () data 2.0000
            └── t1 (see above)
    """
    inputs: dict[str, list[str]] = {}
    backward = graph.attrs.get("view") == "backward"
    for e in graph.edges:
        if backward:
            inputs.setdefault(e.src, []).append(e.dst)
        else:
            inputs.setdefault(e.dst, []).append(e.src)
    has_parent = {c for kids in inputs.values() for c in kids}
    tops = [n.id for n in graph.nodes if n.id not in has_parent]
    tops.reverse()  # outputs are made last
    lines: list[str] = []
    shown: set[str] = set()
    # explicit stack of (node id, prefix, connector) so deep graphs need no recursion
    stack: list[tuple[str, str, str]] = [(t, "", "") for t in reversed(tops)]
    while stack:
        nid, prefix, conn = stack.pop()
        if nid in shown:
            lines.append(f"{prefix}{conn}{nid} (see above)")
            continue
        shown.add(nid)
        lines.append(f"{prefix}{conn}{node_text(graph.node(nid), show_values, show_grads)}")
        kids = inputs.get(nid, [])
        child_prefix = prefix + ("    " if conn in ("└── ", "") else "│   ") if conn else prefix
        for i in reversed(range(len(kids))):
            stack.append((kids[i], child_prefix, "└── " if i == len(kids) - 1 else "├── "))
    return "\n".join(lines)
