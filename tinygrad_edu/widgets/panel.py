"""`live_panel()`: one interactive GraphView per kernel that follows every cell."""

from __future__ import annotations

from typing import Any

from . import live


def live_panel(inline: bool = False) -> Any:
    r"""The live graph as one interactive GraphView that updates in place after each cell.

    Rules: one panel per kernel: calling again returns the same widget (display it once;
    a second display shows a second view of the same panel). It starts the live graph
    if `%load_ext tinygrad_edu` has not run yet. While the panel exists, cells no longer
    get their own graph output unless `inline=True`. In JupyterLab, right-click the
    panel's output and choose "Create New View for Output", then drag that tab beside
    the notebook to dock it. Untrusted or saved notebooks show the panel's last SVG.

    Args:
        inline: also keep drawing each changed graph under its cell.

    Returns:
        The panel's `GraphView` (pan/zoom, click a node for its details).

    Example:
        >>> import tinygrad_edu as tg
        >>> panel = tg.live_panel()
        >>> panel is tg.live_panel()
        True
    """
    live.set_panel_inline(inline)
    if live._PANEL is None:
        from .graph_view import GraphView

        live._PANEL = GraphView(*live.current_roots(), names=live.current_names())
    live.ensure_loaded()
    return live._PANEL
