"""`tg.draw(...)`: a displayable picture of a graph (SVG in Jupyter, DOT as `.source`).

A `Drawing` holds the GraphModel, its DOT text (made at once, cheap) and the SVG
(laid out by `dot` on first use, then cached). In Jupyter `_repr_mimebundle_` gives
`image/svg+xml` plus a deterministic one-line `text/plain`; without Graphviz it gives
a text tree and the install hint instead of a traceback. As the graphviz package's
objects, it has `.source`, `.pipe(format)`, `.render(filename, format=...)` and `.view()`,
laid out by the drawings' own program (`svg.find_dot`).
Render layer: standard library; the graphviz package only for `view=True`, imported
there (matplotlib/IPython never imported here).
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..core.errors import MissingDependencyError, message
from ..graph import DEFAULT_MAX_NODES, DrawOptions, GraphModel, build_graph
from ..graph.chains import module_levels
from . import wasm
from .dot import to_dot
from .svg import RenderError, cannot_make, dot_to, dot_to_svg, find_dot, missing_message
from .text import to_text

AREA_PX = 833.0  # JupyterLab's output area at a 1280x800 window with the file browser open
MIN_TEXT_PX = 8.0  # smaller text is not read, it is guessed
# the live panel's canvas at a 1280x800 window: the output area's width, 70 % of the
# window's height (graph_view.css); its text must stay at PANEL_TEXT_PX or more
PANEL_BOX_PX = (833.0, 560.0)
PANEL_TEXT_PX = 9.0
# one screen of a notebook at 1280x800: a drawing taller than this hides its bottom (the
# loss) below the edge, so it is laid out, folded or shrunk to fit (issue 26)
SCREEN_PX = 650.0
MIN_CAP = 16  # a drawing capped to fit a screen keeps at least this many boxes
PX_PER_PT = 4 / 3  # Graphviz sizes its SVG in pt; browsers draw 1 pt as 4/3 px
_SIZE = re.compile(r'<svg (?:style="[^"]*" )?width="([\d.]+)pt" height="([\d.]+)pt"')
_FONT = re.compile(r'font-size="([\d.]+)"')
_XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'


def natural_width_px(svg: str) -> float:
    """The width Graphviz asked for, in CSS px (0 when the SVG has no pt size)."""
    m = _SIZE.search(svg)
    return float(m.group(1)) * PX_PER_PT if m else 0.0


def smallest_text_px(svg: str, area_px: float = AREA_PX) -> float:
    """The smallest text's height in px once the drawing is shrunk to fit `area_px`."""
    natural = natural_width_px(svg)
    scale = min(1.0, area_px / natural) if natural else 1.0
    sizes = [float(f) for f in _FONT.findall(svg)] or [14.0]
    return min(sizes) * PX_PER_PT * scale


def natural_size_px(svg: str) -> tuple[float, float]:
    """The width and height Graphviz asked for, in CSS px ((0, 0) without a pt size)."""
    m = _SIZE.search(svg)
    return (float(m.group(1)) * PX_PER_PT, float(m.group(2)) * PX_PER_PT) if m else (0.0, 0.0)


def text_px_in_box(svg: str, box: tuple[float, float] = PANEL_BOX_PX) -> float:
    """The smallest text's height in px once the whole drawing is shrunk into `box`.

    The panel shows the whole graph at once (issue 26), so both the width and the
    height count, unlike `smallest_text_px`, which lets a drawing run down the page.
    """
    width, height = natural_size_px(svg)
    scale = min(1.0, box[0] / width, box[1] / height) if width and height else 1.0
    sizes = [float(f) for f in _FONT.findall(svg)] or [14.0]
    return min(sizes) * PX_PER_PT * scale


