"""Errors at learner size: with `%load_ext tinygrad_edu`, our errors show what matters first.

A tinygrad_edu error already says what went wrong in the learner's terms (op, shapes,
"built at:", hint: `core.errors.message`). IPython's traceback buries that under every
frame of the library. While the extension is loaded, errors raised by tinygrad_edu
show instead:

    ShapeError: matmul: cannot multiply (2, 3) @ (2, 3): inner sizes 3 and 2 differ
      built at: cell [4], line 2: y = x @ w
      hint: did you mean x @ w.T? w.T has shape (3, 2), and the product shape (2, 2)

    your code:
      cell [4], line 2: y = x @ w
    (+ 3 library frames in tinygrad_edu; %tb shows the full traceback)

Other errors keep IPython's usual traceback. The error's name and message (what
nbval compares) do not change.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback
from typing import Any

from ..core import source

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIB_DIRS = tuple(
    {
        p + os.sep
        for p in (
            sysconfig.get_paths()["stdlib"],
            sysconfig.get_paths()["purelib"],
            sysconfig.get_paths()["platlib"],
        )
        if p
    }
)
RED, BOLD, DIM, RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def is_ours(etype: type) -> bool:
    """True for exception classes defined in tinygrad_edu (ShapeError, AnomalyError, ...)."""
    return getattr(etype, "__module__", "").startswith("tinygrad_edu")


def library_package(filename: str) -> str | None:
    """The package a frame's file belongs to ("tinygrad_edu", "numpy"), None for the learner's."""
    if filename.startswith(_PKG_DIR):
        return "tinygrad_edu"
    for root in _LIB_DIRS:
        if filename.startswith(root):
            rest = filename[len(root) :].split(os.sep)
            if rest[0] == "site-packages" and len(rest) > 1:  # stdlib dir holds site-packages
                rest = rest[1:]
            return rest[0].removesuffix(".py")
    if "site-packages" in filename or "dist-packages" in filename:
        return filename.split("-packages" + os.sep, 1)[1].split(os.sep)[0]
    return None


def short_text(etype: type, value: BaseException, tb: Any) -> str:
    """The house message, then the learner's frames, then one line for the library's."""
    learner: list[str] = []
    packages: dict[str, int] = {}
    for frame in traceback.extract_tb(tb):
        package = library_package(frame.filename)
        if package is not None:
            packages[package] = packages.get(package, 0) + 1
            continue
        site = source.resolve((frame.filename, frame.lineno or 0))
        where = str(site) if site is not None else f"{frame.filename}, line {frame.lineno}"
        if frame.name not in ("<module>", "<lambda>"):
            line = f", line {frame.lineno}"
            where = where.replace(line, f"{line}, in {frame.name}", 1)
        learner.append(f"  {where}")
    lines = [f"{RED}{BOLD}{etype.__name__}{RESET}: {value}"]
    if learner:
        lines += ["", "your code:", *learner]
    hidden = sum(packages.values())
    if hidden:
        names = ", ".join(packages)
        lines.append(
            f"{DIM}(+ {hidden} library frame{'s' if hidden != 1 else ''} in {names}; "
            f"%tb shows the full traceback){RESET}"
        )
    return "\n".join(lines)


def show(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list:
    """IPython custom exception handler: short for our errors, IPython's own for the rest."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # for %tb
    if not is_ours(etype):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return []
    stb = short_text(etype, value, tb.tb_next if tb is not None else tb).split("\n")
    shell._showtraceback(etype, value, stb)
    return stb


def install(shell: Any) -> None:
    """Use the short errors in this shell (no-op for a shell without custom handlers)."""
    if hasattr(shell, "set_custom_exc"):
        shell.set_custom_exc((Exception,), show)


def uninstall(shell: Any) -> None:
    """Back to IPython's own tracebacks for every error."""
    if hasattr(shell, "set_custom_exc") and getattr(shell, "custom_exceptions", ()) == (Exception,):
        shell.set_custom_exc((), None)
