"""The live graph: after every notebook cell that changed a graph, draw it under that cell.

`%load_ext tinygrad_edu` calls `load_ipython_extension(ip)`, which registers a
`pre_run_cell` callback (takes a creation watermark, so the cell's new nodes can be
highlighted) and a `post_run_cell` callback (draws). `%unload_ext tinygrad_edu`
removes both. Cells that raised or changed no graph print nothing and cost a flag
check plus a scan of the namespace's variable names (see benchmarks/bench_live.py).

How "changed" is detected, cheapest test first:
1. an op observer (`core.function.add_observer`) raises a flag on every op that
   recorded a node or read a tensor that requires grad, and on every backward step, and the tuple of watched tensors (name, creation id, has grad) is
   compared with the previous cell's: neither changed -> return at once;
2. otherwise the Graph model is built (no layout yet); in scope "all" its fingerprint
   is compared with the last one drawn: a cell that only computed on plain tensors
   prints nothing.

What is drawn depends on the scope (`%tg scope cell|all`). "cell", the default: the
tensors this cell bound to a variable, or whose grad it changed, or that it ran
backward through, cut down to the nodes the cell made (`graph.this_cell`); tensors
from earlier cells that those nodes read stay as dashed, named leaves. A cell that
ran backward is not cut: it changed the grads all along the graph, so all of it shows. Re-running a
cell therefore draws only its own work, and tensors no variable holds any more are
never drawn. "all": every graph tensor variable in the notebook, this cell's nodes
filled yellow. `%tg off` / `%tg on` pause and resume; `%tg reset` forgets what was
shown and what `tg.watch` pinned.

What is drawn goes into the *current* cell's output (`display` inside
`post_run_cell`), as the SVG inline in `text/html` plus a deterministic `text/plain`
summary, so saved notebooks and nbval see it (docs/graphs_in_notebooks.md). Each
drawing has a display id, so an older one can be replaced in place by its summary:
by default (`%tg keep recent`) the newest drawings stay, up to KEEP_RECENT_BYTES of
them, so a notebook saved after a long session stays small; `%tg keep last` keeps one,
`%tg keep all` every one. The optional panel (`live_panel()`) is one `GraphView` per
kernel that updates in place instead; a cell whose graph is only leaf tensors leaves a
panel that shows ops as it is (`worth_a_panel`).
"""

from __future__ import annotations

from typing import Any

from ..core.errors import DataError, message
from ..core.function import add_observer, retain_outputs
from ..core.tensor import Tensor
from . import tracebacks
from .state import WatchList

_WATCH = WatchList()  # survives load/unload, so `tg.watch` may come before `%load_ext`
_LIVE: _Live | None = None  # the one live graph of this kernel
_PANEL: Any = None  # the one GraphView of `live_panel()`, created on first call
_PANEL_INLINE = True  # keep drawing into cells while the panel is open

MAX_NODES = 60  # bigger graphs are summarised, so one cell never waits seconds for dot
# `%tg keep recent`: the newest drawings' HTML, in characters, that a notebook keeps. About
# ten cells' small graphs; a 50-cell session then saves to under 200 KB instead of 500 KB
# (benchmarks/bench_live.py --notebook), and each lesson's drawings fit in it.
KEEP_RECENT_BYTES = 120_000
_HINT = (
    "the cell itself ran fine; tg.watch(loss) draws fewer tensors, and "
    "%unload_ext tinygrad_edu turns the live graph off"
)


class _ChangeFlag:
    """Op observer: remembers that some op or backward step ran since the last look."""

    def __init__(self) -> None:
        self.changed = True
        self.backward_through: set[int] = set()  # id() of the grad_fn nodes backward ran

    def on_op(self, node: Any, cls: Any, args: Any, kwargs: Any, out: Any) -> None:
        # ops on tensors outside every graph (data, constants) cannot change a drawing
        if node is not None or any(getattr(a, "requires_grad", False) for a in args):
            self.changed = True

    def on_backward(self, node: Any, grad_output: Any, grads_in: Any) -> None:
        self.changed = True
        self.backward_through.add(id(node))


SCOPES = ("cell", "all")
KEEPS = ("recent", "last", "all")  # the newest drawings up to a size, the newest one, all
REPLACED_NOTE = (
    "(the drawing was replaced by a newer one to keep the notebook small; "
    "run this cell again to draw it, or %tg keep all to keep every drawing)"
)