def fit(svg: str, area_px: float = AREA_PX, max_height_px: float | None = None) -> str:
    """The SVG sized for a notebook: never wider than `area_px`, and shrinking with its box.

    Rules: a drawing wider than the area is declared `area_px` wide (its viewBox keeps
    the geometry, so it scales as a whole), because JupyterLab shows SVG outputs as an
    `<img>` at their declared width. With `max_height_px`, a taller drawing is shrunk
    to that height too, but never so far that its text falls under PANEL_TEXT_PX.
    `max-width:100%` lets inline copies (HTML outputs, widgets) shrink further in a
    narrower box. Drawings that fit keep their size.

    Example:
        >>> svg = '<svg width="900pt" height="90pt" viewBox="0 0 900 90"></svg>'
        >>> print(fit(svg))
        <svg style="max-width:100%;height:auto" width="624.75pt" height="62.48pt" viewBox="0 0 900 90"></svg>
    """
    m = _SIZE.search(svg)
    if m is None or "style=" in m.group(0):  # no pt size, or fitted already
        return svg
    width, height = float(m.group(1)), float(m.group(2))
    shrink = min(1.0, area_px / (width * PX_PER_PT))
    if max_height_px and height * PX_PER_PT * shrink > max_height_px:
        sizes = [float(f) for f in _FONT.findall(svg)] or [14.0]
        # the scale of 9 px text (a hair more: the size is written with 2 decimals)
        readable = (PANEL_TEXT_PX + 0.01) / (min(sizes) * PX_PER_PT)
        shrink = min(shrink, max(max_height_px / (height * PX_PER_PT), readable))
    size = f'<svg width="{width * shrink:.2f}pt" height="{height * shrink:.2f}pt"'
    if shrink == 1.0:
        size = m.group(0)
    return (
        svg[: m.start()]
        + size.replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)
        + svg[m.end() :]
    )


def inline_html(svg: str, note: str = "") -> str:
    """The SVG as HTML for trusted front-ends: hovering a box shows its details tooltip.

    Rules: JupyterLab shows `image/svg+xml` as an `<img>`, where tooltips never
    appear, so the drawing goes inline, inside an `<iframe srcdoc>` scaled to fit its
    box. An untrusted notebook sanitises the HTML: the iframe and the `<style>` are
    dropped (no stray label text is left), and `note` (with a hint to trust the
    notebook) shows instead; trusted, the style hides the note. The srcdoc attribute
    is single-quoted, so the SVG's own double-quoted attributes stay as they are.
    """
    start = svg.find("<svg")
    body = re.sub(r"<!--.*?-->\n?", "", svg[start:] if start >= 0 else svg, flags=re.S).strip()
    m = _SIZE.search(body)
    width, height = (float(m.group(1)), float(m.group(2))) if m else (100.0, 100.0)
    doc = (
        "<style>html,body{margin:0;overflow:hidden}"
        "svg{display:block;width:100%;height:auto}</style>" + body
    )
    doc = doc.replace("&", "&amp;").replace("'", "&#39;")
    px = width * PX_PER_PT
    note = html.escape(note or "a graph drawing")
    return (
        '<div class="tg-drawing"><style>.tg-drawing .tg-untrusted{display:none}</style>'
        f'<iframe class="tg-frame" title="graph" srcdoc=\'{doc}\' '
        f'style="display:block;border:0;width:{px:.0f}px;max-width:100%;'
        f'aspect-ratio:{width:.2f}/{height:.2f}"></iframe>'
        f'<pre class="tg-untrusted">{note}\n(trust the notebook to see the drawing: '
        "File &gt; Trust Notebook)</pre></div>"
    )


