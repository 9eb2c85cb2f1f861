"""DOT text -> SVG, by running Graphviz's `dot` program with a timeout.

Uses the `dot` binary (Debian/Homebrew/conda graphviz); if it is missing, the
`graphviz-pure` binary from PyPI (a dot-compatible port) when installed. Both are
looked up on PATH and then beside the running interpreter, so a virtual environment
that was never activated still draws; `TINYGRAD_EDU_DOT` names one program instead. Neither: `MissingDependencyError` naming the
install commands. Big graphs get dot's
fast-layout options. The SVG loses graphviz's version comment, so two machines with
different Graphviz builds differ only in coordinates. Results are cached by source.
The next drawing's dot is started as soon as one finishes (`dot_process`): the live
view draws after every cell, and starting dot costs more than laying out a small graph.
Render layer: standard library only (no graphviz Python package needed).
"""

from __future__ import annotations

import operator
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, OrderedDict

from ..core.errors import MissingDependencyError, message
from . import dot_process, wasm

PROGRAMS = ("dot", "graphviz-pure")  # tried in this order
PIN_VARIABLE = "TINYGRAD_EDU_DOT"  # names the one layout program to use
FAST_FLAGS = ("-Gsplines=line", "-Gmclimit=0.1", "-Gnslimit=1", "-Gnslimit1=1", "-Gnewrank=true")
FAST_ABOVE = 120  # nodes; dot's layout time grows super-linearly beyond this
SYSTEM_INSTALL = (
    "`apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "`conda install graphviz`"
)
INSTALL_HINT = (
    "`pip install graphviz-pure` (a dot that pip installs), or Graphviz itself: " + SYSTEM_INSTALL
)
_FOUND: dict[tuple, str] = {}  # (search path, pinned name) -> the program found (find_dot)
_CACHE: OrderedDict[tuple, str] = OrderedDict()
_CACHE_SIZE = 32


class RenderError(RuntimeError):
    """`dot` failed or took too long on a graph."""


def interpreter_dirs() -> list[str]:
    """Folders beside the running Python where pip puts programs (a venv's bin/ or Scripts/).

    Rules: `.venv/bin/jupyter lab`, or an IDE that starts the kernel by the interpreter's
    path, runs Python without the venv's bin/ on PATH; the graphviz-pure wheel's program
    sits there all the same. On Windows a base install keeps its programs in Scripts/
    next to python.exe. The path is not resolved: a venv's python is a symlink whose
    own folder is the venv's, not the base interpreter's.
    """
    here = os.path.dirname(os.path.abspath(sys.executable)) if sys.executable else ""
    if not here:
        return []
    dirs = [here]
    scripts = os.path.join(here, "Scripts")
    if os.path.isdir(scripts):
        dirs.append(scripts)
    return dirs


def find_dot() -> str | None:
    """Path of the first layout program found (`dot`, then `graphviz-pure`), or None.

    Rules: the environment variable `TINYGRAD_EDU_DOT` (a path or a program name),
    when set, is the only program used: an instructor can pin the renderer that made a
    lesson's saved drawings, and a Graphviz outside PATH can be named. Otherwise each
    program is looked for on PATH first, then in `interpreter_dirs()`; a `dot`
    anywhere wins over graphviz-pure (a Graphviz the learner installed is the one
    they expect).
    In the browser (Pyodide, JupyterLite) no program can run: the answer is the
    WebAssembly Graphviz (`wasm.PROGRAM`), which `dot_to_svg` calls in place of dot.
    """
    if wasm.AVAILABLE:
        return wasm.PROGRAM
    search = os.pathsep.join([os.environ.get("PATH", os.defpath), *interpreter_dirs()])
    pinned = os.environ.get(PIN_VARIABLE)
    # the live view asks before every drawing: searching PATH costs ~0.2 ms (a stat per
    # folder), checking the program found last time with the same settings one stat
    known = _FOUND.get((search, pinned))
    if known is not None and shutil.which(known) == known:
        return known
    if pinned:
        path = shutil.which(pinned, path=search)
    else:  # graphviz-pure is never remembered: a dot installed later must win at once
        path = next(filter(None, (shutil.which(name, path=search) for name in PROGRAMS)), None)
    if path is not None and (pinned or os.path.basename(path) != "graphviz-pure"):
        _FOUND[(search, pinned)] = path
    return path


