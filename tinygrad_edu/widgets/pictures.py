"""The widgets' one door to the graph and render layers: GraphModel model in, SVG and text out.

Widgets never build DOT themselves (docs/style.md, Code): this module asks
`graph.build_graph` for the model and `render` for DOT and SVG, and writes the short
deterministic texts the widgets show (live summaries, node details).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from ..graph import DrawOptions, GraphModel, build_graph, this_cell
from ..graph.chains import module_levels

MAX_LISTED = 12  # new nodes named in a live summary before "... and N more"


@dataclass
class Rendered:
    """A drawn graph: the model, its SVG, a one-line summary and the new nodes' ids."""

    graph: GraphModel
    svg: str
    summary: str
    new_ids: list[str] = field(default_factory=list)
    fingerprint: str = ""
    text_px: float = 0.0  # the smallest text once the whole drawing fits the panel's box
    folded: tuple[str, ...] = ()  # modules drawn as one box each so that it fits


def graph_svg(graph: GraphModel, options: DrawOptions | None = None, fold: bool = False) -> str:
    """DOT through the render layer to SVG (the only way widgets get a picture).

    Same orientation choice and fitting as `tg.draw` (`render.drawing.lay_out`), with
    the render options of `options` (rankdir, values, grads, highlight, timeout); long
    chains are folded only with `fold` (the stepper walks every node, so it never is).
    """
    from ..render.drawing import lay_out

    o = options or DrawOptions()
    return lay_out(graph, o.rankdir, o.timeout, fold, **o.dot_options())[1]


def render_view(
    tensors: Any,
    options: DrawOptions | None = None,
    cell_only: bool = False,
    fold_to_fit: bool = False,
    **settings: Any,
) -> Rendered:
    """Build and draw the graph of `tensors` with the given options (for GraphView).

    Rules: `options` (changed by any `settings`, see `DrawOptions`) says what to
    build and draw. The whole drawing is made to fit the panel's box with text of
    PANEL_TEXT_PX or more (`render.drawing.lay_out_in_box`: the orientation, then long
    straight chains folded). With `fold_to_fit`, a graph that still does not fit draws
    its modules as one box each, the innermost level first, until it fits
    (`Rendered.folded` names them); without it, every box is drawn.
    `cell_only` keeps only the nodes made after `since` and the inputs they read
    (`graph.this_cell`), as the live graph's "cell" scope draws.
    """
    from ..render.drawing import PANEL_TEXT_PX

    options = DrawOptions.given(options, settings, "render_view")
    graph = build_graph(*tensors, options=options)
    if cell_only:
        graph = this_cell(graph)
    graph, svg, text_px = _in_box(graph, options, fold_to_fit)
    folded: tuple[str, ...] = ()
    if fold_to_fit and not options.collapse and text_px < PANEL_TEXT_PX:
        for level in module_levels(graph):
            smaller = build_graph(*tensors, options=replace(options, collapse=tuple(level)))
            if cell_only:
                smaller = this_cell(smaller)
            smaller, svg_s, text_s = _in_box(smaller, options, True)
            if text_s > text_px:  # keep the fold only when it makes the text larger
                graph, svg, text_px, folded = smaller, svg_s, text_s, tuple(level)
            if text_px >= PANEL_TEXT_PX:
                break
    # new nodes come out filled (to_dot reads `node.new`); the widget adds CSS classes
    summary = short_summary(graph)
    if folded:
        summary += f", {_fold_note(folded)} folded to fit"
    return Rendered(graph, svg, summary, graph.new_ids(), fingerprint(graph), text_px, folded)


def _in_box(graph: GraphModel, options: DrawOptions, fold: bool) -> tuple[GraphModel, str, float]:
    """The graph as drawn in the panel's box (long chains may be folded), its SVG, text px."""
    from ..render.drawing import PANEL_BOX_PX, lay_out_in_box

    if not graph.nodes:
        return graph, "", 0.0
    rankdirs = (options.rankdir,) if options.rankdir else ("TB", "LR")
    drawn, _, svg, text_px = lay_out_in_box(
        graph, PANEL_BOX_PX, fold, options.timeout, rankdirs, **options.dot_options()
    )
    return drawn, svg, text_px


def _fold_note(paths: tuple[str, ...]) -> str:
    return paths[0] if len(paths) == 1 else f"{paths[0]} ... {paths[-1]}"


def live_graph(roots: list, options: DrawOptions | None = None, **settings: Any) -> GraphModel:
    """The live graph's model: the graphs of `roots`, nodes made after `since` flagged new."""
    return build_graph(*roots, options=DrawOptions.given(options, settings, "live_graph"))


def live_bundle(graph: GraphModel, missing: Any = ()) -> dict[str, str]:
    """What the live graph displays under a cell: the drawing as HTML and a text summary.

    One copy of the SVG, not two: JupyterLab and Notebook show the `text/html` whether
    the notebook is trusted (the drawing, hover for details) or not (the summary and a
    hint to trust it), so an `image/svg+xml` copy would only double the saved notebook
    (`tg.draw` keeps one for exporters that read SVG only).
    """
    from ..render.drawing import inline_html

    # to_dot fills the new nodes and adds a "new in this cell" legend; a long cell's graph
    # has its straight chains folded so that it fits one screen
    svg = graph_svg(graph, fold=True)
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

    return details(graph.node(node_id), tuple(graph.attrs.get("opened", ())))