def lay_out_in_box(
    graph: GraphModel,
    box: tuple[float, float] = PANEL_BOX_PX,
    fold: bool = True,
    timeout: float = 10.0,
    rankdirs: tuple[str, ...] = ("TB", "LR"),
    **options: Any,
) -> tuple[GraphModel, str, str, float]:
    """DOT and SVG of a graph that shows whole in `box` with text of PANEL_TEXT_PX or more.

    Rules: top to bottom is tried first, then left to right (a wide, short box often
    holds a chain better that way); if neither fits, the middle of long straight
    chains is folded (`graph.chains`: the longest runs first, then every run of
    three or more boxes) and both orientations are tried again. The first picture
    that fits wins; if none does, the one with the largest text. `fold=False` (the
    learner's `expand=True`) draws every box; `rankdirs` limits the orientations.

    Returns:
        (the graph drawn, folded or not; DOT source; SVG sized by `fit` for `box`;
        its smallest text in px there).
    """
    from ..graph.chains import fold_chains

    best: tuple[GraphModel, str, str, float] | None = None
    graphs = [graph]
    if fold:
        graphs += [fold_chains(graph, 7), fold_chains(graph, 3)]
    tried: list[GraphModel] = []
    for g in graphs:
        if any(g is t or len(g.nodes) == len(t.nodes) for t in tried):  # nothing (more) folded
            continue
        tried.append(g)
        for rankdir in rankdirs:
            source = to_dot(g, rankdir=rankdir, **options)
            svg = dot_to_svg(source, timeout=timeout)
            text = text_px_in_box(svg, box)
            if best is None or text > best[3] + 0.01:
                best = (g, source, svg, text)
            if text >= PANEL_TEXT_PX:
                return g, source, fit(svg, box[0], box[1]), text
    assert best is not None
    return best[0], best[1], fit(best[2], box[0], box[1]), best[3]


def lay_out(
    graph: GraphModel,
    rankdir: str | None = None,
    timeout: float = 10.0,
    fold: bool = True,
    **options: Any,
) -> tuple[str, str]:
    """DOT and fitted SVG of a graph for a notebook: one screen, text of 9 px or more.

    Rules: `lay_out_in_box` with the output area's width and one screen's height
    (SCREEN_PX): top to bottom first, then left to right (unless `rankdir` is given),
    then long chains folded (unless `fold=False`). Graphviz runs once for most graphs.

    Returns:
        (DOT source, SVG sized by `fit`).
    """
    rankdirs = (rankdir,) if rankdir else ("TB", "LR")
    _, source, svg, _ = lay_out_in_box(
        graph, (AREA_PX, SCREEN_PX), fold, timeout, rankdirs, **options
    )
    return source, svg


