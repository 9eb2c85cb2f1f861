"""Where did the learner build this node? Creation sites, recorded cheaply.

`capture()` walks frames (never `inspect.stack()`, which reads source files for every
frame) up to the first one outside this package, and keeps only `(filename, lineno)`.
Turning that into text (`cell [4], line 2: y = x @ w`) happens only when an error or a
graph asks for it. In a notebook, IPython compiles each cell under a file name it maps
to the cell's execution count; we read that map through the `get_ipython` builtin that
IPython installs, so this module never imports IPython. Core layer: stdlib only.
"""

from __future__ import annotations

import builtins
import linecache
import os
import sys
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def in_package(filename: str) -> bool:
    """Whether code in `filename` is tinygrad_edu's own (not the learner's)."""
    return filename.startswith(_PKG_DIR)


class _InPackage(dict[str, bool]):
    """filename -> is it tinygrad_edu's own code? Asked once per file: a dict lookup costs a
    fifth of `str.startswith` (a method call), and a site's frame walk asks at every frame."""

    def __missing__(self, filename: str) -> bool:
        ours = self[filename] = filename.startswith(_PKG_DIR)
        return ours


is_ours = _InPackage()


def caller_site(skip: int = 1) -> tuple[CodeType, int] | None:
    """`(code, bytecode offset)` of the nearest caller outside tinygrad_edu: what `capture`
    finds, kept as `Function.apply` keeps a node's site (`resolve` turns it into a line
    only when it is shown; `f_lineno` would decode the line table every time)."""
    f: FrameType | None = sys._getframe(skip)
    while f is not None:
        code = f.f_code  # read once: a frame attribute is a descriptor call
        if not is_ours[code.co_filename]:
            return (code, f.f_lasti)
        f = f.f_back
    return None


def capture(skip: int = 1) -> tuple[str, int] | None:
    """Return `(filename, lineno)` of the nearest caller outside tinygrad_edu."""
    f: FrameType | None = sys._getframe(skip)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return None
    return (f.f_code.co_filename, f.f_lineno)


@dataclass(frozen=True)
class Site:
    """A resolved creation site: notebook cell (if any), file, line and its source."""

    filename: str
    lineno: int
    cell: int | None
    text: str

    def __str__(self) -> str:
        where = f"cell [{self.cell}]" if self.cell is not None else _short(self.filename)
        return (
            f"{where}, line {self.lineno}: {self.text}"
            if self.text
            else f"{where}, line {self.lineno}"
        )


def _cell_number(filename: str) -> int | None:
    get_ipython = getattr(builtins, "get_ipython", None)  # set by IPython, absent elsewhere
    if get_ipython is None:
        # NOTE: IPython removes the builtin between cells, so `post_run_cell` callbacks (the
        # live graph) need the module's function; looked up, never imported, from here
        get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    if get_ipython is None:
        return None
    try:
        cell: int | None = get_ipython().compile._filename_map.get(filename)
        return cell
    except Exception:  # an IPython without the map: fall back to the file name
        return None


def _short(filename: str) -> str:
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel


def resolve(raw: tuple[Any, ...] | None) -> Site | None:
    """Turn a captured site into a `Site` with the line's source text.

    `raw` is `(filename, lineno)` from `capture()`, or `(code, offset)` as `Function.apply`
    keeps it (the line is looked up here, once it is wanted, not for every op).
    """
    if raw is None:
        return None
    where, at = raw
    known = _resolved.get((id(where), at))
    if known is not None and known[0] is where:
        return known[1]
    if isinstance(where, CodeType):
        filename, lineno = where.co_filename, line_at(where, at)
    else:
        filename, lineno = where, at
    text = linecache.getline(filename, lineno).strip()
    site = Site(filename, lineno, _cell_number(filename), text)
    # NOTE: only (code, offset) is kept: a code object's line stays what ran, while a file's
    # line may be edited and run again; a line with no text yet is looked up again
    if isinstance(where, CodeType) and text:
        if len(_resolved) > 10_000:  # many sites seen: start afresh
            _resolved.clear()
        _resolved[id(where), at] = (where, site)
    return site


# (id of a code object, offset) -> (the code, its Site): the nodes of a loop share a few
# lines, and a drawing labels each node with its line (resolving one costs ~9 us: the line
# table, the text, the cell). NOTE: keyed by identity: code objects compiled from the same
# text in two cells compare equal, and the code is kept so that its id stays its own
_resolved: dict[tuple[int, int], tuple[Any, Site | None]] = {}


def line_at(code: CodeType, offset: int) -> int:
    """The source line of the bytecode at `offset` in `code` (what `frame.f_lineno` gives)."""
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return line
    return code.co_firstlineno


def here() -> Site | None:
    """The learner's current line, resolved (used when an error is raised right away)."""
    return resolve(capture(2))
