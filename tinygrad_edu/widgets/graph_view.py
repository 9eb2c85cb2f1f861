"""GraphView: the interactive graph widget (pan/zoom, click a node to see its details).

The layout stays on the Python side (dot -> SVG through `render`), so tests see exactly
what is drawn; the vendored ES module `graph_view.js` only shows the SVG, pans/zooms
it, applies highlight classes by node id and sends a clicked node's id back as the
`selected` trait. All state lives in `state.GraphViewState` traits. Without anywidget
the same class is built from stock ipywidgets (no clicks: a dropdown selects nodes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..graph import DrawOptions
from . import pictures
from .state import GraphViewState

_HERE = Path(__file__).parent
_OPTIONS = ["view", "show_values", "show_grads", "collapse", "fold_to_fit"]


class _ViewLogic(GraphViewState):
    """What both GraphView flavours share: drawing, selection details and reprs."""

    _tensors: tuple = ()
    _since: Any = None
    _graph: Any = None
    _names: Any = None
    _cell_only: bool = False

    def __init__(
        self,
        *tensors: Any,
        view: str = "forward",
        show_values: bool = True,
        show_grads: bool = True,
        collapse: bool = False,
        since: Any = None,
        names: Any = None,
    ) -> None:
        super().__init__(
            view=view, show_values=show_values, show_grads=show_grads, collapse=collapse
        )
        self._controls()
        self._start(tensors, since, names)

    def _controls(self) -> None:
        """A flavour's own controls, made before the first drawing (anywidget's are in JS)."""

    def _start(self, tensors: tuple, since: Any, names: Any) -> None:
        self._tensors, self._since, self._names = tuple(tensors), since, names
        self.observe(self._on_options, names=_OPTIONS)
        self.observe(self._on_selected, names=["selected"])
        self.redraw()

    def show_graph(
        self, tensors: Any, since: Any = None, names: Any = None, cell_only: bool = False
    ) -> None:
        """Draw the graphs reachable from `tensors`, marking nodes created after `since`.

        `names` (variable name -> tensor) names unnamed tensors, as the live graph does;
        `cell_only` draws only the nodes made after `since` and the inputs they read.
        """
        self._tensors, self._since, self._names = tuple(tensors), since, names
        self._cell_only = cell_only
        self.redraw()

    def redraw(self) -> None:
        """Lay the graph out again with the current options (view, values, grads, collapse)."""
        options = DrawOptions(
            view=self.view,
            show_values=self.show_values,
            show_grads=self.show_grads,
            collapse=True if self.collapse else (),  # the toggle collapses every module
            since=self._since,
            names=self._names,
            caller="GraphView",
        )
        out = pictures.render_view(
            self._tensors, options, cell_only=self._cell_only, fold_to_fit=self.fold_to_fit
        )
        self._graph = out.graph
        with self.hold_trait_notifications():
            self.svg = out.svg
            self.summary = out.summary
            highlight = dict(self.highlight)
            highlight["new"] = list(out.new_ids)
            highlight["anomaly"] = out.graph.marked().get("anomaly", [])  # set by detect_anomaly
            self.highlight = {k: v for k, v in highlight.items() if v}
            if self.selected and not pictures.has_node(self._graph, self.selected):
                self.selected = ""
        self._on_selected()

    def _on_options(self, change: Any = None) -> None:
        self.redraw()

    def _on_selected(self, change: Any = None) -> None:
        self.details = pictures.node_details(self._graph, self.selected) if self.selected else ""

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.summary})"
            if self.summary
            else f"{type(self).__name__}(empty)"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # Untrusted notebooks, nbviewer and nbval see only these two (docs/graphs_in_notebooks.md)
        out = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]  # anywidget's, mixed in
        data, meta = out if isinstance(out, tuple) else (out, {})
        data = dict(data)
        data["text/plain"] = repr(self)
        if self.svg:
            data["image/svg+xml"] = self.svg
        return data, meta


def _anywidget_class() -> type | None:
    try:
        import anywidget
    except ImportError:
        return None

    class GraphView(_ViewLogic, anywidget.AnyWidget):
        r"""An interactive drawing of the graphs reachable from some tensors.

        Rules: drag to pan, wheel to zoom, "reset view" to go back; click a node to see
        its op, shapes, value/grad summary, creation line and saved tensors in the side
        area (`selected` holds its graph id, `details` the text). Toolbar toggles set
        `view`, `show_values`, `show_grads`, `collapse`, and each redraws the SVG. Setting
        `highlight={"current": [...], "anomaly": [...]}` recolours nodes without a new
        layout; "new" is filled with the nodes created after `since`.

        Args:
            *tensors: the tensors whose graphs to draw.
            view: "forward" (tensors and ops) or "backward" (`grad_fn` nodes).
            show_values, show_grads, collapse: drawing options (see `tg.draw`).
            since: a `tinygrad_edu.graph.watermark()`; later nodes count as new.
            names: variable name -> tensor, to name unnamed tensors.

        Example:
            >>> import tinygrad_edu as tg
            >>> from tinygrad_edu.widgets import GraphView
            >>> x = tg.tensor(2.0, requires_grad=True, name="x")
            >>> GraphView((x * x).sum())
            GraphView(forward graph, 5 nodes)
        """

        _esm = (_HERE / "graph_view.js").read_text(encoding="utf-8")
        _css = (_HERE / "graph_view.css").read_text(encoding="utf-8")

    return GraphView


def _fallback_class() -> type:
    import ipywidgets as w

    class GraphView(_ViewLogic, w.VBox):
        """GraphView made of stock ipywidgets (used when anywidget is not installed).

        Same traits and Python behaviour as the anywidget version; the picture cannot
        pan/zoom or be clicked, so a dropdown selects the node whose details are shown.
        """

        def _controls(self) -> None:
            views = w.ToggleButtons(options=["forward", "backward"])
            boxes = [
                w.Checkbox(description=d, indent=False)
                for d in ("values", "grads", "collapse modules", "fold to fit")
            ]
            self._picture = w.HTML()
            self._picker = w.Dropdown(description="node", options=[("", "")])
            self._text = w.HTML()
            for control, trait in zip([views, *boxes], _OPTIONS):
                w.link((self, trait), (control, "value"))  # the model's value wins at start
            self._picker.observe(self._on_pick, names=["value"])
            self.children = [w.HBox([views, *boxes]), self._picture, self._picker, self._text]
            self.observe(self._show, names=["svg", "details"])

        def _start(self, tensors: tuple, since: Any, names: Any) -> None:
            super()._start(tensors, since, names)
            self._show()

        def _on_pick(self, change: Any) -> None:
            self.selected = change["new"] or ""

        def _show(self, change: Any = None) -> None:
            import html

            self._picture.value = self.svg
            ids = pictures.node_ids(self._graph)
            self._picker.options = [("", ""), *((i, i) for i in ids)]
            self._picker.value = self.selected if self.selected in ids else ""
            self._text.value = f"<pre>{html.escape(self.details)}</pre>" if self.details else ""

    return GraphView


GraphView: type = _anywidget_class() or _fallback_class()
