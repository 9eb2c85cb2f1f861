"""Widgets layer: the live graph after every cell, the interactive GraphView and the panel.

May import render, graph, static, debug, core, and ipywidgets / anywidget / IPython /
traitlets. `import tinygrad_edu` does not import this package; `%load_ext tinygrad_edu`,
`tg.watch` and `tg.live_panel` do, on first use.
"""

from __future__ import annotations

from typing import Any

from .live import load_ipython_extension, unload_ipython_extension, watch
from .panel import live_panel


def __getattr__(name: str) -> Any:
    # GraphView pulls in ipywidgets/anywidget: only when asked for
    if name == "GraphView":
        from .graph_view import GraphView

        return GraphView
    raise AttributeError(f"module 'tinygrad_edu.widgets' has no attribute {name!r}")


__all__ = ["GraphView", "live_panel", "load_ipython_extension", "unload_ipython_extension", "watch"]
