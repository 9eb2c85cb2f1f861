"""tinygrad_edu: see how define-by-run computational graphs work, and how static ones differ.

Public names only. Importing this package imports numpy and nothing optional:
`tg.draw`, the live graph and the widgets load graphviz, IPython and ipywidgets the
first time they are used (PEP 562 module `__getattr__` below).
"""

from __future__ import annotations

import importlib
import sys as _sys
from typing import Any

from .core import *  # noqa: F403 - the public core names, listed in core.__all__
from .core import __all__ as _core_all
from .core import abs, bool, float, int, max, min, pow, round, sum  # noqa: A004, F401

__version__ = "0.1.0"

# name -> (module, attribute or None for the module itself), imported on first use
_LAZY = {
    "nn": ("tinygrad_edu.nn", None),
    "optim": ("tinygrad_edu.optim", None),
    "data": ("tinygrad_edu.data", None),
    "autograd": ("tinygrad_edu.autograd", None),
    "utils": ("tinygrad_edu.utils", None),
    "static": ("tinygrad_edu.static", None),
    "debug": ("tinygrad_edu.debug", None),
    "draw": ("tinygrad_edu.render", "draw"),
    "plot": ("tinygrad_edu.render.plots", None),
    "watch": ("tinygrad_edu.widgets", "watch"),
    "live_panel": ("tinygrad_edu.widgets", "live_panel"),
    "GraphView": ("tinygrad_edu.widgets", "GraphView"),
    "BackwardStepper": ("tinygrad_edu.widgets.stepper_view", "BackwardStepper"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        mod = importlib.import_module(module)
        value = mod if attr is None else getattr(mod, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tinygrad_edu' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext tinygrad_edu`: show the live graph after every cell (and keep Run All
    going past an exercise that is not answered yet: tinygrad_edu.lesson.unanswered)."""
    from .lesson import unanswered
    from .widgets.live import load_ipython_extension as load

    load(ipython)
    unanswered.install(ipython)  # after the live graph: it wraps its short tracebacks


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext tinygrad_edu`: stop the live graph."""
    from .lesson import unanswered
    from .widgets.live import unload_ipython_extension as unload

    unload(ipython)  # which drops every custom error handler, the guard's too
    unanswered.install(ipython)


if _sys.platform == "emscripten":  # in the browser (JupyterLite): no `dot` program can run,
    # so the WebAssembly Graphviz starts loading now and is ready by the first drawing
    from .render import wasm as _wasm

    _wasm.start()

__all__ = [*_core_all, *_LAZY, "load_ipython_extension", "unload_ipython_extension", "__version__"]