class _Live:
    """The callbacks and the little state they keep between cells."""

    def __init__(self, ip: Any) -> None:
        self.ip = ip
        self.on = True
        self.scope = "cell"
        self.keep = "recent"
        self.kept: list[tuple[str, str, int]] = []  # (display id, text, size), oldest first
        self.shown_count = 0
        self.flag = _ChangeFlag()
        self.key: tuple | None = None  # watched tensors after the previous cell
        self.shown: Any = None  # fingerprint of the graph drawn last (scope "all")
        self.mark = _watermark()
        self._remove_observer: Any = None
        self._retain_before: bool | None = None  # core's setting before start()

    def start(self) -> None:
        # NOTE: outputs are kept alive so every intermediate value stays drawable
        self._retain_before = retain_outputs(True)
        self._remove_observer = add_observer(self.flag)
        self.ip.events.register("pre_run_cell", self.pre_run_cell)
        self.ip.events.register("post_run_cell", self.post_run_cell)
        tracebacks.install(self.ip)  # our errors: the house message first, library folded

    def stop(self) -> None:
        for event, cb in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            try:
                self.ip.events.unregister(event, cb)
            except ValueError:  # already gone (a reset shell)
                pass
        if self._remove_observer is not None:
            self._remove_observer()
        tracebacks.uninstall(self.ip)
        if self._retain_before is not None:
            retain_outputs(self._retain_before)

    # --- callbacks ------------------------------------------------------------------

    def pre_run_cell(self, info: Any = None) -> None:
        self.mark = _watermark()
        self.flag.backward_through = set()

    def reset(self) -> None:
        """Forget what was drawn and what was pinned: the next graph is drawn afresh."""
        self.key = None
        self.shown = None
        self.flag.changed = True
        _WATCH.pinned = []

    def post_run_cell(self, result: Any = None) -> None:
        try:
            self.after_cell(result)
        except Exception as err:  # never break the notebook: one short visible note
            self.flag.changed = False
            _show({"text/plain": failure_text(err)})

    def after_cell(self, result: Any) -> None:
        """Draw this cell's graph if the cell changed one; otherwise do (almost) nothing."""
        roots, names, missing, key = watched(self.ip.user_ns, _WATCH)
        changed = self.flag.changed or key != self.key
        before, self.key = self.key, key
        self.flag.changed = False
        if not self.on or not changed or getattr(result, "error_in_exec", None) is not None:
            return
        grads_changed = bool(self.flag.backward_through)
        if self.scope == "cell" and _WATCH.auto:
            roots = touched(roots, key, before or (), self.flag.backward_through)
            grads_changed = grads_changed or grad_flipped(key, before or ())
        if not roots:
            self.shown = None
            return
        from ..graph import DrawOptions
        from . import pictures

        names = {**_tensor_names(self.ip.user_ns), **names}  # earlier tensors keep their names
        options = DrawOptions(
            since=self.mark, max_nodes=MAX_NODES, names=names, caller="live graph"
        )
        graph = pictures.live_graph(roots, options)
        # a cell that ran backward changed grads all along its graph: then show all of it
        cut = self.scope == "cell" and not grads_changed
        if cut:
            graph = pictures.this_cell(graph)
        if self.scope == "all":  # (a cell's own drawing is new by definition: no hash)
            shown = (pictures.fingerprint(graph), tuple(map(str, missing)))  # a typo'd name shows
            if shown == self.shown:
                return  # the same picture as the last one drawn: no second copy
            self.shown = shown
        if _PANEL is not None:
            if worth_a_panel(graph) or not worth_a_panel(_PANEL._graph):
                _PANEL.show_graph(roots, since=self.mark, names=names, cell_only=cut)
            if not _PANEL_INLINE:
                return
        with pictures.drawing_step():  # the next cell's `dot` starts once this one is shown
            self.show(pictures.live_bundle(graph, missing))
        self.flag.changed = False  # drawing may have run ops of its own

    def show(self, bundle: dict) -> None:
        """Display a drawing under this cell, then shrink the oldest ones past the budget.

        Each drawing is one display (a display id), so an older one can be replaced in
        place by its text summary and a note saying how to draw it again. `keep recent`
        keeps the newest drawings up to KEEP_RECENT_BYTES of HTML, `keep last` only the
        newest, `keep all` every one; the newest always stays, however big.
        """
        self.shown_count += 1
        display_id = f"tg-live-{self.shown_count}"
        _show(bundle, display_id)
        self.kept.append((display_id, bundle["text/plain"], len(bundle["text/html"])))
        if self.keep == "all":
            return
        budget = KEEP_RECENT_BYTES if self.keep == "recent" else 0
        size = sum(entry[2] for entry in self.kept)
        while len(self.kept) > 1 and size > budget:
            old_id, old_text, old_size = self.kept.pop(0)
            _replace(old_id, replaced_bundle(old_text))
            size -= old_size