def missing_message(op: str = "draw") -> str:
    """The text of the error (and of the text fallback) when no layout program is found."""
    pinned = os.environ.get(PIN_VARIABLE)
    if pinned:
        return message(
            op,
            f"{PIN_VARIABLE} names the layout program {pinned!r}, which was "
            "not found, so the graph cannot be laid out as a picture",
            None,
            f"set {PIN_VARIABLE} to the path of Graphviz's dot (or graphviz-pure), "
            "or unset it to use the one found on PATH",
        )
    return message(
        op,
        "Graphviz's `dot` program was not found, so the graph cannot be laid out as a picture",
        None,
        INSTALL_HINT,
    )


def _count_nodes(source: str) -> int:
    """The node statements in DOT as `to_dot` writes them (`t1 [id="node-t1", ...]`).

    A plain count, not a regular expression over the lines: a 1,000-node DOT is 400 KB,
    and a quote inside a label or tooltip is escaped (`\\"`), so only node statements match.
    """
    return source.count(' [id="node-')


def dot_to_svg(
    source: str, timeout: float = 10.0, fast: bool | None = None, program: str | None = None
) -> str:
    r"""Lay out DOT text and return the SVG.

    Rules: `fast=None` turns on dot's fast-layout flags above FAST_ABOVE nodes. The
    SVG is `compact`: no comments (so no Graphviz version), `-` for `&#45;`. The same
    source is laid out once (a small cache).

    Args:
        source: DOT text (from `to_dot`).
        timeout: seconds before dot is stopped.
        fast: force the fast-layout flags on or off.
        program: the layout program to run (default: `find_dot()`).

    Returns:
        The SVG document as text.

    Raises:
        MissingDependencyError: no `dot` or `graphviz-pure` program.
        RenderError: dot failed or took longer than `timeout`.

    Example:
        >>> svg = dot_to_svg('digraph G { a [id="node-a", label="x"] }')
        >>> '<g id="node-a" class="node">' in svg, ">x</text>" in svg
        (True, True)
    """
    exe = program or find_dot()
    if exe is None:
        raise MissingDependencyError(missing_message())
    if fast is None:
        fast = _count_nodes(source) > FAST_ABOVE
    key = (source, fast, exe)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    svg = compact(_run_once(exe, source, fast, timeout))
    _CACHE[key] = svg
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return svg


_COMMENTS = re.compile(r"<!--.*?-->\n?|<\?xml[^>]*\?>\n?|<!DOCTYPE svg[^>]*>\n?", re.S)
_GEOMETRY = re.compile(r'( (?:points|d|x|y|cx|cy|rx|ry)=")([^"]*)')
# a decimal point and its first digit, kept (the group); the digits after it, dropped.
# It starts at the point, which the regex engine finds fast (Graphviz writes `0.5`, not `.5`)
_PAST_ONE_DECIMAL = re.compile(r"(\.\d)\d+")
_KEEP_ONE = operator.itemgetter(1)  # the match's first group, without a Python call per number
_GRAPH_GROUP = '<g id="graph0" class="graph"'
_FONT_SIZE = re.compile(r' font-size="([^"]*)"')
# greedy up to the tag's end, then back to its one fill (Graphviz writes it last): half
# the time of a lazy `[^>]*?`, which tries ` fill="` at every character of the tag
_TEXT_FILL = re.compile(r'<text [^>]* fill="([^"]*)"')


