"""`tinygrad_edu.graph`: turn tensors into a plain, deterministic `GraphModel`.

`build_graph(*tensors, view=...)` walks what produced the tensors and returns a
`GraphModel` of `GraphNode`s and `GraphEdge`s; `render` draws it, widgets show its
details. `watermark()` marks a moment so later nodes can be flagged new. Layers
above plug their own objects in with `register_converter` (static graphs do, in
static/program_graph.py). Graph layer: imports the core, numpy and the standard
library only (never static, debug, render or widgets; no drawing package).
"""

from .build import build_graph, register_converter, watermark
from .model import KINDS, MARKS, GraphEdge, GraphModel, GraphNode, Watermark
from .options import DEFAULT_MAX_NODES, VIEWS, DrawOptions
from .scope import this_cell
from .values import summarise_array

__all__ = [
    "build_graph",
    "DrawOptions",
    "watermark",
    "register_converter",
    "GraphModel",
    "GraphNode",
    "GraphEdge",
    "Watermark",
    "VIEWS",
    "KINDS",
    "MARKS",
    "DEFAULT_MAX_NODES",
    "summarise_array",
    "this_cell",
]
