"""`tg.draw(...)`: a displayable picture of a graph (SVG in Jupyter, DOT as `.source`).

A `Drawing` holds the Graph model, its DOT text (made at once, cheap) and the SVG
(laid out by `dot` on first use, then cached). In Jupyter `_repr_mimebundle_` gives
`image/svg+xml` plus a deterministic one-line `text/plain`; without Graphviz it gives
a text tree and the install hint instead of a traceback.
Render layer: standard library only (matplotlib/IPython never imported here).
"""

from __future__ import annotations

import os
from typing import Any

from ..core.errors import MissingDependencyError, message
from ..graph import DEFAULT_MAX_NODES, Graph, build_graph
from .dot import to_dot
from .svg import RenderError, dot_to, dot_to_svg
from .text import to_text


class Drawing:
    r"""A graph picture: `.graph` (model), `.source` (DOT), `.svg()`, `.save(path)`.

    Rules: displays as SVG in Jupyter, with `text/plain` like
    `<Drawing: forward graph, 4 nodes (3 tensors, 1 op)>` (no memory addresses).
    `.svg()` runs Graphviz once and caches the result. Without Graphviz the display
    falls back to a text tree and the install hint.

    Example:
        >>> import tinygrad_edu as tg
        >>> a = tg.tensor(2.0, requires_grad=True, name="a")
        >>> d = tg.draw(a * 3)
        >>> d
        <Drawing: forward graph, 4 nodes (3 tensors, 1 op)>
        >>> d.source.startswith("digraph G {")
        True
    """

    def __init__(self, graph: Graph, rankdir: str = "LR", show_values: bool = True,
                 show_grads: bool = True, highlight: Any = (), timeout: float = 10.0) -> None:
        self.graph = graph
        self.options = dict(rankdir=rankdir, show_values=show_values, show_grads=show_grads)
        self.source = to_dot(graph, rankdir=rankdir, show_values=show_values,
                             show_grads=show_grads, highlight=tuple(highlight))
        self.timeout = timeout
        self._svg: str | None = None

    def svg(self) -> str:
        """The SVG text (Graphviz runs on the first call only).

        Raises:
            MissingDependencyError: no Graphviz `dot` program (the message says how to
                install it). RenderError: Graphviz failed or timed out.
        """
        if self._svg is None:
            self._svg = dot_to_svg(self.source, timeout=self.timeout)
        return self._svg

    def text(self) -> str:
        """The graph as an indented text tree (what shows when Graphviz is missing)."""
        return to_text(self.graph, self.options["show_values"], self.options["show_grads"])

    def save(self, path: str | os.PathLike) -> str:
        """Write the picture; the suffix picks the format: .svg, .png, .pdf or .dot.

        Returns the path written. Raises ValueError for another suffix.
        """
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lower()
        if suffix == ".dot" or suffix == ".gv":
            data = self.source.encode("utf-8")
        elif suffix == ".svg":
            data = self.svg().encode("utf-8")
        elif suffix in (".png", ".pdf"):
            data = dot_to(self.source, suffix[1:], timeout=self.timeout)
        else:
            raise ValueError(message("Drawing.save", f"cannot save a drawing as {suffix or path!r}",
                                     None, "use a file name ending in .svg, .png, .pdf or .dot"))
        with open(path, "wb") as f:
            f.write(data)
        return path

    def __repr__(self) -> str:
        return f"<Drawing: {self.graph.summary()}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        try:
            return {"image/svg+xml": self.svg(), "text/plain": repr(self)}
        except MissingDependencyError as e:
            return {"text/plain": f"{repr(self)}\n{self.text()}\n\n{e}"}
        except RenderError as e:
            return {"text/plain": f"{repr(self)}\n{e}"}

    def _repr_svg_(self) -> str | None:
        try:
            return self.svg()
        except (MissingDependencyError, RenderError):
            return None


def draw(*tensors: Any, view: str = "forward", show_values: bool = True, show_grads: bool = True,
         rankdir: str = "LR", collapse: Any = (), since: Any = None,
         max_nodes: int | None = DEFAULT_MAX_NODES, highlight: Any = (), marks: Any = None,
         timeout: float = 10.0) -> Drawing:
    r"""Draw the graph that produced `tensors` (or a static graph), for Jupyter.

    Rules: the forward view shows tensors and ops as you would draw them; the
    backward view shows the `grad_fn` nodes backward() runs, AccumulateGrad at the
    leaves. Values and grads are shown once they exist. Big graphs are summarised
    (see `build_graph`). Nothing is laid out until the drawing is displayed.

    Args:
        *tensors: Tensors, lists of them, a dict name -> Tensor, or a StaticGraph.
        view: "forward" or "backward".
        show_values: show value summaries.
        show_grads: show gradient summaries.
        rankdir: "LR" (left to right) or "TB" (top to bottom).
        collapse: module paths to draw as one box each, or True for all modules.
        since: a `tinygrad_edu.graph.watermark()`; later nodes are highlighted.
        max_nodes: the most nodes to draw before summarising.
        highlight: graph node ids to emphasise.
        marks: core object -> mark ("current", ...), see `build_graph`.
        timeout: seconds Graphviz may take.

    Returns:
        A Drawing.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor(3.0, requires_grad=True, name="x")
        >>> y = x * x
        >>> y.backward()
        >>> tg.draw(y, view="backward")
        <Drawing: backward graph, 3 nodes (1 tensor, 1 op, 1 AccumulateGrad)>
    """
    graph = build_graph(*tensors, view=view, since=since, collapse=collapse, max_nodes=max_nodes,
                        marks=marks)
    return Drawing(graph, rankdir=rankdir, show_values=show_values, show_grads=show_grads,
                   highlight=highlight, timeout=timeout)
