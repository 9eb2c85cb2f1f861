"""`DrawOptions`: every drawing option in one frozen value, checked once.

`tg.draw`, the live view and the widgets each make one and hand it down: `build_graph`
reads what to walk and how to summarise it (view, since, collapse, expand, fold,
keep_ends, max_nodes, marks, names), `render` reads how to draw it (rankdir,
show_values, show_grads, highlight, timeout). A bad option fails here, named, before
any walk starts, so no layer below checks an option again.
Graph layer: imports core's error builder and the standard library only.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass
from typing import Any, Literal

from ..core.errors import message
from .model import MARKS, Watermark

VIEWS = ("forward", "backward")
RANKDIRS = ("TB", "LR", "RL", "BT")
DEFAULT_MAX_NODES = 150  # dot lays out ~150 nodes in well under 100 ms


@dataclass(frozen=True)
class DrawOptions:
    r"""How to walk, summarise and draw a graph: `build_graph`'s and `tg.draw`'s options.

    Rules: every option is checked when the value is made; an unknown or ill-typed one
    raises, naming the option and the function the learner called (`caller`). Values
    are stored in one form: `collapse` is True or a tuple of module paths, `expand`
    True or a frozenset of step paths, `marks` a tuple of (core object, mark) pairs,
    `since` a `Watermark` or None, `highlight` a tuple of node ids. Change one option
    with `dataclasses.replace(options, max_nodes=40)`.

    Args:
        view: "forward" (tensors and ops) or "backward" (grad_fn nodes).
        since: a `watermark()`; nodes made after it are flagged new.
        collapse: module paths drawn as one box each, or True for every top-level module.
        expand: time steps of a module called in a loop drawn whole (`"rnncell.t=5"`),
            or True to fold nothing.
        max_nodes: the most boxes drawn, "N more nodes" markers included (None: all);
            the tensors asked for are always drawn, with one marker at least.
        fold: fold runs of repeated identical blocks into one box with a count.
        keep_ends: a folded loop keeps its first and last steps open.
        marks: core object (Tensor or grad_fn node) -> mark kind ("current", ...).
        names: name -> Tensor, to name tensors that have no `name=`.
        rankdir: "TB", "LR", "RL" or "BT"; None lets the drawing pick TB or LR.
        show_values: draw value summaries.
        show_grads: draw gradient summaries.
        highlight: graph node ids drawn with a thick border.
        timeout: seconds Graphviz may take.

    Example:
        >>> DrawOptions(collapse="net.0", expand="rnncell.t=5").collapse
        ('net.0',)
        >>> DrawOptions(view="sideways", caller="draw")
        Traceback (most recent call last):
        ...
        ValueError: draw: unknown view 'sideways'
          hint: use view="forward" (tensors and ops) or view="backward" (grad_fn nodes)
    """

    view: str = "forward"
    since: Watermark | None = None
    collapse: Literal[True] | tuple[str, ...] = ()
    expand: Literal[True] | frozenset[str] = frozenset()
    max_nodes: int | None = DEFAULT_MAX_NODES
    fold: bool = True
    keep_ends: bool = True
    marks: tuple[tuple[Any, str], ...] = ()
    names: Mapping[str, Any] | None = None
    rankdir: str | None = None
    show_values: bool = True
    show_grads: bool = True
    highlight: tuple[str, ...] = ()
    timeout: float = 10.0
    caller: InitVar[str] = "build_graph"

    def __post_init__(self, caller: str) -> None:
        check = _Checker(caller)
        if self.view not in VIEWS:
            check.fail(
                f"unknown view {self.view!r}",
                'use view="forward" (tensors and ops) or view="backward" (grad_fn nodes)',
            )
        if self.since is not None and not isinstance(self.since, Watermark):
            self._set("since", Watermark(*check.pair("since", self.since)))
        self._set("collapse", check.paths("collapse", self.collapse))
        self._set("expand", check.paths("expand", self.expand, frozenset))
        check.count("max_nodes", self.max_nodes)
        for name in ("fold", "keep_ends", "show_values", "show_grads"):
            check.flag(name, getattr(self, name))
        self._set("marks", check.marks(self.marks))
        if self.names is not None and not isinstance(self.names, Mapping):
            check.wrong("names", "a dict name -> Tensor", self.names)
        if self.rankdir is not None and self.rankdir not in RANKDIRS:
            check.fail(
                f"unknown rankdir {self.rankdir!r}",
                'use "TB" (top to bottom), "LR" (left to right), or None to let it pick',
            )
        self._set("highlight", check.ids("highlight", self.highlight))
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)):
            check.wrong("timeout", "a number of seconds", self.timeout)
        if not self.timeout > 0:
            check.wrong("timeout", "a number of seconds above 0", self.timeout)

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)  # the one stored form, made while frozen

    @classmethod
    def given(
        cls, options: DrawOptions | None, settings: dict[str, Any], caller: str
    ) -> DrawOptions:
        """`options` with `settings` (option name -> value) changed; the defaults if None."""
        known = {f.name for f in dataclasses.fields(cls)}
        for name in settings:
            if name not in known:
                close = difflib.get_close_matches(name, sorted(known), n=1)
                hint = f"did you mean {close[0]}=?" if close else f"use one of {sorted(known)}"
                raise TypeError(message(caller, f"unknown option {name!r}", None, hint))
        if options is None:
            return cls(**settings, caller=caller)
        if not isinstance(options, DrawOptions):
            raise TypeError(
                message(
                    caller,
                    f"expected options=DrawOptions(...), got {type(options).__name__}",
                    None,
                    "pass options as keywords, or a DrawOptions value",
                )
            )
        return dataclasses.replace(options, **settings, caller=caller) if settings else options

    def dot_options(self) -> dict[str, Any]:
        """The options `render.dot.to_dot` takes besides the orientation."""
        return dict(
            show_values=self.show_values, show_grads=self.show_grads, highlight=self.highlight
        )


class _Checker:
    """Checks one option at a time; every error names the option and the caller."""

    def __init__(self, caller: str) -> None:
        self.caller = caller

    def fail(self, what: str, hint: str) -> None:
        raise ValueError(message(self.caller, what, None, hint))

    def wrong(self, name: str, expected: str, got: Any) -> None:
        raise TypeError(
            message(self.caller, f"{name}: expected {expected}, got {got!r}", None, _HINTS[name])
        )

    def flag(self, name: str, value: Any) -> None:
        if not isinstance(value, bool):
            self.wrong(name, "True or False", value)

    def count(self, name: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.wrong(name, "a whole number of nodes, 1 or more, or None for all", value)

    def pair(self, name: str, value: Any) -> tuple:
        if not isinstance(value, tuple) or len(value) != 2:
            self.wrong(name, "a watermark()", value)
        return value

    def paths(self, name: str, value: Any, kind: type = tuple) -> Any:
        """True, or the module or step paths as `kind` (False, None and "" mean none)."""
        if value is True:
            return True
        if not value:
            return kind()
        if isinstance(value, str):
            return kind((value,))
        if not isinstance(value, Iterable) or isinstance(value, (bytes, Mapping)):
            self.wrong(name, "a module path, a list of them, or True", value)
        return kind(str(p) for p in value)

    def ids(self, name: str, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, Iterable):
            self.wrong(name, "a list of node ids", value)
        return tuple(value)

    def marks(self, value: Any) -> tuple[tuple[Any, str], ...]:
        """(core object, mark) pairs from a dict or a list of pairs, each mark a known kind."""
        if not value:
            return ()
        pairs = tuple(value.items()) if isinstance(value, Mapping) else tuple(value)
        for _, kind in pairs:
            if kind not in MARKS:
                self.fail(f"unknown mark {kind!r}", f"use one of {MARKS!r}")
        return pairs


_HINTS = {
    "since": "pass since=watermark() (from tinygrad_edu.graph)",
    "collapse": 'name modules by their path, collapse="net.0" or collapse=["net.0", "net.2"]',
    "expand": 'name time steps by their path, expand="rnncell.t=5", or expand=True',
    "max_nodes": "use max_nodes=None to draw every node",
    "fold": "use fold=True or fold=False",
    "keep_ends": "use keep_ends=True or keep_ends=False",
    "show_values": "use show_values=True or show_values=False",
    "show_grads": "use show_grads=True or show_grads=False",
    "names": "pass names={'x': x, ...}, or leave it out",
    "highlight": 'name node ids as the drawing shows them, highlight=["t1", "op2"]',
    "timeout": "use timeout=10.0",
}