class Drawing:
    r"""A graph picture: `.graph` (model), `.source` (DOT), `.svg()`, `.pipe`, `.render`.

    Rules: displays as SVG in Jupyter, with `text/plain` like
    `<Drawing: forward graph, 4 nodes (3 tensors, 1 op)>` (no memory addresses).
    `.svg()` runs Graphviz once and caches the result; the SVG is never declared wider
    than a notebook's output area (`fit`). Without Graphviz the display
    falls back to a text tree and the install hint. `.source`, `.pipe(format)`,
    `.render(filename, format=...)` and `.view()` are the graphviz package's names,
    with its defaults (PDF), for the picture the notebook shows.

    Example:
        >>> import tinygrad_edu as tg
        >>> a = tg.tensor(2.0, requires_grad=True, name="a")
        >>> d = tg.draw(a * 3)
        >>> d
        <Drawing: forward graph, 4 nodes (3 tensors, 1 op)>
        >>> d.source.startswith("digraph G {")
        True
    """

    def __init__(
        self,
        graph: GraphModel,
        options: DrawOptions | None = None,
        rebuild: Callable[[int | None, list[str], bool], GraphModel] | None = None,
    ) -> None:
        self.graph = graph
        self.options = options = options or DrawOptions(caller="Drawing")
        # long chains may be folded, and the graph capped, to fit a screen; not when the
        # learner opened steps (`expand=`), and neither with expand=True
        self._fold = options.expand is not True
        self._cap = not options.expand
        self._rebuild = rebuild  # max_nodes -> a smaller GraphModel (not with max_nodes=None)
        self._dot_options: dict[str, Any] = options.dot_options()
        # the top-to-bottom DOT; svg() may switch to left to right if that reads better
        self._source = to_dot(graph, rankdir=options.rankdir or "TB", **self._dot_options)
        self.timeout = options.timeout
        self._svg: str | None = None

    def svg(self) -> str:
        """The SVG text (Graphviz runs on the first call only).

        Raises:
            MissingDependencyError: no Graphviz `dot` program (the message says how to
                install it). RenderError: Graphviz failed or timed out.
        """
        if self._svg is None:
            self.graph, self._source, self._svg = self._fitted()
        return self._svg

    def _fitted(self) -> tuple[GraphModel, str, str]:
        """The graph, DOT and SVG that fit one screen: laid out, folded, then capped.

        When neither orientation nor folded chains make the whole drawing fit one
        screen with readable text, the graph is built again with its modules drawn as
        one box each (innermost first: an RNN's time steps, a model's layers), then
        with fewer nodes: the ones farthest from the outputs give way to "N more
        nodes" boxes. Their tooltips say how to draw everything (`expand=True`,
        `max_nodes=None`); the loss stays in view. With steps opened (`expand=`), the
        opened steps stay whole and nothing is capped: the loop's first and last steps
        fold as well, then the rows move closer together (`to_dot(compact=True)`).
        """
        rankdir = self.options.rankdir
        rankdirs = (rankdir,) if rankdir else ("TB", "LR")
        args = ((AREA_PX, SCREEN_PX), self._fold, self.timeout, rankdirs)
        best = lay_out_in_box(self.graph, *args, **self._dot_options)
        if best[3] >= PANEL_TEXT_PX or self._rebuild is None:
            return best[:3]
        # (most nodes or None, modules to fold, keep a loop's first and last step open,
        # rows closer together)
        tries: list[tuple[int | None, list[str], bool, bool]] = []
        if self._fold and self._cap:  # (not when the learner opened steps with expand=)
            tries += [
                (None, _with_steps(level, self.graph), True, False)
                for level in module_levels(self.graph)
            ]
        elif self._fold:
            # a step the learner opened (expand="rnncell.t=5") stays whole and nothing is
            # capped; the first and the last step fold too, each side of the opened step
            # its own fold of adjacent steps (t=0 ... t=4, t=6 ... t=11); if that is still
            # too tall, the same graph with its rows closer together
            tries += [(None, [], False, False), (None, [], False, True)]
        cap = len(self.graph.nodes)
        while self._cap and cap > MIN_CAP and len(tries) < 8:
            cap = max(MIN_CAP, int(cap * 0.6))
            tries.append((cap, [], True, False))
        for most, modules, keep_ends, compact in tries:
            graph = self._rebuild(most, modules, keep_ends)
            if modules:  # say, on the box, that it was folded to fit and how to open it
                for n in graph.nodes:
                    if n.kind == "summary" and n.role == "module" and n.name in modules:
                        n.role = "fitted"
            drawn = lay_out_in_box(graph, *args, compact=compact, **self._dot_options)
            if drawn[3] > best[3]:
                best = drawn
            if best[3] >= PANEL_TEXT_PX:
                break
        return best[:3]

    def text(self) -> str:
        """The graph as an indented text tree (what shows when Graphviz is missing)."""
        return to_text(self.graph, self.options.show_values, self.options.show_grads)

    @property
    def source(self) -> str:
        """The DOT text the picture is laid out from (a str), as graphviz's `.source`.

        Rules: the drawing's orientation and folds are settled first (Graphviz runs
        once, as for the display), so `.source` is what `pipe` and `render` lay out;
        without Graphviz it is the top-to-bottom DOT of the graph as built.
        """
        if self._svg is None:
            with contextlib.suppress(MissingDependencyError, RenderError):
                self.svg()
        return self._source

    def pipe(
        self,
        format: str = "pdf",  # noqa: A002 - graphviz's argument name
        encoding: str | None = None,
    ) -> bytes | str:
        r"""The picture in `format` ("svg", "png", "pdf", ...), as graphviz's `pipe`.

        Rules: "svg" is the SVG the notebook shows (`svg()`, laid out by the program
        `find_dot` finds: Graphviz's dot, graphviz-pure, or in the browser Graphviz in
        WebAssembly), as a file on its own: with its XML declaration. Another format
        is laid out from `.source` by that program, if it can make it: graphviz-pure
        makes no PDF, the browser SVG only (the error says what to do).

        Args:
            format: the output format, graphviz's name for it (default "pdf", as graphviz).
            encoding: decode the bytes into a str with this encoding (e.g. "utf-8").

        Returns:
            The file's bytes, or a str with `encoding`.

        Raises:
            MissingDependencyError: no layout program. RenderError: it cannot make
                `format`, failed or took longer than the drawing's `timeout`.
        """
        data = self._file_bytes(format.lower(), "Drawing.pipe")
        return data if encoding is None else data.decode(encoding)

    def render(
        self,
        filename: str | os.PathLike | None = None,
        directory: str | os.PathLike | None = None,
        view: bool = False,
        cleanup: bool = False,
        format: str | None = None,  # noqa: A002 - graphviz's argument name
        *,
        outfile: str | os.PathLike | None = None,
    ) -> str:
        r"""Save the DOT to `filename` and the picture beside it, as graphviz's `render`.

        Rules: graphviz's names and defaults: the DOT goes to `directory/filename`
        (default "Drawing.gv"), the picture to the same path plus ".<format>" (default
        PDF), or to `outfile`, whose suffix then gives the format; `cleanup=True`
        deletes the DOT file afterwards; `view=True` opens the picture in the
        computer's viewer (`graphviz.view`). A format the layout program cannot make
        raises before anything is written.

        Returns:
            The path of the picture, e.g. "my_graph.pdf".

        Raises:
            MissingDependencyError, RenderError: as `pipe`.

        Example:
            >>> import os, tempfile
            >>> import tinygrad_edu as tg
            >>> d = tg.draw(tg.tensor(2.0, requires_grad=True, name="a") * 3)
            >>> folder = tempfile.mkdtemp()
            >>> path = d.render("my_graph", directory=folder, format="svg", cleanup=True)
            >>> os.path.relpath(path, folder), os.listdir(folder)
            ('my_graph.svg', ['my_graph.svg'])
        """
        fmt = format
        if outfile is not None:
            outfile = os.fspath(outfile)
            fmt = fmt or os.path.splitext(outfile)[1][1:] or "pdf"
            if filename is None:  # graphviz's rule: the DOT beside it, as <name>.gv
                filename = os.path.splitext(outfile)[0] + ".gv"
        fmt = (fmt or "pdf").lower()
        data = self._file_bytes(fmt, "Drawing.render")
        source = os.path.join(os.fspath(directory or ""), os.fspath(filename or "Drawing.gv"))
        rendered = outfile if outfile is not None else f"{source}.{fmt}"
        for path, content in ((source, self.source.encode("utf-8")), (rendered, data)):
            if os.path.dirname(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(content)
        if cleanup:
            os.remove(source)
        if view:
            _open_in_viewer(rendered)
        return rendered

    def view(
        self,
        filename: str | os.PathLike | None = None,
        directory: str | os.PathLike | None = None,
        cleanup: bool = False,
    ) -> str:
        """`render(filename, directory, view=True, cleanup=cleanup)`, as graphviz's `view`."""
        return self.render(filename, directory, view=True, cleanup=cleanup)

    def save(self, path: str | os.PathLike) -> str:
        """Write the picture, one file; the suffix picks the format: .svg, .png, .pdf or .dot.

        Returns the path written. Raises ValueError for another suffix (`render` takes
        any format the layout program makes), and what `pipe` raises.
        """
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lower()
        if suffix == ".dot" or suffix == ".gv":
            data = self.source.encode("utf-8")
        elif suffix in (".svg", ".png", ".pdf"):
            data = self._file_bytes(suffix[1:], "Drawing.save")
        else:
            raise ValueError(
                message(
                    "Drawing.save",
                    f"cannot save a drawing as {suffix or path!r}",
                    None,
                    "use a file name ending in .svg, .png, .pdf or .dot",
                )
            )
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _file_bytes(self, fmt: str, op: str) -> bytes:
        """The picture as a file in `fmt`; `op` names the learner's call in the errors."""
        program = find_dot()
        if program is None:
            raise MissingDependencyError(missing_message(op))
        if fmt == "svg":
            # a file on its own says what it is (notebook outputs go without, see `compact`)
            return (_XML_DECLARATION + self.svg()).encode("utf-8")
        if program == wasm.PROGRAM:  # said before a layout that could not help
            raise RenderError(cannot_make(op, fmt, program))
        return dot_to(self.source, fmt, timeout=self.timeout, op=op)

    def __repr__(self) -> str:
        return f"<Drawing: {self.graph.summary()}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        try:
            svg = self.svg()
        except MissingDependencyError as e:
            return {"text/plain": f"{repr(self)}\n{self.text()}\n\n{e}"}
        except RenderError as e:
            return {"text/plain": f"{repr(self)}\n{e}"}
        # trusted front-ends show the HTML (hover tooltips); the others fall back to the SVG
        return {
            "text/html": inline_html(svg, repr(self)),
            "image/svg+xml": svg,
            "text/plain": repr(self),
        }

    def _repr_svg_(self) -> str | None:
        try:
            return self.svg()
        except (MissingDependencyError, RenderError):
            return None


_STEPS = re.compile(r"^(.*)\.t=(\d+) \.\.\. t=(\d+)$")  # a fold of time steps' name


def _with_steps(level: list[str], graph: GraphModel) -> list[str]:
    """`level` plus every time step a fold box hides, when the level is one of steps.

    Collapsing `rnncell.t=0` and `rnncell.t=11` alone would open the ten steps folded
    between them; naming them all keeps that fold, now of one box per step.
    """
    if not any(".t=" in path for path in level):
        return level
    out = list(level)
    for n in graph.nodes:
        m = _STEPS.match(n.name) if n.kind == "summary" else None
        if m:
            out += [f"{m[1]}.t={k}" for k in range(int(m[2]), int(m[3]) + 1)]
    return out


def _open_in_viewer(path: str) -> None:
    """Open a rendered file in the computer's viewer, as graphviz's `view=True` does."""
    try:
        import graphviz
    except ImportError:
        raise MissingDependencyError(
            message(
                "Drawing.render",
                "view=True opens the file with the graphviz package, which is not installed",
                None,
                f"`pip install graphviz`, or open {path} yourself",
            )
        ) from None
    try:
        graphviz.view(path)
    except (OSError, RuntimeError) as e:  # no xdg-open (a server, a container), no viewer
        raise RenderError(
            message(
                "Drawing.render",
                f"{path} was written, but no viewer could be opened here ({e})",
                None,
                "open the file yourself (on a server: from the file browser), "
                "or leave out view=True",
            )
        ) from None


def caller_names(frame: Any) -> dict[str, Any]:
    """The caller's variables that hold Tensors: its locals first, then its module's.

    Deterministic: the first name bound (in namespace order) wins for a tensor held by
    two; `_`-prefixed names (IPython's `_`, `_3` output history) are left out. One pass
    over two dicts: a notebook's namespace costs microseconds.
    """
    from ..core.tensor import Tensor

    if frame.f_globals.get("__name__", "").startswith("tinygrad_edu."):
        return {}  # the toolkit drawing for itself: its own variable names mean nothing
    out: dict[str, Any] = {}
    seen: set[int] = set()
    scopes = (
        [frame.f_locals]
        if frame.f_locals is frame.f_globals
        else [
            frame.f_locals,
            frame.f_globals,
        ]
    )
    for scope in scopes:
        for name, value in scope.items():
            if isinstance(value, Tensor) and name[0] != "_" and id(value) not in seen:
                seen.add(id(value))
                out[name] = value
    return out


def draw(
    *tensors: Any,
    view: str = "forward",
    show_values: bool = True,
    show_grads: bool = True,
    rankdir: str | None = None,
    collapse: Any = (),
    expand: Any = (),
    since: Any = None,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    highlight: Any = (),
    marks: Any = None,
    names: Any = None,
    timeout: float = 10.0,
) -> Drawing:
    r"""Draw the graph that produced `tensors` (or a static graph), for Jupyter.

    Rules: the forward view shows tensors and ops as you would draw them; the
    backward view shows the `grad_fn` nodes backward() runs, AccumulateGrad at the
    leaves. Values and grads are shown once they exist. Big graphs are summarised
    (see `build_graph`). A drawing fits one screen (SCREEN_PX tall) with text of 9 px
    or more: it is laid out left to right if that fits, long straight chains are
    folded (`expand=True` draws every box), and as a last resort the nodes farthest
    from the outputs become "N more nodes" boxes (`max_nodes=None` draws them all).
    Nothing is laid out until the drawing is displayed.

    Args:
        *tensors: Tensors, lists of them, a dict name -> Tensor, or a StaticGraph.
        view: "forward" or "backward".
        show_values: show value summaries.
        show_grads: show gradient summaries.
        rankdir: "TB" (top to bottom) or "LR" (left to right); None (the default)
            draws top to bottom unless left to right keeps the text larger.
        collapse: module paths to draw as one box each, or True for all modules.
        expand: time steps to draw in full where a long loop over a module (an RNN
            cell) is folded, e.g. `"rnncell.t=5"`, or True to fold nothing.
        since: a `tinygrad_edu.graph.watermark()`; later nodes are highlighted.
        max_nodes: the most boxes to draw, "N more nodes" markers included (the
            outputs asked for are always drawn).
        highlight: graph node ids to emphasise.
        marks: core object -> mark ("current", ...), see `build_graph`.
        names: variable name -> Tensor, to name tensors that have no `name=`; by
            default the caller's variables (the notebook's, in a cell), so
            `loss = ...; tg.draw(loss)` draws a box called `loss`.
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
    if names is None:
        names = caller_names(sys._getframe(1))
    options = DrawOptions(
        view=view,
        since=since,
        collapse=collapse,
        expand=expand,
        max_nodes=max_nodes,
        marks=marks,
        names=names,
        rankdir=rankdir,
        show_values=show_values,
        show_grads=show_grads,
        highlight=highlight,
        timeout=timeout,
        caller="draw",
    )
    graph = build_graph(*tensors, options=options)
    # (Drawing is given a way to rebuild only when max_nodes is set: nothing is capped else)
    rebuild = None if max_nodes is None else _rebuilder(tensors, options)
    return Drawing(graph, options, rebuild=rebuild)


def _rebuilder(tensors: tuple, options: DrawOptions) -> Callable[..., GraphModel]:
    """`rebuild(cap, modules, keep_ends)`: the graph of `tensors` again with more folded."""
    max_nodes = options.max_nodes
    assert max_nodes is not None  # draw makes one only when max_nodes is set

    def rebuild(cap: int | None, modules: list[str], keep_ends: bool = True) -> GraphModel:
        """The graph again with more folded: `modules` as one box each, or `cap` nodes.

        `keep_ends=False` folds a loop's first and last steps too (see `build_graph`).
        """
        opened = options.expand if options.expand is not True else frozenset()
        # the steps the learner opened stay open, and so do the modules around them
        modules = [m for m in modules if not any(o == m or o.startswith(m + ".") for o in opened)]
        collapse = options.collapse
        if modules and collapse is not True:
            collapse = (*collapse, *modules)
        most = min(cap or max_nodes, max_nodes)
        smaller = replace(
            options, max_nodes=most, keep_ends=keep_ends, collapse=collapse, caller="draw"
        )
        return build_graph(*tensors, options=smaller)

    return rebuild
