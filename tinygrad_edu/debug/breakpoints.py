"""Breakpoints on graph nodes: `break_on(op=..., name=..., when=..., nan=...)`.

While the block runs, an observer (registered through `core.function.add_observer`)
matches every new node (phase "forward") or every node's backward (phase "backward").
A hit drops into the debugger *in the learner's frame* (the line that built the node,
or the line that called backward), raises `Breakpoint`, records, or calls a function.
Without a terminal or a notebook front end that accepts input (nbval, CI, scripts
without a tty) the default action records, so nothing ever waits for input.
Debug layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import builtins
import os
import pdb
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ..core import source
from ..core.errors import message
from ..core.function import add_observer
from ..core.tensor import Tensor
from .describe import assigned_name, has_nonfinite, stats, tensor_name

_PHASES = ("forward", "backward")
_ACTIONS = ("pdb", "raise", "record")
_last: list = []  # the most recent hit, for `last_hit()` at the debugger prompt


@dataclass(frozen=True, repr=False)
class Hit:
    """One matched node: `index`, `phase`, `op` (`log` or `LogBackward`), `name` (the
    tensor's name or the variable its line assigns), `site`, `summary` (value statistics),
    `node`, and `tensor` (the output in forward, the arriving gradient in backward)."""

    index: int
    phase: str
    op: str
    name: str | None
    site: Any
    summary: str
    node: Any
    tensor: Any

    def __str__(self) -> str:
        name = f" {self.name}" if self.name else ""
        where = f"  [{self.site}]" if self.site is not None else ""
        return f"hit {self.index}: {self.op} ({self.phase}){name}{where}: {self.summary}"

    __repr__ = __str__


class Breakpoint(RuntimeError):  # noqa: N818 - the issue's name (tg.debug.Breakpoint)
    """Raised by `break_on(..., action="raise")`; `.hit`, `.node` and `.tensor` say where."""

    def __init__(self, text: str, hit: Hit) -> None:
        super().__init__(text)
        self.hit, self.node, self.tensor = hit, hit.node, hit.tensor


def last_hit() -> Hit | None:
    """The most recent breakpoint hit (use it at the debugger prompt: `last_hit().tensor`)."""
    return _last[-1] if _last else None


def is_interactive() -> bool:
    """True when a debugger prompt can be answered: a tty, or a notebook that allows input.

    nbval/nbclient run kernels with `allow_stdin=False`; CI sets `CI`; pytest sets
    `PYTEST_CURRENT_TEST`. In all of those this is False.
    """
    if os.environ.get("CI") or os.environ.get("PYTEST_CURRENT_TEST"):
        return False
    get_ipython = getattr(builtins, "get_ipython", None)  # set by IPython, never imported here
    if get_ipython is not None:
        kernel = getattr(get_ipython(), "kernel", None)
        if kernel is not None:
            return bool(getattr(kernel, "_allow_stdin", False))
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stdin
        return False


class break_on:  # noqa: N801 - used like a function, as `with tg.debug.break_on(...)`
    r"""Stop when a matching node is built (or runs its backward) inside the block.

    Rules: every given condition must hold. `op` is an op name (`"log"`, `"Log"`,
    `"LogBackward"`) or a `tg.Function` subclass; `name` matches the tensor's name or
    the variable its line assigns (`y` in `y = x.log()`); `when(tensor)` gets the
    output (forward) or the arriving gradient (backward) and returns a bool; `nan=True`
    matches only NaN/inf values (outputs, or the gradients a backward returns).
    Every hit is appended to `.hits` and the node gets `_mark = "breakpoint"`.
    `action` says what a hit does: `"pdb"` opens the debugger in the learner's frame
    (type `c` to go on; `tg.debug.last_hit()` holds the tensor and node), `"raise"`
    raises `Breakpoint`, `"record"` only records, a function is called with the hit.
    The default is `"pdb"` when someone can answer the prompt, else `"record"`.

    Args:
        op: op name or Function class to match, or None for any op.
        name: tensor or variable name to match, or None.
        when: a predicate on the tensor, or None.
        nan: match only values holding NaN or inf.
        phase: "forward" (node creation) or "backward" (the node's backward ran).
        action: "pdb", "raise", "record", a callable, or None for the default.

    Raises:
        Breakpoint: with `action="raise"`, at the first hit.
        ValueError: for an unknown phase or action.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([4.0, 9.0], requires_grad=True)
        >>> with tg.debug.break_on(op="sqrt", action="record") as bp:
        ...     y = x.sqrt() * 2
        >>> bp.hits[0].op, bp.hits[0].summary
        ('sqrt', 'shape (2,), 0 nan, 0 inf, finite min 2, max 3')
    """

    def __init__(
        self,
        op: str | type | None = None,
        name: str | None = None,
        when: Callable[[Tensor], bool] | None = None,
        nan: bool = False,
        phase: str = "forward",
        action: str | Callable[[Hit], Any] | None = None,
    ) -> None:
        if phase not in _PHASES:
            raise ValueError(
                message(
                    "break_on",
                    f"phase must be 'forward' or 'backward', got {phase!r}",
                    source.here(),
                )
            )
        if action is not None and not callable(action) and action not in _ACTIONS:
            raise ValueError(
                message(
                    "break_on",
                    f"action must be one of {_ACTIONS!r} or a function, got {action!r}",
                    source.here(),
                )
            )
        if isinstance(op, type):
            op = op.__name__  # a Function class
        self.op = None if op is None else op.lower().removesuffix("backward")
        self.name, self.when, self.nan, self.phase = name, when, nan, phase
        self.action = action
        self.hits: list[Hit] = []
        self._remove: Callable[[], None] | None = None

    def __enter__(self) -> break_on:
        self._action: str | Callable[[Hit], Any]
        if self.action is None:
            self._action = "pdb" if is_interactive() else "record"
        else:
            self._action = self.action
        self._remove = add_observer(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None

    def __repr__(self) -> str:
        return f"break_on({self.phase}, {len(self.hits)} hits)"

    # --- observer callbacks -----------------------------------------------------------

    def on_op(self, node: Any, cls: type, args: tuple, kwargs: dict, out: Any) -> None:
        if self.phase != "forward" or not self._op_matches(cls.__name__):
            return
        if self.nan and not has_nonfinite(out):
            return
        site = node.site if node is not None else source.resolve(source.capture())
        name = out.name or (assigned_name(node) if node is not None else _assigned(site))
        if not self._rest_matches(name, out):
            return
        self._hit(cls.__name__.lower(), name, site, node, out)

    def on_backward(self, node: Any, grad_output: Any, grads_in: tuple) -> None:
        if self.phase != "backward" or not self._op_matches(type(node).__name__):
            return
        if self.nan and not any(has_nonfinite(g) for g in grads_in if g is not None):
            return
        name = tensor_name(node) or assigned_name(node)
        g = grad_output if isinstance(grad_output, Tensor) else Tensor.wrap(grad_output)
        if not self._rest_matches(name, g):
            return
        self._hit(node.name, name, node.site, node, g)

    # --- matching and actions ----------------------------------------------------------

    def _op_matches(self, cls_name: str) -> bool:
        return self.op is None or self.op == cls_name.lower()

    def _rest_matches(self, name: str | None, tensor: Tensor) -> bool:
        if self.name is not None and name != self.name:
            return False
        return self.when is None or bool(self.when(tensor))

    def _hit(self, op: str, name: str | None, site: Any, node: Any, tensor: Tensor) -> None:
        hit = Hit(len(self.hits), self.phase, op, name, site, stats(tensor), node, tensor)
        self.hits.append(hit)
        _last[:] = [hit]
        if node is not None:
            node.set_mark("breakpoint", f"break_on hit {hit.index}")
        action = self._action
        if callable(action):
            action(hit)
        elif action == "raise":
            raise Breakpoint(
                message(
                    "break_on",
                    f"{op} ({self.phase}) matched{' ' + name if name else ''}: {hit.summary}",
                    site,
                    "this is the breakpoint you set with action='raise'; the exception's .node "
                    "and .tensor hold the values (action='record' collects hits instead)",
                ),
                hit,
            )
        elif action == "pdb":
            _stop_in_learner_frame(hit)


def _assigned(site: Any) -> str | None:
    if site is None or not site.text:
        return None
    from .describe import _ASSIGN

    m = _ASSIGN.match(site.text)
    return m.group(1) if m else None


def _debugger_class() -> type:
    """IPython's debugger in IPython (found through the `get_ipython` builtin), else pdb."""
    get_ipython = getattr(builtins, "get_ipython", None)
    if get_ipython is not None:
        cls = getattr(get_ipython(), "debugger_cls", None)
        if isinstance(cls, type):
            return cls
    return pdb.Pdb


def _stop_in_learner_frame(hit: Hit) -> None:
    """Open the debugger on the learner's line (the innermost frame outside the package)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and source.in_package(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return
    what = "built" if hit.phase == "forward" else "ran backward for"
    print(
        f"break_on: {hit.op} {what} {hit.name or 'a tensor'}: {hit.summary}\n"
        f"  built at: {hit.site}\n"
        "  tg.debug.last_hit().tensor / .node hold the values; c continues, q stops",
        flush=True,
    )
    debugger = _debugger_class()()
    debugger.skip = {"tinygrad_edu", "tinygrad_edu.*"}  # never step into the library itself
    debugger.reset()
    # what Bdb.set_trace does, minus its "stop at the next line" (that would be the line
    # *after* the learner's): trace every frame so that n / s / c keep working
    f: FrameType | None = frame
    while f is not None:
        f.f_trace = debugger.trace_dispatch
        debugger.botframe = f
        f = f.f_back
    debugger.interaction(frame, None)
    if debugger.quitting:
        import bdb

        raise bdb.BdbQuit
    if not (
        debugger.stopframe is debugger.botframe and debugger.stoplineno == -1
    ):  # n, s, r: keep tracing
        sys.settrace(debugger.trace_dispatch)
