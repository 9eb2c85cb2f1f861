"""Graphviz compiled to WebAssembly: the layout program of a kernel running in the browser.

In JupyterLite the kernel is Pyodide (`sys.platform == "emscripten"`): Python inside a
web worker, where no process can start, so `dot` cannot run. Graphviz's own C code,
compiled to WebAssembly (the npm package `@hpcc-js/wasm-graphviz`), runs in that same
worker instead, and is called synchronously from Python: DOT text in, SVG text out, as
`dot -Tsvg` would give. Everything after the layout (`compact`, `fit`, the orientation
choice, the saved outputs) is the same code as on a server.

The JavaScript module is not kept in this repository: `tinygrad-edu site build` fetches
it from npm, checks its sha256 and puts it in the wheel it builds beside this file
(`graphviz_wasm.js`). A wheel built otherwise has none, and says so when asked to draw.

Loading it is asynchronous (compiling the WebAssembly takes ~0.2 s) and a drawing is
not, so the load starts at `import tinygrad_edu` and usually ends between two cells.
A drawing asked for before it ends waits for it where the browser lets Python block on
a promise (JSPI: Chromium), and otherwise says in one line to run the cell again.

The same waiting serves the Pyodide packages the toolkit imports only inside a function
(matplotlib, for `tg.plot`): Pyodide's kernel loads the packages named by the import
lines written in a cell, before running it, and never sees an import inside the toolkit,
so `need_package` loads them from the site's own files first (`pyodide_js.loadPackage`).

Everything that touches JavaScript goes through one small object, the bridge (`_bridge`),
so the rest is plain Python that tests run on CPython with a fake one.
Render layer: standard library, and Pyodide's own `js` and `pyodide` modules in the browser.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from ..core.errors import MissingDependencyError, message

AVAILABLE = sys.platform == "emscripten"  # the only place this layout program is used
PROGRAM = "graphviz-wasm"  # what `find_dot` answers in the browser
JS_FILE = Path(__file__).with_name("graphviz_wasm.js")
# dot's fast-layout flags (svg.FAST_FLAGS) as graph attributes: there is no command line
FAST_ATTRS = "graph [splines=line, mclimit=0.1, nslimit=1, nslimit1=1, newrank=true]\n"
# a PNG or PDF asked for in the browser: "<op>: PDF needs ...", then this hint
NEEDS_SERVER = (
    "needs Graphviz's dot program, which cannot run in the browser "
    "(the Graphviz here, in WebAssembly, makes SVG only)"
)
IN_THE_BROWSER = (
    'make an SVG here (format="svg", or a file name ending in .svg), or open the lesson '
    "on a server (Binder, or `tinygrad-edu lessons` locally)"
)

# JavaScript: the module's text -> its Graphviz, loaded (the WebAssembly compiled)
_IMPORT_FROM_TEXT = """(async (text) => {
    const url = URL.createObjectURL(new Blob([text], {type: "text/javascript"}));
    try {
        const module = await import(url);
        return await module.Graphviz.load();
    } finally {
        URL.revokeObjectURL(url);
    }
})"""
_STATE: dict[str, Any] = {}  # "task": the load under way or done (its result: the engine)
_PACKAGES: dict[str, Any] = {}  # a Pyodide package's name -> its load, under way or done


class PyodideBridge:
    """The calls into JavaScript, all of them: start the load, block on it, nothing else.

    The engine the load gives is `@hpcc-js/wasm-graphviz`'s `Graphviz` object, whose
    `layout(dot, "svg", "dot")` is synchronous.
    """

    def load(self, js_source: str) -> Any:
        """Start importing the module and loading its WebAssembly; returns an asyncio task."""
        import asyncio

        return asyncio.ensure_future(self._load(js_source))

    async def _load(self, js_source: str) -> Any:
        from pyodide.code import run_js

        # an ES module imported from a Blob URL: no site path to know, no CDN, any Pyodide host
        load = run_js(_IMPORT_FROM_TEXT)
        return await load(js_source)

    def load_package(self, name: str) -> Any:
        """Start loading a package of the site's Pyodide lock (and what it depends on)."""
        import asyncio

        import pyodide_js  # Pyodide's JavaScript API, seen from Python

        async def load() -> None:
            await pyodide_js.loadPackage(name)

        return asyncio.ensure_future(load())

    def can_block(self) -> bool:
        """Whether this cell may wait on a promise (JSPI: Chromium yes, others maybe not)."""
        from pyodide.ffi import can_run_sync

        return bool(can_run_sync())

    def block(self, task: Any) -> Any:
        from pyodide.ffi import run_sync

        return run_sync(task)