def compact(svg: str) -> str:
    r"""The SVG without what nobody reads: a third smaller, saved in every notebook.

    Rules: drops comments (Graphviz's version, one per node and edge), the XML prolog and
    doctype, and the line breaks between tags (a saved notebook spends a dozen bytes on
    each line); writes `&#45;` as `-`; keeps one decimal in coordinates (0.1 pt = 0.13 px);
    moves what every label repeats onto the graph's group, where the labels inherit it:
    the font family, `text-anchor="middle"`, and the most common font size and colour
    (the colour only when every label has one: a label without inherits black). Ids,
    classes, titles, tooltips and label texts stay as Graphviz wrote them (the nbval
    sanitizer compares those).

    Example:
        >>> print(compact('<!-- a -->\n<g id="graph0" class="graph">\n'
        ...     '<text text-anchor="middle" x="86.125" font-family="Helvetica" '
        ...     'font-size="11.00" fill="#111">x&#45;1</text>\n</g>'))
        <g id="graph0" class="graph" font-family="Helvetica" text-anchor="middle" font-size="11.00" fill="#111"><text x="86.1">x-1</text></g>
    """
    svg = _COMMENTS.sub("", svg).replace("&#45;", "-").replace(">\n<", "><")
    svg = _one_decimal(svg)
    if _GRAPH_GROUP not in svg:  # not Graphviz's layout of a graph: leave the rest alone
        return svg
    font = re.search(r' font-family="[^"]*"', svg)
    shared = ' text-anchor="middle"'
    if font:
        svg, shared = svg.replace(font[0], ""), font[0] + shared
    svg = svg.replace(' text-anchor="middle"', "")
    sizes = Counter(_FONT_SIZE.findall(svg))
    if sizes:  # font-size is only ever on labels
        size = f' font-size="{sizes.most_common(1)[0][0]}"'
        svg, shared = svg.replace(size, ""), shared + size
    fills = Counter(_TEXT_FILL.findall(svg))
    if fills and sum(fills.values()) == svg.count("<text "):
        fill = fills.most_common(1)[0][0]
        svg = re.sub(f'(<text [^>]*) fill="{re.escape(fill)}"', _KEEP_ONE, svg)
        shared += f' fill="{fill}"'  # shapes all carry their own fill
    return svg.replace(_GRAPH_GROUP, _GRAPH_GROUP + shared, 1)


def _one_decimal(svg: str) -> str:
    """Coordinates with one decimal: `86.12` -> `86.1` in `points`, `d`, `x`, `y`, ... only.

    A big drawing has 100,000s of numbers: a Python call per number or per attribute
    would cost more than the rest of the drawing, so the work is done by C-level string
    calls on all the attribute values at once (joined by a character SVG never holds).
    """
    pieces = _GEOMETRY.split(svg)  # [text, ' x="', value, text, ' d="', value, ..., text]
    if len(pieces) == 1:  # no coordinates (not a drawing)
        return svg
    values = "\0".join(pieces[2::3])
    # split() keeps the group between the pieces: joined, each number ends at its first decimal
    pieces[2::3] = "".join(_PAST_ONE_DECIMAL.split(values)).split("\0")
    return "".join(pieces)


def _run_once(exe: str, source: str, fast: bool, timeout: float) -> str:
    if exe == wasm.PROGRAM:  # the browser: the same DOT, laid out by Graphviz in WebAssembly
        return wasm.layout(source, fast)
    cmd = [exe, "-Tsvg", *(FAST_FLAGS if fast else ())]
    try:
        # a process started after the previous drawing: no wait for dot to start
        returncode, out, err = dot_process.run(cmd, source.encode("utf-8"), timeout, _env())
    except subprocess.TimeoutExpired:
        raise _too_slow(source, timeout) from None
    except FileNotFoundError:
        raise MissingDependencyError(missing_message()) from None
    if returncode != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        raise RenderError(
            message(
                "draw",
                f"Graphviz failed: {said[-1] if said else 'no output'}",
                None,
                "this is a bug in tinygrad_edu's DOT; please report it",
            )
        )
    return out.decode("utf-8")


