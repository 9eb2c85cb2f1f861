"""`tinygrad_edu.render`: Graph -> DOT -> SVG (and text), plus matplotlib plots.

- `draw(*tensors, ...)` -> `Drawing` (what `tg.draw` is);
- `dot.to_dot(graph)`: DOT text, pure and deterministic;
- `svg.dot_to_svg(source)`: runs Graphviz's `dot` with a timeout (in the browser,
  Graphviz compiled to WebAssembly: `wasm`);
- `text.to_text(graph)`: the fallback when Graphviz is missing;
- `plots`: loss curves, decision boundaries, gradient flow (`tg.plot`).

Render layer: graphviz and matplotlib are imported lazily; never ipywidgets or IPython.
"""

from .dot import to_dot
from .drawing import Drawing, draw
from .svg import RenderError, dot_to_svg, find_dot
from .text import to_text

__all__ = ["draw", "Drawing", "to_dot", "dot_to_svg", "find_dot", "to_text", "RenderError"]