_bridge: Any = PyodideBridge()  # tests put a fake here


def start() -> None:
    """Begin loading the WebAssembly Graphviz, once (at `import tinygrad_edu` in the browser)."""
    if "task" in _STATE or not JS_FILE.is_file():
        return
    _STATE["task"] = _bridge.load(JS_FILE.read_text(encoding="utf-8"))


def engine() -> Any:
    """The loaded Graphviz, waiting for the load if the browser allows it.

    Raises:
        MissingDependencyError: this wheel carries no WebAssembly Graphviz, or it is still
            loading and this browser cannot wait (the message says to run the cell again).
        RenderError: the module failed to load.
    """
    if not JS_FILE.is_file():
        raise MissingDependencyError(
            message(
                "draw",
                "this copy of tinygrad_edu has no WebAssembly Graphviz, so the browser "
                "cannot lay out the graph as a picture",
                None,
                "use the wheel that `tinygrad-edu site build` puts in the site",
            )
        )
    start()
    task = _STATE["task"]
    if not task.done():
        if not _bridge.can_block():
            raise MissingDependencyError(
                "the browser's Graphviz is still loading (about a second): run this cell again"
            )
        _bridge.block(task)
    error = task.exception()
    if error is not None:
        from .svg import RenderError

        _STATE.pop("task")  # the next drawing tries again
        raise RenderError(
            message(
                "draw", f"the browser's Graphviz did not load: {error}", None, "reload the page"
            )
        )
    return task.result()


def layout(source: str, fast: bool) -> str:
    """`dot -Tsvg` done by the WebAssembly Graphviz: DOT text in, SVG text out."""
    if fast:  # the fast-layout flags as the graph's first statement, as -G would set them
        start_body = source.index("{") + 1
        source = source[:start_body] + "\n" + FAST_ATTRS + source[start_body:]
    graphviz = engine()
    try:
        return str(graphviz.layout(source, "svg", "dot"))
    except Exception as e:  # a JsException: Graphviz refused the DOT
        from .svg import RenderError

        said = str(e).strip().splitlines()
        raise RenderError(
            message(
                "draw",
                f"Graphviz failed: {said[-1] if said else 'no output'}",
                None,
                "this is a bug in tinygrad_edu's DOT; please report it",
            )
        ) from None


def need_package(name: str) -> None:
    """Make the Pyodide package `name` importable, before an import inside a function.

    Does nothing outside the browser, or when `name` can be imported already. In the
    browser the package comes from the site's own files (its Pyodide lock); the cell
    waits for it where the browser allows it (JSPI), as for the Graphviz module.

    Raises:
        MissingDependencyError: it is still loading and this browser cannot wait (the
            message says to run the cell again), or it could not be loaded.
    """
    if not AVAILABLE or importlib.util.find_spec(name) is not None:
        return
    if name not in _PACKAGES:
        _PACKAGES[name] = _bridge.load_package(name)
    task = _PACKAGES[name]
    if not task.done():
        if not _bridge.can_block():
            raise MissingDependencyError(
                f"the browser is loading {name} (a few seconds): run this cell again"
            )
        try:
            _bridge.block(task)
        except Exception:
            if not task.done():
                raise
            # else the load's own error, said below with the package's name
    error = task.exception()
    if error is not None:
        _PACKAGES.pop(name)  # the next call tries again
        raise MissingDependencyError(
            message(
                "import", f"the browser could not load {name}: {error}", None, "reload the page"
            )
        )
    importlib.invalidate_caches()  # the package's files are new since the finders looked
