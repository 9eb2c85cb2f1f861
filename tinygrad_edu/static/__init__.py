"""`tg.static`: static (define-then-run) graphs over the same ops as the eager core.

- `trace(fn, *example_inputs)` records what `fn` does into a `StaticGraph` that
  replays on new inputs without running `fn` again; `tg.static.function` retraces
  per input shape, reads a model's parameters at every call and retraces when the
  model changes. An `if` on a traced value freezes a branch (`TracerWarning`).
- `placeholder` and `Graph` build a graph first and feed it values later (`run`).
- `cond` and `while_loop` keep data-dependent control flow inside the graph.
- `compile(fn)` is a small torch.compile (module `compiler`, as torch's): it captures
  what it can and *breaks the graph* where Python reads a tensor's value; a replay
  reads that value from the graph before the break and runs the graph that followed
  it. It guards and recompiles with a stated reason, makes a changed size dynamic,
  refuses breaks with `fullgraph=True`, and `explain()`s itself.
- `export(fn, args, dynamic_shapes=...)` is a small torch.export (module `export`): one
  graph for every input it accepts. It refuses, naming the line, a data-dependent `if`
  or `.item()` (use `cond`), fixes every size unless a `Dim` makes it dynamic (`s0`),
  reports a Python decision on a dynamic size as a `ConstraintViolationError`, and
  returns an `ExportedProgram` (print, draw, `.module()`; `save` / `load` keep its Dims).
- `StaticGraph.grad()` / `tg.static.grad` derive backward programs from each op's own
  backward rule; `save` / `load` write and read JSON + .npz; `fold_constants` and
  `eliminate_dead_code` optimise.

Static layer: imports `tinygrad_edu.core`, numpy and the standard library (not even
`nn`: a deployed graph loads without any layer code); its drawing, `program_graph.py`,
also the graph model below it, which `tg.draw(static_graph)` draws.
"""

from ..core.errors import TracingError
from .compiler import CompiledFn, compile  # noqa: A004 - torch.compile's name
from .control_flow import cond, while_loop
from .export import ConstraintViolationError, export
from .exported import Dim, ExportedProgram
from .function import CacheInfo, StaticFunction, function
from .io import FormatError, load, save
from .passes import eliminate_dead_code, fold_constants
from .program import FeedError, Graph, Placeholder, StaticGraph, grad, placeholder, trace
from .program_graph import static_graph_to_graph  # noqa: F401 - registers the drawing
from .tracer import TracerWarning

__all__ = [
    "trace",
    "StaticGraph",
    "placeholder",
    "Placeholder",
    "Graph",
    "FeedError",
    "cond",
    "while_loop",
    "function",
    "StaticFunction",
    "CacheInfo",
    "grad",
    "load",
    "save",
    "export",
    "Dim",
    "ExportedProgram",
    "ConstraintViolationError",
    "FormatError",
    "eliminate_dead_code",
    "fold_constants",
    "TracerWarning",
    "TracingError",
    "compile",
    "CompiledFn",
]
