"""The widgets' one door to the graph and render layers: GraphModel model in, SVG and text out.

Widgets never build DOT themselves (docs/style.md, Code): this module asks
`graph.build_graph` for the model and `render` for DOT and SVG, and writes the short
deterministic texts the widgets show (live summaries, node details).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..graph import GraphModel, build_graph, this_cell

MAX_LISTED = 12  # new nodes named in a live summary before "... and N more"


@dataclass
class Rendered:
    """A drawn graph: the model, its SVG, a one-line summary and the new nodes' ids."""

    graph: GraphModel
    svg: str
    summary: str
    new_ids: list[str] = field(default_factory=list)
    fingerprint: str = ""


def graph_svg(graph: GraphModel, rankdir: str | None = None, **options: Any) -> str:
    """DOT through the render layer to SVG (the only way widgets get a picture).

    Same orientation choice and fitting as `tg.draw` (`render.drawing.lay_out`).
    """
    from ..render.drawing import lay_out

    return lay_out(graph, rankdir, **options)[1]


def render_view(
    tensors: Any,
    view: str = "forward",
    show_values: bool = True,
    show_grads: bool = True,
    collapse: bool = False,
    since: Any = None,
    names: dict | None = None,
    max_nodes: int | None = None,
    cell_only: bool = False,
) -> Rendered:
    """Build and draw the graph of `tensors` with the given options (for GraphView).

    `cell_only` keeps only the nodes made after `since` and the inputs they read
    (`graph.this_cell`), as the live graph's "cell" scope draws.
    """
    kwargs: dict[str, Any] = {} if max_nodes is None else {"max_nodes": max_nodes}
    graph = build_graph(*tensors, view=view, since=since, collapse=collapse, names=names, **kwargs)
    if cell_only:
        graph = this_cell(graph)
    # new nodes come out filled (to_dot reads `node.new`); the widget adds CSS classes
    svg = graph_svg(graph, show_values=show_values, show_grads=show_grads) if graph.nodes else ""
    return Rendered(graph, svg, short_summary(graph), graph.new_ids(), fingerprint(graph))


def live_graph(roots: list, since: Any, max_nodes: int, names: dict | None = None) -> GraphModel:
    """The live graph's model: the graphs of `roots`, nodes made after `since` flagged new."""
    return build_graph(*roots, since=since, max_nodes=max_nodes, names=names)


def live_bundle(graph: GraphModel, missing: Any = ()) -> dict[str, str]:
    """What the live graph displays under a cell: the drawing as HTML and a text summary.

    One copy of the SVG, not two: JupyterLab and Notebook show the `text/html` whether
    the notebook is trusted (the drawing, hover for details) or not (the summary and a
    hint to trust it), so an `image/svg+xml` copy would only double the saved notebook
    (`tg.draw` keeps one for exporters that read SVG only).
    """
    from ..render.drawing import inline_html

    svg = graph_svg(graph)  # to_dot fills the new nodes and adds a "new in this cell" legend
    text = live_text(graph, missing)
    return {"text/html": inline_html(svg, text), "text/plain": text}


def drawing_step() -> Any:
    """A block that draws, and then starts the next drawing's `dot` (render/dot_process.py).

    The live view draws a cell's graph inside it, so starting that process does not
    compete with the rest of the cell's drawing.
    """
    from ..render.dot_process import start_next_after

    return start_next_after()


def fingerprint(graph: GraphModel) -> str:
    """A hash of what is drawn, ignoring which nodes are new (that changes every cell)."""
    h = hashlib.sha1()
    for n in graph.nodes:
        h.update(repr([v for k, v in vars(n).items() if k != "new"]).encode())
    for e in graph.edges:
        h.update(repr((e.src, e.dst, e.slot, e.label)).encode())
    h.update(repr(sorted((k, repr(v)) for k, v in graph.attrs.items())).encode())
    return h.hexdigest()[:16]


def short_summary(graph: GraphModel) -> str:
    """`forward graph, 7 nodes`: what a GraphView's repr and toolbar say."""
    n = len(graph.nodes)
    return f"{graph.attrs.get('view', 'forward')} graph, {n} node{'' if n == 1 else 's'}"


def live_text(graph: GraphModel, missing: Any = ()) -> str:
    r"""The live graph's deterministic text/plain: the graph summary and the new nodes.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph, watermark
        >>> x = tg.tensor(2.0, requires_grad=True, name="x")
        >>> mark = watermark()
        >>> print(live_text(build_graph({"y": x * x}, since=mark)))
        live graph: forward graph, 3 nodes (2 tensors, 1 op)
        new in this cell: Mul, y
    """
    new = [n.display_name() for n in graph.nodes if n.new]
    listed = ", ".join(new[:MAX_LISTED]) if new else "none"
    if len(new) > MAX_LISTED:
        listed += f" ... and {len(new) - MAX_LISTED} more"
    lines = [f"live graph: {graph.summary()}", f"new in this cell: {listed}"]
    if missing:
        lines.append("not found: " + ", ".join(str(m) for m in missing))
    return "\n".join(lines)


def has_node(graph: GraphModel | None, node_id: str) -> bool:
    """Whether `graph` has a node with this id."""
    return graph is not None and node_id in graph


def node_ids(graph: GraphModel | None) -> list[str]:
    """The graph's node ids in drawing order (empty without a graph)."""
    return [] if graph is None else [n.id for n in graph.nodes]


def node_details(graph: GraphModel | None, node_id: str) -> str:
    r"""The side-area text for one node: what it is, shapes, values, grads, where it was built.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
        >>> g = build_graph({"y": x * x})
        >>> print(node_details(g, "t1"))
        x  (t1, leaf tensor)
        shape: (2,) float64
        value: [1, 2]
        grad: none yet
    """
    if graph is None or not has_node(graph, node_id):
        return ""
    from ..render.dot import node_details as details

    return details(graph.node(node_id))
