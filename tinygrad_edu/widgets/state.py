"""Traitlets models behind the live graph and the graph view: state only, no display code.

Views observe these models and redraw; tests set their traits from Python and check
what the views show, with no browser (docs/style.md, Code). Traits tagged `sync=True`
are the front-end protocol of `GraphView` (which mixes `GraphViewState` into an
anywidget); on a plain `HasTraits` the tag is only metadata.
"""

from __future__ import annotations

from typing import Any

import traitlets as t

VIEWS = ["forward", "backward"]
HIGHLIGHT_KINDS = ("new", "current", "anomaly")


class GraphViewState(t.HasTraits):
    r"""What a graph view shows: drawing options, highlighted nodes and the selected node.

    Rules: `view` is "forward" (tensors and ops) or "backward" (`grad_fn` nodes).
    `highlight` maps a kind ("new", "current", "anomaly") to graph node ids; views apply
    it as CSS classes on the drawn SVG, so highlighting never re-runs the layout.
    `selected` is the graph id of the clicked node ("" for none); `details` is the text
    the side area shows for it, computed in Python from the Graph model. `fold_to_fit`
    folds long chains and then modules until the whole graph fits the view with
    readable text; off, every box is drawn and the view says how many are out of sight.

    Example:
        >>> s = GraphViewState()
        >>> s.view, s.show_values, s.show_grads, s.collapse, s.selected
        ('forward', True, True, False, '')
        >>> s.view = "sideways"
        Traceback (most recent call last):
        ...
        traitlets.traitlets.TraitError: The 'view' trait of a GraphViewState instance expected any of ['forward', 'backward'], not the str 'sideways'.
    """

    view = t.Enum(VIEWS, default_value="forward").tag(sync=True)
    show_values = t.Bool(True).tag(sync=True)
    show_grads = t.Bool(True).tag(sync=True)
    collapse = t.Bool(False).tag(sync=True)
    fold_to_fit = t.Bool(True).tag(sync=True)
    selected = t.Unicode("").tag(sync=True)
    highlight = t.Dict(per_key_traits=None).tag(sync=True)
    svg = t.Unicode("").tag(sync=True)
    details = t.Unicode("").tag(sync=True)
    summary = t.Unicode("").tag(sync=True)

    @t.validate("highlight")
    def _check_highlight(self, proposal: dict[str, Any]) -> dict[str, list[str]]:
        value = proposal["value"]
        unknown = sorted(set(value) - set(HIGHLIGHT_KINDS))
        if unknown:
            raise t.TraitError(
                f"highlight: unknown kind {unknown[0]!r}; expected one of {HIGHLIGHT_KINDS!r}"
            )
        return {kind: [str(i) for i in ids] for kind, ids in value.items()}


class WatchList(t.HasTraits):
    r"""Which tensors the live graph draws: all in the namespace ("auto"), or pinned ones.

    Rules: `pinned` holds Tensors and/or variable names (strings, looked up in the
    notebook namespace at each cell, so re-binding `loss` in a loop follows the new
    tensor). An empty `pinned` means "auto": every tensor variable that is part of a
    graph (requires grad), skipping `_`-prefixed names and IPython's `Out`/`_N` history.

    Example:
        >>> w = WatchList()
        >>> w
        LiveGraph(watching all graph tensors in the notebook)
        >>> w.pinned = ["loss", "y"]
        >>> w
        LiveGraph(watching 2: loss, y)
    """

    pinned: t.List[Any] = t.List()  # tensors or their names

    @property
    def auto(self) -> bool:
        """True when nothing is pinned (draw every graph tensor in the namespace)."""
        return not self.pinned

    def __repr__(self) -> str:
        if self.auto:
            return "LiveGraph(watching all graph tensors in the notebook)"
        names = [p if isinstance(p, str) else _tensor_name(p) for p in self.pinned]
        return f"LiveGraph(watching {len(names)}: {', '.join(names)})"


def _tensor_name(tensor: Any) -> str:
    name = getattr(tensor, "name", None)
    return name if name else f"t{getattr(tensor, 'creation_number', '?')}"