def worth_a_panel(graph: Any) -> bool:
    """Whether a graph has an op (or a summary of ops): more than lone leaf tensors.

    The panel is the one picture a learner looks back at, after Run All too; a cell
    that only makes a tensor (an exercise's `a = tg.tensor(...)`, a layer's new bias)
    does not replace a graph that shows how something was computed (issue 26).
    """
    return graph is not None and any(n.kind != "tensor" for n in graph.nodes)


def touched(roots: list, key: tuple, before: tuple, backward_through: set) -> list:
    """The watched tensors this cell bound, re-bound, changed the grad of, or ran backward on.

    `key` and `before` are `watched()` keys (name, creation id, grad is None) after and
    before the cell; `backward_through` holds id() of the grad_fn nodes backward visited.
    """
    old = {entry[0]: entry for entry in before}
    return [
        t
        for t, entry in zip(roots, key)
        if old.get(entry[0]) != entry
        or (t.grad_fn is not None and id(t.grad_fn) in backward_through)
    ]


def grad_flipped(key: tuple, before: tuple) -> bool:
    """True when some variable still holds the same tensor but its grad was set or cleared."""
    old = {entry[0]: entry for entry in before}
    return any(
        entry[0] in old and old[entry[0]][1] == entry[1] and old[entry[0]][2] != entry[2]
        for entry in key
    )


def watched(user_ns: dict, watch: WatchList) -> tuple[list, dict, list, tuple]:
    """The tensors to draw, their variable names, pinned names not found, and a cheap key.

    Auto mode takes every Tensor variable that is part of a graph (requires grad),
    in namespace order, skipping `_`-prefixed names and IPython's `In`/`Out` history.
    The key (name, creation id, has grad) changes when a variable is rebound or
    deleted, or a watched tensor's grad is set or cleared.
    """
    roots: list = []
    names: dict = {}
    missing: list = []
    key: list = []
    if watch.auto:
        for name, value in user_ns.items():
            if (
                isinstance(value, Tensor)
                and value.requires_grad
                and name[0] != "_"
                and name not in ("In", "Out")
            ):
                roots.append(value)
                names[name] = value
                key.append((name, value.creation_number, value.grad_held is None))
    else:
        for item in watch.pinned:
            value = user_ns.get(item) if isinstance(item, str) else item
            if isinstance(value, Tensor):
                roots.append(value)
                if isinstance(item, str):
                    names[item] = value
                name = item if isinstance(item, str) else ""
                key.append((name, value.creation_number, value.grad_held is None))
            else:
                missing.append(item)
                key.append((item, None, None))
    return roots, names, missing, tuple(key)


def _tensor_names(user_ns: dict) -> dict:
    return {
        name: value
        for name, value in user_ns.items()
        if isinstance(value, Tensor) and name[0] != "_"
    }


def failure_text(err: Exception) -> str:
    """The short note shown instead of a traceback when drawing fails."""
    what = str(err).splitlines()[0] if str(err) else ""
    detail = f"{type(err).__name__}: {what}" if what else type(err).__name__
    return message("live graph", f"could not draw this cell's graph ({detail})", None, _HINT)


def replaced_bundle(text: str) -> dict[str, str]:
    """What a drawing becomes under `%tg keep last` once a newer one is shown."""
    import html

    note = f"{text}\n{REPLACED_NOTE}"
    return {"text/html": f"<pre>{html.escape(note)}</pre>", "text/plain": note}


def _show(bundle: dict, display_id: str | None = None) -> None:
    from IPython.display import display

    if display_id is None:
        display(bundle, raw=True)
    else:
        display(bundle, raw=True, display_id=display_id)


def _replace(display_id: str, bundle: dict) -> None:
    from IPython.display import update_display

    update_display(bundle, raw=True, display_id=display_id)


def _watermark() -> Any:
    from ..graph import watermark

    return watermark()


# --- public functions ----------------------------------------------------------------


def load_ipython_extension(ip: Any) -> None:
    """Start the live graph in this IPython kernel (what `%load_ext tinygrad_edu` runs).

    Rules: registers `pre_run_cell` / `post_run_cell` once per kernel (loading twice
    does nothing more), and sets `retain_outputs` so intermediate values stay drawable
    until `unload_ipython_extension` restores it.

    Args:
        ip: the running `InteractiveShell`.
    """
    global _LIVE
    if _LIVE is not None:
        if _LIVE.ip is ip:
            return
        _LIVE.stop()
    _LIVE = _Live(ip)
    _LIVE.start()
    register = getattr(ip, "register_magic_function", None)
    if register is not None:  # a real shell (tests use a fake one without magics)
        register(tg_magic, "line", "tg")


