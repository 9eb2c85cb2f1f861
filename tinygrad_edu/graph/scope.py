"""Cut a GraphModel down to what one notebook cell made: its new nodes and the inputs they read.

The live graph (widgets/live.py) builds the graph of the tensors a cell touched with a
`since` watermark, then calls `this_cell`: nodes made before the cell disappear, except
the tensors the new ops read, which stay as leaves marked `earlier` ("from an earlier
cell"). So re-running a cell draws only its own work, never a second copy of `x`.
Graph layer: standard library only.
"""

from __future__ import annotations

from dataclasses import replace

from .model import GraphModel


def this_cell(graph: GraphModel) -> GraphModel:
    r"""The part of `graph` flagged new, plus the older nodes it reads as `earlier` leaves.

    Rules: a graph with no new node is returned as it is (a cell that only ran
    backward still shows the graph whose grads it filled). Older nodes feeding a new
    node are kept, with `earlier=True` and no incoming edges; every other older node
    and edge is left out. `attrs["earlier"]` counts the older nodes left out.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph, watermark
        >>> x = tg.tensor(2.0, requires_grad=True, name="x")
        >>> y = x * x
        >>> mark = watermark()
        >>> g = this_cell(build_graph({"z": y + 1, "y": y}, since=mark))
        >>> [(n.id, n.name or n.op, n.earlier) for n in g.nodes]
        [('t2', 'y', True), ('t3', '', False), ('op2', 'Add', False), ('t4', 'z', False)]
        >>> g.attrs["earlier"]
        2
    """
    if not any(n.new for n in graph.nodes):
        return graph
    new = {n.id for n in graph.nodes if n.new}
    inputs = {e.src for e in graph.edges if e.dst in new and e.src not in new}
    nodes = [
        n if n.id in new else replace(n, earlier=True)
        for n in graph.nodes
        if n.id in new or n.id in inputs
    ]
    edges = [e for e in graph.edges if e.dst in new]
    attrs = dict(graph.attrs)
    kept = {n.id for n in nodes}
    attrs["roots"] = [r for r in attrs.get("roots", ()) if r in kept]
    attrs["earlier"] = len(graph.nodes) - len(nodes)
    out = GraphModel(nodes, edges, attrs)
    out._ids_by_object = {k: v for k, v in graph._ids_by_object.items() if v in kept}
    return out