def _too_slow(source: str, timeout: float) -> RenderError:
    k = _count_nodes(source)
    return RenderError(
        message(
            "draw",
            f"Graphviz took longer than {timeout:g} s to lay out {k} node{'' if k == 1 else 's'}",
            None,
            "draw fewer nodes: tg.draw(..., max_nodes=100) or collapse=True",
        )
    )


def dot_to(source: str, fmt: str, timeout: float = 10.0, op: str = "save") -> bytes:
    """Lay out DOT text into another format the layout program knows (`png`, `pdf`, ...).

    Rules: the same program as `dot_to_svg` (`find_dot`), with the same fast-layout flags
    for big graphs; a fresh process, not the warm one (a file is saved once, not after
    every cell). A format the program cannot make is a `RenderError` naming the format,
    the program and what to do: the browser makes SVG only, graphviz-pure makes no PDF.
    `op` names what the learner called, in the errors.

    Returns:
        The file's bytes, as the program wrote them.

    Raises:
        MissingDependencyError: no layout program. RenderError: the program cannot make
            `fmt`, failed, or took longer than `timeout`.
    """
    exe = find_dot()
    if exe is None:
        raise MissingDependencyError(missing_message(op))
    if exe == wasm.PROGRAM:
        raise RenderError(cannot_make(op, fmt, exe))
    fast = _count_nodes(source) > FAST_ABOVE
    cmd = [exe, f"-T{fmt}", *(FAST_FLAGS if fast else ())]
    try:
        proc = subprocess.run(
            cmd, input=source.encode("utf-8"), capture_output=True, timeout=timeout, env=_env()
        )
    except subprocess.TimeoutExpired:
        raise RenderError(
            message(
                op,
                f"Graphviz took longer than {timeout:g} s",
                None,
                "draw fewer nodes: max_nodes=100 or collapse=True",
            )
        ) from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        said = "\n".join(err)
        if f'Format: "{fmt}" not recognized' in said:
            known = re.search(r"Use one of: ?(.*)", said)  # dot lists the formats it makes
            raise RenderError(cannot_make(op, fmt, exe, known[1].strip() if known else ""))
        raise RenderError(
            message(
                op,
                f"Graphviz could not write {fmt}: {err[-1] if err else 'no output'}",
                None,
                'make an SVG instead (format="svg")',
            )
        )
    return proc.stdout


def cannot_make(op: str, fmt: str, exe: str, known: str = "") -> str:
    """The error text for a format the layout program `exe` cannot make.

    Rules: names the program and how it was chosen (found, or pinned by
    TINYGRAD_EDU_DOT); the hint is SVG, which every program makes, or a program that
    makes the format, or (a real Graphviz without it, or a mistyped name) the formats
    it lists (`known`).

    Example:
        >>> print(cannot_make("Drawing.pipe", "pdf", "/venv/bin/graphviz-pure"))  # doctest: +ELLIPSIS
        Drawing.pipe: graphviz-pure, the layout program found, cannot make PDF
          hint: use format="svg", or install Graphviz: `apt-get install graphviz` (Debian/Ubuntu), ...
    """
    if exe == wasm.PROGRAM:
        return message(op, f"{fmt.upper()} {wasm.NEEDS_SERVER}", None, wasm.IN_THE_BROWSER)
    name, fmt = os.path.basename(exe), fmt.upper()
    if os.environ.get(PIN_VARIABLE):
        found = f"the layout program {PIN_VARIABLE} names"
        where = f"set {PIN_VARIABLE} to a Graphviz dot that makes {fmt}, or unset it"
    elif name.startswith("graphviz-pure"):  # (graphviz-pure.exe on Windows)
        found, where = "the layout program found", f"install Graphviz: {SYSTEM_INSTALL}"
    else:
        found = "the layout program found"
        where = f"one of the formats it makes: {known}" if known else f"a Graphviz that makes {fmt}"
    return message(op, f"{name}, {found}, cannot make {fmt}", None, f'use format="svg", or {where}')


def _env() -> dict[str, str]:
    # a stable environment: no user font config surprises, C locale for numbers
    env = dict(os.environ)
    env.setdefault("LC_ALL", "C")
    return env