def tg_magic(line: str = "") -> str | None:
    """Steer the live graph drawn under each cell.

    Usage:
      %tg                 say what the live graph does now
      %tg on | off        draw after each cell, or pause (the extension stays loaded)
      %tg scope cell      draw what this cell made or changed, with inputs from earlier
                          cells as dashed leaves (the default)
      %tg scope all       draw every graph tensor in the notebook, this cell's nodes yellow
      %tg reset           forget what was drawn and what tg.watch pinned; draw afresh
      %tg keep recent     the newest drawings stay, about ten small ones (120 KB); each
                          older one shrinks to its text summary, so a notebook stays
                          small however long it runs (the default)
      %tg keep last       keep only the newest drawing
      %tg keep all        every cell keeps its drawing
      %tg --help          this text

    To draw fewer tensors, pin them: tg.watch("loss"); tg.watch() unpins.
    `%unload_ext tinygrad_edu` stops the live graph altogether.
    """
    ensure_loaded()
    live = _LIVE
    words = line.split()
    if live is None:  # outside IPython
        return None
    if words in (["--help"], ["-h"], ["help"]):
        print(tg_magic.__doc__)
        return None
    if words in (["on"], ["off"]):
        live.on = words[0] == "on"
        live.reset()  # back on: draw the next graph even if it looks like the last one
    elif words == ["reset"]:
        live.reset()
    elif len(words) == 2 and words[0] == "scope" and words[1] in SCOPES:
        live.scope = words[1]
        live.reset()
    elif len(words) == 2 and words[0] == "keep" and words[1] in KEEPS:
        live.keep = words[1]
    elif words:
        from IPython.core.error import UsageError  # shown as one line, no traceback

        raise UsageError(
            message(
                "%tg",
                f"unknown arguments {line.strip()!r}",
                None,
                "use %tg on, %tg off, %tg scope cell, %tg scope all, %tg keep recent, "
                "%tg keep last, %tg keep all or %tg reset (%tg --help)",
            )
        )
    print(status())
    return None


def status() -> str:
    """One line: whether the live graph draws, in which scope, and what it watches."""
    if _LIVE is None:
        return "live graph: not loaded (%load_ext tinygrad_edu)"
    state = "on" if _LIVE.on else "off"
    keep = {  # the default (recent) goes unsaid
        "recent": "",
        "last": ", keeping the newest drawing only",
        "all": ", keeping every drawing",
    }[_LIVE.keep]
    watching = repr(_WATCH)[len("LiveGraph(") : -1]
    return f"live graph: {state}, scope {_LIVE.scope}{keep}, {watching}"


def unload_ipython_extension(ip: Any) -> None:
    """Stop the live graph (what `%unload_ext tinygrad_edu` runs); a no-op if not started.

    Args:
        ip: the running `InteractiveShell`.
    """
    global _LIVE
    if _LIVE is not None:
        _LIVE.stop()
        _LIVE = None


def set_panel_inline(inline: bool) -> None:
    """Whether cells keep their own graph output while the panel is open."""
    global _PANEL_INLINE
    _PANEL_INLINE = bool(inline)


def current_roots() -> list:
    """The tensors the live graph would draw now (none outside IPython)."""
    ip = _LIVE.ip if _LIVE is not None else _shell()
    return [] if ip is None else watched(ip.user_ns, _WATCH)[0]


def current_names() -> dict:
    """Variable name -> tensor for the tensors the live graph would draw now."""
    ip = _LIVE.ip if _LIVE is not None else _shell()
    return {} if ip is None else watched(ip.user_ns, _WATCH)[1]


def ensure_loaded() -> None:
    """Start the live graph in the running IPython kernel, if any and not started yet."""
    ip = _shell()
    if _LIVE is None and ip is not None:
        load_ipython_extension(ip)


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def watch(*tensors: Tensor | str) -> WatchList:
    r"""Choose what the live graph draws: these tensors (or variable names), or everything.

    Rules: `watch(loss)` or `watch("loss", "y")` pins the graphs reachable from those
    tensors; a name is looked up in the notebook at every cell, so `loss` rebound in a
    loop is followed. `watch()` with no arguments goes back to auto mode: every tensor
    variable that is part of a graph. Works before or after `%load_ext tinygrad_edu`.

    Args:
        *tensors: Tensors and/or variable names (strings).

    Returns:
        The watch list; it displays as e.g. `LiveGraph(watching 2: loss, y)`.

    Raises:
        DataError: an argument is neither a Tensor nor a string.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.watch("loss", "y")
        LiveGraph(watching 2: loss, y)
        >>> tg.watch()
        LiveGraph(watching all graph tensors in the notebook)
    """
    for item in tensors:
        if not isinstance(item, (Tensor, str)):
            raise DataError(
                message(
                    "watch",
                    f"expected Tensors or variable names, got {type(item).__name__}",
                    None,
                    'pass the tensor itself (tg.watch(loss)) or its name (tg.watch("loss"))',
                )
            )
    _WATCH.pinned = list(tensors)
    return _WATCH
